package io.qkcm.runtime.josdk;

import java.time.Duration;

/**
 * A control loop run by the manager. It is built (and registers its event handlers on the shared
 * informers) on every replica, so standby replicas keep warm caches; {@link #start} is called only
 * on the replica that holds the leader lease.
 */
public interface Controller {

    /** Upstream's controller name, e.g. {@code replicaset-controller}. */
    String name();

    /** Starts the workers; returns at once. Workers wait for the caches the controller needs. */
    void start();

    /** Stops taking new work and waits at most {@code timeout} for syncs in flight. */
    void shutdown(Duration timeout) throws InterruptedException;

    /** Backs this controller's /healthz check: false once its workers can no longer make progress. */
    default boolean healthy() {
        return true;
    }
}
