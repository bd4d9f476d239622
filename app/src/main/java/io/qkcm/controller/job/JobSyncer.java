package io.qkcm.controller.job;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.JobCondition;
import io.fabric8.kubernetes.api.model.batch.v1.JobStatus;
import io.fabric8.kubernetes.api.model.batch.v1.UncountedTerminatedPods;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.qkcm.controller.ActivePods;
import io.qkcm.controller.ApiErrors;
import io.qkcm.controller.ControllerExpectations;
import io.qkcm.controller.ControllerRefManager;
import io.qkcm.controller.LabelSelectors;
import io.qkcm.controller.PodControl;
import io.qkcm.controller.PodIndexes;
import io.qkcm.controller.PodUtil;
import io.qkcm.controller.job.metrics.JobMetrics;
import io.qkcm.controller.util.job.JobUtil;
import io.qkcm.runtime.events.EventRecorder;
import io.qkcm.runtime.josdk.KeyReconciler;

import static io.qkcm.controller.job.JobPredicates.n;
import static io.qkcm.controller.job.JobPredicates.nz;
import io.qkcm.runtime.informers.MetaNamespaceKey;

/**
 * Upstream's syncJob (job_controller.go): claims the Job's pods, counts the finished ones, decides
 * whether the Job fails (backoff limits, pod failure policy, deadline) or succeeds (completions,
 * success policy), runs {@link JobPodManager} or deletes the pods of an ending Job, and hands the
 * status to {@link JobStatusTracker}.
 */
final class JobSyncer {

    private final Logger log;
    private final KubernetesClient client;
    private final SharedIndexInformer<Job> jobInformer;
    private final SharedIndexInformer<Pod> podInformer;
    private final PodControl podControl;
    private final EventRecorder recorder;
    private final Clock clock;
    private final JobFeatures features;
    private final JobMetrics metrics;
    private final ControllerExpectations expectations;
    private final TrackingUtils.UidTrackingExpectations finalizerExpectations;
    private final BackoffUtils.BackoffStore podBackoffStore;
    private final Set<String> finishedJobExpectations;
    private final ExecutorService apiCalls;
    private final JobQueues queue;
    private final JobConditions conditions;
    private final JobPodManager podManager;
    private final JobStatusTracker statusTracker;

    JobSyncer(JobContext c) {
        this.log = c.log();
        this.client = c.client();
        this.jobInformer = c.jobInformer();
        this.podInformer = c.podInformer();
        this.podControl = c.podControl();
        this.recorder = c.recorder();
        this.clock = c.clock();
        this.features = c.features();
        this.metrics = c.metrics();
        this.expectations = c.expectations();
        this.finalizerExpectations = c.finalizerExpectations();
        this.podBackoffStore = c.podBackoffStore();
        this.finishedJobExpectations = c.finishedJobExpectations();
        this.apiCalls = c.apiCalls();
        this.queue = c.queues();
        this.conditions = c.conditions();
        this.podManager = new JobPodManager(c);
        this.statusTracker = new JobStatusTracker(c);
    }

    /** Adopts and releases pods; adopted pods count as carrying the tracking finalizer. */
    private List<Pod> getPodsForJob(Job job) throws Exception {
        LabelSelectors.Selector selector;
        try {
            selector = LabelSelectors.fromLabelSelector(job.getSpec().getSelector());
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException("couldn't convert Job selector: " + e.getMessage(), e);
        }
        String ns = job.getMetadata().getNamespace();
        String name = job.getMetadata().getName();
        String uid = job.getMetadata().getUid();
        List<Pod> pods = PodIndexes.filterPodsByOwner(podInformer, ns, JobQueues.KIND, name, uid, true);
        ControllerRefManager.CanAdopt canAdopt = ControllerRefManager.recheckDeletionTimestamp(job, JobQueues.KIND,
                () -> client.batch().v1().jobs().inNamespace(ns).withName(name).get());
        ControllerRefManager<Pod> cm = ControllerRefManager.forPods(podControl, job, selector, JobQueues.API_VERSION,
                JobQueues.KIND, canAdopt, TrackingUtils.JOB_TRACKING_FINALIZER);
        List<Pod> claimed = cm.claim(pods);
        List<Pod> result = new ArrayList<>(claimed.size());
        for (Pod p : claimed) {
            boolean adopted = true;
            if (p.getMetadata().getOwnerReferences() != null) {
                for (OwnerReference r : p.getMetadata().getOwnerReferences()) {
                    if (Objects.equals(r.getUid(), uid)) {
                        adopted = false;
                        break;
                    }
                }
            }
            if (adopted && !TrackingUtils.hasJobTrackingFinalizer(p)) {
                Pod copy = new PodBuilder(p).build();
                List<String> fins = copy.getMetadata().getFinalizers() == null ? new ArrayList<>()
                        : new ArrayList<>(copy.getMetadata().getFinalizers());
                fins.add(TrackingUtils.JOB_TRACKING_FINALIZER);
                copy.getMetadata().setFinalizers(fins);
                result.add(copy);
            } else {
                result.add(p);
            }
        }
        return result;
    }

    /** Upstream's syncJob for one key: the Job's pods, their counts, its conditions, one status write. */
    void syncJob(String key) throws Exception {
        MetaNamespaceKey parts = MetaNamespaceKey.split(key);
        if (parts.namespace().isEmpty() || parts.name().isEmpty()) {
            throw new IllegalArgumentException("invalid job key \"" + key + "\": either namespace or name is missing");
        }
        Job sharedJob = jobInformer.getStore().getByKey(key);
        if (sharedJob == null) {
            log.tracef("Job has been deleted: %s", key);
            expectations.deleteExpectations(key);
            finalizerExpectations.deleteExpectations(key);
            podBackoffStore.removeBackoffRecord(key);
            return;
        }
        // checked here too: a queued key may now name a Job with another managedBy
        String managedBy = features.managedByExternalController(sharedJob);
        if (managedBy != null) {
            log.debugf("Skip syncing the job as it is managed by an external controller: key=%s controllerName=%s", key,
                    managedBy);
            return;
        }
        Job job = new JobBuilder(sharedJob).build();
        if (job.getStatus() == null) {
            job.setStatus(new JobStatus());
        }
        if (JobUtil.isJobFinished(job)) {
            podBackoffStore.removeBackoffRecord(key);
            finishedJobExpectations.remove(job.getMetadata().getUid());
            return;
        }
        if (finishedJobExpectations.contains(job.getMetadata().getUid())) {
            log.debugf("Skip syncing the job as its marked finished but the corresponding update event is not yet received: %s", key);
            return;
        }
        String mode = job.getSpec().getCompletionMode();
        if (mode != null && !"NonIndexed".equals(mode) && !"Indexed".equals(mode)) {
            recorder.event(job, EventRecorder.WARNING, "UnknownCompletionMode",
                    "Skipped Job sync because completion mode is unknown");
            return;
        }
        String completionMode = JobPredicates.completionModeStr(job);
        String[] action = { JobMetrics.ACTION_RECONCILING };
        long start = System.nanoTime();
        String result = "error";
        try {
            syncJob(key, job, action);
            result = "success";
        } finally {
            metrics.sync(completionMode, result, action[0], (System.nanoTime() - start) / 1e9);
        }
    }

    private void syncJob(String key, Job job, String[] action) throws Exception {
        JobStatus status = job.getStatus();
        if (status.getUncountedTerminatedPods() == null) {
            status.setUncountedTerminatedPods(new UncountedTerminatedPods());
        }

        // expectations before listing pods: a pod created after this check is seen by the next sync
        boolean satisfiedExpectations = expectations.satisfiedExpectations(key);
        if (!satisfiedExpectations && expectations.isUncertain(key)) {
            // not in upstream: a pod write of unknown outcome waits until the cache includes it
            satisfiedExpectations = podManager.resolveUncertainWrites(job, key);
            if (!satisfiedExpectations) {
                queue.addAfter(key, JobPodManager.UNCERTAIN_RECHECK);
            }
        }

        List<Pod> pods = getPodsForJob(job);
        List<Pod> activePods = ActivePods.filterActivePods(pods);
        SyncJobCtx ctx = new SyncJobCtx();
        ctx.job = job;
        ctx.pods = pods;
        ctx.activePods = activePods;
        ctx.ready = JobPredicates.countReadyPods(activePods);
        ctx.uncountedSucceeded = new HashSet<>(nz(status.getUncountedTerminatedPods().getSucceeded()));
        ctx.uncountedFailed = new HashSet<>(nz(status.getUncountedTerminatedPods().getFailed()));
        ctx.expectedRmFinalizers = finalizerExpectations.getExpectedUIDs(key);
        if (trackTerminatingPods(job)) {
            ctx.terminating = ActivePods.filterTerminatingPods(pods).size();
        }
        int active = activePods.size();
        List<Pod> newSucceededPods = JobPredicates.getValidPodsWithFilter(ctx, ctx.uncountedSucceeded,
                p -> "Succeeded".equals(PodUtil.phase(p)));
        List<Pod> newFailedPods = JobPredicates.getValidPodsWithFilter(ctx, ctx.uncountedFailed, p -> JobPredicates.isPodFailed(p, job, features));
        ctx.succeeded = n(status.getSucceeded()) + newSucceededPods.size() + ctx.uncountedSucceeded.size();
        ctx.failed = n(status.getFailed()) + nonIgnoredFailedPodsCount(ctx, newFailedPods) + ctx.uncountedFailed.size();

        // first start; not while suspended
        if (status.getStartTime() == null && !JobPredicates.jobSuspended(job)) {
            status.setStartTime(conditions.now());
        }
        ctx.newBackoffRecord = podBackoffStore.newBackoffRecord(key, newSucceededPods, newFailedPods);

        Exception manageJobErr = null;
        // the order of evaluation: conditions of earlier syncs, failure, then success
        boolean exceedsBackoffLimit = ctx.failed > backoffLimit(job);
        ctx.finishedCondition = conditions.hasSuccessCriteriaMetCondition(job);
        if (ctx.finishedCondition == null) {
            JobCondition failureTarget = JobConditions.findConditionByType(status.getConditions(), "FailureTarget");
            if (failureTarget != null && "True".equals(failureTarget.getStatus())) {
                ctx.finishedCondition = conditions.newFailedConditionForFailureTarget(failureTarget);
            } else {
                String failJobMessage = getFailJobMessage(job, pods);
                if (failJobMessage != null) {
                    // the interim FailureTarget records the message before finalizers are removed
                    ctx.finishedCondition = conditions.newCondition("FailureTarget", "True", "PodFailurePolicy", failJobMessage);
                }
            }
        }
        if (ctx.finishedCondition == null) {
            if (exceedsBackoffLimit || pastBackoffLimitOnFailure(job, pods)) {
                ctx.finishedCondition = conditions.newFailureCondition("BackoffLimitExceeded", "Job has reached the specified backoff limit");
            } else if (pastActiveDeadline(job)) {
                ctx.finishedCondition = conditions.newFailureCondition("DeadlineExceeded", "Job was active longer than specified deadline");
            } else if (job.getSpec().getActiveDeadlineSeconds() != null && !JobPredicates.jobSuspended(job)) {
                Instant startTime = PodUtil.parseTime(status.getStartTime());
                Duration syncDuration = Duration.ofSeconds(job.getSpec().getActiveDeadlineSeconds())
                        .minus(Duration.between(startTime, clock.instant()));
                log.debugf("Job has activeDeadlineSeconds configuration. Will sync this job again: key=%s nextSyncIn=%s",
                        key, syncDuration);
                queue.addAfter(key, syncDuration);
            }
        }

        if (IndexedJobUtils.isIndexedJob(job)) {
            OrderedIntervals[] succeeded = IndexedJobUtils.calculateSucceededIndexes(job, pods);
            ctx.prevSucceededIndexes = succeeded[0];
            ctx.succeededIndexes = succeeded[1];
            ctx.succeeded = ctx.succeededIndexes.total();
            if (IndexedJobUtils.hasBackoffLimitPerIndex(job, features)) {
                ctx.failedIndexes = IndexedJobUtils.calculateFailedIndexes(job, pods, features);
                if (ctx.finishedCondition == null) {
                    Integer maxFailed = job.getSpec().getMaxFailedIndexes();
                    if (maxFailed != null && ctx.failedIndexes.total() > maxFailed) {
                        ctx.finishedCondition = conditions.newFailureCondition("MaxFailedIndexesExceeded",
                                "Job has exceeded the specified maximal number of failed indexes");
                    } else if (ctx.failedIndexes.total() > 0
                            && ctx.failedIndexes.total() + ctx.succeededIndexes.total() >= job.getSpec().getCompletions()) {
                        ctx.finishedCondition = conditions.newFailureCondition("FailedIndexes", "Job has failed indexes");
                    }
                }
                ctx.podsWithDelayedDeletionPerIndex = IndexedJobUtils.getPodsWithDelayedDeletionPerIndex(ctx, features);
            }
            if (ctx.finishedCondition == null && features.successPolicy()) {
                String msg = SuccessPolicies.match(job.getSpec().getSuccessPolicy(), job.getSpec().getCompletions(),
                        ctx.succeededIndexes);
                if (msg != null) {
                    ctx.finishedCondition = conditions.newCondition("SuccessCriteriaMet", "True", "SuccessPolicy", msg);
                }
            }
        }

        boolean suspendCondChanged = false;
        if (ctx.finishedCondition != null) {
            // the Job is ending: its active pods go, their finalizers stay until they are counted
            List<Exception> errors = java.util.Collections.synchronizedList(new ArrayList<>());
            int[] deleted = deleteActivePods(job, ctx.activePods, errors);
            if (deleted[1] != active || !satisfiedExpectations) {
                // not finished yet: pods remain, or the cache may miss some
                ctx.finishedCondition = null;
            }
            active -= deleted[1];
            if (ctx.terminating != null) {
                ctx.terminating += deleted[1];
            }
            ctx.ready -= deleted[0];
            manageJobErr = errors.isEmpty() ? null : errors.get(0);
        } else {
            boolean manageJobCalled = false;
            if (satisfiedExpectations && job.getMetadata().getDeletionTimestamp() == null) {
                try {
                    active = podManager.manageJob(job, ctx);
                } catch (JobPodManager.ManageJobException e) {
                    active = e.active;
                    manageJobErr = e.cause;
                }
                action[0] = ctx.action;
                manageJobCalled = true;
            }
            boolean complete;
            if (job.getSpec().getCompletions() == null) {
                // any success completes such a Job once nothing runs any more
                complete = ctx.succeeded > 0 && active == 0;
            } else {
                complete = ctx.succeeded >= job.getSpec().getCompletions() && active == 0;
            }
            if (complete) {
                ctx.finishedCondition = conditions.newSuccessCondition();
            } else if (manageJobCalled) {
                if (JobPredicates.jobSuspended(job)) {
                    if (conditions.ensureJobConditionStatus(status, "Suspended", "True", "JobSuspended", "Job suspended")) {
                        suspendCondChanged = true;
                        recorder.event(job, EventRecorder.NORMAL, "Suspended", "Job suspended");
                    }
                } else {
                    if (conditions.ensureJobConditionStatus(status, "Suspended", "False", "JobResumed", "Job resumed")) {
                        suspendCondChanged = true;
                        recorder.event(job, EventRecorder.NORMAL, "Resumed", "Job resumed");
                        // activeDeadlineSeconds counts continuous activity: it starts over on resume
                        status.setStartTime(conditions.now());
                    }
                }
            }
        }

        Integer terminating = features.podReplacementPolicy() ? ctx.terminating : null;
        boolean needsStatusUpdate = suspendCondChanged || active != n(status.getActive())
                || !Objects.equals(ctx.ready, status.getReady());
        needsStatusUpdate = needsStatusUpdate || !Objects.equals(status.getTerminating(), terminating);
        status.setActive(active);
        status.setReady(ctx.ready);
        status.setTerminating(terminating);
        try {
            statusTracker.trackJobStatusAndRemoveFinalizers(ctx, needsStatusUpdate);
        } catch (InterruptedException e) {
            throw e;
        } catch (Exception e) {
            throw new JobStatusTracker.TrackingException("tracking status: " + ApiErrors.message(e), e);
        }
        if (manageJobErr != null) {
            throw manageJobErr;
        }
    }

    /** Upstream's deleteActivePods: deletes keeping the finalizers; returns {ready deleted, deleted}. */
    private int[] deleteActivePods(Job job, List<Pod> pods, List<Exception> errors) throws InterruptedException {
        AtomicInteger successfulDeletes = new AtomicInteger(pods.size());
        AtomicInteger deletedReady = new AtomicInteger();
        List<Future<?>> futures = new ArrayList<>();
        for (Pod pod : pods) {
            futures.add(apiCalls.submit(() -> {
                try {
                    podControl.deletePod(job.getMetadata().getNamespace(), pod.getMetadata().getName(), job);
                } catch (RuntimeException e) {
                    if (!ApiErrors.isNotFound(e)) {
                        successfulDeletes.decrementAndGet();
                        errors.add(e);
                        log.errorf("deleting pod %s: %s", pod.getMetadata().getName(), KeyReconciler.shortMessage(e));
                    }
                }
                if (PodUtil.isReady(pod)) {
                    deletedReady.incrementAndGet();
                }
            }));
        }
        JobContext.waitAll(futures);
        return new int[] { deletedReady.get(), successfulDeletes.get() };
    }

    private int nonIgnoredFailedPodsCount(SyncJobCtx ctx, List<Pod> failedPods) {
        int result = failedPods.size();
        if (ctx.job.getSpec().getPodFailurePolicy() != null) {
            for (Pod p : failedPods) {
                if (!PodFailurePolicies.match(ctx.job.getSpec().getPodFailurePolicy(), p, features.backoffLimitPerIndex())
                        .countFailed()) {
                    result--;
                }
            }
        }
        return result;
    }

    /** Upstream's pastBackoffLimitOnFailure: container restarts of running pods (restartPolicy OnFailure). */
    static boolean pastBackoffLimitOnFailure(Job job, List<Pod> pods) {
        PodTemplateSpec template = job.getSpec().getTemplate();
        if (template == null || template.getSpec() == null || !"OnFailure".equals(template.getSpec().getRestartPolicy())) {
            return false;
        }
        int result = 0;
        for (Pod po : pods) {
            String phase = PodUtil.phase(po);
            if ("Running".equals(phase) || "Pending".equals(phase)) {
                if (po.getStatus().getInitContainerStatuses() != null) {
                    for (var s : po.getStatus().getInitContainerStatuses()) {
                        result += n(s.getRestartCount());
                    }
                }
                if (po.getStatus().getContainerStatuses() != null) {
                    for (var s : po.getStatus().getContainerStatuses()) {
                        result += n(s.getRestartCount());
                    }
                }
            }
        }
        int backoffLimit = backoffLimit(job);
        if (backoffLimit == 0) {
            return result > 0;
        }
        return result >= backoffLimit;
    }

    private boolean pastActiveDeadline(Job job) {
        Instant start = PodUtil.parseTime(job.getStatus().getStartTime());
        if (job.getSpec().getActiveDeadlineSeconds() == null || start == null || JobPredicates.jobSuspended(job)) {
            return false;
        }
        Duration duration = Duration.between(start, clock.instant());
        return duration.compareTo(Duration.ofSeconds(job.getSpec().getActiveDeadlineSeconds())) >= 0;
    }

    /** The first FailJob message of a failed pod, if the Job has a pod failure policy. */
    private String getFailJobMessage(Job job, List<Pod> pods) {
        if (job.getSpec().getPodFailurePolicy() == null) {
            return null;
        }
        for (Pod p : pods) {
            if (JobPredicates.isPodFailed(p, job, features)) {
                String msg = PodFailurePolicies.match(job.getSpec().getPodFailurePolicy(), p, features.backoffLimitPerIndex())
                        .failJobMessage();
                if (msg != null) {
                    return msg;
                }
            }
        }
        return null;
    }

    /** Upstream's trackTerminatingPods. */
    private boolean trackTerminatingPods(Job job) {
        return features.podReplacementPolicy() || features.managedBy() || job.getSpec().getPodFailurePolicy() != null;
    }

    private static int backoffLimit(Job job) {
        Integer b = job.getSpec().getBackoffLimit();
        return b == null ? 6 : b;
    }
}
