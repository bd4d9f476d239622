package io.qkcm.controller.garbagecollector;

/** Upstream's namespacedOwnerOfClusterScopedObjectErr: not resolved by retrying. */
final class NamespacedOwnerOfClusterScopedException extends Exception {

    static final NamespacedOwnerOfClusterScopedException INSTANCE = new NamespacedOwnerOfClusterScopedException();

    private NamespacedOwnerOfClusterScopedException() {
        super("cluster-scoped objects cannot refer to namespaced owners", null, false, false);
    }
}
