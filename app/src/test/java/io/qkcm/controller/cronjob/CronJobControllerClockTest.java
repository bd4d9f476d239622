package io.qkcm.controller.cronjob;

import static io.qkcm.controller.cronjob.CronJobApiSupport.cronJob;
import static io.qkcm.controller.cronjob.CronJobApiSupport.events;
import static io.qkcm.controller.cronjob.CronJobApiSupport.finish;
import static io.qkcm.controller.cronjob.CronJobApiSupport.get;
import static io.qkcm.controller.cronjob.CronJobApiSupport.jobName;
import static io.qkcm.controller.cronjob.CronJobApiSupport.jobs;
import static io.qkcm.controller.cronjob.CronJobApiSupport.minuteAfter;
import static io.qkcm.controller.cronjob.CronJobApiSupport.poke;
import static io.qkcm.testing.TestNamespaces.newNamespace;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;

import jakarta.inject.Inject;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.ObjectReference;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.batch.v1.CronJob;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.qkcm.controller.ControllerRefManager;
import io.qkcm.testing.ControllerHarness;
import io.qkcm.testing.ManagerOffProfile;
import io.qkcm.testing.RealApiServer;
import io.qkcm.testing.RealApiServerResource;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.vertx.core.Vertx;

/**
 * The CronJob controller against a real API server, run by hand (the application's manager is off)
 * on a clock the test sets: each schedule time is reached by setting the clock and changing the
 * CronJob (an update queues it at once), so no test waits for the wall clock. No job controller runs:
 * the test finishes Jobs through their status.
 */
@QuarkusTest
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
@TestProfile(ManagerOffProfile.class)
class CronJobControllerClockTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    @Inject
    Vertx vertx;

    static KubernetesClient client;
    static CronJobTestSupport.MutableClock clock;
    static ControllerHarness<CronJobController> instance;

    @BeforeAll
    static void setUp() {
        client = RealApiServer.get().newClient();
    }

    @BeforeEach
    void startController() throws InterruptedException {
        if (instance == null) {
            clock = new CronJobTestSupport.MutableClock(Instant.now(), ZoneOffset.UTC);
            instance = CronJobApiSupport.startController(vertx, clock);
        }
        // before the creation of the test's CronJob: no schedule time of it has come yet
        clock.set(Instant.now().minusSeconds(1));
    }

    @AfterAll
    static void tearDown() {
        if (instance != null) {
            instance.close();
            instance = null;
        }
        client.close();
    }

    /**
     * Creates the CronJob and returns once the controller has synced it: a sync still running on the
     * creation's view when the test moves the clock would act on a stale CronJob, and its status write
     * would conflict with the test's next change (upstream then retries creating the same Job and
     * never records it as active, until the next schedule time).
     */
    private CronJob create(String ns, CronJob cj) {
        String key = ns + "/" + cj.getMetadata().getName();
        java.util.concurrent.CountDownLatch synced = new java.util.concurrent.CountDownLatch(1);
        instance.controller.afterSync = k -> {
            if (k.equals(key)) {
                synced.countDown();
            }
        };
        CronJob created = client.batch().v1().cronjobs().inNamespace(ns).resource(cj).create();
        await().atMost(TIMEOUT).until(() -> synced.getCount() == 0);
        instance.controller.afterSync = k -> {
        };
        return created;
    }

    private static Instant created(CronJob cj) {
        return Instant.parse(cj.getMetadata().getCreationTimestamp());
    }

    /** Sets the controller's clock and has the CronJob synced at once. */
    private void at(Instant t, String ns, String name) {
        clock.set(t);
        poke(client, ns, name);
    }

    private Job awaitJob(String ns, String name) {
        return await().atMost(TIMEOUT).until(() -> client.batch().v1().jobs().inNamespace(ns).withName(name).get(),
                j -> j != null);
    }

    private List<Event> awaitEvent(String ns, String reason) {
        return await().atMost(TIMEOUT).until(() -> events(client, ns, reason), e -> !e.isEmpty());
    }

    @Test
    void createsTheJobOfEachScheduleTimeAndSeesItComplete() {
        String ns = newNamespace(client, "cj-create");
        CronJob cj = create(ns, cronJob("every-minute", "* * * * *", s -> s));
        Instant t1 = minuteAfter(created(cj));
        at(t1.plusSeconds(5), ns, "every-minute");

        Job job = awaitJob(ns, jobName("every-minute", t1));
        assertThat(job.getMetadata().getAnnotations())
                .containsEntry("batch.kubernetes.io/cronjob-scheduled-timestamp", CronJobApiSupport.rfc3339Utc(t1))
                .containsEntry("tmpl", "annotation");
        assertThat(job.getMetadata().getLabels()).containsEntry("tmpl", "label");
        OwnerReference owner = ControllerRefManager.controllerOf(job);
        assertThat(owner.getUid()).isEqualTo(cj.getMetadata().getUid());
        assertThat(owner.getKind()).isEqualTo("CronJob");
        assertThat(owner.getApiVersion()).isEqualTo("batch/v1");
        assertThat(owner.getBlockOwnerDeletion()).isTrue();

        CronJob withActive = await().atMost(TIMEOUT).until(() -> get(client, ns, "every-minute"),
                c -> c.getStatus() != null && c.getStatus().getActive() != null && c.getStatus().getActive().size() == 1);
        ObjectReference ref = withActive.getStatus().getActive().get(0);
        assertThat(ref.getName()).isEqualTo(job.getMetadata().getName());
        assertThat(ref.getUid()).isEqualTo(job.getMetadata().getUid());
        assertThat(ref.getKind()).isEqualTo("Job");
        assertThat(ref.getApiVersion()).isEqualTo("batch/v1");
        assertThat(Instant.parse(withActive.getStatus().getLastScheduleTime())).isEqualTo(t1);
        assertThat(awaitEvent(ns, "SuccessfulCreate")).extracting(Event::getMessage)
                .containsExactly("Created job " + job.getMetadata().getName());

        // the same schedule time again: the name is the lock, no second Job
        poke(client, ns, "every-minute");
        Job done = finish(client, ns, job.getMetadata().getName(), true, t1.plusSeconds(2));
        CronJob seen = await().atMost(TIMEOUT).until(() -> get(client, ns, "every-minute"),
                c -> c.getStatus().getActive() == null || c.getStatus().getActive().isEmpty());
        assertThat(seen.getStatus().getLastSuccessfulTime()).isEqualTo(done.getStatus().getCompletionTime());
        assertThat(awaitEvent(ns, "SawCompletedJob")).extracting(Event::getMessage)
                .containsExactly("Saw completed job: " + job.getMetadata().getName() + ", condition: Complete");
        assertThat(jobs(client, ns)).hasSize(1);
    }

    @Test
    void forbidSkipsWhileAJobIsActive() {
        String ns = newNamespace(client, "cj-forbid");
        CronJob cj = create(ns, cronJob("forbid", "* * * * *", s -> s.withConcurrencyPolicy("Forbid")));
        Instant t1 = minuteAfter(created(cj));
        at(t1.plusSeconds(1), ns, "forbid");
        Job first = awaitJob(ns, jobName("forbid", t1));
        await().atMost(TIMEOUT).until(() -> get(client, ns, "forbid").getStatus().getActive(), a -> a != null && a.size() == 1);

        Instant t2 = t1.plusSeconds(60);
        at(t2.plusSeconds(1), ns, "forbid");
        assertThat(awaitEvent(ns, "JobAlreadyActive")).extracting(Event::getMessage)
                .containsExactly("Not starting job because prior execution is running and concurrency policy is Forbid");
        assertThat(jobs(client, ns)).extracting(j -> j.getMetadata().getName()).containsExactly(first.getMetadata().getName());

        // once it finished, the missed schedule time (within the minute) gets its Job
        finish(client, ns, first.getMetadata().getName(), true, t1.plusSeconds(2));
        awaitJob(ns, jobName("forbid", t2));
        assertThat(jobs(client, ns)).hasSize(2);
    }

    @Test
    void replaceDeletesTheActiveJob() {
        String ns = newNamespace(client, "cj-replace");
        CronJob cj = create(ns, cronJob("replace", "* * * * *", s -> s.withConcurrencyPolicy("Replace")));
        Instant t1 = minuteAfter(created(cj));
        at(t1.plusSeconds(1), ns, "replace");
        Job first = awaitJob(ns, jobName("replace", t1));
        await().atMost(TIMEOUT).until(() -> get(client, ns, "replace").getStatus().getActive(), a -> a != null && a.size() == 1);

        Instant t2 = t1.plusSeconds(60);
        at(t2.plusSeconds(1), ns, "replace");
        Job second = awaitJob(ns, jobName("replace", t2));
        await().atMost(TIMEOUT).until(() -> client.batch().v1().jobs().inNamespace(ns).withName(first.getMetadata().getName()).get() == null);
        assertThat(events(client, ns, "SuccessfulDelete")).extracting(Event::getMessage)
                .containsExactly("Deleted job " + first.getMetadata().getName());
        CronJob status = await().atMost(TIMEOUT).until(() -> get(client, ns, "replace"),
                c -> c.getStatus().getActive() != null && c.getStatus().getActive().size() == 1
                        && c.getStatus().getActive().get(0).getName().equals(second.getMetadata().getName()));
        assertThat(Instant.parse(status.getStatus().getLastScheduleTime())).isEqualTo(t2);
    }

    @Test
    void historyLimitsDeleteTheOldestFinishedJobs() {
        String ns = newNamespace(client, "cj-history");
        CronJob cj = create(ns, cronJob("history", "* * * * *",
                s -> s.withSuccessfulJobsHistoryLimit(1).withFailedJobsHistoryLimit(1)));
        Instant t = minuteAfter(created(cj));
        String[] names = new String[4];
        for (int i = 0; i < 4; i++) {
            Instant ti = t.plusSeconds(60L * i);
            at(ti.plusSeconds(1), ns, "history");
            names[i] = awaitJob(ns, jobName("history", ti)).getMetadata().getName();
        }
        // two succeed, two fail, each started at its schedule time
        finish(client, ns, names[0], true, t.plusSeconds(1));
        finish(client, ns, names[1], true, t.plusSeconds(61));
        finish(client, ns, names[2], false, t.plusSeconds(121));
        finish(client, ns, names[3], false, t.plusSeconds(181));
        poke(client, ns, "history");

        await().atMost(TIMEOUT).untilAsserted(() -> assertThat(jobs(client, ns)).extracting(j -> j.getMetadata().getName())
                .containsExactly(names[1], names[3]));
        assertThat(events(client, ns, "SuccessfulDelete")).extracting(Event::getMessage)
                .containsExactlyInAnyOrder("Deleted job " + names[0], "Deleted job " + names[2]);
    }

    @Test
    void suspendStopsSchedulingUntilResumed() {
        String ns = newNamespace(client, "cj-suspend");
        CronJob cj = create(ns, cronJob("suspended", "* * * * *", s -> s.withSuspend(true)));
        Instant t1 = minuteAfter(created(cj));
        at(t1.plusSeconds(30), ns, "suspended");
        await().during(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(10)).until(() -> jobs(client, ns).isEmpty());

        clock.set(t1.plusSeconds(40));
        CronJobApiSupport.mergePatch(client, ns, "suspended", "{\"spec\":{\"suspend\":false}}");
        awaitJob(ns, jobName("suspended", t1));
        assertThat(jobs(client, ns)).hasSize(1);
    }

    @Test
    void manyMissedSchedulesWarnAndStartTheMostRecentOnly() {
        String ns = newNamespace(client, "cj-missed");
        CronJob cj = create(ns, cronJob("missed", "* * * * *", s -> s));
        Instant later = minuteAfter(created(cj)).plusSeconds(150 * 60 + 20);
        at(later, ns, "missed");
        Instant mostRecent = Instant.ofEpochSecond(Math.floorDiv(later.getEpochSecond(), 60) * 60);
        awaitJob(ns, jobName("missed", mostRecent));
        assertThat(awaitEvent(ns, "TooManyMissedTimes")).extracting(Event::getMessage).containsExactly(
                "too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew");
        assertThat(jobs(client, ns)).hasSize(1);
    }

    @Test
    void startingDeadlinePassedStartsNothing() {
        String ns = newNamespace(client, "cj-deadline");
        CronJob cj = create(ns, cronJob("deadline", "*/5 * * * *", s -> s.withStartingDeadlineSeconds(10L)));
        Instant created = created(cj);
        Instant first = Instant.ofEpochSecond(Math.floorDiv(created.getEpochSecond(), 300) * 300 + 300);
        // 30 s late for a 10 s deadline: nothing; then within 10 s of the next one: its Job
        at(first.plusSeconds(30), ns, "deadline");
        await().during(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(10)).until(() -> jobs(client, ns).isEmpty());
        Instant second = first.plusSeconds(300);
        at(second.plusSeconds(5), ns, "deadline");
        awaitJob(ns, jobName("deadline", second));
        assertThat(jobs(client, ns)).hasSize(1);
    }

    /**
     * A Job already created under the schedule time's name and owned by the CronJob (as after a lost
     * status write): never a second one. Upstream (v1.34.4, checked against its binary) then reads the
     * Job back without a namespace, gets NotFound and retries with backoff, warning UnexpectedJob each
     * time and never putting the Job into status.active; qkcm does the same.
     */
    @Test
    void aJobAlreadyCreatedUnderTheNameIsNotDuplicatedAndRetriedAsUpstream() {
        String ns = newNamespace(client, "cj-exists");
        CronJob cj = create(ns, cronJob("exists", "* * * * *", s -> s.withSuspend(true)));
        Instant t1 = minuteAfter(created(cj));
        String name = jobName("exists", t1);
        client.batch().v1().jobs().inNamespace(ns).resource(new JobBuilder().withNewMetadata().withName(name)
                .withOwnerReferences(ControllerRefManager.newControllerRef(cj, "batch/v1", "CronJob")).endMetadata()
                .withSpec(cj.getSpec().getJobTemplate().getSpec()).build()).create();
        assertThat(awaitEvent(ns, "UnexpectedJob")).extracting(Event::getMessage)
                .containsExactly("Saw a job that the controller did not create or forgot: " + name);

        clock.set(t1.plusSeconds(5));
        CronJobApiSupport.mergePatch(client, ns, "exists", "{\"spec\":{\"suspend\":false}}");
        // retried: the warning repeats
        await().atMost(TIMEOUT).until(() -> events(client, ns, "UnexpectedJob").stream()
                .mapToInt(e -> e.getCount() == null ? 1 : e.getCount()).sum() >= 3);
        CronJob status = get(client, ns, "exists");
        assertThat(status.getStatus() == null || status.getStatus().getActive() == null || status.getStatus().getActive().isEmpty()).isTrue();
        assertThat(jobs(client, ns)).hasSize(1);
        assertThat(events(client, ns, "SuccessfulCreate")).isEmpty();
        assertThat(instance.controller.numRequeues(ns + "/exists")).isPositive();
    }

    @Test
    void aJobOfTheSameNameOwnedByNoneIsLeftAlone() {
        String ns = newNamespace(client, "cj-foreign");
        CronJob cj = create(ns, cronJob("foreign", "* * * * *", s -> s));
        Instant t1 = minuteAfter(created(cj));
        String name = jobName("foreign", t1);
        client.batch().v1().jobs().inNamespace(ns).resource(new JobBuilder().withNewMetadata().withName(name).endMetadata()
                .withSpec(cj.getSpec().getJobTemplate().getSpec()).build()).create();
        at(t1.plusSeconds(5), ns, "foreign");
        await().during(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(10))
                .until(() -> { CronJob c = get(client, ns, "foreign"); return c.getStatus() == null || c.getStatus().getActive() == null
                        || c.getStatus().getActive().isEmpty(); });
        assertThat(jobs(client, ns)).hasSize(1);
        assertThat(ControllerRefManager.controllerOf(jobs(client, ns).get(0))).isNull();
    }

    @Test
    void aScheduleWithoutTimesGetsInvalidScheduleOnce() {
        String ns = newNamespace(client, "cj-invalid");
        create(ns, cronJob("never", "59 23 31 2 *", s -> s));
        List<Event> events = awaitEvent(ns, "InvalidSchedule");
        assertThat(events).extracting(Event::getMessage)
                .containsExactly("invalid schedule: 59 23 31 2 * : time difference between two schedules is less than 1 second");
        assertThat(events.get(0).getType()).isEqualTo("Warning");
        // no requeue after it: the event is not repeated
        await().during(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(10))
                .until(() -> events(client, ns, "InvalidSchedule").stream().mapToInt(e -> e.getCount() == null ? 1 : e.getCount()).sum() == 1);
        assertThat(jobs(client, ns)).isEmpty();
    }
}
