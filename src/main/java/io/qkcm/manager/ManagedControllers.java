package io.qkcm.manager;

import io.qkcm.controller.nodelifecycle.NodeLifecycleController;

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
                .implement(NodeLifecycleController.NAME, NodeLifecycleController::new);
    }
}
