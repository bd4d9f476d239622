package io.qkcm.controller.serviceaccount;

import io.qkcm.runtime.josdk.Controller;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.ControllerDescriptor;

/**
 * legacy-serviceaccount-token-cleaner-controller's descriptor and start function (upstream's
 * {@code newLegacyServiceAccountTokenCleanerControllerDescriptor} and its start function in cmd/kube-controller-
 * manager/app/core.go): --legacy-service-account-token-clean-up-period and its sync interval.
 */
public final class LegacyServiceAccountTokenCleanerControllerDescriptor {

    public static final ControllerDescriptor DESCRIPTOR = ControllerDescriptor.of(LegacyServiceAccountTokenCleaner.NAME)
            .withAliases("legacy-service-account-token-cleaner")
            .withClientName("legacy-service-account-token-cleaner")
            .startedBy(LegacyServiceAccountTokenCleanerControllerDescriptor::start);

    private LegacyServiceAccountTokenCleanerControllerDescriptor() {
    }

    static Controller start(ControllerContext context) {
        return context.operate(new LegacyServiceAccountTokenCleaner(context,
                context.options().duration("legacy-service-account-token-clean-up-period"),
                context.options().duration("legacy-service-account-token-cleaner-sync-interval")));
    }
}
