package io.qkcm.controller.replicaset;

import io.qkcm.runtime.josdk.Controller;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.ControllerDescriptor;

/**
 * replicationcontroller-controller's descriptor and start function (upstream's
 * {@code newReplicationControllerDescriptor} and its start function in cmd/kube-controller-manager/app/core.go):
 * its concurrency, --concurrent-rc-syncs.
 */
public final class ReplicationControllerDescriptor {

    public static final ControllerDescriptor DESCRIPTOR = ControllerDescriptor.of(ReplicationManager.NAME)
            .withAliases("replicationcontroller")
            .withClientName("replication-controller")
            .startedBy(ReplicationControllerDescriptor::start);

    private ReplicationControllerDescriptor() {
    }

    static Controller start(ControllerContext context) {
        return context.operate(new ReplicationManager(context, context.options().concurrentSyncs("rc"),
                context.options().bool("shadow")));
    }
}
