package io.qkcm.controller.replicaset;

import io.javaoperatorsdk.operator.api.reconciler.Ignore;
import io.fabric8.kubernetes.api.model.ReplicationController;
import io.qkcm.runtime.josdk.ControllerContext;

/**
 * The ReplicationController controller (upstream pkg/controller/replication): the ReplicaSet
 * controller over ReplicationControllers converted to ReplicaSets, with its own queue
 * ({@code replicationmanager}) and event source ({@code replication-controller}).
 */
@Ignore // run in its own Operator by the manager, not by quarkus-operator-sdk\'s default one
public final class ReplicationManager extends ReplicaSetController<ReplicationController> {

    public static final String NAME = "replicationcontroller-controller";
    public static final String QUEUE = "replicationmanager";
    public static final String EVENT_SOURCE = "replication-controller";

    /** {@code workers}: --concurrent-rc-syncs; {@code shadow}: --shadow. */
    public ReplicationManager(ControllerContext context, int workers, boolean shadow) {
        super(context, ReplicationController.class, QUEUE, workers,
                new ReplicationControllerAdapter(context.informers(), context.client()), EVENT_SOURCE, shadow);
    }
}
