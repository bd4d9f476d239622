package io.qkcm.controller.util.endpointslice;

/**
 * The slice cache lags behind the controller's own writes (upstream StaleInformerCache): the sync
 * is retried with backoff instead of acting on stale data, and is not reported as a failure.
 */
public final class StaleInformerCacheException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    public StaleInformerCacheException(String message) {
        super(message);
    }

    public static boolean isStale(Throwable t) {
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (c instanceof StaleInformerCacheException) {
                return true;
            }
        }
        return false;
    }
}
