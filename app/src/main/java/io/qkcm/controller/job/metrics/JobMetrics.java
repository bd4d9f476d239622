package io.qkcm.controller.job.metrics;

import java.util.stream.IntStream;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * Upstream's pkg/controller/job/metrics: the {@code job_controller_*} series under their Prometheus
 * names (Micrometer adds {@code _total} to counters).
 */
public final class JobMetrics {

    private static final String SUBSYSTEM = "job.controller.";
    /** metrics.ExponentialBuckets(0.004, 2, 15). */
    private static final double[] SYNC_BUCKETS = IntStream.range(0, 15).mapToDouble(i -> 0.004 * Math.pow(2, i)).toArray();

    public static final String ACTION_RECONCILING = "reconciling";
    public static final String ACTION_TRACKING = "tracking";
    public static final String ACTION_PODS_CREATED = "pods_created";
    public static final String ACTION_PODS_DELETED = "pods_deleted";
    public static final String SUCCEEDED = "succeeded";
    public static final String FAILED = "failed";
    public static final String ADD = "add";
    public static final String DELETE = "delete";
    public static final String POD_CREATE_NEW = "new";
    public static final String POD_RECREATE_TERMINATING_OR_FAILED = "recreate_terminating_or_failed";
    public static final String POD_RECREATE_FAILED = "recreate_failed";

    private final MeterRegistry registry;

    public JobMetrics(MeterRegistry registry) {
        this.registry = registry;
    }

    /** job_controller_job_sync_duration_seconds and job_controller_job_syncs_total. */
    public void sync(String completionMode, String result, String action, double seconds) {
        DistributionSummary.builder(SUBSYSTEM + "job.sync.duration.seconds").description("The time it took to sync a job")
                .tag("completion_mode", completionMode).tag("result", result).tag("action", action)
                .serviceLevelObjectives(SYNC_BUCKETS).register(registry).record(seconds);
        Counter.builder(SUBSYSTEM + "job.syncs").description("The number of job syncs").tag("completion_mode", completionMode)
                .tag("result", result).tag("action", action).register(registry).increment();
    }

    /** job_controller_jobs_finished_total. */
    public void jobFinished(String completionMode, String result, String reason) {
        Counter.builder(SUBSYSTEM + "jobs.finished").description("The number of finished jobs")
                .tag("completion_mode", completionMode).tag("result", result).tag("reason", reason == null ? "" : reason)
                .register(registry).increment();
    }

    /** job_controller_jobs_by_external_controller_total. */
    public void jobByExternalController(String controllerName) {
        Counter.builder(SUBSYSTEM + "jobs.by.external.controller")
                .description("The number of Jobs managed by an external controller").tag("controller_name", controllerName)
                .register(registry).increment();
    }

    /** job_controller_job_pods_finished_total. */
    public void podsFinished(String completionMode, String result, double n) {
        Counter.builder(SUBSYSTEM + "job.pods.finished").description("The number of finished Pods that are fully tracked")
                .tag("completion_mode", completionMode).tag("result", result).register(registry).increment(Math.max(0, n));
    }

    /** job_controller_pod_failures_handled_by_failure_policy_total. */
    public void podFailuresHandledByFailurePolicy(String action, double n) {
        Counter.builder(SUBSYSTEM + "pod.failures.handled.by.failure.policy")
                .description("The number of failed Pods handled by failure policy with respect to the failure policy action applied based on the matched rule.")
                .tag("action", action).register(registry).increment(n);
    }

    /** job_controller_terminated_pods_tracking_finalizer_total. */
    public void terminatedPodsTrackingFinalizer(String event) {
        Counter.builder(SUBSYSTEM + "terminated.pods.tracking.finalizer")
                .description("The number of terminated pods (phase=Failed|Succeeded) that have the finalizer batch.kubernetes.io/job-tracking")
                .tag("event", event).register(registry).increment();
    }

    /** job_controller_job_finished_indexes_total. */
    public void finishedIndexes(String status, String backoffLimit, double n) {
        Counter.builder(SUBSYSTEM + "job.finished.indexes").description("The number of finished indexes.")
                .tag("status", status).tag("backoffLimit", backoffLimit).register(registry).increment(Math.max(0, n));
    }

    /** job_controller_job_pods_creation_total. */
    public void podsCreation(String reason, String status, double n) {
        Counter.builder(SUBSYSTEM + "job.pods.creation")
                .description("The number of Pods created by the Job controller labelled with a reason for the Pod creation.")
                .tag("reason", reason).tag("status", status).register(registry).increment(n);
    }
}
