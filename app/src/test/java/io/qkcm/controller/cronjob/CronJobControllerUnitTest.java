package io.qkcm.controller.cronjob;

import static io.qkcm.controller.cronjob.CronJobControllerSyncTableTest.cronJob;
import static io.qkcm.controller.cronjob.CronJobControllerSyncTableTest.jobSpec;
import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.batch.v1.CronJob;
import io.fabric8.kubernetes.api.model.batch.v1.CronJobBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.JobConditionBuilder;

/** Upstream's other controller tests (UpdateCronJob, CleanupFinishedJobs, JobAlreadyExists…) and the warnings' texts. */
class CronJobControllerUnitTest {

    static final Instant JUST_A_SECOND_BEFORE_THE_HOUR = Instant.parse("2016-05-19T09:59:59Z");
    static final Instant JUST_BEFORE_THE_HOUR = Instant.parse("2016-05-19T09:59:00Z");
    static final Instant JUST_AFTER_THE_PRIOR_HOUR = Instant.parse("2016-05-19T09:01:00Z");
    static final Instant JUST_BEFORE_THE_PRIOR_HOUR = Instant.parse("2016-05-19T08:59:00Z");
    static final Instant JUST_AFTER_THE_HOUR = Instant.parse("2016-05-19T10:01:00Z");

    static CronJob withSchedule(String schedule, String timeZone, Map<String, String> templateLabels, Instant lastSchedule) {
        return new CronJobBuilder().withNewMetadata().withName("cj").endMetadata().withNewSpec().withSchedule(schedule).withTimeZone(timeZone)
                .withNewJobTemplate().withNewMetadata().withLabels(templateLabels).withAnnotations(Map.of("x", "y")).endMetadata()
                .withSpec(jobSpec()).endJobTemplate().endSpec()
                .withNewStatus().withLastScheduleTime(lastSchedule == null ? null : lastSchedule.toString()).endStatus().build();
    }

    @Test
    void updateCronJobQueuesForTheNewScheduleAsUpstream() {
        try (CronJobTestSupport s = new CronJobTestSupport(JUST_A_SECOND_BEFORE_THE_HOUR)) {
            CronJobController c = s.controller;
            // spec.template changed: now
            assertThat(c.requeueOnUpdate(withSchedule(null, null, Map.of("a", "b"), null), withSchedule(null, null, Map.of("a", "foo"), null)))
                    .contains(Duration.ZERO);
            // spec.schedule changed
            assertThat(c.requeueOnUpdate(withSchedule("30 * * * *", null, Map.of("a", "b"), JUST_BEFORE_THE_HOUR),
                    withSchedule("*/1 * * * *", null, Map.of("a", "foo"), JUST_BEFORE_THE_HOUR)))
                    .contains(Duration.ofSeconds(1).plusMillis(100));
            // @every: cadence decrease, increase
            assertThat(c.requeueOnUpdate(withSchedule("@every 1m", null, Map.of("a", "b"), JUST_BEFORE_THE_HOUR),
                    withSchedule("@every 3m", null, Map.of("a", "foo"), JUST_BEFORE_THE_HOUR)))
                    .contains(Duration.ofMinutes(2).plusSeconds(1).plusMillis(100));
            assertThat(c.requeueOnUpdate(withSchedule("@every 3m", null, Map.of("a", "b"), JUST_BEFORE_THE_HOUR),
                    withSchedule("@every 1m", null, Map.of("a", "foo"), JUST_BEFORE_THE_HOUR)))
                    .contains(Duration.ofSeconds(1).plusMillis(100));
            // spec.timeZone not changed: now
            assertThat(c.requeueOnUpdate(withSchedule(null, "America/New_York", Map.of("a", "b"), null),
                    withSchedule(null, "America/New_York", Map.of("a", "foo"), null))).contains(Duration.ZERO);
            // spec.timeZone changed with no schedule: unparseable, not queued, upstream's warning
            assertThat(c.requeueOnUpdate(withSchedule("", "America/New_York", Map.of("a", "b"), null),
                    withSchedule("", null, Map.of("a", "foo"), null))).isEqualTo(Optional.empty());
            assertThat(s.events).containsExactly("Warning UnParseableCronJobSchedule unparseable schedule for cronjob: ");
        }
    }

    static Job finished(String name, Instant start, String type) {
        return new JobBuilder().withNewMetadata().withNamespace("foo-ns").withName(name).withUid(name + "-uid")
                .addNewOwnerReference().withName("fooer").withController(true).endOwnerReference().endMetadata()
                .withNewStatus().withStartTime(start.toString())
                .withConditions(new JobConditionBuilder().withType(type).withStatus("True").build()).endStatus().build();
    }

    @Test
    void cleanupFinishedJobsEvenWhenJobsCannotBeCreated() {
        try (CronJobTestSupport s = new CronJobTestSupport(JUST_AFTER_THE_HOUR)) {
            CronJob cj = new CronJobBuilder().withNewMetadata().withNamespace("foo-ns").withName("fooer").endMetadata()
                    .withNewSpec().withSchedule("0 * * * ?").withSuccessfulJobsHistoryLimit(1)
                    .withNewJobTemplate().withNewMetadata().withLabels(Map.of("key", "value")).endMetadata().endJobTemplate().endSpec()
                    .withNewStatus().withLastScheduleTime(JUST_AFTER_THE_PRIOR_HOUR.toString()).endStatus().build();
            List<Job> jobs = List.of(finished("finished-job-started-hour-ago", JUST_BEFORE_THE_PRIOR_HOUR, "Complete"),
                    finished("finished-job-started-minute-ago", JUST_BEFORE_THE_HOUR, "Complete"));
            s.jobControl.createErr = CronJobTestSupport.apiError(500, "InternalError", "Internal error occurred: quota for # of jobs reached");
            CronJob copy = CronJobController.deepCopy(cj);
            s.controller.cleanupFinishedJobs(copy, jobs);
            CronJobController.SyncResult r = s.controller.syncCronJob(copy, jobs);
            assertThat(s.jobControl.deleteJobName).containsExactly("finished-job-started-hour-ago");
            assertThat(r.error()).isNotNull();
            assertThat(s.events).contains("Normal SuccessfulDelete Deleted job finished-job-started-hour-ago",
                    "Warning FailedCreate Error creating job: Internal error occurred: quota for # of jobs reached");
        }
        try (CronJobTestSupport s = new CronJobTestSupport(JUST_BEFORE_THE_HOUR)) {
            CronJob cj = new CronJobBuilder().withNewMetadata().withNamespace("foo-ns").withName("fooer").endMetadata()
                    .withNewSpec().withSchedule("0 * * * ?").withSuccessfulJobsHistoryLimit(2).withFailedJobsHistoryLimit(0).endSpec()
                    .withNewStatus().withLastScheduleTime(JUST_AFTER_THE_PRIOR_HOUR.toString()).endStatus().build();
            List<Job> jobs = List.of(finished("finished-job-started-hour-ago", JUST_BEFORE_THE_PRIOR_HOUR, "Complete"),
                    finished("failed", JUST_BEFORE_THE_PRIOR_HOUR, "Failed"));
            assertThat(s.controller.cleanupFinishedJobs(CronJobController.deepCopy(cj), jobs)).isTrue();
            // the limit of 2 succeeded is not reached; the failed one is past 0
            assertThat(s.jobControl.deleteJobName).containsExactly("failed");
        }
    }

    private static CronJob forbidEveryHour() {
        CronJob cj = cronJob();
        cj.getSpec().setConcurrencyPolicy("Forbid");
        cj.getSpec().setSchedule("@every 1h");
        cj.getStatus().setLastScheduleTime(JUST_BEFORE_THE_PRIOR_HOUR.toString());
        cj.getStatus().setActive(new ArrayList<>());
        return cj;
    }

    @Test
    void jobAlreadyExistsButNotInActiveStatusIsAddedBack() throws Exception {
        try (CronJobTestSupport s = new CronJobTestSupport(JUST_BEFORE_THE_HOUR)) {
            CronJob cj = forbidEveryHour();
            Job job = CronJobUtils.getJobFromTemplate2(cj, JUST_AFTER_THE_PRIOR_HOUR, true, s.clock.getZone());
            job.getMetadata().setUid("1234");
            s.jobControl.job = job;
            s.jobControl.createErr = CronJobTestSupport.apiError(409, "AlreadyExists", "job.batch \"\" already exists");
            CronJob copy = CronJobController.deepCopy(cj);
            CronJobController.SyncResult r = s.controller.syncCronJob(copy, List.of());
            assertThat(r.updateStatus()).isTrue();
            assertThat(copy.getStatus().getActive()).containsExactly(CronJobController.getRef(job));
            assertThat(s.events).isEmpty();
        }
    }

    @Test
    void jobAlreadyExistsButDifferentOwnerIsIgnored() throws Exception {
        try (CronJobTestSupport s = new CronJobTestSupport(JUST_BEFORE_THE_HOUR)) {
            CronJob cj = forbidEveryHour();
            Job job = CronJobUtils.getJobFromTemplate2(cj, JUST_AFTER_THE_PRIOR_HOUR, true, s.clock.getZone());
            job.getMetadata().setUid("1234");
            job.getMetadata().setOwnerReferences(new ArrayList<>());
            s.jobControl.job = job;
            s.jobControl.createErr = CronJobTestSupport.apiError(409, "AlreadyExists", "job.batch \"\" already exists");
            CronJob copy = CronJobController.deepCopy(cj);
            CronJobController.SyncResult r = s.controller.syncCronJob(copy, List.of());
            assertThat(r.updateStatus()).isFalse();
            assertThat(r.requeueAfter()).isNull();
            assertThat(r.error()).isNull();
            assertThat(copy.getStatus().getActive()).isEmpty();
        }
    }

    @Test
    void badInputGetsUpstreamsWarningsAndNoRequeue() {
        try (CronJobTestSupport s = new CronJobTestSupport(JUST_AFTER_THE_HOUR)) {
            CronJob cj = cronJob();
            cj.getSpec().setSchedule("0 * * * ?");
            cj.getSpec().setTimeZone("bad timezone");
            CronJobController.SyncResult r = s.controller.syncCronJob(CronJobController.deepCopy(cj), List.of());
            assertThat(r).isEqualTo(new CronJobController.SyncResult(null, false, null));
            cj.getSpec().setTimeZone(null);
            cj.getSpec().setSchedule("obvious error schedule");
            r = s.controller.syncCronJob(CronJobController.deepCopy(cj), List.of());
            assertThat(r).isEqualTo(new CronJobController.SyncResult(null, false, null));
            cj.getSpec().setSchedule("59 23 31 2 *");
            r = s.controller.syncCronJob(CronJobController.deepCopy(cj), List.of());
            assertThat(r).isEqualTo(new CronJobController.SyncResult(null, false, null));
            cj.getSpec().setSchedule("TZ=UTC 0 * * * *");
            r = s.controller.syncCronJob(CronJobController.deepCopy(cj), List.of());
            assertThat(r.requeueAfter()).isNotNull();
            assertThat(s.events).containsExactly(
                    "Warning UnknownTimeZone invalid timeZone: \"bad timezone\": unknown time zone bad timezone",
                    "Warning UnparseableSchedule unparseable schedule: \"obvious error schedule\" : expected exactly 5 fields, found 3: [obvious error schedule]",
                    "Warning InvalidSchedule invalid schedule: 59 23 31 2 * : time difference between two schedules is less than 1 second",
                    "Warning UnsupportedSchedule CRON_TZ or TZ used in schedule \"TZ=UTC 0 * * * *\" is not officially supported, see https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details",
                    "Normal SuccessfulCreate Created job mycronjob-" + Instant.parse("2016-05-19T10:00:00Z").getEpochSecond() / 60);
        }
    }

    @Test
    void missingActiveJobIsDroppedWithMissingJob() {
        try (CronJobTestSupport s = new CronJobTestSupport(JUST_BEFORE_THE_HOUR)) {
            CronJob cj = cronJob();
            cj.getSpec().setSchedule("0 * * * ?");
            cj.getStatus().setActive(new ArrayList<>(List.of(new io.fabric8.kubernetes.api.model.ObjectReferenceBuilder().withKind("Job")
                    .withNamespace("snazzycats").withName("gone").withUid("gone-uid").build())));
            s.jobControl.err = Injection.notFound("jobs.batch", "gone");
            CronJob copy = CronJobController.deepCopy(cj);
            CronJobController.SyncResult r = s.controller.syncCronJob(copy, List.of());
            assertThat(r.updateStatus()).isTrue();
            assertThat(copy.getStatus().getActive()).isEmpty();
            assertThat(s.events).containsExactly("Normal MissingJob Active job went missing: gone");
        }
    }
}
