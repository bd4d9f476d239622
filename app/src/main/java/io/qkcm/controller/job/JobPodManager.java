package io.qkcm.controller.job;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodList;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.PodTemplateSpecBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.qkcm.controller.ActivePods;
import io.qkcm.controller.ApiErrors;
import io.qkcm.controller.CacheCatchUp;
import io.qkcm.controller.ControllerExpectations;
import io.qkcm.controller.ControllerRefManager;
import io.qkcm.controller.LabelSelectors;
import io.qkcm.controller.PodIndexes;
import io.qkcm.controller.PodControl;
import io.qkcm.controller.PodUtil;
import io.qkcm.controller.SlowStart;
import io.qkcm.controller.job.metrics.JobMetrics;
import io.qkcm.runtime.josdk.KeyReconciler;

import static io.qkcm.controller.job.JobQueues.key;

/**
 * Upstream's manageJob (job_controller.go): deletes surplus pods, all of them while suspended, removing
 * their tracking finalizer first, or creates the missing ones (one per pending index of an Indexed Job)
 * in slow-start batches once the pod-failure backoff has passed. Not in upstream: a creation or deletion
 * whose outcome is unknown ({@link ApiErrors#isOutcomeUnknown}) keeps its expectation raised and marks the
 * Job, settled by {@link #resolveUncertainWrites}, so that a stale cache never makes a pod twice (an index
 * running twice at once) or deletes twice.
 */
final class JobPodManager {

    /** How often a Job with writes of unknown outcome checks whether its pod cache caught up. */
    static final Duration UNCERTAIN_RECHECK = Duration.ofSeconds(1);

    private final Logger log;
    private final KubernetesClient client;
    private final SharedIndexInformer<Pod> podInformer;
    private final PodControl podControl;
    private final Clock clock;
    private final JobFeatures features;
    private final JobMetrics metrics;
    private final ControllerExpectations expectations;
    private final ExecutorService apiCalls;
    private final JobQueues queue;

    JobPodManager(JobContext c) {
        this.log = c.log();
        this.client = c.client();
        this.podInformer = c.podInformer();
        this.podControl = c.podControl();
        this.clock = c.clock();
        this.features = c.features();
        this.metrics = c.metrics();
        this.expectations = c.expectations();
        this.apiCalls = c.apiCalls();
        this.queue = c.queues();
    }

    /** Upstream's MaxPodCreateDeletePerSync. */
    static final int MAX_POD_CREATE_DELETE_PER_SYNC = 500;

    /** manageJob's active count when it also failed. */
    static final class ManageJobException extends Exception {
        private static final long serialVersionUID = 1L;
        final int active;
        final Exception cause;

        ManageJobException(int active, Exception cause) {
            super(cause);
            this.active = active;
            this.cause = cause;
        }
    }

    /**
     * Upstream's manageJob: deletes surplus pods (all of them when suspended) or creates the missing
     * ones in slow-start batches, after the pod-failure backoff. Returns the new active count.
     */
    int manageJob(Job job, SyncJobCtx ctx) throws ManageJobException, InterruptedException {
        int active = ctx.activePods.size();
        int parallelism = job.getSpec().getParallelism() == null ? 1 : job.getSpec().getParallelism();
        String jobKey = key(job);

        if (JobPredicates.jobSuspended(job)) {
            ctx.action = JobMetrics.ACTION_PODS_DELETED;
            log.debugf("Deleting all active pods in suspended job %s: active=%d", jobKey, active);
            List<Pod> podsToDelete = activePodsForRemoval(job, ctx.activePods, active);
            expectations.expectDeletions(jobKey, podsToDelete.size());
            List<Exception> errors = java.util.Collections.synchronizedList(new ArrayList<>());
            int[] removed = deleteJobPods(job, jobKey, podsToDelete, errors);
            active -= removed[1];
            if (ctx.terminating != null) {
                ctx.terminating += removed[1];
            }
            ctx.ready -= removed[0];
            if (!errors.isEmpty()) {
                throw new ManageJobException(active, errors.get(0));
            }
            return active;
        }

        int wantActive;
        if (job.getSpec().getCompletions() == null) {
            // no completion count: parallelism until the first success, then whatever still runs
            wantActive = ctx.succeeded > 0 ? active : parallelism;
        } else {
            wantActive = Math.max(0, Math.min(job.getSpec().getCompletions() - ctx.succeeded, parallelism));
        }
        int rmAtLeast = Math.max(0, active - wantActive);
        List<Pod> podsToDelete = activePodsForRemoval(job, ctx.activePods, rmAtLeast);
        if (podsToDelete.size() > MAX_POD_CREATE_DELETE_PER_SYNC) {
            podsToDelete = podsToDelete.subList(0, MAX_POD_CREATE_DELETE_PER_SYNC);
        }
        if (!podsToDelete.isEmpty()) {
            ctx.action = JobMetrics.ACTION_PODS_DELETED;
            expectations.expectDeletions(jobKey, podsToDelete.size());
            log.debugf("Too many pods running for job %s: deleted=%d target=%d", jobKey, podsToDelete.size(), wantActive);
            List<Exception> errors = java.util.Collections.synchronizedList(new ArrayList<>());
            int[] removed = deleteJobPods(job, jobKey, podsToDelete, errors);
            active -= removed[1];
            if (ctx.terminating != null) {
                ctx.terminating += removed[1];
            }
            ctx.ready -= removed[0];
            // deletions take precedence: creations wait for a later sync
            if (!errors.isEmpty()) {
                throw new ManageJobException(active, errors.get(0));
            }
            return active;
        }

        int terminating = 0;
        if (JobPredicates.onlyReplaceFailedPods(job, features) && ctx.terminating != null) {
            terminating = ctx.terminating;
        }
        int diff = wantActive - terminating - active;
        if (diff <= 0) {
            return active;
        }
        ctx.action = JobMetrics.ACTION_PODS_CREATED;
        Duration remainingTime = Duration.ZERO;
        if (!IndexedJobUtils.hasBackoffLimitPerIndex(job, features)) {
            remainingTime = ctx.newBackoffRecord.remainingTime(clock, BackoffUtils.DEFAULT_POD_FAILURE_BACKOFF,
                    BackoffUtils.MAX_POD_FAILURE_BACKOFF);
        }
        if (remainingTime.compareTo(Duration.ZERO) > 0) {
            queue.enqueueSyncJobWithDelay(job, remainingTime);
            return 0;
        }
        diff = Math.min(diff, MAX_POD_CREATE_DELETE_PER_SYNC);
        List<Integer> indexesToAdd = List.of();
        if (IndexedJobUtils.isIndexedJob(job)) {
            indexesToAdd = IndexedJobUtils.firstPendingIndexes(ctx, diff, job.getSpec().getCompletions(), features);
            if (IndexedJobUtils.hasBackoffLimitPerIndex(job, features)) {
                Duration minRemaining = null;
                List<Integer> now = new ArrayList<>();
                for (int ix : indexesToAdd) {
                    Duration r = BackoffUtils.remainingTimePerIndex(clock, BackoffUtils.DEFAULT_POD_FAILURE_BACKOFF,
                            BackoffUtils.MAX_POD_FAILURE_BACKOFF, ctx.podsWithDelayedDeletionPerIndex.get(ix));
                    if (r.isZero()) {
                        now.add(ix);
                    } else if (minRemaining == null || r.compareTo(minRemaining) < 0) {
                        minRemaining = r;
                    }
                }
                indexesToAdd = now;
                if (now.isEmpty() && minRemaining != null && minRemaining.compareTo(Duration.ZERO) > 0) {
                    queue.enqueueSyncJobWithDelay(job, minRemaining);
                    return 0;
                }
            }
            diff = indexesToAdd.size();
        }
        expectations.expectCreations(jobKey, diff);
        if (diff == 0) {
            return active;
        }
        log.debugf("Too few pods running for job %s: need=%d creating=%d", jobKey, wantActive, diff);

        PodTemplateSpec podTemplate = new PodTemplateSpecBuilder(job.getSpec().getTemplate()).build();
        if (IndexedJobUtils.isIndexedJob(job)) {
            IndexedJobUtils.addCompletionIndexEnvVariables(podTemplate, features);
        }
        if (podTemplate.getMetadata() == null) {
            podTemplate.setMetadata(new io.fabric8.kubernetes.api.model.ObjectMeta());
        }
        List<String> fins = podTemplate.getMetadata().getFinalizers() == null ? new ArrayList<>()
                : new ArrayList<>(podTemplate.getMetadata().getFinalizers());
        if (!fins.contains(TrackingUtils.JOB_TRACKING_FINALIZER)) {
            fins.add(TrackingUtils.JOB_TRACKING_FINALIZER);
        }
        podTemplate.getMetadata().setFinalizers(fins);

        ConcurrentLinkedQueue<Integer> indexes = new ConcurrentLinkedQueue<>(indexesToAdd);
        OwnerReference controllerRef = ControllerRefManager.newControllerRef(job, JobQueues.API_VERSION, JobQueues.KIND);
        AtomicInteger failures = new AtomicInteger();
        AtomicInteger creationsSucceeded = new AtomicInteger();
        int toCreate = diff;
        SlowStart.Result result = SlowStart.run(toCreate, SlowStart.INITIAL_BATCH_SIZE, apiCalls, () -> {
            Integer completionIndex = indexes.poll();
            PodTemplateSpec template = podTemplate;
            String generateName = null;
            if (completionIndex != null) {
                template = new PodTemplateSpecBuilder(podTemplate).build();
                IndexedJobUtils.addCompletionIndexAnnotation(template, completionIndex);
                if (features.podIndexLabel()) {
                    IndexedJobUtils.addCompletionIndexLabel(template, completionIndex);
                }
                template.getSpec().setHostname(job.getMetadata().getName() + "-" + completionIndex);
                generateName = IndexedJobUtils.podGenerateNameWithIndex(job.getMetadata().getName(), completionIndex);
                if (IndexedJobUtils.hasBackoffLimitPerIndex(job, features)) {
                    IndexedJobUtils.addIndexFailureCountAnnotation(template, job,
                            ctx.podsWithDelayedDeletionPerIndex.get(completionIndex), features);
                }
            }
            try {
                podControl.createPodsWithGenerateName(job.getMetadata().getNamespace(), template, job, controllerRef,
                        generateName);
            } catch (RuntimeException e) {
                if (ApiErrors.hasStatusCause(e, ApiErrors.NAMESPACE_TERMINATING_CAUSE)) {
                    // the namespace is going away; every later creation would fail the same way
                    return null;
                }
                if (ApiErrors.isOutcomeUnknown(e)) {
                    // the pod may exist: keep expecting it (settled by resolveUncertainWrites), so that a
                    // cache without it never creates its index, or one pod more, a second time
                    log.infof("Creation of a pod%s for job %s ended without an answer (%s); waiting for the pod cache to catch up",
                            completionIndex == null ? "" : " of index " + completionIndex, jobKey, KeyReconciler.shortMessage(e));
                    expectations.markUncertain(jobKey);
                } else {
                    log.debugf("Failed creation, decrementing expectations for job %s: %s", jobKey, KeyReconciler.shortMessage(e));
                    expectations.creationObserved(jobKey);
                }
                failures.incrementAndGet();
                // upstream counts an attempt that failed under "succeeded" too
                creationsSucceeded.incrementAndGet();
                throw e;
            }
            creationsSucceeded.incrementAndGet();
            return null;
        });
        int skipped = toCreate - result.successes() - failures.get();
        if (skipped > 0) {
            log.debugf("Slow-start failure. Skipping creating %d pods, decrementing expectations for job %s", skipped, jobKey);
            for (int i = 0; i < skipped; i++) {
                expectations.creationObserved(jobKey);
            }
        }
        active += result.successes();
        recordJobPodsCreationTotal(job, ctx, creationsSucceeded.get(), failures.get());
        if (result.error() != null) {
            throw new ManageJobException(active, result.error());
        }
        return active;
    }

    private void recordJobPodsCreationTotal(Job job, SyncJobCtx ctx, int succeeded, int failed) {
        String reason = JobMetrics.POD_CREATE_NEW;
        if (features.podReplacementPolicy()) {
            String policy = job.getSpec().getPodReplacementPolicy() == null ? "TerminatingOrFailed"
                    : job.getSpec().getPodReplacementPolicy();
            if ("Failed".equals(policy) && ctx.failed > 0) {
                reason = JobMetrics.POD_RECREATE_FAILED;
            } else if (ctx.failed > 0 || (ctx.terminating != null && ctx.terminating > 0)) {
                reason = JobMetrics.POD_RECREATE_TERMINATING_OR_FAILED;
            }
        }
        if (succeeded > 0) {
            metrics.podsCreation(reason, JobMetrics.SUCCEEDED, succeeded);
        }
        if (failed > 0) {
            metrics.podsCreation(reason, JobMetrics.FAILED, failed);
        }
    }

    /**
     * Upstream's activePodsForRemoval: for Indexed Jobs, pods of repeated or invalid indexes first;
     * then, up to {@code rmAtLeast}, in the ranking order (not ready, unscheduled, pending first).
     */
    static List<Pod> activePodsForRemoval(Job job, List<Pod> pods, int rmAtLeast) {
        List<Pod> rm = new ArrayList<>();
        List<Pod> left = new ArrayList<>();
        if (IndexedJobUtils.isIndexedJob(job)) {
            IndexedJobUtils.appendDuplicatedIndexPodsForRemoval(rm, left, pods, job.getSpec().getCompletions());
        } else {
            left.addAll(pods);
        }
        if (rm.size() < rmAtLeast) {
            ActivePods.sort(left, ActivePods.DELETION_ORDER);
            rm.addAll(left.subList(0, rmAtLeast - rm.size()));
        }
        return rm;
    }

    /**
     * Upstream's deleteJobPods: removes the tracking finalizer, then deletes; returns {ready deleted,
     * deleted} and throws the first error through {@code errors}.
     */
    private int[] deleteJobPods(Job job, String jobKey, List<Pod> pods, List<Exception> errors) throws InterruptedException {
        AtomicInteger successfulDeletes = new AtomicInteger(pods.size());
        AtomicInteger deletedReady = new AtomicInteger();
        List<Future<?>> futures = new ArrayList<>();
        for (Pod pod : pods) {
            futures.add(apiCalls.submit(() -> {
                String patch = TrackingUtils.removeTrackingFinalizerPatch(pod);
                if (patch != null) {
                    try {
                        podControl.patchPod(pod.getMetadata().getNamespace(), pod.getMetadata().getName(), patch);
                    } catch (RuntimeException e) {
                        failDelete(jobKey, pod, new KubernetesClientException("removing completion finalizer: "
                                + ApiErrors.message(e), ApiErrors.code(e), null), false, successfulDeletes, errors);
                        return;
                    }
                }
                try {
                    podControl.deletePod(job.getMetadata().getNamespace(), pod.getMetadata().getName(), job);
                } catch (RuntimeException e) {
                    failDelete(jobKey, pod, e, true, successfulDeletes, errors);
                }
                if (PodUtil.isReady(pod)) {
                    deletedReady.incrementAndGet();
                }
            }));
        }
        JobContext.waitAll(futures);
        return new int[] { deletedReady.get(), successfulDeletes.get() };
    }

    /**
     * A failed finalizer removal or deletion. A finalizer removal always counts as a plain failure: the
     * deletion was not sent. A deletion whose outcome is unknown keeps its expectation raised (settled
     * by {@link #resolveUncertainWrites}); any other failure lowers it, as upstream.
     */
    private void failDelete(String jobKey, Pod pod, RuntimeException e, boolean deletionSent,
            AtomicInteger successfulDeletes, List<Exception> errors) {
        if (deletionSent && ApiErrors.isOutcomeUnknown(e)) {
            log.infof("Deletion of Pod %s of job %s ended without an answer (%s); waiting for the pod cache to catch up",
                    pod.getMetadata().getName(), jobKey, KeyReconciler.shortMessage(e));
            expectations.markUncertain(jobKey);
            successfulDeletes.decrementAndGet();
            errors.add(e);
            return;
        }
        // the informer will not observe this deletion
        expectations.deletionObserved(jobKey);
        if (!ApiErrors.isNotFound(e)) {
            log.debugf("Failed to delete Pod %s of job %s: %s", pod.getMetadata().getName(), jobKey, KeyReconciler.shortMessage(e));
            successfulDeletes.decrementAndGet();
            errors.add(e);
        }
    }

    /**
     * Not in upstream: after a pod write of {@code job} whose outcome is unknown (see
     * {@link ControllerExpectations#markUncertain}), lists the Job's pods from the API server (a consistent
     * read) and, when the cache holds what the list holds ({@link CacheCatchUp}, on the Job's UID), drops the
     * expectations so that this sync acts on a cache that includes the write, whatever became of it. Returns
     * whether it did; if not, the caller checks again after {@link #UNCERTAIN_RECHECK}. The expectations'
     * timeout still bounds the wait.
     */
    boolean resolveUncertainWrites(Job job, String jobKey) {
        String namespace = job.getMetadata().getNamespace();
        LabelSelectors.Selector selector;
        PodList live;
        try {
            selector = LabelSelectors.fromLabelSelector(job.getSpec().getSelector());
            live = client.pods().inNamespace(namespace).withLabelSelector(job.getSpec().getSelector()).list();
        } catch (KubernetesClientException | IllegalArgumentException e) {
            log.debugf("Job %s: listing its pods to settle writes of unknown outcome failed: %s", jobKey, e.getMessage());
            return false;
        }
        // the list is by selector: compare the cached pods it could have returned
        List<Pod> cachedPods = PodIndexes.podsInNamespace(podInformer, namespace).stream()
                .filter(p -> selector.matches(p.getMetadata().getLabels())).toList();
        boolean caughtUp = CacheCatchUp.caughtUp(job.getMetadata().getUid(), live.getItems(),
                live.getMetadata().getResourceVersion(), podKey -> podInformer.getStore().getByKey(podKey), cachedPods);
        if (!caughtUp) {
            log.debugf("Job %s: the pod cache has not caught up with the API server after writes of unknown outcome", jobKey);
            return false;
        }
        log.infof("Job %s: the pod cache has caught up with the API server; writes of unknown outcome settled", jobKey);
        expectations.deleteExpectations(jobKey);
        return true;
    }
}
