package io.qkcm.controller.daemon;

import io.qkcm.runtime.josdk.Controller;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.ControllerDescriptor;

/**
 * daemonset-controller's descriptor and start function (upstream's {@code newDaemonSetControllerDescriptor} and its
 * start function in cmd/kube-controller-manager/app/apps.go): its concurrency, --concurrent-daemonset-syncs.
 */
public final class DaemonSetControllerDescriptor {

    public static final ControllerDescriptor DESCRIPTOR = ControllerDescriptor.of(DaemonSetsController.NAME)
            .withAliases("daemonset")
            .withClientName("daemon-set-controller")
            .startedBy(DaemonSetControllerDescriptor::start);

    private DaemonSetControllerDescriptor() {
    }

    static Controller start(ControllerContext context) {
        return context.operate(newController(context));
    }

    /** The controller with its flag read once: --concurrent-daemonset-syncs. */
    static DaemonSetsController newController(ControllerContext context) {
        return new DaemonSetsController(context, context.options().concurrentSyncs("daemonset"));
    }
}
