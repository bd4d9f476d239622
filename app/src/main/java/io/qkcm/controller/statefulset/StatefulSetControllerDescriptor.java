package io.qkcm.controller.statefulset;

import io.qkcm.runtime.josdk.Controller;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.ControllerDescriptor;

/**
 * statefulset-controller's descriptor and start function (upstream's {@code newStatefulSetControllerDescriptor} and
 * its start function in cmd/kube-controller-manager/app/apps.go).
 */
public final class StatefulSetControllerDescriptor {

    public static final ControllerDescriptor DESCRIPTOR = ControllerDescriptor.of(StatefulSetController.NAME)
            .withAliases("statefulset")
            .startedBy(StatefulSetControllerDescriptor::start);

    private StatefulSetControllerDescriptor() {
    }

    static Controller start(ControllerContext context) {
        return context.operate(newController(context));
    }

    /** The controller with its flag read once: --concurrent-statefulset-syncs. */
    static StatefulSetController newController(ControllerContext context) {
        return new StatefulSetController(context, context.options().concurrentSyncs("statefulset"));
    }
}
