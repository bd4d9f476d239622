package io.qkcm.controller.ttlafterfinished;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;

import jakarta.inject.Inject;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.JobConditionBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.JobStatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.qkcm.controller.Controller;
import io.qkcm.controller.ControllerContext;
import io.qkcm.controller.WorkQueueMetrics;
import io.qkcm.controller.events.EventBroadcaster;
import io.qkcm.runtime.clients.KubeClients;
import io.qkcm.runtime.informers.SharedInformers;
import io.qkcm.runtime.options.ControllerManagerOptions;
import io.qkcm.runtime.options.Flags;
import io.qkcm.testing.RealApiServer;
import io.qkcm.testing.RealApiServerResource;
import io.qkcm.testing.TestOperators;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
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
@TestProfile(TTLAfterFinishedRestartTest.Profile.class)
class TTLAfterFinishedRestartTest {

    public static class Profile implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("qkcm.manager.enabled", "false");
        }
    }

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
    final class Instance implements AutoCloseable {
        final KubeClients clients;
        final SharedInformers informers;
        final EventBroadcaster events;
        final ScheduledExecutorService delayer = Executors.newSingleThreadScheduledExecutor();
        final Controller running;

        Instance() throws InterruptedException {
            Map<String, String> config = new HashMap<>();
            config.put("qkcm.kubeconfig", RealApiServer.get().kubeconfig().toString());
            ControllerManagerOptions options = new ControllerManagerOptions(Flags.upstream(),
                    name -> Optional.ofNullable(config.get(name)));
            clients = new KubeClients(options, new SimpleMeterRegistry(), vertx);
            informers = new SharedInformers(clients.forComponent("shared-informers"), options.minResyncPeriod());
            events = new EventBroadcaster(clients.forComponent("event-broadcaster"));
            ControllerContext context = new ControllerContext(TTLAfterFinishedController.NAME,
                    clients.forComponent(TTLAfterFinishedController.NAME), informers,
                    events.recorder(TTLAfterFinishedController.NAME), options, delayer, WorkQueueMetrics.NONE,
                    events::recorder, TestOperators.create());
            running = context.operate(new TTLAfterFinishedController(context));
            informers.start();
            informers.waitForSync(informers.all());
            running.start();
        }

        /** Everything stops at once: the process died. */
        @Override
        public void close() throws InterruptedException {
            clients.close();
            informers.stop();
            running.shutdown(Duration.ZERO);
            events.shutdown(Duration.ZERO);
            delayer.shutdownNow();
        }
    }

    private static String newNamespace(String prefix) {
        String ns = prefix + "-" + Long.toString(System.nanoTime() % 1_000_000_000L, 36);
        client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build()).create();
        return ns;
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
        String ns = newNamespace("ttl-restart");
        // expired before any controller ran
        finishedJob(ns, "expired", 0, Instant.now().minus(Duration.ofMinutes(5)));
        Instant pendingFinish = Instant.now().truncatedTo(ChronoUnit.SECONDS);
        try (Instance first = new Instance()) {
            await().atMost(TIMEOUT).until(() -> markedForDeletion(ns, "expired"));
            assertThat(get(ns, "expired").getMetadata().getFinalizers()).containsExactly("foregroundDeletion");
            // queued by the first controller for its expiry, which the first one does not live to see
            finishedJob(ns, "pending", 10, pendingFinish);
        }
        assertThat(markedForDeletion(ns, "pending")).isFalse();
        try (Instance second = new Instance()) {
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
