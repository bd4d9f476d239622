package io.qkcm.controller.replicaset;

import io.fabric8.kubernetes.api.model.apps.ReplicaSet;
import io.qkcm.runtime.josdk.Controller;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.ControllerDescriptor;

/**
 * replicaset-controller's descriptor and start function (upstream's {@code newReplicaSetControllerDescriptor} and
 * its start function in cmd/kube-controller-manager/app/apps.go): its concurrency, --concurrent-replicaset-syncs.
 */
public final class ReplicaSetControllerDescriptor {

    public static final ControllerDescriptor DESCRIPTOR = ControllerDescriptor.of(ReplicaSetController.NAME)
            .withAliases("replicaset")
            .startedBy(ReplicaSetControllerDescriptor::start);

    private ReplicaSetControllerDescriptor() {
    }

    static Controller start(ControllerContext context) {
        return context.operate(newController(context));
    }

    /** The controller with its flags read once: --concurrent-replicaset-syncs, --shadow. */
    static ReplicaSetController<ReplicaSet> newController(ControllerContext context) {
        return ReplicaSetController.replicaSets(context, context.options().concurrentSyncs("replicaset"),
                context.options().bool("shadow"));
    }
}
