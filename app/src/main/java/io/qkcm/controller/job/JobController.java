package io.qkcm.controller.job;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;

import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.PodTemplateSpecBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.JobCondition;
import io.fabric8.kubernetes.api.model.batch.v1.JobConditionBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.JobStatus;
import io.fabric8.kubernetes.api.model.batch.v1.UncountedTerminatedPods;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import io.javaoperatorsdk.operator.api.reconciler.Ignore;
import io.javaoperatorsdk.operator.processing.event.source.filter.OnAddFilter;
import io.javaoperatorsdk.operator.processing.event.source.filter.OnUpdateFilter;
import io.qkcm.controller.ActivePods;
import io.qkcm.controller.ApiErrors;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.controller.ControllerExpectations;
import io.qkcm.controller.ControllerRefManager;
import io.qkcm.controller.ControllerRefs;
import io.qkcm.controller.LabelSelectors;
import io.qkcm.controller.PodControl;
import io.qkcm.controller.PodIndexes;
import io.qkcm.controller.PodUtil;
import io.qkcm.runtime.workqueue.RateLimiter;
import io.qkcm.controller.RealPodControl;
import io.qkcm.runtime.informers.ResourceEventHandlerFuncs;
import io.qkcm.controller.SlowStart;
import io.qkcm.runtime.workqueue.WorkQueue;
import io.qkcm.runtime.events.EventRecorder;
import io.qkcm.controller.job.metrics.JobMetrics;
import io.qkcm.controller.util.job.JobUtil;
import io.qkcm.runtime.josdk.KeyReconciler;

/**
 * The Job controller (upstream pkg/controller/job): runs a Job's pods to completion. It creates pods
 * from the template (one per pending completion index for Indexed Jobs) up to parallelism, delaying
 * replacements of failed pods by the pod-failure backoff; counts finished pods exactly once through
 * the {@code batch.kubernetes.io/job-tracking} finalizer and {@code status.uncountedTerminatedPods};
 * evaluates backoffLimit, backoffLimitPerIndex, podFailurePolicy, successPolicy and
 * activeDeadlineSeconds; suspends and resumes; and writes the conditions and events of upstream.
 * A second queue removes the tracking finalizer from pods whose Job is gone or finished.
 */
@Ignore // run in its own Operator by the manager
public class JobController extends KeyReconciler<Job> {

    public static final String NAME = "job-controller";
    public static final String QUEUE = "job";
    public static final String ORPHAN_QUEUE = "job_orphan_pod";
    /** Upstream's batch.JobControllerName: the spec.managedBy value this controller handles. */
    public static final String JOB_CONTROLLER_NAME = "kubernetes.io/job-controller";
    static final String API_VERSION = "batch/v1";
    static final String KIND = "Job";

    static final Duration SYNC_JOB_BATCH_PERIOD = Duration.ofSeconds(1);
    static final Duration DEFAULT_JOB_API_BACKOFF = Duration.ofSeconds(1);
    static final Duration MAX_JOB_API_BACKOFF = Duration.ofMinutes(1);
    static final int MAX_UNCOUNTED_PODS = 500;
    static final int MAX_POD_CREATE_DELETE_PER_SYNC = 500;

    /** An orphan pod to clean up by name, or every pod of a namespace matching a finished Job's selector. */
    record OrphanPodKey(String namespace, String name, LabelSelector selector) {
    }

    private final Clock clock;
    private final JobFeatures features;
    private final PodControl podControl;
    private final EventRecorder recorder;
    private final ControllerExpectations expectations = new ControllerExpectations();
    private final TrackingUtils.UidTrackingExpectations finalizerExpectations = new TrackingUtils.UidTrackingExpectations();
    private final BackoffUtils.BackoffStore podBackoffStore = new BackoffUtils.BackoffStore();
    private final Set<String> finishedJobExpectations = ConcurrentHashMap.newKeySet();
    private final SharedIndexInformer<Job> jobInformer;
    private final SharedIndexInformer<Pod> podInformer;
    private final WorkQueue<OrphanPodKey> orphanQueue;
    private final ThreadPoolExecutor apiCalls;
    private final List<Thread> orphanWorkers = new ArrayList<>();
    private final JobMetrics metrics;

    public JobController(ControllerContext context) {
        this(context, Clock.systemUTC());
    }

    JobController(ControllerContext context, Clock clock) {
        super(context, Job.class, QUEUE, context.options().concurrentSyncs("job"),
                RateLimiter.exponential(DEFAULT_JOB_API_BACKOFF, MAX_JOB_API_BACKOFF));
        this.clock = clock;
        this.features = JobFeatures.from(context.options().featureGates());
        this.recorder = context.events();
        this.metrics = new JobMetrics(context.metrics());
        this.podControl = new RealPodControl(context.client(), recorder);
        this.orphanQueue = context.newQueue(ORPHAN_QUEUE, RateLimiter.exponential(DEFAULT_JOB_API_BACKOFF, MAX_JOB_API_BACKOFF));
        AtomicInteger n = new AtomicInteger();
        this.apiCalls = new ThreadPoolExecutor(64, 64, 30, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), r -> {
            Thread t = new Thread(r, NAME + "-api-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        this.apiCalls.allowCoreThreadTimeOut(true);
        this.jobInformer = context.informers().informerFor(Job.class);
        this.podInformer = context.informers().informerFor(Pod.class);

        jobInformer.addEventHandler(ResourceEventHandlerFuncs.of(this::addJob, this::updateJob, this::deleteJob));
        PodIndexes.addPodControllerIndexer(podInformer);
        podInformer.addEventHandler(ResourceEventHandlerFuncs.of(pod -> {
            recordFinishedPodWithTrackingFinalizer(null, pod);
            addPod(pod);
        }, (oldPod, curPod) -> {
            recordFinishedPodWithTrackingFinalizer(oldPod, curPod);
            updatePod(oldPod, curPod);
        }, pod -> {
            recordFinishedPodWithTrackingFinalizer(pod, null);
            deletePod(pod, true);
        }));
    }

    @Override
    protected List<SharedIndexInformer<?>> informers() {
        return List.of(podInformer, jobInformer);
    }

    /** Upstream's Job handlers do the queueing (with their batching delays); JOSDK's adds and updates are off. */
    @Override
    protected OnAddFilter<? super Job> primaryAddFilter() {
        return job -> false;
    }

    @Override
    protected OnUpdateFilter<? super Job> primaryUpdateFilter() {
        return (newJob, oldJob) -> false;
    }

    /** Upstream's Run also starts as many orphan-pod workers as job workers. */
    @Override
    public synchronized void onStart() {
        if (!orphanWorkers.isEmpty()) {
            return;
        }
        for (int i = 0; i < workers(); i++) {
            Thread t = new Thread(this::runOrphanWorker, NAME + "-orphan-worker-" + i);
            t.setDaemon(true);
            orphanWorkers.add(t);
            t.start();
        }
    }

    @Override
    public void onShutdown() {
        orphanQueue.shutDown();
        apiCalls.shutdownNow();
    }

    ControllerExpectations expectations() {
        return expectations;
    }

    TrackingUtils.UidTrackingExpectations finalizerExpectations() {
        return finalizerExpectations;
    }

    BackoffUtils.BackoffStore backoffStore() {
        return podBackoffStore;
    }

    static String key(Job job) {
        return Cache.metaNamespaceKeyFunc(job);
    }

    // ---- event handlers -------------------------------------------------------------------

    private List<Job> getPodJobs(Pod pod) {
        Map<String, String> labels = pod.getMetadata().getLabels();
        List<Job> result = ControllerRefs.selecting(jobInformer, pod.getMetadata().getNamespace(), labels,
                job -> job.getSpec().getSelector(), false);
        if (result.size() > 1) {
            log.errorf("user error! more than one job is selecting pods with labels: %s", labels);
        }
        return result;
    }

    private Job resolveControllerRef(String namespace, OwnerReference ref) {
        return ControllerRefs.resolveControllerRef(KIND, jobInformer, namespace, ref);
    }

    void addPod(Pod pod) {
        if (pod.getMetadata().getDeletionTimestamp() != null) {
            // seen for the first time already being deleted (e.g. after a restart): not a creation
            deletePod(pod, false);
            return;
        }
        OwnerReference ref = ControllerRefManager.controllerOf(pod);
        if (ref != null) {
            Job job = resolveControllerRef(pod.getMetadata().getNamespace(), ref);
            if (job == null) {
                return;
            }
            expectations.creationObserved(key(job));
            enqueueSyncJobBatched(job);
            return;
        }
        if (TrackingUtils.hasJobTrackingFinalizer(pod)) {
            enqueueOrphanPod(pod);
        }
        for (Job job : getPodJobs(pod)) {
            enqueueSyncJobBatched(job);
        }
    }

    void updatePod(Pod oldPod, Pod curPod) {
        if (Objects.equals(curPod.getMetadata().getResourceVersion(), oldPod.getMetadata().getResourceVersion())) {
            return; // periodic resync
        }
        if (curPod.getMetadata().getDeletionTimestamp() != null) {
            // a graceful deletion: the Job may replace the pod now, without waiting for its removal
            deletePod(curPod, false);
            return;
        }
        // the latest state counts: during an ownership transfer the finalizer can come and go
        boolean finalizerRemoved = !TrackingUtils.hasJobTrackingFinalizer(curPod);
        OwnerReference curRef = ControllerRefManager.controllerOf(curPod);
        OwnerReference oldRef = ControllerRefManager.controllerOf(oldPod);
        boolean refChanged = !Objects.equals(curRef, oldRef);
        if (refChanged && oldRef != null) {
            Job job = resolveControllerRef(oldPod.getMetadata().getNamespace(), oldRef);
            if (job != null) {
                if (finalizerRemoved) {
                    finalizerExpectations.finalizerRemovalObserved(key(job), curPod.getMetadata().getUid());
                }
                enqueueSyncJobBatched(job);
            }
        }
        if (curRef != null) {
            Job job = resolveControllerRef(curPod.getMetadata().getNamespace(), curRef);
            if (job == null) {
                return;
            }
            if (finalizerRemoved) {
                finalizerExpectations.finalizerRemovalObserved(key(job), curPod.getMetadata().getUid());
            }
            enqueueSyncJobBatched(job);
            return;
        }
        if (TrackingUtils.hasJobTrackingFinalizer(curPod)) {
            enqueueOrphanPod(curPod);
        }
        boolean labelChanged = !Objects.equals(curPod.getMetadata().getLabels(), oldPod.getMetadata().getLabels());
        if (labelChanged || refChanged) {
            for (Job job : getPodJobs(curPod)) {
                enqueueSyncJobBatched(job);
            }
        }
    }

    void deletePod(Pod pod, boolean fin) {
        OwnerReference ref = ControllerRefManager.controllerOf(pod);
        boolean hasFinalizer = TrackingUtils.hasJobTrackingFinalizer(pod);
        if (ref == null) {
            // maybe a Job's pod whose owner reference the garbage collector removed
            if (hasFinalizer) {
                enqueueOrphanPod(pod);
            }
            return;
        }
        Job job = resolveControllerRef(pod.getMetadata().getNamespace(), ref);
        if (job == null || JobUtil.isJobFinished(job)) {
            // no sync of the Job will remove this finalizer
            if (hasFinalizer) {
                enqueueOrphanPod(pod);
            }
            return;
        }
        String jobKey = key(job);
        expectations.deletionObserved(jobKey);
        // the final delete removes the finalizer with the pod; an update only if it is gone
        if (fin || !hasFinalizer) {
            finalizerExpectations.finalizerRemovalObserved(jobKey, pod.getMetadata().getUid());
        }
        enqueueSyncJobBatched(job);
    }

    void addJob(Job job) {
        queue.add(key(job));
        String controllerName = managedByExternalController(job);
        if (controllerName != null) {
            metrics.jobByExternalController(controllerName);
        }
    }

    /** Upstream's recordFinishedPodWithTrackingFinalizer (terminated_pods_tracking_finalizer_total). */
    private void recordFinishedPodWithTrackingFinalizer(Pod oldPod, Pod newPod) {
        boolean was = TrackingUtils.isFinishedPodWithTrackingFinalizer(oldPod);
        boolean is = TrackingUtils.isFinishedPodWithTrackingFinalizer(newPod);
        if (was != is) {
            metrics.terminatedPodsTrackingFinalizer(is ? JobMetrics.ADD : JobMetrics.DELETE);
        }
    }

    void updateJob(Job oldJob, Job curJob) {
        String key = key(curJob);
        // a finished Job should have no tracked pods left; sweep them anyway
        if (JobUtil.isJobFinished(curJob)) {
            enqueueLabelSelector(curJob);
            return;
        }
        if (Objects.equals(curJob.getMetadata().getGeneration(), oldJob.getMetadata().getGeneration())) {
            // status-only changes, usually caused by pod events: batched
            enqueueSyncJobBatched(curJob);
        } else {
            queue.add(key);
        }
        Instant startTime = curJob.getStatus() == null ? null : PodUtil.parseTime(curJob.getStatus().getStartTime());
        if (startTime != null) {
            Long curADS = curJob.getSpec().getActiveDeadlineSeconds();
            if (curADS == null) {
                return;
            }
            Long oldADS = oldJob.getSpec().getActiveDeadlineSeconds();
            if (oldADS == null || !oldADS.equals(curADS)) {
                Duration passed = Duration.between(startTime, clock.instant());
                Duration total = Duration.ofSeconds(curADS);
                queue.addAfter(key, total.minus(passed));
                log.debugf("job's ActiveDeadlineSeconds updated, will rsync: key=%s interval=%s", key, total.minus(passed));
            }
        }
    }

    void deleteJob(Job job) {
        String key = key(job);
        queue.add(key);
        finishedJobExpectations.remove(job.getMetadata().getUid());
        enqueueLabelSelector(job);
        podBackoffStore.removeBackoffRecord(key);
    }

    private void enqueueLabelSelector(Job job) {
        try {
            LabelSelectors.fromLabelSelector(job.getSpec().getSelector());
        } catch (IllegalArgumentException e) {
            log.errorf("job %s has invalid label selector: %s", key(job), e.getMessage());
            return;
        }
        orphanQueue.add(new OrphanPodKey(job.getMetadata().getNamespace(), null, job.getSpec().getSelector()));
    }

    private void enqueueSyncJobBatched(Job job) {
        queue.addAfter(key(job), SYNC_JOB_BATCH_PERIOD);
    }

    private void enqueueSyncJobWithDelay(Job job, Duration delay) {
        if (delay.compareTo(SYNC_JOB_BATCH_PERIOD) < 0) {
            delay = SYNC_JOB_BATCH_PERIOD;
        }
        queue.addAfter(key(job), delay);
    }

    private void enqueueOrphanPod(Pod pod) {
        orphanQueue.add(new OrphanPodKey(pod.getMetadata().getNamespace(), pod.getMetadata().getName(), null));
    }

    // ---- orphan pods ------------------------------------------------------------------------

    private void runOrphanWorker() {
        try {
            context.informers().waitForSync(informers());
            while (true) {
                OrphanPodKey key = orphanQueue.get();
                if (key == null) {
                    return;
                }
                try {
                    syncOrphanPod(key);
                    orphanQueue.forget(key);
                } catch (RuntimeException e) {
                    log.errorf("Error syncing orphan pod %s: %s", key, shortMessage(e));
                    orphanQueue.addRateLimited(key);
                } finally {
                    orphanQueue.done(key);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    void syncOrphanPod(OrphanPodKey key) {
        if (key.name() != null) {
            Pod pod = podInformer.getStore().getByKey(key.namespace() + "/" + key.name());
            if (pod == null) {
                log.tracef("Orphan pod %s/%s has been deleted", key.namespace(), key.name());
                return;
            }
            handleSingleOrphanPod(pod);
            return;
        }
        LabelSelectors.Selector selector = LabelSelectors.fromLabelSelector(key.selector());
        for (Pod pod : PodIndexes.podsInNamespace(podInformer, key.namespace())) {
            if (!selector.matches(pod.getMetadata().getLabels())) {
                continue;
            }
            try {
                handleSingleOrphanPod(pod);
            } catch (RuntimeException e) {
                log.errorf("syncing orphan pod %s/%s failed: %s", pod.getMetadata().getNamespace(),
                        pod.getMetadata().getName(), shortMessage(e));
            }
        }
    }

    private void handleSingleOrphanPod(Pod pod) {
        String ns = pod.getMetadata().getNamespace();
        OwnerReference ref = ControllerRefManager.controllerOf(pod);
        if (ref != null) {
            if (!KIND.equals(ref.getKind()) || !API_VERSION.equals(ref.getApiVersion())) {
                return; // controlled by something else than a batch/v1 Job
            }
            Job job = resolveControllerRef(ns, ref);
            if (job != null && managedByExternalController(job) != null) {
                log.debugf("Skip cleanup of the job finalizer for a pod owned by a job that is managed by an external controller: %s/%s",
                        ns, pod.getMetadata().getName());
                return;
            }
            if (job != null && !JobUtil.isJobFinished(job)) {
                return; // adopted
            }
        }
        String patch = removeTrackingFinalizerPatch(pod);
        if (patch != null) {
            try {
                podControl.patchPod(ns, pod.getMetadata().getName(), patch);
            } catch (KubernetesClientException e) {
                if (!ApiErrors.isNotFound(e)) {
                    throw e;
                }
            }
        }
    }

    // ---- sync ----------------------------------------------------------------------------

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
        List<Pod> pods = PodIndexes.filterPodsByOwner(podInformer, ns, KIND, name, uid, true);
        ControllerRefManager.CanAdopt canAdopt = ControllerRefManager.recheckDeletionTimestamp(() -> {
            Job fresh = context.client().batch().v1().jobs().inNamespace(ns).withName(name).get();
            if (fresh == null) {
                throw new KubernetesClientException("jobs.batch \"" + name + "\" not found", 404, null);
            }
            if (!Objects.equals(fresh.getMetadata().getUid(), uid)) {
                throw new IllegalStateException("original Job " + ns + "/" + name + " is gone: got uid "
                        + fresh.getMetadata().getUid() + ", wanted " + uid);
            }
            return fresh;
        });
        ControllerRefManager<Pod> cm = ControllerRefManager.forPods(podControl, job, selector, API_VERSION, KIND, canAdopt,
                TrackingUtils.JOB_TRACKING_FINALIZER);
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

    @Override
    protected void sync(String key) throws Exception {
        long start = System.nanoTime();
        try {
            syncJob(key);
        } finally {
            log.tracef("Finished syncing job %s (%d ms)", key, (System.nanoTime() - start) / 1_000_000);
        }
    }

    void syncJob(String key) throws Exception {
        int slash = key.indexOf('/');
        if (slash <= 0 || slash == key.length() - 1) {
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
        String managedBy = managedByExternalController(sharedJob);
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
        String completionMode = completionModeStr(job);
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

        List<Pod> pods = getPodsForJob(job);
        List<Pod> activePods = ActivePods.filterActivePods(pods);
        SyncJobCtx ctx = new SyncJobCtx();
        ctx.job = job;
        ctx.pods = pods;
        ctx.activePods = activePods;
        ctx.ready = countReadyPods(activePods);
        ctx.uncountedSucceeded = new HashSet<>(nz(status.getUncountedTerminatedPods().getSucceeded()));
        ctx.uncountedFailed = new HashSet<>(nz(status.getUncountedTerminatedPods().getFailed()));
        ctx.expectedRmFinalizers = finalizerExpectations.getExpectedUIDs(key);
        if (trackTerminatingPods(job)) {
            ctx.terminating = ActivePods.filterTerminatingPods(pods).size();
        }
        int active = activePods.size();
        List<Pod> newSucceededPods = getValidPodsWithFilter(ctx, ctx.uncountedSucceeded,
                p -> "Succeeded".equals(PodUtil.phase(p)));
        List<Pod> newFailedPods = getValidPodsWithFilter(ctx, ctx.uncountedFailed, p -> isPodFailed(p, job, features));
        ctx.succeeded = n(status.getSucceeded()) + newSucceededPods.size() + ctx.uncountedSucceeded.size();
        ctx.failed = n(status.getFailed()) + nonIgnoredFailedPodsCount(ctx, newFailedPods) + ctx.uncountedFailed.size();

        // first start; not while suspended
        if (status.getStartTime() == null && !jobSuspended(job)) {
            status.setStartTime(now());
        }
        ctx.newBackoffRecord = podBackoffStore.newBackoffRecord(key, newSucceededPods, newFailedPods);

        Exception manageJobErr = null;
        // the order of evaluation: conditions of earlier syncs, failure, then success
        boolean exceedsBackoffLimit = ctx.failed > backoffLimit(job);
        ctx.finishedCondition = hasSuccessCriteriaMetCondition(job);
        if (ctx.finishedCondition == null) {
            JobCondition failureTarget = findConditionByType(status.getConditions(), "FailureTarget");
            if (failureTarget != null && "True".equals(failureTarget.getStatus())) {
                ctx.finishedCondition = newFailedConditionForFailureTarget(failureTarget);
            } else {
                String failJobMessage = getFailJobMessage(job, pods);
                if (failJobMessage != null) {
                    // the interim FailureTarget records the message before finalizers are removed
                    ctx.finishedCondition = newCondition("FailureTarget", "True", "PodFailurePolicy", failJobMessage);
                }
            }
        }
        if (ctx.finishedCondition == null) {
            if (exceedsBackoffLimit || pastBackoffLimitOnFailure(job, pods)) {
                ctx.finishedCondition = newFailureCondition("BackoffLimitExceeded", "Job has reached the specified backoff limit");
            } else if (pastActiveDeadline(job)) {
                ctx.finishedCondition = newFailureCondition("DeadlineExceeded", "Job was active longer than specified deadline");
            } else if (job.getSpec().getActiveDeadlineSeconds() != null && !jobSuspended(job)) {
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
                        ctx.finishedCondition = newFailureCondition("MaxFailedIndexesExceeded",
                                "Job has exceeded the specified maximal number of failed indexes");
                    } else if (ctx.failedIndexes.total() > 0
                            && ctx.failedIndexes.total() + ctx.succeededIndexes.total() >= job.getSpec().getCompletions()) {
                        ctx.finishedCondition = newFailureCondition("FailedIndexes", "Job has failed indexes");
                    }
                }
                ctx.podsWithDelayedDeletionPerIndex = IndexedJobUtils.getPodsWithDelayedDeletionPerIndex(ctx, features);
            }
            if (ctx.finishedCondition == null && features.successPolicy()) {
                String msg = SuccessPolicies.match(job.getSpec().getSuccessPolicy(), job.getSpec().getCompletions(),
                        ctx.succeededIndexes);
                if (msg != null) {
                    ctx.finishedCondition = newCondition("SuccessCriteriaMet", "True", "SuccessPolicy", msg);
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
                    active = manageJob(job, ctx);
                } catch (ManageJobException e) {
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
                ctx.finishedCondition = newSuccessCondition();
            } else if (manageJobCalled) {
                if (jobSuspended(job)) {
                    if (ensureJobConditionStatus(status, "Suspended", "True", "JobSuspended", "Job suspended")) {
                        suspendCondChanged = true;
                        recorder.event(job, EventRecorder.NORMAL, "Suspended", "Job suspended");
                    }
                } else {
                    if (ensureJobConditionStatus(status, "Suspended", "False", "JobResumed", "Job resumed")) {
                        suspendCondChanged = true;
                        recorder.event(job, EventRecorder.NORMAL, "Resumed", "Job resumed");
                        // activeDeadlineSeconds counts continuous activity: it starts over on resume
                        status.setStartTime(now());
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
            trackJobStatusAndRemoveFinalizers(ctx, needsStatusUpdate);
        } catch (InterruptedException e) {
            throw e;
        } catch (Exception e) {
            throw new TrackingException("tracking status: " + ApiErrors.message(e), e);
        }
        if (manageJobErr != null) {
            throw manageJobErr;
        }
    }

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

    /** manageJob's active count when it also failed. */
    private static final class ManageJobException extends Exception {
        private static final long serialVersionUID = 1L;
        final int active;
        final Exception cause;

        ManageJobException(int active, Exception cause) {
            super(cause);
            this.active = active;
            this.cause = cause;
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
                        log.errorf("deleting pod %s: %s", pod.getMetadata().getName(), shortMessage(e));
                    }
                }
                if (PodUtil.isReady(pod)) {
                    deletedReady.incrementAndGet();
                }
            }));
        }
        waitAll(futures);
        return new int[] { deletedReady.get(), successfulDeletes.get() };
    }

    private static void waitAll(List<Future<?>> futures) throws InterruptedException {
        for (Future<?> f : futures) {
            try {
                f.get();
            } catch (ExecutionException e) {
                // each task records its own failure
            }
        }
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
                String patch = removeTrackingFinalizerPatch(pod);
                if (patch != null) {
                    try {
                        podControl.patchPod(pod.getMetadata().getNamespace(), pod.getMetadata().getName(), patch);
                    } catch (RuntimeException e) {
                        failDelete(jobKey, pod, new KubernetesClientException("removing completion finalizer: "
                                + ApiErrors.message(e), ApiErrors.code(e), null), successfulDeletes, errors);
                        return;
                    }
                }
                try {
                    podControl.deletePod(job.getMetadata().getNamespace(), pod.getMetadata().getName(), job);
                } catch (RuntimeException e) {
                    failDelete(jobKey, pod, e, successfulDeletes, errors);
                }
                if (PodUtil.isReady(pod)) {
                    deletedReady.incrementAndGet();
                }
            }));
        }
        waitAll(futures);
        return new int[] { deletedReady.get(), successfulDeletes.get() };
    }

    private void failDelete(String jobKey, Pod pod, RuntimeException e, AtomicInteger successfulDeletes,
            List<Exception> errors) {
        // the informer will not observe this deletion
        expectations.deletionObserved(jobKey);
        if (!ApiErrors.isNotFound(e)) {
            log.debugf("Failed to delete Pod %s of job %s: %s", pod.getMetadata().getName(), jobKey, shortMessage(e));
            successfulDeletes.decrementAndGet();
            errors.add(e);
        }
    }

    /**
     * Upstream's trackJobStatusAndRemoveFinalizers: records finished pods in uncountedTerminatedPods,
     * removes their finalizers, moves them into the counters, and sets the finished condition when
     * nothing is left uncounted (nor terminating).
     */
    private void trackJobStatusAndRemoveFinalizers(SyncJobCtx ctx, boolean needsFlush) throws Exception {
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
            boolean considerPodFailed = isPodFailed(pod, ctx.job, features);
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
            } else if (considerPodFailed || (ctx.finishedCondition != null && !isSuccessCriteriaMetCondition(ctx.finishedCondition))) {
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
            conditions(ctx.job.getStatus()).add(ctx.finishedCondition);
            needsFlush = true;
            ctx.finishedCondition = newFailedConditionForFailureTarget(ctx.finishedCondition);
        }
        if (isSuccessCriteriaMetCondition(ctx.finishedCondition)) {
            if (hasSuccessCriteriaMetCondition(ctx.job) == null) {
                conditions(ctx.job.getStatus()).add(ctx.finishedCondition);
                needsFlush = true;
            }
            ctx.finishedCondition = newCondition("Complete", "True", ctx.finishedCondition.getReason(),
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
                String patch = removeTrackingFinalizerPatch(pod);
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
                        log.errorf("removing tracking finalizer: %s", shortMessage(e));
                        return;
                    }
                }
                succeeded[idx] = true;
            }));
        }
        waitAll(futures);
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
        ensureJobConditionStatus(status, c.getType(), c.getStatus(), c.getReason(), c.getMessage());
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
        String completionMode = completionModeStr(job);
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

    private static String completionModeStr(Job job) {
        return job.getSpec().getCompletionMode() == null ? "NonIndexed" : job.getSpec().getCompletionMode();
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

    private JobCondition newFailedConditionForFailureTarget(JobCondition condition) {
        return newCondition("Failed", "True", condition.getReason(), condition.getMessage());
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
        if (job.getSpec().getActiveDeadlineSeconds() == null || start == null || jobSuspended(job)) {
            return false;
        }
        Duration duration = Duration.between(start, clock.instant());
        return duration.compareTo(Duration.ofSeconds(job.getSpec().getActiveDeadlineSeconds())) >= 0;
    }

    private JobCondition newCondition(String type, String status, String reason, String message) {
        String now = now();
        return new JobConditionBuilder().withType(type).withStatus(status).withLastProbeTime(now)
                .withLastTransitionTime(now).withReason(reason).withMessage(message).build();
    }

    private JobCondition newFailureCondition(String reason, String message) {
        return newCondition(features.delayTerminalCondition() ? "FailureTarget" : "Failed", "True", reason, message);
    }

    private JobCondition newSuccessCondition() {
        String type = features.delayTerminalCondition() ? "SuccessCriteriaMet" : "Complete";
        String reason = "";
        String message = "";
        if (features.successPolicy()) {
            reason = "CompletionsReached";
            message = "Reached expected number of succeeded pods";
        }
        return newCondition(type, "True", reason, message);
    }

    /** The first FailJob message of a failed pod, if the Job has a pod failure policy. */
    private String getFailJobMessage(Job job, List<Pod> pods) {
        if (job.getSpec().getPodFailurePolicy() == null) {
            return null;
        }
        for (Pod p : pods) {
            if (isPodFailed(p, job, features)) {
                String msg = PodFailurePolicies.match(job.getSpec().getPodFailurePolicy(), p, features.backoffLimitPerIndex())
                        .failJobMessage();
                if (msg != null) {
                    return msg;
                }
            }
        }
        return null;
    }

    static boolean jobSuspended(Job job) {
        return Boolean.TRUE.equals(job.getSpec().getSuspend());
    }

    /**
     * Upstream's manageJob: deletes surplus pods (all of them when suspended) or creates the missing
     * ones in slow-start batches, after the pod-failure backoff. Returns the new active count.
     */
    private int manageJob(Job job, SyncJobCtx ctx) throws ManageJobException, InterruptedException {
        int active = ctx.activePods.size();
        int parallelism = job.getSpec().getParallelism() == null ? 1 : job.getSpec().getParallelism();
        String jobKey = key(job);

        if (jobSuspended(job)) {
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
        if (onlyReplaceFailedPods(job, features) && ctx.terminating != null) {
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
            enqueueSyncJobWithDelay(job, remainingTime);
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
                    enqueueSyncJobWithDelay(job, minRemaining);
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
        OwnerReference controllerRef = ControllerRefManager.newControllerRef(job, API_VERSION, KIND);
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
                log.debugf("Failed creation, decrementing expectations for job %s: %s", jobKey, shortMessage(e));
                expectations.creationObserved(jobKey);
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

    /** Upstream's updateJobStatus: PUT of the status subresource, with the resourceVersion read. */
    private Job updateJobStatus(Job job) {
        Job updated = context.client().batch().v1().jobs().inNamespace(job.getMetadata().getNamespace()).resource(job)
                .updateStatus();
        if (updated.getStatus() == null) {
            updated.setStatus(new JobStatus());
        }
        if (updated.getStatus().getUncountedTerminatedPods() == null) {
            updated.getStatus().setUncountedTerminatedPods(new UncountedTerminatedPods());
        }
        return updated;
    }

    /**
     * Upstream's getValidPodsWithFilter: pods still carrying the finalizer, not in {@code uncounted},
     * not expected to lose the finalizer and, for Indexed Jobs, with a valid index, that pass the filter.
     */
    static List<Pod> getValidPodsWithFilter(SyncJobCtx ctx, Set<String> uncounted, Predicate<Pod> filter) {
        List<Pod> result = new ArrayList<>();
        boolean indexed = IndexedJobUtils.isIndexedJob(ctx.job);
        for (Pod p : ctx.pods) {
            String uid = p.getMetadata().getUid();
            if (!TrackingUtils.hasJobTrackingFinalizer(p) || uncounted.contains(uid) || ctx.expectedRmFinalizers.contains(uid)) {
                continue;
            }
            if (indexed) {
                int idx = IndexedJobUtils.getCompletionIndex(p);
                if (idx == IndexedJobUtils.UNKNOWN_COMPLETION_INDEX || idx >= ctx.job.getSpec().getCompletions()) {
                    continue;
                }
            }
            if (filter.test(p)) {
                result.add(p);
            }
        }
        return result;
    }

    /** The strategic-merge patch removing the tracking finalizer, or null when the pod has none. */
    static String removeTrackingFinalizerPatch(Pod pod) {
        if (!TrackingUtils.hasJobTrackingFinalizer(pod)) {
            return null;
        }
        return "{\"metadata\":{\"$deleteFromPrimitiveList/finalizers\":[\"" + TrackingUtils.JOB_TRACKING_FINALIZER + "\"]}}";
    }

    /**
     * Upstream's ensureJobConditionStatus: updates the condition of that type if it differs, or adds
     * it unless its status is False. Returns whether the conditions changed.
     */
    private boolean ensureJobConditionStatus(JobStatus status, String type, String condStatus, String reason,
            String message) {
        JobCondition existing = findConditionByType(status.getConditions(), type);
        if (existing != null) {
            if (!Objects.equals(existing.getStatus(), condStatus) || !Objects.equals(nz(existing.getReason()), nz(reason))
                    || !Objects.equals(nz(existing.getMessage()), nz(message))) {
                JobCondition c = newCondition(type, condStatus, reason, message);
                List<JobCondition> list = conditions(status);
                list.set(list.indexOf(existing), c);
                return true;
            }
            return false;
        }
        if (!"False".equals(condStatus)) {
            conditions(status).add(newCondition(type, condStatus, reason, message));
            return true;
        }
        return false;
    }

    private static List<JobCondition> conditions(JobStatus status) {
        if (status.getConditions() == null) {
            status.setConditions(new ArrayList<>());
        } else if (!(status.getConditions() instanceof ArrayList)) {
            status.setConditions(new ArrayList<>(status.getConditions()));
        }
        return status.getConditions();
    }

    /** Upstream's isPodFailed: Failed, or (unless only failed pods are replaced) deleted before it succeeded. */
    static boolean isPodFailed(Pod p, Job job, JobFeatures features) {
        String phase = PodUtil.phase(p);
        if ("Failed".equals(phase)) {
            return true;
        }
        if (onlyReplaceFailedPods(job, features)) {
            return false;
        }
        // a deleted pod may never reach Failed: count it as failed
        return p.getMetadata().getDeletionTimestamp() != null && !"Succeeded".equals(phase);
    }

    static JobCondition findConditionByType(List<JobCondition> list, String type) {
        if (list == null) {
            return null;
        }
        for (JobCondition c : list) {
            if (type.equals(c.getType())) {
                return c;
            }
        }
        return null;
    }

    private JobCondition hasSuccessCriteriaMetCondition(Job job) {
        if (features.successPolicy() || features.delayTerminalCondition()) {
            JobCondition c = findConditionByType(job.getStatus().getConditions(), "SuccessCriteriaMet");
            if (c != null && "True".equals(c.getStatus())) {
                return c;
            }
        }
        return null;
    }

    private boolean isSuccessCriteriaMetCondition(JobCondition cond) {
        return (features.successPolicy() || features.delayTerminalCondition()) && cond != null
                && "SuccessCriteriaMet".equals(cond.getType()) && "True".equals(cond.getStatus());
    }

    private static int countReadyPods(List<Pod> pods) {
        int cnt = 0;
        for (Pod p : pods) {
            if (PodUtil.isReady(p)) {
                cnt++;
            }
        }
        return cnt;
    }

    /** Upstream's trackTerminatingPods. */
    private boolean trackTerminatingPods(Job job) {
        return features.podReplacementPolicy() || features.managedBy() || job.getSpec().getPodFailurePolicy() != null;
    }

    /** Upstream's onlyReplaceFailedPods: podReplacementPolicy Failed, or a pod failure policy. */
    static boolean onlyReplaceFailedPods(Job job, JobFeatures features) {
        if (features.podReplacementPolicy() && "Failed".equals(job.getSpec().getPodReplacementPolicy())) {
            return true;
        }
        return job.getSpec().getPodFailurePolicy() != null;
    }

    /** The spec.managedBy of a Job this controller must leave alone, or null. */
    String managedByExternalController(Job job) {
        if (features.managedBy()) {
            String name = job.getSpec().getManagedBy();
            if (name != null && !name.equals(JOB_CONTROLLER_NAME)) {
                return name;
            }
        }
        return null;
    }

    private static int backoffLimit(Job job) {
        Integer b = job.getSpec().getBackoffLimit();
        return b == null ? 6 : b;
    }

    private String now() {
        return clock.instant().truncatedTo(ChronoUnit.SECONDS).toString();
    }

    private static int n(Integer i) {
        return i == null ? 0 : i;
    }

    private static String nz(String s) {
        return s == null ? "" : s;
    }

    private static List<String> nz(List<String> l) {
        return l == null ? List.of() : l;
    }

}
