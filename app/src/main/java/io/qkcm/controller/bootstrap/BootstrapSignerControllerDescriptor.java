package io.qkcm.controller.bootstrap;

import java.time.Instant;

import io.qkcm.runtime.josdk.Controller;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.ControllerDescriptor;

/**
 * bootstrap-signer-controller's descriptor and start function (upstream's
 * {@code newBootstrapSignerControllerDescriptor} and {@code startBootstrapSignerController} in
 * cmd/kube-controller-manager/app/bootstrap.go): off by default, client {@code bootstrap-signer}.
 */
public final class BootstrapSignerControllerDescriptor {

    public static final ControllerDescriptor DESCRIPTOR = ControllerDescriptor.of(BootstrapSigner.NAME)
            .withAliases("bootstrapsigner")
            .withClientName("bootstrap-signer")
            .offByDefault()
            .startedBy(BootstrapSignerControllerDescriptor::start);

    private BootstrapSignerControllerDescriptor() {
    }

    static Controller start(ControllerContext context) {
        return context.operate(new BootstrapSigner(context, Instant::now));
    }
}
