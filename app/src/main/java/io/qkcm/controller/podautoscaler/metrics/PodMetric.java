package io.qkcm.controller.podautoscaler.metrics;

import java.time.Duration;
import java.time.Instant;

/**
 * One pod's metric (upstream's metrics.PodMetric): when it was taken, over which window, and its value in
 * milli-units.
 */
public record PodMetric(Instant timestamp, Duration window, long value) {

    /** A value standing in for a pod without one (missing or unready pods); no timestamp. */
    public static PodMetric of(long value) {
        return new PodMetric(Instant.EPOCH, Duration.ZERO, value);
    }
}
