package io.qkcm.controller.disruption;

/**
 * An error the disruption controller computes itself (upstream's {@code fmt.Errorf}s): its message is
 * what upstream's event and SyncFailed condition carry.
 */
final class DisruptionException extends Exception {

    DisruptionException(String message) {
        super(message);
    }
}
