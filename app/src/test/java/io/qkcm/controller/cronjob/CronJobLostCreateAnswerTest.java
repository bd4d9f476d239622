package io.qkcm.controller.cronjob;

import static io.qkcm.controller.cronjob.CronJobApiSupport.cronJob;
import static io.qkcm.controller.cronjob.CronJobApiSupport.events;
import static io.qkcm.controller.cronjob.CronJobApiSupport.get;
import static io.qkcm.controller.cronjob.CronJobApiSupport.jobName;
import static io.qkcm.controller.cronjob.CronJobApiSupport.jobs;
import static io.qkcm.controller.cronjob.CronJobApiSupport.minuteAfter;
import static io.qkcm.testing.TestNamespaces.newNamespace;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.inject.Inject;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.ObjectReference;
import io.fabric8.kubernetes.api.model.batch.v1.CronJob;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.qkcm.controller.ApiErrors;
import io.qkcm.testing.ControllerHarness;
import io.qkcm.testing.ManagerOffProfile;
import io.qkcm.testing.RealApiServer;
import io.qkcm.testing.RealApiServerResource;
import io.qkcm.testing.ResettingServer;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpClosedException;

/**
 * A Job creation whose answer is lost: the API server made the Job, the connection closed before the
 * response. The Job's name is the CronJob's and the schedule time's, so every later attempt for that
 * time is answered AlreadyExists: one Job per schedule time, whatever the cache shows. The status is
 * upstream's (v1.34.4): its read-back after AlreadyExists asks for the Job without a namespace (the
 * Job request carries none) and is answered NotFound, so the Job never enters status.active, nor does
 * lastScheduleTime move, until the next schedule time starts a Job of its own. Syncs are driven by hand
 * on a set clock against a real API server.
 */
@QuarkusTest
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
@TestProfile(ManagerOffProfile.class)
class CronJobLostCreateAnswerTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    @Inject
    Vertx vertx;

    static KubernetesClient client;

    @BeforeAll
    static void setUp() {
        client = RealApiServer.get().newClient();
    }

    @AfterAll
    static void tearDown() {
        client.close();
    }

    /** Performs each Job creation; while {@code lose} is set, then throws what a lost answer throws. */
    static final class LostAnswers implements Injection.JobControl {
        final Injection.JobControl real;
        final AtomicBoolean lose = new AtomicBoolean();
        final AtomicInteger creates = new AtomicInteger();

        LostAnswers(Injection.JobControl real) {
            this.real = real;
        }

        @Override
        public Job getJob(String namespace, String name) {
            return real.getJob(namespace, name);
        }

        @Override
        public Job createJob(String namespace, Job job) {
            creates.incrementAndGet();
            Job created = real.createJob(namespace, job);
            if (lose.get()) {
                throw new KubernetesClientException("Connection was closed", new HttpClosedException("Connection was closed"));
            }
            return created;
        }

        @Override
        public void deleteJob(String namespace, String name) {
            real.deleteJob(namespace, name);
        }
    }

    private static Job cachedJob(ControllerHarness<?> h, String ns, String name) {
        return h.informers.informerFor(Job.class).getStore().getByKey(ns + "/" + name);
    }

    @Test
    void aJobCreationWhoseAnswerIsLostLeavesOneJobForItsScheduleTime() throws Exception {
        String ns = newNamespace(client, "cj-lost-create");
        CronJobTestSupport.MutableClock clock = new CronJobTestSupport.MutableClock(Instant.now(), ZoneOffset.UTC);
        LostAnswers[] jobControl = new LostAnswers[1];
        try (ControllerHarness<CronJobController> h = ControllerHarness.create(vertx, CronJobController.NAME,
                ctx -> new CronJobController(ctx, 1, clock,
                        jobControl[0] = new LostAnswers(new Injection.RealJobControl(ctx.client())),
                        new Injection.RealCJControl(ctx.client())))) {
            h.startInformers();
            CronJob cj = client.batch().v1().cronjobs().inNamespace(ns).resource(cronJob("nightly", "* * * * *", s -> s))
                    .create();
            String key = ns + "/nightly";
            await().atMost(TIMEOUT).until(() -> h.informers.informerFor(CronJob.class).getStore().getByKey(key) != null);
            Instant t1 = minuteAfter(Instant.parse(cj.getMetadata().getCreationTimestamp()));
            String job1 = jobName("nightly", t1);

            clock.set(t1.plusSeconds(5));
            jobControl[0].lose.set(true);
            assertThatThrownBy(() -> h.controller.sync(key)).satisfies(e -> assertThat(ApiErrors.isOutcomeUnknown(e)).isTrue());
            jobControl[0].lose.set(false);
            assertThat(jobs(client, ns)).extracting(j -> j.getMetadata().getName()).containsExactly(job1);

            // again, whether or not the cache shows the Job yet: the same name, AlreadyExists, then
            // upstream's namespace-less read-back answered NotFound
            Throwable again = catchThrowable(() -> h.controller.sync(key));
            assertThat(ApiErrors.isNotFound(again)).isTrue();
            await().atMost(TIMEOUT).until(() -> cachedJob(h, ns, job1) != null);
            for (int i = 0; i < 2; i++) {
                assertThat(ApiErrors.isNotFound(catchThrowable(() -> h.controller.sync(key)))).isTrue();
            }
            assertThat(jobControl[0].creates.get()).isEqualTo(4);
            assertThat(jobs(client, ns)).extracting(j -> j.getMetadata().getName()).containsExactly(job1);
            CronJob status = get(client, ns, "nightly");
            assertThat(status.getStatus() == null ? null : status.getStatus().getActive()).isNullOrEmpty();
            assertThat(status.getStatus() == null ? null : status.getStatus().getLastScheduleTime()).isNull();
            assertThat(await().atMost(TIMEOUT).until(() -> events(client, ns, "FailedCreate"), e -> !e.isEmpty()))
                    .singleElement().satisfies(e -> assertThat(e.getCount()).isEqualTo(1));
            assertThat(await().atMost(TIMEOUT).until(() -> events(client, ns, "UnexpectedJob"), e -> !e.isEmpty()))
                    .extracting(Event::getMessage).containsOnly("Saw a job that the controller did not create or forgot: " + job1);

            // the next schedule time: its own Job, in status.active with its lastScheduleTime
            Instant t2 = t1.plusSeconds(60);
            String job2 = jobName("nightly", t2);
            clock.set(t2.plusSeconds(5));
            h.controller.sync(key);
            assertThat(jobs(client, ns)).extracting(j -> j.getMetadata().getName()).containsExactly(job1, job2);
            Job second = client.batch().v1().jobs().inNamespace(ns).withName(job2).get();
            CronJob after = get(client, ns, "nightly");
            assertThat(after.getStatus().getActive()).extracting(ObjectReference::getUid)
                    .containsExactly(second.getMetadata().getUid());
            assertThat(Instant.parse(after.getStatus().getLastScheduleTime())).isEqualTo(t2);
            assertThat(jobControl[0].creates.get()).isEqualTo(5);
        }
    }

    /**
     * The Job creation is sent as client-go sends it: once, when the connection is reset after the
     * request went out (fabric8 would re-send it and turn the lost answer into AlreadyExists).
     */
    @Test
    void aJobCreationIsNotSentAgainAfterTheConnectionWasReset() throws Exception {
        try (ResettingServer server = new ResettingServer()) {
            Config config = new ConfigBuilder(Config.empty()).withMasterUrl("http://127.0.0.1:" + server.port())
                    .withRequestRetryBackoffLimit(3).withRequestRetryBackoffInterval(10).withRequestTimeout(10_000)
                    .build();
            try (KubernetesClient resetting = new KubernetesClientBuilder().withConfig(config).build()) {
                Job job = new JobBuilder().withNewMetadata().withName("nightly-1").endMetadata().withNewSpec()
                        .withNewTemplate().withNewSpec().addNewContainer().withName("c").withImage("i").endContainer()
                        .endSpec().endTemplate().endSpec().build();
                Throwable t = catchThrowable(() -> new Injection.RealJobControl(resetting).createJob("ns", job));
                assertThat(ApiErrors.isOutcomeUnknown(t)).isTrue();
                assertThat(server.requests.get()).isEqualTo(1);
            }
        }
    }
}
