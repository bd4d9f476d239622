package io.qkcm.controller.job;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.function.UnaryOperator;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.javaoperatorsdk.operator.api.reconciler.Ignore;
import io.javaoperatorsdk.operator.processing.event.source.filter.OnAddFilter;
import io.javaoperatorsdk.operator.processing.event.source.filter.OnUpdateFilter;
import io.qkcm.controller.ControllerExpectations;
import io.qkcm.controller.PodControl;
import io.qkcm.controller.PodIndexes;
import io.qkcm.controller.RealPodControl;
import io.qkcm.controller.job.metrics.JobMetrics;
import io.qkcm.runtime.informers.ResourceEventHandlerFuncs;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.KeyReconciler;
import io.qkcm.runtime.workqueue.RateLimiter;

/**
 * The Job controller (upstream pkg/controller/job): runs a Job's pods to completion. It creates pods
 * from the template (one per pending completion index for Indexed Jobs) up to parallelism, delaying
 * replacements of failed pods by the pod-failure backoff; counts finished pods exactly once through
 * the {@code batch.kubernetes.io/job-tracking} finalizer and {@code status.uncountedTerminatedPods};
 * evaluates backoffLimit, backoffLimitPerIndex, podFailurePolicy, successPolicy and
 * activeDeadlineSeconds; suspends and resumes; and writes the conditions and events of upstream.
 * A second queue removes the tracking finalizer from pods whose Job is gone or finished.
 *
 * <p>This class only wires upstream's sections together, each in its own file and given a
 * {@link JobContext}: {@link JobEventHandlers}, {@link JobSyncer} (syncJob), {@link JobPodManager}
 * (manageJob), {@link JobStatusTracker} (pod tracking with finalizers), {@link OrphanPodFinalizers}
 * (the orphan-pod queue), beside backoff_utils, indexed_job_utils, pod_failure_policy, success_policy
 * and tracking_utils.
 */
@Ignore // run in its own Operator by the manager
public class JobController extends KeyReconciler<Job> {

    public static final String NAME = "job-controller";
    public static final String QUEUE = "job";
    public static final String ORPHAN_QUEUE = "job_orphan_pod";
    /** Upstream's batch.JobControllerName: the spec.managedBy value this controller handles. */
    public static final String JOB_CONTROLLER_NAME = JobFeatures.JOB_CONTROLLER_NAME;

    static final Duration DEFAULT_JOB_API_BACKOFF = Duration.ofSeconds(1);
    static final Duration MAX_JOB_API_BACKOFF = Duration.ofMinutes(1);

    private final SharedIndexInformer<Job> jobInformer;
    private final SharedIndexInformer<Pod> podInformer;
    private final ExecutorService apiCalls;
    private final JobSyncer syncer;
    private final OrphanPodFinalizers orphanPods;
    private final ControllerExpectations expectations = new ControllerExpectations();

    /** {@code workers}: --concurrent-job-syncs. */
    public JobController(ControllerContext context, int workers) {
        this(context, workers, Clock.systemUTC());
    }

    JobController(ControllerContext context, int workers, Clock clock) {
        this(context, workers, clock, UnaryOperator.identity());
    }

    /** With {@code podControl} wrapping the real pod control (tests inject faults there). */
    JobController(ControllerContext context, int workers, Clock clock, UnaryOperator<PodControl> podControl) {
        super(context, Job.class, QUEUE, workers,
                RateLimiter.exponential(DEFAULT_JOB_API_BACKOFF, MAX_JOB_API_BACKOFF));
        JobFeatures features = JobFeatures.from(context.options().featureGates());
        JobMetrics metrics = new JobMetrics(context.metrics());
        this.jobInformer = context.informers().informerFor(Job.class);
        this.podInformer = context.informers().informerFor(Pod.class);
        this.apiCalls = context.newApiCallPool(NAME, 64);
        JobQueues queues = new JobQueues(log, queue,
                context.newQueue(ORPHAN_QUEUE, RateLimiter.exponential(DEFAULT_JOB_API_BACKOFF, MAX_JOB_API_BACKOFF)));
        JobContext jc = new JobContext(log, context.client(), jobInformer, podInformer,
                podControl.apply(new RealPodControl(context.client(), context.events())), context.events(), clock,
                features, metrics, expectations, new TrackingUtils.UidTrackingExpectations(), new BackoffUtils.BackoffStore(),
                ConcurrentHashMap.newKeySet(), apiCalls, queues, new JobConditions(clock, features));
        this.syncer = new JobSyncer(jc);
        this.orphanPods = new OrphanPodFinalizers(jc, () -> context.informers().waitForSync(informers()));

        JobEventHandlers handlers = new JobEventHandlers(jc);
        jobInformer.addEventHandler(ResourceEventHandlerFuncs.of(handlers::addJob, handlers::updateJob, handlers::deleteJob));
        PodIndexes.addPodControllerIndexer(podInformer);
        podInformer.addEventHandler(ResourceEventHandlerFuncs.of(pod -> {
            handlers.recordFinishedPodWithTrackingFinalizer(null, pod);
            handlers.addPod(pod);
        }, (oldPod, curPod) -> {
            handlers.recordFinishedPodWithTrackingFinalizer(oldPod, curPod);
            handlers.updatePod(oldPod, curPod);
        }, pod -> {
            handlers.recordFinishedPodWithTrackingFinalizer(pod, null);
            handlers.deletePod(pod, true);
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
    public void onStart() {
        orphanPods.start(workers(), NAME + "-orphan-worker-");
    }

    @Override
    public void onShutdown() {
        orphanPods.shutDown();
        apiCalls.shutdownNow();
    }

    @Override
    protected void sync(String key) throws Exception {
        syncer.syncJob(key);
    }

    /** One sync of {@code key}, for tests that drive syncs by hand. */
    void syncJob(String key) throws Exception {
        syncer.syncJob(key);
    }

    /** The pod expectations, for tests. */
    ControllerExpectations expectations() {
        return expectations;
    }
}
