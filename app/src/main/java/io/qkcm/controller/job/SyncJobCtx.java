package io.qkcm.controller.job;

import java.util.List;
import java.util.Map;
import java.util.Set;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobCondition;

/** Upstream's syncJobCtx: what one sync of a Job computed so far. */
final class SyncJobCtx {
    Job job;
    List<Pod> pods;
    JobCondition finishedCondition;
    List<Pod> activePods;
    int succeeded;
    int failed;
    OrderedIntervals prevSucceededIndexes = OrderedIntervals.EMPTY;
    OrderedIntervals succeededIndexes = OrderedIntervals.EMPTY;
    /** Null unless the Job has backoffLimitPerIndex. */
    OrderedIntervals failedIndexes;
    BackoffUtils.BackoffRecord newBackoffRecord;
    Set<String> expectedRmFinalizers = Set.of();
    Set<String> uncountedSucceeded = Set.of();
    Set<String> uncountedFailed = Set.of();
    Map<Integer, Pod> podsWithDelayedDeletionPerIndex;
    /** Null when terminating pods are not tracked. */
    Integer terminating;
    int ready;
    /** What manageJob did, for job_controller_job_syncs_total. */
    String action = io.qkcm.controller.job.metrics.JobMetrics.ACTION_TRACKING;
}
