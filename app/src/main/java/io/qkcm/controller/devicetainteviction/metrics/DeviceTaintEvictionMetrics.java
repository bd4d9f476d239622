package io.qkcm.controller.devicetainteviction.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * Upstream's device_taint_eviction_controller_* metrics (pkg/controller/devicetainteviction/metrics):
 * pod_deletions_total and pod_deletion_duration_seconds (seconds from the eviction time to the deletion,
 * upstream's buckets, 5 ms to 4 min).
 */
public final class DeviceTaintEvictionMetrics {

    private static final String SUBSYSTEM = "device.taint.eviction.controller.";
    private static final double[] BUCKETS = { 0.005, 0.025, 0.1, 0.5, 1, 2.5, 10, 30, 60, 120, 180, 240 };

    private final Counter podDeletionsTotal;
    private final DistributionSummary podDeletionDurationSeconds;

    public DeviceTaintEvictionMetrics(MeterRegistry registry) {
        this.podDeletionsTotal = Counter.builder(SUBSYSTEM + "pod.deletions")
                .description("Total number of Pods deleted by DeviceTaintEvictionController since its start.")
                .register(registry);
        this.podDeletionDurationSeconds = DistributionSummary.builder(SUBSYSTEM + "pod.deletion.duration.seconds")
                .description("Latency, in seconds, between the time when a device taint effect has been activated and a"
                        + " Pod's deletion via DeviceTaintEvictionController.")
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
