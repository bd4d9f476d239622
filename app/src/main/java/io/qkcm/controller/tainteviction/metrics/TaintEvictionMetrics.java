package io.qkcm.controller.tainteviction.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * Upstream's taint_eviction_controller_* metrics (pkg/controller/tainteviction/metrics):
 * pod_deletions_total and pod_deletion_duration_seconds, the latter with upstream's buckets (5 ms to 4 min).
 *
 * <p>Upstream observes {@code float64(time.Since(fireAt) * time.Second)}, a Duration multiplied by 10^9
 * (its observations land in the +Inf bucket, or overflow); here the latency is observed in seconds, as
 * the metric's name and help say.
 */
public final class TaintEvictionMetrics {

    private static final String SUBSYSTEM = "taint.eviction.controller.";
    private static final double[] BUCKETS = { 0.005, 0.025, 0.1, 0.5, 1, 2.5, 10, 30, 60, 120, 180, 240 };

    private final Counter podDeletionsTotal;
    private final DistributionSummary podDeletionDurationSeconds;

    public TaintEvictionMetrics(MeterRegistry registry) {
        this.podDeletionsTotal = Counter.builder(SUBSYSTEM + "pod.deletions")
                .description("Total number of Pods deleted by TaintEvictionController since its start.")
                .register(registry);
        this.podDeletionDurationSeconds = DistributionSummary.builder(SUBSYSTEM + "pod.deletion.duration.seconds")
                .description("Latency, in seconds, between the time when a taint effect has been activated for the Pod"
                        + " and its deletion via TaintEvictionController.")
                .serviceLevelObjectives(BUCKETS).register(registry);
    }

    /** One pod deleted, {@code seconds} after its eviction was due. */
    public void podDeleted(double seconds) {
        podDeletionsTotal.increment();
        podDeletionDurationSeconds.record(seconds);
    }

    /** Pods deleted so far (tests). */
    public double podDeletions() {
        return podDeletionsTotal.count();
    }
}
