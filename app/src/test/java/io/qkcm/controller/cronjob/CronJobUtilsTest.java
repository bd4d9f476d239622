package io.qkcm.controller.cronjob;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.batch.v1.CronJob;
import io.fabric8.kubernetes.api.model.batch.v1.CronJobBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobBuilder;
import io.qkcm.controller.cronjob.CronJobUtils.MissedSchedules;
import io.qkcm.controller.cronjob.cron.CronParser;
import io.qkcm.controller.cronjob.cron.Schedule;

/** Upstream's utils_test.go tables (v1.34.4), with upstream's times (UTC, kube-controller-manager's local zone here). */
class CronJobUtilsTest {

    static final Instant TOP_OF_THE_HOUR = Instant.parse("2016-05-19T10:00:00Z");

    static Instant delta(Duration d) {
        return TOP_OF_THE_HOUR.plus(d);
    }

    static ZonedDateTime utc(Instant t) {
        return ZonedDateTime.ofInstant(t, ZoneOffset.UTC);
    }

    static CronJob cj(String schedule, Instant created, Instant lastSchedule, Long deadline) {
        return new CronJobBuilder().withNewMetadata().withName("mycronjob").withNamespace("default").withUid("1a2b3c")
                .withCreationTimestamp(created == null ? null : created.toString()).endMetadata()
                .withNewSpec().withSchedule(schedule).withConcurrencyPolicy("Allow").withStartingDeadlineSeconds(deadline).endSpec()
                .withNewStatus().withLastScheduleTime(lastSchedule == null ? null : lastSchedule.toString()).endStatus().build();
    }

    record MostRecentCase(String name, CronJob cj, boolean includeSDS, Instant now, Instant earliest, Instant recent,
            MissedSchedules missed, boolean wantErr) {
    }

    @Test
    void mostRecentScheduleTime() throws Exception {
        Instant half = delta(Duration.ofMinutes(30));
        Instant minuteAfter = delta(Duration.ofMinutes(1));
        List<MostRecentCase> cases = List.of(
                new MostRecentCase("now before next schedule", cj("0 * * * *", TOP_OF_THE_HOUR, null, null), false,
                        TOP_OF_THE_HOUR.plusSeconds(30), TOP_OF_THE_HOUR, null, MissedSchedules.NONE, false),
                new MostRecentCase("now just after next schedule", cj("0 * * * *", TOP_OF_THE_HOUR, null, null), false,
                        delta(Duration.ofMinutes(61)), TOP_OF_THE_HOUR, delta(Duration.ofMinutes(60)), MissedSchedules.NONE, false),
                new MostRecentCase("missed 5 schedules", cj("0 * * * *", delta(Duration.ofSeconds(10)), null, null), false,
                        delta(Duration.ofMinutes(301)), delta(Duration.ofSeconds(10)), delta(Duration.ofMinutes(300)), MissedSchedules.FEW, false),
                new MostRecentCase("complex schedule", cj("30 6-16/4 * * 1-5", TOP_OF_THE_HOUR, half, null), false,
                        delta(Duration.ofHours(24).plusMinutes(31)), half, delta(Duration.ofHours(24).plusMinutes(30)), MissedSchedules.FEW, false),
                new MostRecentCase("another complex schedule", cj("30 10,11,12 * * 1-5", TOP_OF_THE_HOUR, half, null), false,
                        delta(Duration.ofHours(30).plusMinutes(30)), half, null, MissedSchedules.FEW, false),
                new MostRecentCase("complex schedule with longer diff between executions", cj("30 6-16/4 * * 1-5", TOP_OF_THE_HOUR, half, null), false,
                        delta(Duration.ofHours(96).plusMinutes(31)), half, delta(Duration.ofHours(96).plusMinutes(30)), MissedSchedules.FEW, false),
                new MostRecentCase("complex schedule with shorter diff between executions", cj("30 6-16/4 * * 1-5", TOP_OF_THE_HOUR, null, null), false,
                        delta(Duration.ofHours(24).plusMinutes(31)), TOP_OF_THE_HOUR, delta(Duration.ofHours(24).plusMinutes(30)), MissedSchedules.FEW, false),
                new MostRecentCase("@every schedule", cj("@every 1h", delta(Duration.ofMinutes(-59)), minuteAfter, 10L), false,
                        delta(Duration.ofDays(7)), minuteAfter, delta(Duration.ofDays(6).plusHours(23).plusMinutes(1)), MissedSchedules.MANY, false),
                new MostRecentCase("rogue cronjob", cj("59 23 31 2 *", delta(Duration.ofSeconds(10)), null, null), false,
                        delta(Duration.ofHours(1)), null, null, MissedSchedules.NONE, true),
                new MostRecentCase("earliestTime being CreationTimestamp and LastScheduleTime", cj("0 * * * *", TOP_OF_THE_HOUR, TOP_OF_THE_HOUR, null), false,
                        delta(Duration.ofSeconds(30)), TOP_OF_THE_HOUR, null, MissedSchedules.NONE, false),
                new MostRecentCase("earliestTime being LastScheduleTime", cj("*/5 * * * *", TOP_OF_THE_HOUR, half, null), false,
                        delta(Duration.ofMinutes(31)), half, null, MissedSchedules.NONE, false),
                new MostRecentCase("earliestTime being LastScheduleTime (within StartingDeadlineSeconds)", cj("*/5 * * * *", TOP_OF_THE_HOUR, half, 60L), false,
                        delta(Duration.ofMinutes(31)), half, null, MissedSchedules.NONE, false),
                new MostRecentCase("earliestTime being LastScheduleTime (outside StartingDeadlineSeconds)", cj("*/5 * * * *", TOP_OF_THE_HOUR, half, 60L), true,
                        delta(Duration.ofMinutes(32)), delta(Duration.ofMinutes(31)), null, MissedSchedules.NONE, false));
        for (MostRecentCase tt : cases) {
            Schedule sched = CronParser.parseStandard(tt.cj().getSpec().getSchedule());
            CronJobUtils.MostRecent got = CronJobUtils.mostRecentScheduleTime(tt.cj(), utc(tt.now()), sched, tt.includeSDS());
            if (tt.wantErr()) {
                assertThat(got.error()).as(tt.name()).isNotNull();
                continue;
            }
            assertThat(got.error()).as(tt.name()).isNull();
            assertThat(got.earliest().toInstant()).as("%s: earliest", tt.name()).isEqualTo(tt.earliest());
            assertThat(got.mostRecent() == null ? null : got.mostRecent().toInstant()).as("%s: recent", tt.name()).isEqualTo(tt.recent());
            assertThat(got.missed()).as("%s: missed", tt.name()).isEqualTo(tt.missed());
        }
    }

    @Test
    void nextScheduleTimeDuration() throws Exception {
        Instant half = delta(Duration.ofMinutes(30));
        Instant twoHours = delta(Duration.ofHours(2));
        long delta = 100_000_000L;
        record Case(String name, CronJob cj, Instant now, long expected) {
        }
        List<Case> cases = List.of(
                new Case("complex schedule skipping weekend", cj("30 6-16/4 * * 1-5", TOP_OF_THE_HOUR, half, null),
                        delta(Duration.ofHours(24).plusMinutes(31)), Duration.ofHours(3).plusMinutes(59).toNanos() + delta),
                new Case("another complex schedule skipping weekend", cj("30 10,11,12 * * 1-5", TOP_OF_THE_HOUR, half, null),
                        delta(Duration.ofHours(30).plusMinutes(30)), Duration.ofHours(66).toNanos() + delta),
                new Case("once a week cronjob, missed two runs", cj("0 12 * * 4", TOP_OF_THE_HOUR, twoHours, null),
                        delta(Duration.ofDays(19).plusHours(1).plusMinutes(30)), Duration.ofHours(48).plusMinutes(30).toNanos() + delta),
                new Case("no previous run of a cronjob", cj("0 12 * * 5", TOP_OF_THE_HOUR, null, null),
                        delta(Duration.ofHours(6)), Duration.ofHours(20).toNanos() + delta));
        for (Case tt : cases) {
            long got = CronJobUtils.nextScheduleTimeDuration(tt.cj(), utc(tt.now()), CronParser.parseStandard(tt.cj().getSpec().getSchedule()));
            assertThat(got).as(tt.name()).isGreaterThanOrEqualTo(0).isEqualTo(tt.expected());
        }
    }

    @Test
    void nextScheduleTime() throws Exception {
        Schedule sched = CronParser.parseStandard("0 * * * ?");
        Instant t1 = TOP_OF_THE_HOUR;
        Instant t2 = delta(Duration.ofHours(1));
        List<String> events = new ArrayList<>();
        io.qkcm.runtime.events.EventRecorder recorder = (o, type, reason, message) -> events.add(reason);

        assertThat(CronJobUtils.nextScheduleTime(cj("0 * * * ?", t1.minusSeconds(600), null, null), utc(t1.minusSeconds(420)), sched, recorder).time())
                .isNull();
        assertThat(CronJobUtils.nextScheduleTime(cj("0 * * * ?", t1.minusSeconds(600), null, null), utc(t1.plusSeconds(2)), sched, recorder).time()
                .toInstant()).isEqualTo(t1);
        assertThat(CronJobUtils.nextScheduleTime(cj("0 * * * ?", t1.minusSeconds(600), t1, null), utc(t1.plusSeconds(120)), sched, recorder).time())
                .isNull();
        assertThat(CronJobUtils.nextScheduleTime(cj("0 * * * ?", t1.minusSeconds(600), t1, null), utc(t2.plusSeconds(300)), sched, recorder).time()
                .toInstant()).isEqualTo(t2);
        assertThat(CronJobUtils.nextScheduleTime(cj("0 * * * ?", t1.minusSeconds(7200), t1.minusSeconds(3600), null), utc(t2.plusSeconds(300)), sched,
                recorder).time().toInstant()).isEqualTo(t2);
        assertThat(events).isEmpty();
        assertThat(CronJobUtils.nextScheduleTime(cj("0 * * * ?", t1.minusSeconds(7200), t1.minusSeconds(3600), null),
                utc(t2.plus(Duration.ofDays(10))), sched, recorder).time()).isNotNull();
        assertThat(events).containsExactly("TooManyMissedTimes");
        assertThat(CronJobUtils.nextScheduleTime(cj("0 * * * ?", t1.minusSeconds(7200), t1.minusSeconds(3600), 7200L),
                utc(t2.plus(Duration.ofDays(10))), sched, recorder).time()).isNotNull();
        CronJobUtils.Next rogue = CronJobUtils.nextScheduleTime(cj("0 * * * ?", t1.plusSeconds(10), null, null), utc(t2),
                CronParser.parseStandard("59 23 31 2 *"), recorder);
        assertThat(rogue.time()).isNull();
        assertThat(rogue.error()).isEqualTo("time difference between two schedules is less than 1 second");
    }

    @Test
    void byJobStartTime() {
        String now = "2018-01-01T02:03:04Z";
        String later = "2019-01-01T02:03:04Z";
        Job aNil = job("a", null);
        Job bNil = job("b", null);
        Job aSet = job("a", now);
        Job bSet = job("b", now);
        Job aSetLater = job("a", later);
        record Case(List<Job> input, List<Job> expected) {
        }
        List<Case> cases = List.of(
                new Case(List.of(aNil, bNil), List.of(aNil, bNil)),
                new Case(List.of(bNil, aNil), List.of(aNil, bNil)),
                new Case(List.of(aSet, bSet), List.of(aSet, bSet)),
                new Case(List.of(bSet, aSet), List.of(aSet, bSet)),
                new Case(List.of(aNil, bSet), List.of(bSet, aNil)),
                new Case(List.of(bSet, aNil), List.of(bSet, aNil)),
                new Case(List.of(aSet, bNil), List.of(aSet, bNil)),
                new Case(List.of(aSetLater, bSet), List.of(bSet, aSetLater)),
                new Case(List.of(bSet, aSetLater), List.of(bSet, aSetLater)));
        for (Case c : cases) {
            List<Job> sorted = new ArrayList<>(c.input());
            sorted.sort(CronJobUtils.BY_JOB_START_TIME);
            assertThat(sorted).containsExactlyElementsOf(c.expected());
        }
    }

    static Job job(String name, String startTime) {
        return new JobBuilder().withNewMetadata().withName(name).endMetadata().withNewStatus().withStartTime(startTime).endStatus().build();
    }

    @Test
    void getJobFromTemplate2() throws Exception {
        Instant scheduled = TOP_OF_THE_HOUR;
        record Case(String name, String timeZone, Map<String, String> annotations, String expectedScheduled, int expectedAnnotations) {
        }
        List<Case> cases = List.of(
                new Case("UTC timezone and one annotation", "UTC", Map.of("x", "y"), "2016-05-19T10:00:00Z", 2),
                new Case("nil timezone and one annotation", null, Map.of("x", "y"), "2016-05-19T10:00:00Z", 2),
                new Case("correct timezone and multiple annotation", "Europe/Rome", Map.of("x", "y", "z", "x"), "2016-05-19T12:00:00+02:00", 3));
        for (Case tt : cases) {
            CronJob cj = new CronJobBuilder().withNewMetadata().withName("mycronjob").withNamespace("snazzycats").withUid("1a2b3c").endMetadata()
                    .withNewSpec().withSchedule("* * * * ?").withConcurrencyPolicy("Allow").withTimeZone(tt.timeZone())
                    .withNewJobTemplate().withNewMetadata().withLabels(Map.of("a", "b")).withAnnotations(tt.annotations()).endMetadata()
                    .withNewSpec().withActiveDeadlineSeconds(1L).withManualSelector(false).withNewTemplate().withNewMetadata()
                    .withLabels(Map.of("foo", "bar")).endMetadata().withNewSpec().addNewContainer().withImage("foo/bar").endContainer()
                    .endSpec().endTemplate().endSpec().endJobTemplate().endSpec().build();
            Job job = CronJobUtils.getJobFromTemplate2(cj, scheduled, true, ZoneOffset.UTC);
            assertThat(job.getMetadata().getName()).as(tt.name()).isEqualTo("mycronjob-" + scheduled.getEpochSecond() / 60);
            assertThat(job.getMetadata().getLabels()).as(tt.name()).isEqualTo(Map.of("a", "b"));
            assertThat(job.getMetadata().getAnnotations()).as(tt.name()).hasSize(tt.expectedAnnotations())
                    .containsEntry(CronJobUtils.SCHEDULED_TIMESTAMP_ANNOTATION, tt.expectedScheduled());
            assertThat(job.getMetadata().getOwnerReferences()).singleElement().satisfies(ref -> {
                assertThat(ref.getController()).isTrue();
                assertThat(ref.getBlockOwnerDeletion()).isTrue();
                assertThat(ref.getUid()).isEqualTo("1a2b3c");
            });
            assertThat(job.getSpec()).isEqualTo(cj.getSpec().getJobTemplate().getSpec()).isNotSameAs(cj.getSpec().getJobTemplate().getSpec());
        }
        // the gate off: no annotation
        CronJob plain = cj("* * * * ?", null, null, null);
        assertThat(CronJobUtils.getJobFromTemplate2(plain, scheduled, false, ZoneOffset.UTC).getMetadata().getAnnotations()).isEmpty();
    }
}
