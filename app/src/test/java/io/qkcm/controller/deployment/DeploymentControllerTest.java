package io.qkcm.controller.deployment;

import static io.qkcm.controller.deployment.DeploymentTestSupport.condition;
import static io.qkcm.controller.deployment.DeploymentTestSupport.image;
import static io.qkcm.controller.deployment.DeploymentTestSupport.kubectl;
import static io.qkcm.controller.deployment.DeploymentTestSupport.n;
import static io.qkcm.controller.deployment.DeploymentTestSupport.ready;
import static io.qkcm.controller.deployment.DeploymentTestSupport.recreate;
import static io.qkcm.controller.deployment.DeploymentTestSupport.rolling;
import static io.qkcm.testing.TestNamespaces.newNamespace;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

import jakarta.inject.Inject;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentCondition;
import io.fabric8.kubernetes.api.model.apps.ReplicaSet;
import io.fabric8.kubernetes.api.model.apps.ReplicaSetBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.qkcm.controller.deployment.DeploymentTestSupport.KubeletLoop;
import io.micrometer.core.instrument.MeterRegistry;
import io.qkcm.controller.hash.ControllerHash;
import io.qkcm.testing.Conflicts;
import io.qkcm.testing.QueueProbe;
import io.qkcm.testing.RealApiServer;
import io.qkcm.testing.RealApiServerResource;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;

/** The Deployment controller (with the ReplicaSet controller) against a real API server, kubectl as a client. */
@QuarkusTest
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
@TestProfile(DeploymentControllerTest.Profile.class)
class DeploymentControllerTest {

    public static class Profile implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("qkcm.controllers", "deployment-controller,replicaset-controller");
        }
    }

    static final PatchContext MERGE = PatchContext.of(PatchType.JSON_MERGE);
    static final Duration TIMEOUT = Duration.ofSeconds(90);
    static KubernetesClient client;
    static Path kubeconfig;

    @BeforeAll
    static void setUp() {
        client = RealApiServer.get().newClient();
        kubeconfig = RealApiServer.get().kubeconfig();
    }

    @AfterAll
    static void tearDown() {
        client.close();
    }

    static Deployment get(String ns, String name) {
        return client.apps().deployments().inNamespace(ns).withName(name).get();
    }

    static List<ReplicaSet> replicaSets(String ns) {
        List<ReplicaSet> l = new ArrayList<>(client.apps().replicaSets().inNamespace(ns).list().getItems());
        l.sort(Comparator.comparing(rs -> rs.getMetadata().getCreationTimestamp() + rs.getMetadata().getName()));
        return l;
    }

    static void setImage(String ns, String name, String image) {
        Conflicts.retry(() -> client.apps().deployments().inNamespace(ns).withName(name).edit(d -> {
            d.getSpec().getTemplate().getSpec().getContainers().get(0).setImage(image);
            return d;
        }));
    }

    static void awaitComplete(String ns, String name) {
        await().atMost(TIMEOUT).untilAsserted(() -> {
            Deployment d = get(ns, name);
            assertThat(d.getStatus()).isNotNull();
            assertThat(d.getStatus().getObservedGeneration()).isEqualTo(d.getMetadata().getGeneration());
            int want = d.getSpec().getReplicas();
            assertThat(n(d.getStatus().getUpdatedReplicas())).isEqualTo(want);
            assertThat(n(d.getStatus().getReplicas())).isEqualTo(want);
            assertThat(n(d.getStatus().getAvailableReplicas())).isEqualTo(want);
            DeploymentCondition p = condition(d, "Progressing");
            assertThat(p).isNotNull();
            assertThat(p.getReason()).isEqualTo("NewReplicaSetAvailable");
        });
    }

    static List<Event> events(String ns, String involvedName) {
        return client.v1().events().inNamespace(ns).list().getItems().stream()
                .filter(e -> involvedName.equals(e.getInvolvedObject().getName())).toList();
    }

    @Test
    void rollingUpdateNeverViolatesSurgeOrUnavailableBounds() throws Exception {
        String ns = newNamespace(client, "dep-rolling");
        try (KubeletLoop kubelet = new KubeletLoop(client, ns, Duration.ofMillis(700))) {
            Deployment created = client.apps().deployments().inNamespace(ns)
                    .resource(rolling("web", 4, "web", "registry.k8s.io/pause:3.9", 1, 1)).create();
            awaitComplete(ns, "web");

            Deployment d = get(ns, "web");
            String hash = ControllerHash.computeHash(d.getSpec().getTemplate(), null);
            List<ReplicaSet> rss = replicaSets(ns);
            assertThat(rss).hasSize(1);
            ReplicaSet first = rss.get(0);
            assertThat(first.getMetadata().getName()).isEqualTo("web-" + hash);
            assertThat(first.getMetadata().getLabels()).containsEntry("pod-template-hash", hash).containsEntry("app", "web");
            assertThat(first.getSpec().getSelector().getMatchLabels()).containsEntry("pod-template-hash", hash);
            assertThat(first.getSpec().getTemplate().getMetadata().getLabels()).containsEntry("pod-template-hash", hash);
            assertThat(first.getMetadata().getAnnotations()).containsEntry("deployment.kubernetes.io/revision", "1")
                    .containsEntry("deployment.kubernetes.io/desired-replicas", "4")
                    .containsEntry("deployment.kubernetes.io/max-replicas", "5");
            assertThat(first.getMetadata().getOwnerReferences()).singleElement().satisfies(r -> {
                assertThat(r.getKind()).isEqualTo("Deployment");
                assertThat(r.getUid()).isEqualTo(created.getMetadata().getUid());
                assertThat(r.getController()).isTrue();
                assertThat(r.getBlockOwnerDeletion()).isTrue();
            });
            assertThat(d.getMetadata().getAnnotations()).containsEntry("deployment.kubernetes.io/revision", "1");
            assertThat(condition(d, "Available").getReason()).isEqualTo("MinimumReplicasAvailable");
            assertThat(condition(d, "Progressing").getMessage())
                    .isEqualTo("ReplicaSet \"web-" + hash + "\" has successfully progressed.");

            // watch every RS and pod during the rollout: spec total <= 5 and ready pods >= 3
            List<String> violations = Collections.synchronizedList(new ArrayList<>());
            AtomicInteger observations = new AtomicInteger();
            Thread monitor = new Thread(() -> {
                while (!Thread.currentThread().isInterrupted()) {
                    try {
                        List<ReplicaSet> now = client.apps().replicaSets().inNamespace(ns).list().getItems();
                        int specTotal = now.stream().mapToInt(rs -> rs.getSpec().getReplicas()).sum();
                        if (specTotal > 5) {
                            violations.add("replica sets sum to " + specTotal);
                        }
                        long readyPods = client.pods().inNamespace(ns).list().getItems().stream()
                                .filter(p -> p.getMetadata().getDeletionTimestamp() == null && ready(p)).count();
                        if (readyPods < 3) {
                            violations.add("only " + readyPods + " ready pods");
                        }
                        observations.incrementAndGet();
                        Thread.sleep(30);
                    } catch (InterruptedException e) {
                        return;
                    } catch (RuntimeException e) {
                        // keep observing
                    }
                }
            });
            monitor.start();
            setImage(ns, "web", "registry.k8s.io/pause:3.10");
            awaitComplete(ns, "web");
            monitor.interrupt();
            monitor.join();
            assertThat(observations.get()).isGreaterThan(10);
            assertThat(violations).isEmpty();

            rss = replicaSets(ns);
            assertThat(rss).hasSize(2);
            ReplicaSet second = rss.stream().filter(rs -> image(rs).endsWith("3.10")).findFirst().orElseThrow();
            assertThat(second.getMetadata().getAnnotations()).containsEntry("deployment.kubernetes.io/revision", "2");
            assertThat(get(ns, "web").getMetadata().getAnnotations()).containsEntry("deployment.kubernetes.io/revision", "2");
            ReplicaSet old = rss.stream().filter(rs -> image(rs).endsWith("3.9")).findFirst().orElseThrow();
            assertThat(old.getSpec().getReplicas()).isZero();
            // active pods: an old pod the ReplicaSet controller deleted may still be terminating (no kubelet ends it)
            assertThat(client.pods().inNamespace(ns).list().getItems()).filteredOn(p -> p.getMetadata().getDeletionTimestamp() == null)
                    .isNotEmpty().allSatisfy(p -> assertThat(image(p)).endsWith("3.10"));

            Set<String> messages = events(ns, "web").stream().filter(e -> "ScalingReplicaSet".equals(e.getReason()))
                    .map(Event::getMessage).collect(Collectors.toSet());
            assertThat(messages).contains("Scaled up replica set web-" + hash + " from 0 to 4",
                    "Scaled up replica set " + second.getMetadata().getName() + " from 0 to 1");
            assertThat(messages).anyMatch(m -> m.startsWith("Scaled down replica set web-" + hash + " from 4 to "));
        }
    }

    @Test
    void recreateNeverRunsOldAndNewPodsTogether() throws Exception {
        String ns = newNamespace(client, "dep-recreate");
        try (KubeletLoop kubelet = new KubeletLoop(client, ns, Duration.ofMillis(300))) {
            client.apps().deployments().inNamespace(ns).resource(recreate("db", 3, "db", "registry.k8s.io/pause:3.9")).create();
            awaitComplete(ns, "db");
            List<String> overlaps = Collections.synchronizedList(new ArrayList<>());
            AtomicInteger observations = new AtomicInteger();
            Thread monitor = new Thread(() -> {
                while (!Thread.currentThread().isInterrupted()) {
                    try {
                        List<Pod> pods = client.pods().inNamespace(ns).list().getItems();
                        Set<String> images = pods.stream().map(DeploymentTestSupport::image).collect(Collectors.toSet());
                        if (images.size() > 1) {
                            overlaps.add(images.toString());
                        }
                        observations.incrementAndGet();
                        Thread.sleep(20);
                    } catch (InterruptedException e) {
                        return;
                    } catch (RuntimeException e) {
                        // keep observing
                    }
                }
            });
            monitor.start();
            setImage(ns, "db", "registry.k8s.io/pause:3.10");
            awaitComplete(ns, "db");
            monitor.interrupt();
            monitor.join();
            assertThat(observations.get()).isGreaterThan(10);
            assertThat(overlaps).isEmpty();
            List<ReplicaSet> rss = replicaSets(ns);
            assertThat(rss).hasSize(2);
            assertThat(rss.stream().map(rs -> rs.getMetadata().getAnnotations().get("deployment.kubernetes.io/max-replicas")))
                    .containsOnly("3");
            assertThat(client.pods().inNamespace(ns).list().getItems()).hasSize(3)
                    .allSatisfy(p -> assertThat(image(p)).endsWith("3.10"));
        }
    }

    @Test
    void scalingMidRolloutIsProportional() throws Exception {
        String ns = newNamespace(client, "dep-proportional");
        try (KubeletLoop kubelet = new KubeletLoop(client, ns, Duration.ZERO)) {
            client.apps().deployments().inNamespace(ns).resource(rolling("api", 10, "api", "registry.k8s.io/pause:3.9", 3, 2))
                    .create();
            awaitComplete(ns, "api");
            setImage(ns, "api", "example.com/never-ready:1");
            // stuck: old 8, new 5 (surge 3, unavailable 2)
            await().atMost(TIMEOUT).untilAsserted(() -> {
                Map<String, Integer> sizes = sizesByImage(ns);
                assertThat(sizes).containsEntry("registry.k8s.io/pause:3.9", 8).containsEntry("example.com/never-ready:1", 5);
            });
            QueueProbe.Mark beforeScale = queue().mark();
            client.apps().deployments().inNamespace(ns).withName("api").scale(20);
            // 8*23/13 = 14.15 -> 14, 5*23/13 = 8.85 -> 9
            await().atMost(TIMEOUT).untilAsserted(() -> {
                Map<String, Integer> sizes = sizesByImage(ns);
                assertThat(sizes).containsEntry("registry.k8s.io/pause:3.9", 14).containsEntry("example.com/never-ready:1", 9);
                for (ReplicaSet rs : replicaSets(ns)) {
                    assertThat(rs.getMetadata().getAnnotations()).containsEntry("deployment.kubernetes.io/desired-replicas", "20")
                            .containsEntry("deployment.kubernetes.io/max-replicas", "23");
                }
            });
            // and there they stay: the controller has synced the Deployment once its ReplicaSets had all 23
            // pods (the status it writes says so) and its queue has drained since
            await().atMost(TIMEOUT).untilAsserted(() -> {
                Deployment d = get(ns, "api");
                assertThat(d.getStatus().getObservedGeneration()).isEqualTo(d.getMetadata().getGeneration());
                assertThat(d.getStatus().getReplicas()).isEqualTo(23);
            });
            queue().awaitProcessedSince(beforeScale, TIMEOUT);
            assertThat(sizesByImage(ns)).containsEntry("registry.k8s.io/pause:3.9", 14)
                    .containsEntry("example.com/never-ready:1", 9);
        }
    }

    @Inject
    MeterRegistry registry;

    /** The application's deployment-controller queue. */
    QueueProbe queue() {
        return QueueProbe.of(registry, "deployment");
    }

    static Map<String, Integer> sizesByImage(String ns) {
        return replicaSets(ns).stream().collect(Collectors.toMap(DeploymentTestSupport::image, rs -> rs.getSpec().getReplicas()));
    }

    @Test
    void pauseAndResume() throws Exception {
        String ns = newNamespace(client, "dep-pause");
        try (KubeletLoop kubelet = new KubeletLoop(client, ns, Duration.ZERO)) {
            client.apps().deployments().inNamespace(ns).resource(rolling("p", 2, "p", "registry.k8s.io/pause:3.9", "25%", "25%"))
                    .create();
            awaitComplete(ns, "p");
            client.apps().deployments().inNamespace(ns).withName("p").patch(MERGE, "{\"spec\":{\"paused\":true}}");
            await().atMost(TIMEOUT).untilAsserted(() -> {
                DeploymentCondition c = condition(get(ns, "p"), "Progressing");
                assertThat(c.getStatus()).isEqualTo("Unknown");
                assertThat(c.getReason()).isEqualTo("DeploymentPaused");
                assertThat(c.getMessage()).isEqualTo("Deployment is paused");
            });
            setImage(ns, "p", "registry.k8s.io/pause:3.10");
            client.apps().deployments().inNamespace(ns).withName("p").scale(3);
            await().atMost(TIMEOUT).untilAsserted(() -> {
                Deployment d = get(ns, "p");
                assertThat(d.getStatus().getObservedGeneration()).isEqualTo(d.getMetadata().getGeneration());
                assertThat(replicaSets(ns)).hasSize(1).first().satisfies(rs -> assertThat(rs.getSpec().getReplicas()).isEqualTo(3));
            });
            client.apps().deployments().inNamespace(ns).withName("p").patch(MERGE, "{\"spec\":{\"paused\":false}}");
            awaitComplete(ns, "p");
            assertThat(replicaSets(ns)).hasSize(2);
            assertThat(client.pods().inNamespace(ns).list().getItems()).hasSize(3)
                    .allSatisfy(p -> assertThat(image(p)).endsWith("3.10"));
        }
    }

    @Test
    void progressDeadlineExceededThenRecovered() throws Exception {
        String ns = newNamespace(client, "dep-deadline");
        try (KubeletLoop kubelet = new KubeletLoop(client, ns, Duration.ZERO)) {
            Deployment d0 = rolling("slow", 2, "slow", "example.com/never-ready:1", "25%", "25%");
            d0.getSpec().setProgressDeadlineSeconds(3);
            client.apps().deployments().inNamespace(ns).resource(d0).create();
            long start = System.nanoTime();
            await().atMost(TIMEOUT).untilAsserted(() -> {
                DeploymentCondition c = condition(get(ns, "slow"), "Progressing");
                assertThat(c).isNotNull();
                assertThat(c.getStatus()).isEqualTo("False");
                assertThat(c.getReason()).isEqualTo("ProgressDeadlineExceeded");
                assertThat(c.getMessage()).matches("ReplicaSet \"slow-[a-z0-9]+\" has timed out progressing\\.");
            });
            // requeued at the deadline, not at the next resync
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(20));
            assertThat(condition(get(ns, "slow"), "Available").getReason()).isEqualTo("MinimumReplicasUnavailable");
            DeploymentTestSupport.Result status = kubectl(kubeconfig, Duration.ofSeconds(60), "-n", ns, "rollout", "status",
                    "deployment/slow", "--timeout=50s");
            assertThat(status.exitCode()).as(status.output()).isNotZero();
            assertThat(status.output()).contains("deployment \"slow\" exceeded its progress deadline");

            setImage(ns, "slow", "registry.k8s.io/pause:3.10");
            awaitComplete(ns, "slow");
            assertThat(condition(get(ns, "slow"), "Progressing").getStatus()).isEqualTo("True");
        }
    }

    @Test
    void revisionHistoryLimitDeletesOldestReplicaSets() throws Exception {
        String ns = newNamespace(client, "dep-history");
        try (KubeletLoop kubelet = new KubeletLoop(client, ns, Duration.ZERO)) {
            Deployment d0 = rolling("h", 1, "h", "registry.k8s.io/pause:3.1", "25%", "25%");
            d0.getSpec().setRevisionHistoryLimit(2);
            client.apps().deployments().inNamespace(ns).resource(d0).create();
            awaitComplete(ns, "h");
            for (String tag : List.of("3.2", "3.3", "3.4", "3.5")) {
                setImage(ns, "h", "registry.k8s.io/pause:" + tag);
                awaitComplete(ns, "h");
            }
            await().atMost(TIMEOUT).untilAsserted(() -> {
                List<ReplicaSet> rss = replicaSets(ns);
                assertThat(rss.stream().map(DeploymentTestSupport::image))
                        .containsExactlyInAnyOrder("registry.k8s.io/pause:3.3", "registry.k8s.io/pause:3.4",
                                "registry.k8s.io/pause:3.5");
                assertThat(rss.stream().map(rs -> rs.getMetadata().getAnnotations().get("deployment.kubernetes.io/revision")))
                        .containsExactlyInAnyOrder("3", "4", "5");
            });
        }
    }

    @Test
    void deprecatedRollbackAnnotationRollsBack() throws Exception {
        String ns = newNamespace(client, "dep-rollback");
        try (KubeletLoop kubelet = new KubeletLoop(client, ns, Duration.ZERO)) {
            client.apps().deployments().inNamespace(ns).resource(rolling("rb", 1, "rb", "registry.k8s.io/pause:3.1", "25%", "25%"))
                    .create();
            awaitComplete(ns, "rb");
            setImage(ns, "rb", "registry.k8s.io/pause:3.2");
            awaitComplete(ns, "rb");
            client.apps().deployments().inNamespace(ns).withName("rb")
                    .patch(MERGE, "{\"metadata\":{\"annotations\":{\"deprecated.deployment.rollback.to\":\"0\"}}}");
            await().atMost(TIMEOUT).untilAsserted(() -> {
                Deployment d = get(ns, "rb");
                assertThat(image(d)).isEqualTo("registry.k8s.io/pause:3.1");
                assertThat(d.getMetadata().getAnnotations()).doesNotContainKey("deprecated.deployment.rollback.to");
            });
            awaitComplete(ns, "rb");
            assertThat(events(ns, "rb").stream().filter(e -> "DeploymentRollback".equals(e.getReason())).map(Event::getMessage))
                    .contains("Rolled back deployment \"rb\" to revision 1");
            ReplicaSet back = replicaSets(ns).stream().filter(rs -> image(rs).endsWith("3.1")).findFirst().orElseThrow();
            assertThat(back.getMetadata().getAnnotations()).containsEntry("deployment.kubernetes.io/revision", "3")
                    .containsEntry("deployment.kubernetes.io/revision-history", "1");
        }
    }

    @Test
    void adoptsOrphansAndReleasesReplicaSetsThatStopMatching() throws Exception {
        String ns = newNamespace(client, "dep-adopt");
        try (KubeletLoop kubelet = new KubeletLoop(client, ns, Duration.ZERO)) {
            Deployment d0 = rolling("a", 2, "a", "registry.k8s.io/pause:3.10", "25%", "25%");
            // an orphan ReplicaSet with the deployment's template and hash, created first
            String hash = "manual";
            ReplicaSet orphan = new ReplicaSetBuilder().withNewMetadata().withName("a-orphan")
                    .withLabels(Map.of("app", "a", "pod-template-hash", hash)).endMetadata().withNewSpec().withReplicas(2)
                    .withNewSelector().withMatchLabels(Map.of("app", "a", "pod-template-hash", hash)).endSelector()
                    .withTemplate(DeploymentUtilAccess.withLabel(d0.getSpec().getTemplate(), "pod-template-hash", hash))
                    .endSpec().build();
            client.apps().replicaSets().inNamespace(ns).resource(orphan).create();
            Deployment created = client.apps().deployments().inNamespace(ns).resource(d0).create();
            awaitComplete(ns, "a");
            List<ReplicaSet> rss = replicaSets(ns);
            assertThat(rss).hasSize(1);
            assertThat(rss.get(0).getMetadata().getName()).isEqualTo("a-orphan");
            assertThat(rss.get(0).getMetadata().getOwnerReferences()).singleElement()
                    .satisfies(r -> assertThat(r.getUid()).isEqualTo(created.getMetadata().getUid()));
            assertThat(rss.get(0).getMetadata().getAnnotations()).containsEntry("deployment.kubernetes.io/revision", "1");

            // relabel it out of the selector: released, and a new one is created for the template
            client.apps().replicaSets().inNamespace(ns).withName("a-orphan")
                    .patch(MERGE, "{\"metadata\":{\"labels\":{\"app\":\"other\"}}}");
            await().atMost(TIMEOUT).untilAsserted(() -> {
                ReplicaSet released = client.apps().replicaSets().inNamespace(ns).withName("a-orphan").get();
                assertThat(released.getMetadata().getOwnerReferences()).isNullOrEmpty();
                assertThat(replicaSets(ns)).hasSize(2);
            });
        }
    }

    // ---- kubectl as the client ------------------------------------------------------------

    @Test
    void kubectlRolloutStatusHistoryUndoRestartAndScale() throws Exception {
        String ns = newNamespace(client, "dep-kubectl");
        try (KubeletLoop kubelet = new KubeletLoop(client, ns, Duration.ofMillis(200))) {
            DeploymentTestSupport.Result r = kubectl(kubeconfig, Duration.ofSeconds(30), "-n", ns, "create", "deployment", "k",
                    "--image=registry.k8s.io/pause:3.9", "--replicas=3");
            assertThat(r.exitCode()).as(r.output()).isZero();
            r = kubectl(kubeconfig, Duration.ofSeconds(90), "-n", ns, "rollout", "status", "deployment/k", "--timeout=80s");
            assertThat(r.exitCode()).as(r.output()).isZero();
            assertThat(r.output()).contains("deployment \"k\" successfully rolled out");

            r = kubectl(kubeconfig, Duration.ofSeconds(30), "-n", ns, "set", "image", "deployment/k", "pause=registry.k8s.io/pause:3.10");
            assertThat(r.exitCode()).as(r.output()).isZero();
            r = kubectl(kubeconfig, Duration.ofSeconds(90), "-n", ns, "rollout", "status", "deployment/k", "--timeout=80s");
            assertThat(r.exitCode()).as(r.output()).isZero();
            assertThat(r.output()).contains("successfully rolled out");

            r = kubectl(kubeconfig, Duration.ofSeconds(30), "-n", ns, "rollout", "history", "deployment/k");
            assertThat(r.exitCode()).as(r.output()).isZero();
            assertThat(r.output()).containsPattern("(?m)^1\\s").containsPattern("(?m)^2\\s");
            r = kubectl(kubeconfig, Duration.ofSeconds(30), "-n", ns, "rollout", "history", "deployment/k", "--revision=1");
            assertThat(r.exitCode()).as(r.output()).isZero();
            assertThat(r.output()).contains("registry.k8s.io/pause:3.9");

            r = kubectl(kubeconfig, Duration.ofSeconds(30), "-n", ns, "rollout", "undo", "deployment/k");
            assertThat(r.exitCode()).as(r.output()).isZero();
            assertThat(r.output()).contains("rolled back");
            r = kubectl(kubeconfig, Duration.ofSeconds(90), "-n", ns, "rollout", "status", "deployment/k", "--timeout=80s");
            assertThat(r.exitCode()).as(r.output()).isZero();
            assertThat(image(get(ns, "k"))).isEqualTo("registry.k8s.io/pause:3.9");
            assertThat(get(ns, "k").getMetadata().getAnnotations()).containsEntry("deployment.kubernetes.io/revision", "3");
            r = kubectl(kubeconfig, Duration.ofSeconds(30), "-n", ns, "rollout", "history", "deployment/k");
            assertThat(r.output()).containsPattern("(?m)^2\\s").containsPattern("(?m)^3\\s").doesNotContainPattern("(?m)^1\\s");

            r = kubectl(kubeconfig, Duration.ofSeconds(30), "-n", ns, "rollout", "restart", "deployment/k");
            assertThat(r.exitCode()).as(r.output()).isZero();
            r = kubectl(kubeconfig, Duration.ofSeconds(90), "-n", ns, "rollout", "status", "deployment/k", "--timeout=80s");
            assertThat(r.exitCode()).as(r.output()).isZero();
            assertThat(get(ns, "k").getMetadata().getAnnotations()).containsEntry("deployment.kubernetes.io/revision", "4");
            // old pods may still be terminating (the test kubelet finishes them asynchronously)
            assertThat(client.pods().inNamespace(ns).list().getItems().stream()
                    .filter(p -> p.getMetadata().getDeletionTimestamp() == null).toList()).hasSize(3)
                    .allSatisfy(p -> assertThat(p.getMetadata().getAnnotations())
                            .containsKey("kubectl.kubernetes.io/restartedAt"));

            r = kubectl(kubeconfig, Duration.ofSeconds(30), "-n", ns, "scale", "deployment/k", "--replicas=5");
            assertThat(r.exitCode()).as(r.output()).isZero();
            r = kubectl(kubeconfig, Duration.ofSeconds(90), "-n", ns, "rollout", "status", "deployment/k", "--timeout=80s");
            assertThat(r.exitCode()).as(r.output()).isZero();
            await().atMost(TIMEOUT).untilAsserted(() -> assertThat(n(get(ns, "k").getStatus().getAvailableReplicas())).isEqualTo(5));

            r = kubectl(kubeconfig, Duration.ofSeconds(30), "-n", ns, "rollout", "pause", "deployment/k");
            assertThat(r.exitCode()).as(r.output()).isZero();
            r = kubectl(kubeconfig, Duration.ofSeconds(30), "-n", ns, "rollout", "resume", "deployment/k");
            assertThat(r.exitCode()).as(r.output()).isZero();
            r = kubectl(kubeconfig, Duration.ofSeconds(90), "-n", ns, "rollout", "status", "deployment/k", "--timeout=80s");
            assertThat(r.exitCode()).as(r.output()).isZero();
        }
    }

    @Test
    void replicaFailureIsCopiedUpAndReplicaSetCreateErrorReported() throws Exception {
        String ns = newNamespace(client, "dep-failure");
        try (KubeletLoop kubelet = new KubeletLoop(client, ns, Duration.ZERO)) {
            var one = new io.fabric8.kubernetes.api.model.Quantity("1");
            var zero = new io.fabric8.kubernetes.api.model.Quantity("0");
            var quota = client.resourceQuotas().inNamespace(ns).resource(new io.fabric8.kubernetes.api.model.ResourceQuotaBuilder()
                    .withNewMetadata().withName("q").endMetadata().withNewSpec()
                    .withHard(Map.of("pods", one, "count/replicasets.apps", one)).endSpec().build()).create();
            // no resourcequota controller runs here: publish the quota's status as it would
            quota.setStatus(new io.fabric8.kubernetes.api.model.ResourceQuotaStatusBuilder()
                    .withHard(Map.of("pods", one, "count/replicasets.apps", one))
                    .withUsed(Map.of("pods", zero, "count/replicasets.apps", zero)).build());
            client.resourceQuotas().inNamespace(ns).resource(quota).updateStatus();
            client.apps().deployments().inNamespace(ns).resource(rolling("f", 3, "f", "registry.k8s.io/pause:3.9", 1, 0)).create();
            await().atMost(TIMEOUT).untilAsserted(() -> {
                DeploymentCondition c = condition(get(ns, "f"), "ReplicaFailure");
                assertThat(c).isNotNull();
                assertThat(c.getStatus()).isEqualTo("True");
                assertThat(c.getReason()).isEqualTo("FailedCreate");
                assertThat(c.getMessage()).contains("exceeded quota");
            });
            // a second ReplicaSet is over the quota: ReplicaSetCreateError
            setImage(ns, "f", "registry.k8s.io/pause:3.10");
            await().atMost(TIMEOUT).untilAsserted(() -> {
                DeploymentCondition c = condition(get(ns, "f"), "Progressing");
                assertThat(c.getStatus()).isEqualTo("False");
                assertThat(c.getReason()).isEqualTo("ReplicaSetCreateError");
                assertThat(c.getMessage()).startsWith("Failed to create new replica set \"f-").contains("exceeded quota");
                assertThat(events(ns, "f")).anyMatch(e -> "ReplicaSetCreateError".equals(e.getReason())
                        && "Warning".equals(e.getType()));
            });
            client.resourceQuotas().inNamespace(ns).withName("q").delete();
            awaitComplete(ns, "f");
            assertThat(condition(get(ns, "f"), "ReplicaFailure")).isNull();
        }
    }

    @Test
    void nameCollisionBumpsCollisionCount() throws Exception {
        String ns = newNamespace(client, "dep-collision");
        try (KubeletLoop kubelet = new KubeletLoop(client, ns, Duration.ZERO)) {
            Deployment d0 = rolling("c", 1, "c", "registry.k8s.io/pause:3.10", 1, 0);
            // what the API server stores for d0's template, to know the name upstream would pick
            Deployment probe = client.apps().deployments().inNamespace(ns).resource(rolling("probe", 0, "probe-x",
                    "registry.k8s.io/pause:3.10", 1, 0)).create();
            client.apps().deployments().inNamespace(ns).withName("probe").withPropagationPolicy(
                    io.fabric8.kubernetes.api.model.DeletionPropagation.BACKGROUND).delete();
            var stored = probe.getSpec().getTemplate();
            stored.getMetadata().setLabels(Map.of("app", "c"));
            String hash0 = ControllerHash.computeHash(stored, null);
            String hash1 = ControllerHash.computeHash(stored, 1);
            ReplicaSet squatter = new ReplicaSetBuilder().withNewMetadata().withName("c-" + hash0)
                    .withLabels(Map.of("app", "squatter")).endMetadata().withNewSpec().withReplicas(0)
                    .withNewSelector().withMatchLabels(Map.of("app", "squatter")).endSelector().withNewTemplate()
                    .withNewMetadata().withLabels(Map.of("app", "squatter")).endMetadata().withNewSpec().addNewContainer()
                    .withName("x").withImage("registry.k8s.io/pause:3.10").endContainer().endSpec().endTemplate().endSpec()
                    .build();
            client.apps().replicaSets().inNamespace(ns).resource(squatter).create();
            client.apps().deployments().inNamespace(ns).resource(d0).create();
            awaitComplete(ns, "c");
            Deployment d = get(ns, "c");
            assertThat(d.getStatus().getCollisionCount()).isEqualTo(1);
            assertThat(client.apps().replicaSets().inNamespace(ns).withName("c-" + hash1).get()).isNotNull();
        }
    }

    @Test
    void minReadySecondsIsPassedToTheReplicaSetWithoutANewRollout() throws Exception {
        String ns = newNamespace(client, "dep-minready");
        try (KubeletLoop kubelet = new KubeletLoop(client, ns, Duration.ZERO)) {
            client.apps().deployments().inNamespace(ns).resource(rolling("m", 2, "m", "registry.k8s.io/pause:3.10", 1, 0)).create();
            awaitComplete(ns, "m");
            client.apps().deployments().inNamespace(ns).withName("m").patch(MERGE, "{\"spec\":{\"minReadySeconds\":3}}");
            await().atMost(TIMEOUT).untilAsserted(() -> {
                assertThat(replicaSets(ns)).singleElement()
                        .satisfies(rs -> assertThat(rs.getSpec().getMinReadySeconds()).isEqualTo(3));
                Deployment d = get(ns, "m");
                assertThat(d.getStatus().getObservedGeneration()).isEqualTo(d.getMetadata().getGeneration());
            });
            // new pods count as available only after 3s
            setImage(ns, "m", "registry.k8s.io/pause:3.9");
            long start = System.nanoTime();
            awaitComplete(ns, "m");
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isGreaterThan(Duration.ofSeconds(5));
        }
    }
}
