package io.qkcm.manager;

/**
 * qkcm's implementations, attached to upstream's controller table. A controller listed here runs
 * when {@code --controllers} selects it; every other upstream name is accepted and reported as not
 * implemented.
 */
public final class ManagedControllers {

    private ManagedControllers() {
    }

    public static ControllerCatalog catalog() {
        return ControllerCatalog.upstream()
                .implement("replicaset-controller", io.qkcm.controller.replicaset.ReplicaSetController::new)
                .implement("replicationcontroller-controller", io.qkcm.controller.replicaset.ReplicationManager::new)
                .implement("deployment-controller", io.qkcm.controller.deployment.DeploymentController::new);
    }
}
