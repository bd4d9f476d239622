package io.qkcm.controller.ttlafterfinished.metrics;

import java.util.stream.IntStream;

import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * Upstream's ttl_after_finished_controller_* metric (pkg/controller/ttlafterfinished/metrics):
 * job_deletion_duration_seconds, from the moment a Job became eligible for deletion to its deletion,
 * with upstream's buckets (0.1 s doubling, 14 of them).
 */
public final class TTLAfterFinishedMetrics {

    private final DistributionSummary jobDeletionDurationSeconds;

    public TTLAfterFinishedMetrics(MeterRegistry registry) {
        double[] buckets = IntStream.range(0, 14).mapToDouble(i -> 0.1 * Math.pow(2, i)).toArray();
        this.jobDeletionDurationSeconds = DistributionSummary
                .builder("ttl.after.finished.controller.job.deletion.duration.seconds")
                .description("The time it took to delete the job since it became eligible for deletion")
                .serviceLevelObjectives(buckets).register(registry);
    }

    public void observeJobDeletionDuration(double seconds) {
        jobDeletionDurationSeconds.record(seconds);
    }

    /** Observations so far (tests). */
    public long jobDeletions() {
        return jobDeletionDurationSeconds.count();
    }
}
