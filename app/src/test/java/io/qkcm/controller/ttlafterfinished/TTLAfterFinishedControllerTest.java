package io.qkcm.controller.ttlafterfinished;

import static io.qkcm.testing.TestNamespaces.newNamespace;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import jakarta.inject.Inject;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.micrometer.core.instrument.MeterRegistry;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.JobCondition;
import io.fabric8.kubernetes.api.model.batch.v1.JobConditionBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.JobStatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.qkcm.testing.RealApiServer;
import io.qkcm.testing.RealApiServerResource;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;

/**
 * ttl-after-finished-controller against a real API server. No job controller runs: the test writes the
 * finished status (as the job controller would: startTime, completionTime, SuccessCriteriaMet/Complete
 * or FailureTarget/Failed). The garbage collector runs to finish the foreground deletion.
 */
@QuarkusTest
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
@TestProfile(TTLAfterFinishedControllerTest.Profile.class)
class TTLAfterFinishedControllerTest {

    public static class Profile implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("qkcm.controllers", "ttl-after-finished-controller,garbage-collector-controller");
        }
    }

    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    static KubernetesClient client;

    @Inject
    MeterRegistry registry;

    @BeforeAll
    static void setUp() {
        client = RealApiServer.get().newClient();
    }

    @AfterAll
    static void tearDown() {
        client.close();
    }

    private static Job job(String ns, String name, Integer ttl) {
        Job job = new JobBuilder().withNewMetadata().withName(name).withNamespace(ns).endMetadata()
                .withNewSpec().withTtlSecondsAfterFinished(ttl).withCompletions(1).withParallelism(1)
                .withNewTemplate().withNewSpec().withRestartPolicy("Never").addNewContainer().withName("main")
                .withImage("registry.k8s.io/pause:3.10").endContainer().endSpec().endTemplate().endSpec().build();
        return client.batch().v1().jobs().inNamespace(ns).resource(job).create();
    }

    /** What the job controller writes when a Job finishes, at {@code finishedAt}. */
    private static Job finish(Job job, boolean complete, Instant finishedAt) {
        String at = finishedAt.truncatedTo(ChronoUnit.SECONDS).toString();
        String started = finishedAt.truncatedTo(ChronoUnit.SECONDS).minusSeconds(5).toString();
        List<JobCondition> conditions = complete
                ? List.of(condition("SuccessCriteriaMet", at), condition("Complete", at))
                : List.of(condition("FailureTarget", at), condition("Failed", at));
        Job current = client.batch().v1().jobs().inNamespace(job.getMetadata().getNamespace())
                .withName(job.getMetadata().getName()).get();
        JobStatusBuilder status = new JobStatusBuilder().withStartTime(started).withConditions(conditions);
        if (complete) {
            status.withCompletionTime(at).withSucceeded(1);
        } else {
            status.withFailed(1);
        }
        current.setStatus(status.build());
        return client.batch().v1().jobs().inNamespace(job.getMetadata().getNamespace()).resource(current).updateStatus();
    }

    private static JobCondition condition(String type, String at) {
        return new JobConditionBuilder().withType(type).withStatus("True").withLastTransitionTime(at)
                .withLastProbeTime(at).build();
    }

    private static Job get(String ns, String name) {
        return client.batch().v1().jobs().inNamespace(ns).withName(name).get();
    }

    /** Every Job of a namespace as the watch saw it, in order. */
    static final class Seen implements Watcher<Job>, AutoCloseable {
        final List<Job> updates = new CopyOnWriteArrayList<>();
        final List<String> deleted = new CopyOnWriteArrayList<>();
        final Watch watch;

        Seen(String ns) {
            watch = client.batch().v1().jobs().inNamespace(ns).watch(this);
        }

        @Override
        public void eventReceived(Action action, Job job) {
            if (action == Action.DELETED) {
                deleted.add(job.getMetadata().getName());
            } else {
                updates.add(job);
            }
        }

        @Override
        public void onClose(WatcherException cause) {
        }

        /** The deletionTimestamp the API server set on the Job, with the finalizer of a foreground deletion. */
        Instant deletionStarted(String name) {
            Job marked = updates.stream().filter(j -> name.equals(j.getMetadata().getName()))
                    .filter(j -> j.getMetadata().getDeletionTimestamp() != null).findFirst().orElseThrow();
            assertThat(marked.getMetadata().getFinalizers()).contains("foregroundDeletion");
            return Instant.parse(marked.getMetadata().getDeletionTimestamp());
        }

        @Override
        public void close() {
            watch.close();
        }
    }

    @Test
    void finishedJobsAreDeletedAfterTheirTtlAndNotBefore() {
        String ns = newNamespace(client, "ttl");
        try (Seen seen = new Seen(ns)) {
            Job zero = job(ns, "ttl-zero", 0);
            Job three = job(ns, "ttl-three", 3);
            Instant finishedAt = Instant.now().truncatedTo(ChronoUnit.SECONDS);
            finish(zero, true, finishedAt);
            finish(three, false, finishedAt);

            await().atMost(TIMEOUT).until(() -> seen.deleted.containsAll(List.of("ttl-zero", "ttl-three")));
            assertThat(seen.deletionStarted("ttl-zero")).isAfterOrEqualTo(finishedAt);
            // the API server stamps the deletion in whole seconds, truncated: never before the expiry
            assertThat(seen.deletionStarted("ttl-three")).isAfterOrEqualTo(finishedAt.plusSeconds(3));
            // upstream's ttl_after_finished_controller_job_deletion_duration_seconds observed each deletion
            assertThat(registry.find("ttl.after.finished.controller.job.deletion.duration.seconds").summary().count())
                    .isGreaterThanOrEqualTo(2);
        }
    }

    @Test
    void aFinishTimeInTheFutureDefersTheDeletion() {
        String ns = newNamespace(client, "ttl-skew");
        try (Seen seen = new Seen(ns)) {
            Job skewed = job(ns, "skewed", 0);
            Instant finishedAt = Instant.now().truncatedTo(ChronoUnit.SECONDS).plusSeconds(4);
            finish(skewed, true, finishedAt);
            await().atMost(TIMEOUT).until(() -> seen.deleted.contains("skewed"));
            assertThat(seen.deletionStarted("skewed")).isAfterOrEqualTo(finishedAt);
        }
    }

    @Test
    void jobsWithoutTtlOrUnfinishedAreKeptUntilTheyFinish() {
        String ns = newNamespace(client, "ttl-keep");
        Job noTtl = job(ns, "no-ttl", null);
        finish(noTtl, true, Instant.now());
        Job unfinished = job(ns, "unfinished", 0);
        Job finishedLong = job(ns, "finished-long-ago", 1);
        finish(finishedLong, true, Instant.now().minus(Duration.ofHours(1)));
        // created and finished after the other two: once it is gone, the controller has seen them all
        Job sentinel = job(ns, "sentinel", 0);
        finish(sentinel, true, Instant.now());

        await().atMost(TIMEOUT).until(() -> get(ns, "sentinel") == null && get(ns, "finished-long-ago") == null);
        assertThat(get(ns, "no-ttl")).isNotNull();
        assertThat(get(ns, "no-ttl").getMetadata().getDeletionTimestamp()).isNull();
        assertThat(get(ns, "unfinished")).isNotNull();
        assertThat(get(ns, "unfinished").getMetadata().getDeletionTimestamp()).isNull();

        // the update that finishes it queues it
        finish(unfinished, false, Instant.now());
        await().atMost(TIMEOUT).until(() -> get(ns, "unfinished") == null);
        assertThat(get(ns, "no-ttl")).isNotNull();
    }

    @Test
    void aTtlRaisedBeforeExpiryIsHonouredFromTheFreshJob() {
        String ns = newNamespace(client, "ttl-raise");
        Job job = job(ns, "raised", 2);
        Instant finishedAt = Instant.now().truncatedTo(ChronoUnit.SECONDS);
        finish(job, true, finishedAt);
        // raise the TTL to an hour: the controller must requeue for the new expiry and not delete
        io.qkcm.testing.Conflicts.retry(() -> client.batch().v1().jobs().inNamespace(ns).withName("raised")
                .edit(j -> new JobBuilder(j).editSpec().withTtlSecondsAfterFinished(3600).endSpec().build()));
        Job sentinel = job(ns, "sentinel", 0);
        finish(sentinel, true, finishedAt.plusSeconds(3));
        // the sentinel expires a second after the original expiry of "raised"
        await().atMost(TIMEOUT).until(() -> get(ns, "sentinel") == null);
        assertThat(get(ns, "raised")).isNotNull();
        assertThat(get(ns, "raised").getMetadata().getDeletionTimestamp()).isNull();
    }
}
