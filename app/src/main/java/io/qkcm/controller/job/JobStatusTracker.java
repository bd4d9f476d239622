package io.qkcm.controller.job;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobCondition;
import io.fabric8.kubernetes.api.model.batch.v1.JobStatus;
import io.fabric8.kubernetes.api.model.batch.v1.UncountedTerminatedPods;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.qkcm.controller.ApiErrors;
import io.qkcm.controller.PodControl;
import io.qkcm.controller.PodUtil;
import io.qkcm.controller.job.metrics.JobMetrics;
import io.qkcm.runtime.events.EventRecorder;
import io.qkcm.runtime.josdk.KeyReconciler;

import static io.qkcm.controller.job.JobPredicates.n;
import static io.qkcm.controller.job.JobPredicates.nz;
import static io.qkcm.controller.job.JobQueues.key;

/**
 * Upstream's pod tracking with finalizers (job_controller.go's trackJobStatusAndRemoveFinalizers and
 * flushUncountedAndRemoveFinalizers): finished pods go into {@code status.uncountedTerminatedPods}, the
 * status is written, only then are their tracking finalizers removed and the pods moved into the
 * counters; the finished condition is set once nothing is left uncounted (nor terminating).
 */
final class JobStatusTracker {

    private final Logger log;
    private final KubernetesClient client;
    private final PodControl podControl;
    private final EventRecorder recorder;
    private final JobFeatures features;
    private final JobMetrics metrics;
    private final TrackingUtils.UidTrackingExpectations finalizerExpectations;
    private final BackoffUtils.BackoffStore podBackoffStore;
    private final Set<String> finishedJobExpectations;
    private final ExecutorService apiCalls;
    private final JobConditions conditions;

    JobStatusTracker(JobContext c) {
        this.log = c.log();
        this.client = c.client();
        this.podControl = c.podControl();
        this.recorder = c.recorder();
        this.features = c.features();
        this.metrics = c.metrics();
        this.finalizerExpectations = c.finalizerExpectations();
        this.podBackoffStore = c.podBackoffStore();
        this.finishedJobExpectations = c.finishedJobExpectations();
        this.apiCalls = c.apiCalls();
        this.conditions = c.conditions();
    }

    /** Upstream's MaxUncountedPods: the most UIDs one sync puts in uncountedTerminatedPods. */
    static final int MAX_UNCOUNTED_PODS = 500;

    /** The error of a failed tracking step, keeping the API error's code (409s stay quiet). */
    static final class TrackingException extends KubernetesClientException {
        private static final long serialVersionUID = 1L;
        private final int code;
        private final transient io.fabric8.kubernetes.api.model.Status status;

        TrackingException(String message, Exception cause) {
            super(message, cause);
            this.code = ApiErrors.code(cause);
            this.status = cause instanceof KubernetesClientException k ? k.getStatus() : null;
        }

        @Override
        public int getCode() {
            return code;
        }

        @Override
        public io.fabric8.kubernetes.api.model.Status getStatus() {
            return status;
        }
    }

    /**
     * Upstream's trackJobStatusAndRemoveFinalizers: records finished pods in uncountedTerminatedPods,
     * removes their finalizers, moves them into the counters, and sets the finished condition when
     * nothing is left uncounted (nor terminating).
     */
    void trackJobStatusAndRemoveFinalizers(SyncJobCtx ctx, boolean needsFlush) throws Exception {
        boolean isIndexed = IndexedJobUtils.isIndexedJob(ctx.job);
        List<Pod> podsToRemoveFinalizer = new ArrayList<>();
        UncountedTerminatedPods uncountedStatus = ctx.job.getStatus().getUncountedTerminatedPods();
        List<Integer> newSucceededIndexes = new ArrayList<>();
        List<Pod> pods = new ArrayList<>(ctx.pods);
        if (isIndexed) {
            pods.sort(IndexedJobUtils.BY_COMPLETION_INDEX);
        }
        Set<String> uidsWithFinalizer = new HashSet<>();
        Counters[] oldCounters = { Counters.of(ctx.job.getStatus()) };
        Map<String, Integer> podFailureCountByPolicyAction = new java.util.TreeMap<>();
        for (Pod p : pods) {
            if (TrackingUtils.hasJobTrackingFinalizer(p) && !ctx.expectedRmFinalizers.contains(p.getMetadata().getUid())) {
                uidsWithFinalizer.add(p.getMetadata().getUid());
            }
        }
        if (cleanUncountedPodsWithoutFinalizers(ctx.job.getStatus(), uidsWithFinalizer)) {
            needsFlush = true;
        }
        List<String> uncountedSucceeded = new ArrayList<>(nz(uncountedStatus.getSucceeded()));
        List<String> uncountedFailed = new ArrayList<>(nz(uncountedStatus.getFailed()));
        boolean reachedMaxUncountedPods = false;
        for (Pod pod : pods) {
            String uid = pod.getMetadata().getUid();
            if (!TrackingUtils.hasJobTrackingFinalizer(pod) || ctx.expectedRmFinalizers.contains(uid)) {
                continue; // handled by an earlier sync
            }
            boolean considerPodFailed = JobPredicates.isPodFailed(pod, ctx.job, features);
            if (!canRemoveFinalizer(ctx, pod, considerPodFailed)) {
                continue;
            }
            podsToRemoveFinalizer.add(pod);
            if ("Succeeded".equals(PodUtil.phase(pod)) && !ctx.uncountedFailed.contains(uid)) {
                if (isIndexed) {
                    // the index alone prevents counting a success twice
                    int ix = IndexedJobUtils.getCompletionIndex(pod);
                    if (ix != IndexedJobUtils.UNKNOWN_COMPLETION_INDEX && ix < ctx.job.getSpec().getCompletions()
                            && !ctx.prevSucceededIndexes.has(ix)) {
                        newSucceededIndexes.add(ix);
                        needsFlush = true;
                    }
                } else if (!ctx.uncountedSucceeded.contains(uid)) {
                    needsFlush = true;
                    uncountedSucceeded.add(uid);
                }
            } else if (considerPodFailed || (ctx.finishedCondition != null && !conditions.isSuccessCriteriaMetCondition(ctx.finishedCondition))) {
                // once the Job is finishing, every pod not terminated counts as failed
                int ix = IndexedJobUtils.getCompletionIndex(pod);
                if (!ctx.uncountedFailed.contains(uid) && (!isIndexed
                        || (ix != IndexedJobUtils.UNKNOWN_COMPLETION_INDEX && ix < ctx.job.getSpec().getCompletions()))) {
                    if (ctx.job.getSpec().getPodFailurePolicy() != null) {
                        PodFailurePolicies.Match m = PodFailurePolicies.match(ctx.job.getSpec().getPodFailurePolicy(), pod,
                                features.backoffLimitPerIndex());
                        if (m.action() != null) {
                            podFailureCountByPolicyAction.merge(m.action(), 1, Integer::sum);
                        }
                        if (m.countFailed()) {
                            needsFlush = true;
                            uncountedFailed.add(uid);
                        }
                    } else {
                        needsFlush = true;
                        uncountedFailed.add(uid);
                    }
                }
            }
            if (newSucceededIndexes.size() + uncountedSucceeded.size() + uncountedFailed.size() >= MAX_UNCOUNTED_PODS) {
                // keeps the status small and this sync short; status and pod updates queue the Job again
                reachedMaxUncountedPods = true;
                break;
            }
        }
        uncountedStatus.setSucceeded(uncountedSucceeded);
        uncountedStatus.setFailed(uncountedFailed);
        if (isIndexed) {
            java.util.Collections.sort(newSucceededIndexes);
            ctx.succeededIndexes = ctx.succeededIndexes.withOrderedIndexes(newSucceededIndexes);
            String succeededIndexesStr = ctx.succeededIndexes.toString();
            if (!succeededIndexesStr.equals(nz(ctx.job.getStatus().getCompletedIndexes()))) {
                needsFlush = true;
            }
            ctx.job.getStatus().setSucceeded(ctx.succeededIndexes.total());
            ctx.job.getStatus().setCompletedIndexes(succeededIndexesStr);
            String failedIndexesStr = ctx.failedIndexes == null ? null : ctx.failedIndexes.toString();
            if (!Objects.equals(ctx.job.getStatus().getFailedIndexes(), failedIndexesStr)) {
                ctx.job.getStatus().setFailedIndexes(failedIndexesStr);
                needsFlush = true;
            }
        }
        if (ctx.finishedCondition != null && "FailureTarget".equals(ctx.finishedCondition.getType())) {
            // the interim FailureTarget goes out before the finalizers are removed; Failed follows them
            JobConditions.conditions(ctx.job.getStatus()).add(ctx.finishedCondition);
            needsFlush = true;
            ctx.finishedCondition = conditions.newFailedConditionForFailureTarget(ctx.finishedCondition);
        }
        if (conditions.isSuccessCriteriaMetCondition(ctx.finishedCondition)) {
            if (conditions.hasSuccessCriteriaMetCondition(ctx.job) == null) {
                JobConditions.conditions(ctx.job.getStatus()).add(ctx.finishedCondition);
                needsFlush = true;
            }
            ctx.finishedCondition = conditions.newCondition("Complete", "True", ctx.finishedCondition.getReason(),
                    ctx.finishedCondition.getMessage());
        }
        needsFlush = flushUncountedAndRemoveFinalizers(ctx, podsToRemoveFinalizer, uidsWithFinalizer, oldCounters,
                podFailureCountByPolicyAction, needsFlush);
        boolean jobFinished = !reachedMaxUncountedPods && enactJobFinished(ctx);
        if (jobFinished) {
            needsFlush = true;
        }
        if (needsFlush) {
            try {
                ctx.job = updateJobStatus(ctx.job);
            } catch (KubernetesClientException e) {
                throw new TrackingException("removing uncounted pods from status: " + ApiErrors.message(e), e);
            }
            if (jobFinished) {
                recordJobFinished(ctx.job, ctx.finishedCondition);
                finishedJobExpectations.add(ctx.job.getMetadata().getUid());
            }
            recordJobPodFinished(ctx.job, oldCounters[0]);
        }
    }

    /**
     * Whether the pod's finalizer can go: the Job is being deleted or finishing, the pod succeeded, or
     * it failed and is not kept to hand its index's failure count to its replacement.
     */
    private boolean canRemoveFinalizer(SyncJobCtx ctx, Pod pod, boolean considerPodFailed) {
        if (ctx.job.getMetadata().getDeletionTimestamp() != null || ctx.finishedCondition != null
                || "Succeeded".equals(PodUtil.phase(pod))) {
            return true;
        }
        if (!considerPodFailed) {
            return false;
        }
        if (IndexedJobUtils.hasBackoffLimitPerIndex(ctx.job, features) && ctx.podsWithDelayedDeletionPerIndex != null) {
            int index = IndexedJobUtils.getCompletionIndex(pod);
            if (index != IndexedJobUtils.UNKNOWN_COMPLETION_INDEX) {
                Pod p = ctx.podsWithDelayedDeletionPerIndex.get(index);
                if (p != null && Objects.equals(p.getMetadata().getUid(), pod.getMetadata().getUid())) {
                    log.tracef("Delaying pod finalizer removal to await for pod recreation within the index: %s",
                            pod.getMetadata().getName());
                    return false;
                }
            }
        }
        return true;
    }

    /**
     * Upstream's flushUncountedAndRemoveFinalizers: writes the status holding the new uncounted UIDs
     * (and interim conditions), only then removes the finalizers, and moves the pods whose finalizer
     * is gone into the counters. Returns whether status changes are still to be written.
     */
    private boolean flushUncountedAndRemoveFinalizers(SyncJobCtx ctx, List<Pod> podsToRemoveFinalizer,
            Set<String> uidsWithFinalizer, Counters[] oldCounters, Map<String, Integer> podFailureCountByPolicyAction,
            boolean needsFlush) throws Exception {
        if (needsFlush) {
            try {
                ctx.job = updateJobStatus(ctx.job);
            } catch (KubernetesClientException e) {
                throw new TrackingException("adding uncounted pods to status: " + ApiErrors.message(e), e);
            }
            podBackoffStore.updateBackoffRecord(ctx.newBackoffRecord);
            recordJobPodFinished(ctx.job, oldCounters[0]);
            oldCounters[0] = Counters.of(ctx.job.getStatus());
            needsFlush = false;
        }
        podFailureCountByPolicyAction.forEach((a, count) -> metrics.podFailuresHandledByFailurePolicy(a, count));
        String jobKey = key(ctx.job);
        Exception rmErr = null;
        if (!podsToRemoveFinalizer.isEmpty()) {
            boolean[] rmSucceeded = new boolean[podsToRemoveFinalizer.size()];
            rmErr = removeTrackingFinalizerFromPods(jobKey, podsToRemoveFinalizer, rmSucceeded);
            for (int i = 0; i < podsToRemoveFinalizer.size(); i++) {
                if (rmSucceeded[i]) {
                    uidsWithFinalizer.remove(podsToRemoveFinalizer.get(i).getMetadata().getUid());
                }
            }
        }
        if (cleanUncountedPodsWithoutFinalizers(ctx.job.getStatus(), uidsWithFinalizer)) {
            needsFlush = true;
        }
        if (rmErr != null && needsFlush) {
            // keep what was removed counted before reporting the failure
            try {
                ctx.job = updateJobStatus(ctx.job);
            } catch (KubernetesClientException e) {
                throw new TrackingException("removing uncounted pods from status: " + ApiErrors.message(e), e);
            }
        }
        if (rmErr != null) {
            throw rmErr;
        }
        return needsFlush;
    }

    /** Moves the uncounted UIDs whose pods no longer carry the finalizer into the counters. */
    static boolean cleanUncountedPodsWithoutFinalizers(JobStatus status, Set<String> uidsWithFinalizer) {
        boolean updated = false;
        UncountedTerminatedPods uncounted = status.getUncountedTerminatedPods();
        List<String> succeeded = nz(uncounted.getSucceeded());
        List<String> newUncounted = filterInUncountedUIDs(succeeded, uidsWithFinalizer);
        if (newUncounted.size() != succeeded.size()) {
            updated = true;
            status.setSucceeded(n(status.getSucceeded()) + succeeded.size() - newUncounted.size());
            uncounted.setSucceeded(newUncounted);
        }
        List<String> failed = nz(uncounted.getFailed());
        newUncounted = filterInUncountedUIDs(failed, uidsWithFinalizer);
        if (newUncounted.size() != failed.size()) {
            updated = true;
            status.setFailed(n(status.getFailed()) + failed.size() - newUncounted.size());
            uncounted.setFailed(newUncounted);
        }
        return updated;
    }

    private static List<String> filterInUncountedUIDs(List<String> uncounted, Set<String> include) {
        List<String> result = new ArrayList<>();
        for (String uid : uncounted) {
            if (include.contains(uid)) {
                result.add(uid);
            }
        }
        return result;
    }

    /**
     * Removes the tracking finalizer from the pods, expecting each removal first; {@code succeeded[i]}
     * tells whether pod i's finalizer is gone (a pod already deleted counts). Returns the first error.
     */
    private Exception removeTrackingFinalizerFromPods(String jobKey, List<Pod> pods, boolean[] succeeded)
            throws InterruptedException {
        List<String> uids = new ArrayList<>();
        for (Pod p : pods) {
            uids.add(p.getMetadata().getUid());
        }
        finalizerExpectations.expectFinalizersRemoved(jobKey, uids);
        List<Exception> errors = java.util.Collections.synchronizedList(new ArrayList<>());
        List<Future<?>> futures = new ArrayList<>();
        for (int i = 0; i < pods.size(); i++) {
            int idx = i;
            Pod pod = pods.get(i);
            futures.add(apiCalls.submit(() -> {
                String patch = TrackingUtils.removeTrackingFinalizerPatch(pod);
                if (patch == null) {
                    return;
                }
                try {
                    podControl.patchPod(pod.getMetadata().getNamespace(), pod.getMetadata().getName(), patch);
                } catch (RuntimeException e) {
                    // no update will show this removal
                    finalizerExpectations.finalizerRemovalObserved(jobKey, pod.getMetadata().getUid());
                    if (!ApiErrors.isNotFound(e)) {
                        errors.add(e);
                        log.errorf("removing tracking finalizer: %s", KeyReconciler.shortMessage(e));
                        return;
                    }
                }
                succeeded[idx] = true;
            }));
        }
        JobContext.waitAll(futures);
        return errors.isEmpty() ? null : errors.get(0);
    }

    /** Upstream's enactJobFinished: sets Complete or Failed once no pod is uncounted or terminating. */
    private boolean enactJobFinished(SyncJobCtx ctx) {
        if (ctx.finishedCondition == null) {
            return false;
        }
        JobStatus status = ctx.job.getStatus();
        UncountedTerminatedPods uncounted = status.getUncountedTerminatedPods();
        if (uncounted != null) {
            int count = nz(uncounted.getSucceeded()).size() + nz(uncounted.getFailed()).size();
            if (count > 0) {
                log.tracef("Delaying marking the Job as finished, because there are still %d uncounted pod(s)", count);
                return false;
            }
        }
        if (features.delayTerminalCondition() && ctx.terminating != null && ctx.terminating > 0) {
            log.tracef("Delaying marking the Job as finished, because there are still %d terminating pod(s)", ctx.terminating);
            return false;
        }
        JobCondition c = ctx.finishedCondition;
        conditions.ensureJobConditionStatus(status, c.getType(), c.getStatus(), c.getReason(), c.getMessage());
        if ("Complete".equals(c.getType())) {
            status.setCompletionTime(c.getLastTransitionTime());
        }
        return true;
    }

    /** The counters of a status, as upstream's shallow copy for the finished-pods metrics. */
    record Counters(int succeeded, int failed, String completedIndexes, String failedIndexes) {
        static Counters of(JobStatus s) {
            return new Counters(n(s.getSucceeded()), n(s.getFailed()), nz(s.getCompletedIndexes()), s.getFailedIndexes());
        }
    }

    /** Upstream's recordJobPodFinished: job_pods_finished_total and job_finished_indexes_total. */
    private void recordJobPodFinished(Job job, Counters old) {
        String completionMode = JobPredicates.completionModeStr(job);
        int diff = 0;
        JobStatus s = job.getStatus();
        if (IndexedJobUtils.isIndexedJob(job)) {
            int completions = job.getSpec().getCompletions();
            if (!nz(s.getCompletedIndexes()).equals(old.completedIndexes())) {
                diff = OrderedIntervals.parse(s.getCompletedIndexes(), completions).total()
                        - OrderedIntervals.parse(old.completedIndexes(), completions).total();
            }
            String backoffLimitLabel = IndexedJobUtils.hasBackoffLimitPerIndex(job, features) ? "perIndex" : "global";
            metrics.finishedIndexes(JobMetrics.SUCCEEDED, backoffLimitLabel, diff);
            if (IndexedJobUtils.hasBackoffLimitPerIndex(job, features)
                    && !Objects.equals(s.getFailedIndexes(), old.failedIndexes())) {
                int failedDiff = (s.getFailedIndexes() == null ? 0 : OrderedIntervals.parse(s.getFailedIndexes(), completions).total())
                        - (old.failedIndexes() == null ? 0 : OrderedIntervals.parse(old.failedIndexes(), completions).total());
                if (failedDiff > 0) {
                    metrics.finishedIndexes(JobMetrics.FAILED, backoffLimitLabel, failedDiff);
                }
            }
        } else {
            diff = n(s.getSucceeded()) - old.succeeded();
        }
        metrics.podsFinished(completionMode, JobMetrics.SUCCEEDED, diff);
        metrics.podsFinished(completionMode, JobMetrics.FAILED, n(s.getFailed()) - old.failed());
    }

    private void recordJobFinished(Job job, JobCondition finishedCond) {
        String completionMode = IndexedJobUtils.isIndexedJob(job) ? "Indexed" : "NonIndexed";
        if ("Complete".equals(finishedCond.getType())) {
            metrics.jobFinished(completionMode, JobMetrics.SUCCEEDED, finishedCond.getReason());
            if (job.getSpec().getCompletions() != null && n(job.getStatus().getSucceeded()) > job.getSpec().getCompletions()) {
                recorder.event(job, EventRecorder.WARNING, "TooManySucceededPods",
                        "Too many succeeded pods running after completion count reached");
            }
            recorder.event(job, EventRecorder.NORMAL, "Completed", "Job completed");
        } else {
            recorder.event(job, EventRecorder.WARNING, finishedCond.getReason(), finishedCond.getMessage());
            metrics.jobFinished(completionMode, JobMetrics.FAILED, finishedCond.getReason());
        }
    }

    /** Upstream's updateJobStatus: PUT of the status subresource, with the resourceVersion read. */
    private Job updateJobStatus(Job job) {
        Job updated = client.batch().v1().jobs().inNamespace(job.getMetadata().getNamespace()).resource(job)
                .updateStatus();
        if (updated.getStatus() == null) {
            updated.setStatus(new JobStatus());
        }
        if (updated.getStatus().getUncountedTerminatedPods() == null) {
            updated.getStatus().setUncountedTerminatedPods(new UncountedTerminatedPods());
        }
        return updated;
    }
}
