package io.qkcm.controller.ttlafterfinished;

import static io.qkcm.testing.TestNamespaces.newNamespace;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;

import jakarta.inject.Inject;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.JobConditionBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.JobStatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.qkcm.testing.ControllerHarness;
import io.qkcm.testing.ManagerOffProfile;
import io.qkcm.testing.RealApiServer;
import io.qkcm.testing.RealApiServerResource;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.vertx.core.Vertx;

/**
 * ttl-after-finished-controller started and killed by hand (the application's manager is off): Jobs
 * that expired while no controller ran, and Jobs whose expiry was only queued in memory by a
 * controller that died, are deleted by the next one. No garbage collector runs, so a deleted Job stays
 * with its deletionTimestamp and the foregroundDeletion finalizer, which the test then removes.
 */
@QuarkusTest
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
@TestProfile(ManagerOffProfile.class)
class TTLAfterFinishedRestartTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(60);

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

    /** The controller as the manager builds it, outside the application, so that it can be killed. */
    private ControllerHarness<TTLAfterFinishedController> newController() throws InterruptedException {
        return ControllerHarness.create(vertx, TTLAfterFinishedController.NAME, TTLAfterFinishedControllerDescriptor::newController).start();
    }

    private static void finishedJob(String ns, String name, int ttl, Instant finishedAt) {
        Job job = client.batch().v1().jobs().inNamespace(ns).resource(new JobBuilder().withNewMetadata().withName(name)
                .endMetadata().withNewSpec().withTtlSecondsAfterFinished(ttl).withNewTemplate().withNewSpec()
                .withRestartPolicy("Never").addNewContainer().withName("main").withImage("registry.k8s.io/pause:3.10")
                .endContainer().endSpec().endTemplate().endSpec().build()).create();
        String at = finishedAt.truncatedTo(ChronoUnit.SECONDS).toString();
        job.setStatus(new JobStatusBuilder().withStartTime(finishedAt.minusSeconds(5).truncatedTo(ChronoUnit.SECONDS).toString())
                .withCompletionTime(at).withSucceeded(1)
                .withConditions(new JobConditionBuilder().withType("SuccessCriteriaMet").withStatus("True")
                        .withLastTransitionTime(at).build(),
                        new JobConditionBuilder().withType("Complete").withStatus("True").withLastTransitionTime(at).build())
                .build());
        client.batch().v1().jobs().inNamespace(ns).resource(job).updateStatus();
    }

    private static Job get(String ns, String name) {
        return client.batch().v1().jobs().inNamespace(ns).withName(name).get();
    }

    private static boolean markedForDeletion(String ns, String name) {
        Job j = get(ns, name);
        return j != null && j.getMetadata().getDeletionTimestamp() != null;
    }

    private static void release(String ns, String name) {
        io.qkcm.testing.Conflicts.retry(() -> client.batch().v1().jobs().inNamespace(ns).withName(name)
                .edit(j -> new JobBuilder(j).editMetadata().withFinalizers(List.of()).endMetadata().build()));
    }

    @Test
    void jobsExpiredOrPendingWhenTheControllerDiedAreDeletedByTheNextOne() throws Exception {
        String ns = newNamespace(client, "ttl-restart");
        // expired before any controller ran
        finishedJob(ns, "expired", 0, Instant.now().minus(Duration.ofMinutes(5)));
        Instant pendingFinish = Instant.now().truncatedTo(ChronoUnit.SECONDS);
        try (ControllerHarness<TTLAfterFinishedController> first = newController()) {
            await().atMost(TIMEOUT).until(() -> markedForDeletion(ns, "expired"));
            assertThat(get(ns, "expired").getMetadata().getFinalizers()).containsExactly("foregroundDeletion");
            // queued by the first controller for its expiry, which the first one does not live to see
            finishedJob(ns, "pending", 10, pendingFinish);
        }
        assertThat(markedForDeletion(ns, "pending")).isFalse();
        try (ControllerHarness<TTLAfterFinishedController> second = newController()) {
            await().atMost(TIMEOUT).until(() -> markedForDeletion(ns, "pending"));
            Job pending = get(ns, "pending");
            assertThat(Instant.parse(pending.getMetadata().getDeletionTimestamp()))
                    .isAfterOrEqualTo(pendingFinish.plusSeconds(10));
        }
        release(ns, "expired");
        release(ns, "pending");
        await().atMost(TIMEOUT).until(() -> get(ns, "expired") == null && get(ns, "pending") == null);
    }
}
