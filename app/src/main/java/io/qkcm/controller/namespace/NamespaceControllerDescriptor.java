package io.qkcm.controller.namespace;

import io.qkcm.runtime.josdk.Controller;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.ControllerDescriptor;

/**
 * namespace-controller's descriptor and start function (upstream's {@code newNamespaceControllerDescriptor} and its
 * start function in cmd/kube-controller-manager/app/core.go): --concurrent-namespace-syncs and --namespace-sync-
 * period.
 */
public final class NamespaceControllerDescriptor {

    public static final ControllerDescriptor DESCRIPTOR = ControllerDescriptor.of(NamespaceController.NAME)
            .withAliases("namespace")
            .startedBy(NamespaceControllerDescriptor::start);

    private NamespaceControllerDescriptor() {
    }

    static Controller start(ControllerContext context) {
        return context.operate(new NamespaceController(context, context.options().concurrentSyncs("namespace"),
                context.options().duration("namespace-sync-period")));
    }
}
