package io.qkcm.controller.podautoscaler.metrics;

/** A metric could not be fetched or used; the message is upstream's error text. */
public class MetricsException extends Exception {

    public MetricsException(String message) {
        super(message);
    }
}
