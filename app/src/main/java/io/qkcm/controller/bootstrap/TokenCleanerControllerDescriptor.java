package io.qkcm.controller.bootstrap;

import java.time.Instant;

import io.qkcm.runtime.josdk.Controller;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.ControllerDescriptor;

/**
 * token-cleaner-controller's descriptor and start function (upstream's
 * {@code newTokenCleanerControllerDescriptor} and {@code startTokenCleanerController} in
 * cmd/kube-controller-manager/app/bootstrap.go): off by default, client {@code token-cleaner}.
 */
public final class TokenCleanerControllerDescriptor {

    public static final ControllerDescriptor DESCRIPTOR = ControllerDescriptor.of(TokenCleaner.NAME)
            .withAliases("tokencleaner")
            .withClientName("token-cleaner")
            .offByDefault()
            .startedBy(TokenCleanerControllerDescriptor::start);

    private TokenCleanerControllerDescriptor() {
    }

    static Controller start(ControllerContext context) {
        return context.operate(new TokenCleaner(context, Instant::now));
    }
}
