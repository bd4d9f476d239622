package io.qkcm.controller.cronjob;

import io.qkcm.runtime.informers.Indexes;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;

import io.fabric8.kubernetes.api.model.ObjectReference;
import io.fabric8.kubernetes.api.model.ObjectReferenceBuilder;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.batch.v1.CronJob;
import io.fabric8.kubernetes.api.model.batch.v1.CronJobStatus;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import io.javaoperatorsdk.operator.api.reconciler.Ignore;
import io.javaoperatorsdk.operator.processing.event.source.filter.OnUpdateFilter;
import io.micrometer.core.instrument.DistributionSummary;
import io.qkcm.controller.ApiErrors;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.controller.ControllerRefManager;
import io.qkcm.controller.ControllerRefs;
import io.qkcm.controller.OwnerEnqueueingHandler;
import io.qkcm.runtime.informers.ResourceEventHandlerFuncs;
import io.qkcm.controller.cronjob.cron.CronParser;
import io.qkcm.controller.cronjob.cron.GoTimes;
import io.qkcm.controller.cronjob.cron.GoTimes.GoError;
import io.qkcm.controller.cronjob.cron.Schedule;
import io.qkcm.runtime.events.EventRecorder;
import io.qkcm.controller.util.job.JobUtil;
import io.qkcm.runtime.josdk.KeyReconciler;

/**
 * The CronJob controller (upstream pkg/controller/cronjob, ControllerV2): creates a Job from the
 * template at each schedule time ({@code <cronjob>-<scheduled time in Unix minutes>}), honours the
 * concurrency policy, the starting deadline and suspend, keeps status.active, lastScheduleTime and
 * lastSuccessfulTime, removes finished Jobs past the history limits, and queues each CronJob again
 * for its next schedule time. Schedules are robfig/cron's ({@link CronParser}), in spec.timeZone or
 * the process's local zone.
 */
@Ignore // runs in its own Operator (io.qkcm.runtime.josdk), not quarkus-operator-sdk's default one
public class CronJobController extends KeyReconciler<CronJob> {

    public static final String NAME = "cronjob-controller";
    public static final String QUEUE = "cronjob";
    static final String KIND = "CronJob";
    static final String API_VERSION = "batch/v1";
    /** RFC1123Z, as Go formats it. */
    private static final DateTimeFormatter RFC1123Z = DateTimeFormatter.ofPattern("EEE, dd MMM yyyy HH:mm:ss Z", Locale.US);
    /** metav1.Time's JSON form: whole seconds, UTC. */
    private static final DateTimeFormatter META_TIME = DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss'Z'")
            .withZone(ZoneOffset.UTC);

    final SharedIndexInformer<CronJob> cronJobInformer;
    final SharedIndexInformer<Job> jobInformer;
    final Injection.JobControl jobControl;
    final Injection.CJControl cronJobControl;
    final EventRecorder recorder;
    /** Upstream's now(); its zone is kube-controller-manager's time.Local. */
    final Clock clock;
    final boolean scheduledAnnotation;
    private final DistributionSummary creationSkew;

    /** {@code workers}: --concurrent-cron-job-syncs. */
    public CronJobController(ControllerContext context, int workers) {
        this(context, workers, Clock.systemDefaultZone(), new Injection.RealJobControl(context.client()),
                new Injection.RealCJControl(context.client()));
    }

    CronJobController(ControllerContext context, int workers, Clock clock, Injection.JobControl jobControl,
            Injection.CJControl cronJobControl) {
        super(context, CronJob.class, QUEUE, workers);
        this.clock = clock;
        this.jobControl = jobControl;
        this.cronJobControl = cronJobControl;
        this.recorder = context.events();
        this.scheduledAnnotation = context.options().featureGates().enabled("CronJobsScheduledAnnotation");
        this.cronJobInformer = context.informers().informerFor(CronJob.class);
        this.jobInformer = context.informers().informerFor(Job.class);
        this.creationSkew = DistributionSummary.builder("cronjob_controller_job_creation_skew_duration_seconds")
                .description("Time between when a cronjob is scheduled to be run, and when the corresponding job is created")
                .serviceLevelObjectives(1, 2, 4, 8, 16, 32, 64, 128, 256, 512)
                .register(context.metrics());

        // upstream's addJob, updateJob, deleteJob: the owning CronJob is queued
        owned(Job.class, new OwnerEnqueueingHandler<>(this::resolveControllerRef, this::enqueueController));
        // adds and deletes of CronJobs queue them through JOSDK's primary events; updates go through
        // upstream's updateCronJob (a schedule change is queued for the new schedule's next time)
        cronJobInformer.addEventHandler(ResourceEventHandlerFuncs.of(null, this::updateCronJob, null));
    }

    @Override
    protected List<SharedIndexInformer<?>> informers() {
        return List.of(jobInformer, cronJobInformer);
    }

    @Override
    protected OnUpdateFilter<? super CronJob> primaryUpdateFilter() {
        return (newCj, oldCj) -> false;
    }

    /** The key's retries so far (the queue's NumRequeues), for tests. */
    int numRequeues(String key) {
        return queue.numRequeues(key);
    }

    ZonedDateTime now() {
        return ZonedDateTime.now(clock);
    }

    ZoneId local() {
        return clock.getZone();
    }

    // ---- sync -------------------------------------------------------------------------------

    /** What syncCronJob decided: when to queue the CronJob again (nanoseconds, or null), whether to write its status. */
    record SyncResult(Long requeueAfter, boolean updateStatus, Exception error) {
    }

    /** Told each key whose sync has ended, for tests that must not change the clock under a running sync. */
    volatile java.util.function.Consumer<String> afterSync = key -> {
    };

    @Override
    protected void sync(String key) throws Exception {
        try {
            syncKey(key);
        } finally {
            afterSync.accept(key);
        }
    }

    private void syncKey(String key) throws Exception {
        CronJob cached = cronJobInformer.getStore().getByKey(key);
        if (cached == null) {
            log.debugf("CronJob %s not found, may be it is deleted", key);
            return;
        }
        List<Job> jobsToBeReconciled = getJobsToBeReconciled(cached);
        CronJob cronJobCopy = deepCopy(cached);

        boolean updateStatusAfterCleanup = cleanupFinishedJobs(cronJobCopy, jobsToBeReconciled);
        SyncResult r = syncCronJob(cronJobCopy, jobsToBeReconciled);
        if (r.error() != null) {
            log.debugf("Error reconciling cronjob %s: %s", key, shortMessage(r.error()));
        }
        if (updateStatusAfterCleanup || r.updateStatus()) {
            try {
                cronJobControl.updateStatus(cronJobCopy);
            } catch (RuntimeException e) {
                log.debugf("Unable to update status for cronjob %s (resourceVersion %s): %s", key,
                        cached.getMetadata().getResourceVersion(), shortMessage(e));
                throw e;
            }
        }
        if (r.requeueAfter() != null) {
            log.tracef("Re-queuing cronjob %s after %dns", key, r.requeueAfter());
            queue.forget(key);
            queue.addAfter(key, Duration.ofNanos(r.requeueAfter()));
            return;
        }
        // done: suspended, an invalid schedule or time zone, or an error to retry
        if (r.error() != null) {
            throw r.error();
        }
    }

    static CronJob deepCopy(CronJob cj) {
        CronJob copy = io.qkcm.runtime.DeepCopy.of(cj);
        if (copy.getStatus() == null) {
            copy.setStatus(new CronJobStatus());
        }
        return copy;
    }

    /** Every Job in the CronJob's namespace whose controller reference names it (whatever the labels). */
    List<Job> getJobsToBeReconciled(CronJob cronJob) {
        List<Job> result = new ArrayList<>();
        for (Job job : Indexes.byIndex(jobInformer, Cache.NAMESPACE_INDEX, cronJob.getMetadata().getNamespace())) {
            OwnerReference ref = ControllerRefManager.controllerOf(job);
            if (ref != null && Objects.equals(ref.getName(), cronJob.getMetadata().getName())) {
                result.add(job);
            }
        }
        return result;
    }

    /** Upstream's syncCronJob. {@code cronJob} is the working copy whose status the caller writes. */
    SyncResult syncCronJob(CronJob cronJob, List<Job> jobs) {
        ZonedDateTime now = now();
        boolean updateStatus = false;

        Set<String> childrenJobs = new HashSet<>();
        for (Job j : jobs) {
            String uid = j.getMetadata().getUid();
            childrenJobs.add(uid);
            boolean found = CronJobUtils.inActiveList(cronJob, uid);
            if (!found && !JobUtil.isJobFinished(j)) {
                CronJob fresh;
                try {
                    fresh = cronJobControl.getCronJob(cronJob.getMetadata().getNamespace(), cronJob.getMetadata().getName());
                } catch (RuntimeException e) {
                    return new SyncResult(null, updateStatus, e);
                }
                if (CronJobUtils.inActiveList(fresh, uid)) {
                    // upstream continues with the fresh copy in this function only
                    cronJob = fresh;
                    if (cronJob.getStatus() == null) {
                        cronJob.setStatus(new CronJobStatus());
                    }
                    continue;
                }
                recorder.eventf(cronJob, EventRecorder.WARNING, "UnexpectedJob",
                        "Saw a job that the controller did not create or forgot: %s", j.getMetadata().getName());
            } else if (JobUtil.isJobFinished(j)) {
                if (found) {
                    String condition = JobUtil.finishedCondition(j);
                    CronJobUtils.deleteFromActiveList(cronJob, uid);
                    recorder.eventf(cronJob, EventRecorder.NORMAL, "SawCompletedJob", "Saw completed job: %s, condition: %s",
                            j.getMetadata().getName(), condition);
                    updateStatus = true;
                }
                if (JobUtil.isJobSucceeded(j)) {
                    String completion = j.getStatus() == null ? null : j.getStatus().getCompletionTime();
                    if (cronJob.getStatus().getLastSuccessfulTime() == null) {
                        cronJob.getStatus().setLastSuccessfulTime(completion);
                        updateStatus = true;
                    }
                    if (completion != null
                            && Instant.parse(completion).isAfter(Instant.parse(cronJob.getStatus().getLastSuccessfulTime()))) {
                        cronJob.getStatus().setLastSuccessfulTime(completion);
                        updateStatus = true;
                    }
                }
            }
        }

        // an active Job that no longer exists (asked of the API server, not the cache) leaves the list
        for (ObjectReference j : List.copyOf(CronJobUtils.active(cronJob))) {
            if (childrenJobs.contains(j.getUid())) {
                continue;
            }
            try {
                jobControl.getJob(j.getNamespace(), j.getName());
            } catch (RuntimeException e) {
                if (ApiErrors.isNotFound(e)) {
                    recorder.eventf(cronJob, EventRecorder.NORMAL, "MissingJob", "Active job went missing: %s", j.getName());
                    CronJobUtils.deleteFromActiveList(cronJob, j.getUid());
                    updateStatus = true;
                } else {
                    return new SyncResult(null, updateStatus, e);
                }
            }
        }

        if (cronJob.getMetadata().getDeletionTimestamp() != null) {
            return new SyncResult(null, updateStatus, null);
        }

        String key = Cache.metaNamespaceKeyFunc(cronJob);
        String timeZone = cronJob.getSpec().getTimeZone();
        if (timeZone != null) {
            try {
                GoTimes.loadLocation(timeZone);
            } catch (GoError e) {
                log.debugf("Not starting job for %s because timeZone %s is invalid: %s", key, timeZone, e.getMessage());
                recorder.eventf(cronJob, EventRecorder.WARNING, "UnknownTimeZone", "invalid timeZone: %s: %s",
                        goQuote(timeZone), e.getMessage());
                return new SyncResult(null, updateStatus, null);
            }
        }

        if (Boolean.TRUE.equals(cronJob.getSpec().getSuspend())) {
            log.tracef("Not starting job for %s because the cron is suspended", key);
            return new SyncResult(null, updateStatus, null);
        }

        Schedule sched;
        try {
            sched = CronParser.parseStandard(formatSchedule(cronJob, recorder));
        } catch (GoError e) {
            log.debugf("Unparseable schedule of %s: %s: %s", key, cronJob.getSpec().getSchedule(), e.getMessage());
            recorder.eventf(cronJob, EventRecorder.WARNING, "UnparseableSchedule", "unparseable schedule: %s : %s",
                    goQuote(cronJob.getSpec().getSchedule()), e.getMessage());
            return new SyncResult(null, updateStatus, null);
        }

        CronJobUtils.Next next = CronJobUtils.nextScheduleTime(cronJob, now, sched, recorder);
        if (next.error() != null) {
            log.debugf("Invalid schedule of %s: %s: %s", key, cronJob.getSpec().getSchedule(), next.error());
            recorder.eventf(cronJob, EventRecorder.WARNING, "InvalidSchedule", "invalid schedule: %s : %s",
                    cronJob.getSpec().getSchedule(), next.error());
            return new SyncResult(null, updateStatus, null);
        }
        ZonedDateTime scheduledTime = next.time();
        if (scheduledTime == null) {
            log.tracef("No unmet start times for %s", key);
            return new SyncResult(CronJobUtils.nextScheduleTimeDuration(cronJob, now, sched), updateStatus, null);
        }

        Long deadline = cronJob.getSpec().getStartingDeadlineSeconds();
        boolean tooLate = deadline != null
                && GoTimes.add(scheduledTime, 1_000_000_000L * deadline).toInstant().isBefore(now.toInstant());
        if (tooLate) {
            log.tracef("Missed starting window for %s", key);
            recorder.eventf(cronJob, EventRecorder.WARNING, "MissSchedule", "Missed scheduled time to start a job: %s",
                    RFC1123Z.format(scheduledTime.withZoneSameInstant(ZoneOffset.UTC)));
            return new SyncResult(CronJobUtils.nextScheduleTimeDuration(cronJob, now, sched), updateStatus, null);
        }
        String lastScheduleTime = cronJob.getStatus().getLastScheduleTime();
        if (CronJobUtils.inActiveListByName(cronJob, cronJob.getMetadata().getNamespace(),
                CronJobUtils.getJobName(cronJob, scheduledTime.toInstant()))
                || (lastScheduleTime != null && Instant.parse(lastScheduleTime).equals(scheduledTime.toInstant()))) {
            log.tracef("Not starting job for %s because the scheduled time %s is already processed", key, scheduledTime);
            return new SyncResult(CronJobUtils.nextScheduleTimeDuration(cronJob, now, sched), updateStatus, null);
        }
        String policy = cronJob.getSpec().getConcurrencyPolicy();
        if ("Forbid".equals(policy) && !CronJobUtils.active(cronJob).isEmpty()) {
            log.tracef("Not starting job for %s because prior execution is still running and concurrency policy is Forbid", key);
            recorder.event(cronJob, EventRecorder.NORMAL, "JobAlreadyActive",
                    "Not starting job because prior execution is running and concurrency policy is Forbid");
            return new SyncResult(CronJobUtils.nextScheduleTimeDuration(cronJob, now, sched), updateStatus, null);
        }
        if ("Replace".equals(policy)) {
            for (ObjectReference j : List.copyOf(CronJobUtils.active(cronJob))) {
                log.tracef("Deleting job %s/%s that was still running at next scheduled start time", j.getNamespace(), j.getName());
                Job job;
                try {
                    job = jobControl.getJob(j.getNamespace(), j.getName());
                } catch (RuntimeException e) {
                    recorder.eventf(cronJob, EventRecorder.WARNING, "FailedGet", "Get job: %s", ApiErrors.message(e));
                    return new SyncResult(null, updateStatus, e);
                }
                if (!deleteJob(cronJob, job)) {
                    return new SyncResult(null, updateStatus, new IllegalStateException(
                            "could not replace job " + job.getMetadata().getNamespace() + "/" + job.getMetadata().getName()));
                }
                updateStatus = true;
            }
        }

        boolean jobAlreadyExists = false;
        Job jobReq;
        try {
            jobReq = CronJobUtils.getJobFromTemplate2(cronJob, scheduledTime.toInstant(), scheduledAnnotation, local());
        } catch (GoError e) {
            log.errorf("Unable to make Job from template of %s: %s", key, e.getMessage());
            return new SyncResult(null, updateStatus, new IllegalStateException(e.getMessage(), e));
        }
        Job jobResp;
        try {
            jobResp = jobControl.createJob(cronJob.getMetadata().getNamespace(), jobReq);
        } catch (RuntimeException e) {
            if (ApiErrors.hasStatusCause(e, ApiErrors.NAMESPACE_TERMINATING_CAUSE)) {
                return new SyncResult(null, updateStatus, e);
            }
            if (!ApiErrors.isAlreadyExists(e)) {
                recorder.eventf(cronJob, EventRecorder.WARNING, "FailedCreate", "Error creating job: %s", ApiErrors.message(e));
                return new SyncResult(null, updateStatus, e);
            }
            // created before (by us, with the status write lost, or by someone else). Upstream reads it
            // back in the request's namespace, which is empty: the read fails with NotFound and the key
            // is retried with backoff (kube-controller-manager v1.34.4 does so; the Job is never put
            // into status.active by this path)
            jobAlreadyExists = true;
            Job job;
            try {
                job = jobControl.getJob(jobReq.getMetadata().getNamespace(), jobReq.getMetadata().getName());
            } catch (RuntimeException getError) {
                return new SyncResult(null, updateStatus, getError);
            }
            jobResp = job;
            if (!ControllerRefManager.isControlledBy(job, cronJob)) {
                return new SyncResult(null, updateStatus, null);
            }
            if (CronJobUtils.inActiveList(cronJob, job.getMetadata().getUid())) {
                return new SyncResult(null, updateStatus, null);
            }
        }

        if (jobAlreadyExists) {
            log.infof("Job %s/%s of cronjob %s already exists", jobReq.getMetadata().getNamespace(),
                    jobReq.getMetadata().getName(), key);
        } else {
            String created = jobResp.getMetadata().getCreationTimestamp();
            if (created != null) {
                creationSkew.record(GoTimes.sub(Instant.parse(created), scheduledTime.toInstant()) / 1e9);
            }
            log.tracef("Created Job %s/%s for cronjob %s", jobResp.getMetadata().getNamespace(), jobResp.getMetadata().getName(), key);
            recorder.eventf(cronJob, EventRecorder.NORMAL, "SuccessfulCreate", "Created job %s", jobResp.getMetadata().getName());
        }

        List<ObjectReference> active = new ArrayList<>(CronJobUtils.active(cronJob));
        active.add(getRef(jobResp));
        cronJob.getStatus().setActive(active);
        cronJob.getStatus().setLastScheduleTime(META_TIME.format(scheduledTime.toInstant()));
        updateStatus = true;

        return new SyncResult(CronJobUtils.nextScheduleTimeDuration(cronJob, now, sched), updateStatus, null);
    }

    /** Upstream's getRef (tools/reference.GetReference) for a Job. */
    static ObjectReference getRef(Job job) {
        return new ObjectReferenceBuilder().withKind("Job").withApiVersion(API_VERSION)
                .withNamespace(job.getMetadata().getNamespace()).withName(job.getMetadata().getName())
                .withUid(job.getMetadata().getUid()).withResourceVersion(job.getMetadata().getResourceVersion()).build();
    }

    /** Upstream's cleanupFinishedJobs: past either history limit, the oldest finished Jobs go. */
    boolean cleanupFinishedJobs(CronJob cj, List<Job> js) {
        Integer failedLimit = cj.getSpec().getFailedJobsHistoryLimit();
        Integer successfulLimit = cj.getSpec().getSuccessfulJobsHistoryLimit();
        if (failedLimit == null && successfulLimit == null) {
            return false;
        }
        boolean updateStatus = false;
        List<Job> failedJobs = new ArrayList<>();
        List<Job> successfulJobs = new ArrayList<>();
        for (Job job : js) {
            String finished = JobUtil.finishedCondition(job);
            if (JobUtil.COMPLETE.equals(finished)) {
                successfulJobs.add(job);
            } else if (JobUtil.FAILED.equals(finished)) {
                failedJobs.add(job);
            }
        }
        if (successfulLimit != null && removeOldestJobs(cj, successfulJobs, successfulLimit)) {
            updateStatus = true;
        }
        if (failedLimit != null && removeOldestJobs(cj, failedJobs, failedLimit)) {
            updateStatus = true;
        }
        return updateStatus;
    }

    private boolean removeOldestJobs(CronJob cj, List<Job> js, int maxJobs) {
        boolean updateStatus = false;
        int numToDelete = js.size() - maxJobs;
        if (numToDelete <= 0) {
            return false;
        }
        log.tracef("Cleaning up %d/%d jobs from %s", numToDelete, js.size(), Cache.metaNamespaceKeyFunc(cj));
        List<Job> sorted = new ArrayList<>(js);
        sorted.sort(CronJobUtils.BY_JOB_START_TIME);
        for (int i = 0; i < numToDelete; i++) {
            if (deleteJob(cj, sorted.get(i))) {
                updateStatus = true;
            }
        }
        return updateStatus;
    }

    /** Upstream's deleteJob: the Job (background propagation), then its entry in the active list. */
    boolean deleteJob(CronJob cj, Job job) {
        try {
            jobControl.deleteJob(job.getMetadata().getNamespace(), job.getMetadata().getName());
        } catch (RuntimeException e) {
            recorder.eventf(cj, EventRecorder.WARNING, "FailedDelete", "Deleted job: %s", ApiErrors.message(e));
            log.errorf("Error deleting job %s/%s from cronjob %s: %s", job.getMetadata().getNamespace(),
                    job.getMetadata().getName(), Cache.metaNamespaceKeyFunc(cj), shortMessage(e));
            return false;
        }
        CronJobUtils.deleteFromActiveList(cj, job.getMetadata().getUid());
        recorder.eventf(cj, EventRecorder.NORMAL, "SuccessfulDelete", "Deleted job %s", job.getMetadata().getName());
        return true;
    }

    /**
     * Upstream's formatSchedule: a schedule naming TZ is used as is (with an UnsupportedSchedule warning
     * when a recorder is given); otherwise a valid spec.timeZone becomes a {@code TZ=} prefix.
     */
    static String formatSchedule(CronJob cj, EventRecorder recorder) {
        String schedule = cj.getSpec().getSchedule();
        if (schedule.contains("TZ")) {
            if (recorder != null) {
                recorder.eventf(cj, EventRecorder.WARNING, "UnsupportedSchedule",
                        "CRON_TZ or TZ used in schedule %s is not officially supported, see https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details",
                        goQuote(schedule));
            }
            return schedule;
        }
        String timeZone = cj.getSpec().getTimeZone();
        if (timeZone != null) {
            try {
                GoTimes.loadLocation(timeZone);
            } catch (GoError e) {
                return schedule;
            }
            return "TZ=" + timeZone + " " + schedule;
        }
        return schedule;
    }

    /** Go's %q of a string. */
    static String goQuote(String s) {
        return GoTimes.quote(s);
    }

    // ---- event handlers ---------------------------------------------------------------------

    /** The CronJob a controller reference names, if cached with that UID. */
    CronJob resolveControllerRef(String namespace, OwnerReference ref) {
        return ControllerRefs.resolveControllerRef(KIND, cronJobInformer, namespace, ref);
    }

    void enqueueController(CronJob cj) {
        queue.add(Cache.metaNamespaceKeyFunc(cj));
    }

    /**
     * Upstream's updateCronJob: a changed schedule or time zone queues the CronJob for the new
     * schedule's next time (an unparseable one gets UnParseableCronJobSchedule and is not queued);
     * any other change queues it now.
     */
    void updateCronJob(CronJob oldCj, CronJob newCj) {
        requeueOnUpdate(oldCj, newCj).ifPresent(d -> queue.addAfter(Cache.metaNamespaceKeyFunc(newCj), d));
    }

    /** When updateCronJob queues the CronJob: empty for not at all, zero for now. */
    java.util.Optional<Duration> requeueOnUpdate(CronJob oldCj, CronJob newCj) {
        if (!Objects.equals(oldCj.getSpec().getSchedule(), newCj.getSpec().getSchedule())
                || !Objects.equals(oldCj.getSpec().getTimeZone(), newCj.getSpec().getTimeZone())) {
            Schedule sched;
            try {
                sched = CronParser.parseStandard(formatSchedule(newCj, null));
            } catch (GoError e) {
                log.debugf("Unparseable schedule for cronjob %s: %s: %s", Cache.metaNamespaceKeyFunc(newCj),
                        newCj.getSpec().getSchedule(), e.getMessage());
                recorder.eventf(newCj, EventRecorder.WARNING, "UnParseableCronJobSchedule", "unparseable schedule for cronjob: %s",
                        newCj.getSpec().getSchedule());
                return java.util.Optional.empty();
            }
            return java.util.Optional.of(Duration.ofNanos(CronJobUtils.nextScheduleTimeDuration(newCj, now(), sched)));
        }
        return java.util.Optional.of(Duration.ZERO);
    }
}
