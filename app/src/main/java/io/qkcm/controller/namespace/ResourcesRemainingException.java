package io.qkcm.controller.namespace;

/**
 * Upstream's ResourcesRemainingError: content was deleted but some of it is still going away (pods in
 * their grace period, objects with finalizers). The controller requeues after {@code estimate/2+1}s.
 */
public final class ResourcesRemainingException extends Exception {

    private final long estimateSeconds;

    public ResourcesRemainingException(long estimateSeconds) {
        super("some content remains in the namespace, estimate " + estimateSeconds + " seconds before it is removed");
        this.estimateSeconds = estimateSeconds;
    }

    public long estimateSeconds() {
        return estimateSeconds;
    }
}
