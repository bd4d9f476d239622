package io.qkcm.controller.ttlafterfinished;

import io.qkcm.runtime.josdk.Controller;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.ControllerDescriptor;

/**
 * ttl-after-finished-controller's descriptor and start function (upstream's
 * {@code newTTLAfterFinishedControllerDescriptor} and its start function in cmd/kube-controller-
 * manager/app/core.go).
 */
public final class TTLAfterFinishedControllerDescriptor {

    public static final ControllerDescriptor DESCRIPTOR = ControllerDescriptor.of(TTLAfterFinishedController.NAME)
            .withAliases("ttl-after-finished")
            .startedBy(TTLAfterFinishedControllerDescriptor::start);

    private TTLAfterFinishedControllerDescriptor() {
    }

    static Controller start(ControllerContext context) {
        return context.operate(newController(context));
    }

    /** The controller with its flag read once: --concurrent-ttl-after-finished-syncs. */
    static TTLAfterFinishedController newController(ControllerContext context) {
        return new TTLAfterFinishedController(context, context.options().concurrentSyncs("ttl-after-finished"));
    }
}
