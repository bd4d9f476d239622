package io.qkcm.controller.endpointslicemirroring;

/** A failed API call of a sync, worded as upstream's error; the sync is retried with backoff. */
final class MirroringException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    MirroringException(String message, Throwable cause) {
        super(message, cause);
    }
}
