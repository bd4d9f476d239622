package io.qkcm.controller.podgc;

import static io.qkcm.testing.TestNamespaces.newNamespace;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import jakarta.inject.Inject;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.micrometer.core.instrument.MeterRegistry;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.qkcm.testing.RealApiServer;
import io.qkcm.testing.RealApiServerResource;
import io.qkcm.testing.TestKubelet;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;

/**
 * pod-garbage-collector-controller against a real API server, with a threshold of 3 terminated pods, and
 * the pass period (1 s) and node quarantine (2 s) shortened through the internal test settings, as
 * upstream's integration tests shorten them (NewPodGCInternal).
 */
@QuarkusTest
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
@TestProfile(PodGCControllerTest.Profile.class)
class PodGCControllerTest {

    public static class Profile implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("qkcm.controllers", "pod-garbage-collector-controller",
                    "qkcm.terminated-pod-gc-threshold", "3",
                    "qkcm.internal.pod-gc.gc-check-period", "1s",
                    "qkcm.internal.pod-gc.quarantine-time", "2s");
        }
    }

    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    static KubernetesClient client;

    @Inject
    MeterRegistry registry;

    private double forceDeleted(String ns, String reason) {
        var c = registry.find("pod.gc.collector.force.delete.pods").tag("namespace", ns).tag("reason", reason).counter();
        return c == null ? 0 : c.count();
    }
    static final List<String> nodes = new ArrayList<>();

    @BeforeAll
    static void setUp() {
        client = RealApiServer.get().newClient();
    }

    @AfterAll
    static void tearDown() {
        for (String n : nodes) {
            client.nodes().withName(n).delete();
        }
        client.close();
    }

    private static String suffix() {
        return Long.toString(System.nanoTime() % 1_000_000_000L, 36);
    }

    /** A Node object with its Ready condition (and taints), as a kubelet and an admin would leave it. */
    private static String node(String prefix, String ready, boolean outOfService) {
        String name = prefix + "-" + suffix();
        NodeBuilder b = new NodeBuilder().withNewMetadata().withName(name).endMetadata().withNewSpec().endSpec();
        if (outOfService) {
            b.editSpec().addNewTaint().withKey("node.kubernetes.io/out-of-service").withValue("nodeshutdown")
                    .withEffect("NoExecute").endTaint().endSpec();
        }
        Node created = client.nodes().resource(b.build()).create();
        nodes.add(name);
        created.setStatus(new io.fabric8.kubernetes.api.model.NodeStatusBuilder().addNewCondition().withType("Ready")
                .withStatus(ready).withReason("test").withLastHeartbeatTime("2026-01-01T00:00:00Z")
                .withLastTransitionTime("2026-01-01T00:00:00Z").endCondition().build());
        client.nodes().resource(created).updateStatus();
        return name;
    }

    private static Pod pod(String ns, String name, String nodeName, List<String> finalizers) {
        Pod pod = new PodBuilder().withNewMetadata().withName(name).withNamespace(ns).withFinalizers(finalizers)
                .endMetadata().withNewSpec().withNodeName(nodeName).withRestartPolicy("Never").addNewContainer()
                .withName("main").withImage("registry.k8s.io/pause:3.10").endContainer().endSpec().build();
        return client.pods().inNamespace(ns).resource(pod).create();
    }

    private static Pod get(String ns, String name) {
        return client.pods().inNamespace(ns).withName(name).get();
    }

    /** Every pod of a namespace as the watch saw it, in order. */
    static final class Seen implements Watcher<Pod>, AutoCloseable {
        final List<Pod> updates = new CopyOnWriteArrayList<>();
        final List<String> deleted = new CopyOnWriteArrayList<>();
        final Watch watch;

        Seen(String ns) {
            watch = client.pods().inNamespace(ns).watch(this);
        }

        @Override
        public void eventReceived(Action action, Pod pod) {
            if (action == Action.DELETED) {
                deleted.add(pod.getMetadata().getName());
            }
            updates.add(pod);
        }

        @Override
        public void onClose(WatcherException cause) {
        }

        @Override
        public void close() {
            watch.close();
        }
    }

    @Test
    void terminatedPodsAboveTheThresholdAreDeletedOldestFirst() {
        String ns = newNamespace(client, "podgc-threshold");
        String node = node("podgc-ready", "True", false);
        TestKubelet kubelet = new TestKubelet(client, node);
        for (int i = 0; i < 5; i++) {
            kubelet.succeeded(pod(ns, "p" + i, node, List.of()));
        }
        // five terminated: the two oldest go (every terminated pod of the cluster counts; older ones go first)
        await().atMost(TIMEOUT).until(() -> get(ns, "p0") == null && get(ns, "p1") == null);
        for (String kept : List.of("p2", "p3", "p4")) {
            assertThat(get(ns, kept)).as(kept).isNotNull();
        }
        // one more: the oldest left goes, the newest three stay
        kubelet.failed(pod(ns, "p5", node, List.of()));
        await().atMost(TIMEOUT).until(() -> get(ns, "p2") == null);
        for (String kept : List.of("p3", "p4", "p5")) {
            assertThat(get(ns, kept)).as(kept).isNotNull();
        }
        // running pods never count
        Pod running = kubelet.runningAndReady(pod(ns, "running", node, List.of()));
        kubelet.succeeded(pod(ns, "p6", node, List.of()));
        await().atMost(TIMEOUT).until(() -> get(ns, "p3") == null);
        assertThat(get(ns, "running")).isNotNull();
        assertThat(get(ns, "running").getStatus().getPhase()).isEqualTo("Running");
        assertThat(running).isNotNull();
        for (String kept : List.of("p4", "p5", "p6")) {
            assertThat(get(ns, kept)).as(kept).isNotNull();
        }
        // pod_gc_collector_force_delete_pods_total{namespace, reason="terminated"}
        await().atMost(TIMEOUT).untilAsserted(() -> assertThat(forceDeleted(ns, "terminated")).isEqualTo(4.0));
        client.pods().inNamespace(ns).delete();
    }

    @Test
    void aPodBoundToAMissingNodeIsFailedWithDisruptionTargetAndDeleted() {
        String ns = newNamespace(client, "podgc-orphan");
        String existing = node("podgc-present", "True", false);
        String ghost = "podgc-ghost-" + suffix();
        try (Seen seen = new Seen(ns)) {
            Pod kept = new TestKubelet(client, existing).runningAndReady(pod(ns, "kept", existing, List.of()));
            Pod orphan = new TestKubelet(client, ghost).runningAndReady(pod(ns, "orphan", ghost, List.of()));
            long generation = orphan.getMetadata().getGeneration();

            await().atMost(TIMEOUT).until(() -> seen.deleted.contains("orphan"));
            // before its deletion the pod was marked Failed, with upstream's DisruptionTarget condition
            Pod failed = seen.updates.stream().filter(p -> "orphan".equals(p.getMetadata().getName()))
                    .filter(p -> "Failed".equals(p.getStatus().getPhase())).findFirst().orElseThrow();
            PodCondition dt = failed.getStatus().getConditions().stream()
                    .filter(c -> "DisruptionTarget".equals(c.getType())).findFirst().orElseThrow();
            assertThat(dt.getStatus()).isEqualTo("True");
            assertThat(dt.getReason()).isEqualTo("DeletionByPodGC");
            assertThat(dt.getMessage()).isEqualTo("PodGC: node no longer exists");
            assertThat(dt.getObservedGeneration()).isEqualTo(generation);
            assertThat(failed.getStatus().getObservedGeneration()).isEqualTo(generation);
            // the kubelet's conditions are kept: the patch merges by type
            assertThat(failed.getStatus().getConditions()).extracting(PodCondition::getType).contains("Ready",
                    "PodScheduled", "DisruptionTarget");
            // deleted at once (grace period 0): no terminating state in between
            assertThat(seen.updates.stream().filter(p -> "orphan".equals(p.getMetadata().getName()))
                    .filter(p -> p.getMetadata().getDeletionTimestamp() != null)
                    .allMatch(p -> Long.valueOf(0).equals(p.getMetadata().getDeletionGracePeriodSeconds()))).isTrue();
            assertThat(seen.deleted).doesNotContain("kept");
            await().atMost(TIMEOUT).untilAsserted(() -> assertThat(forceDeleted(ns, "orphaned")).isEqualTo(1.0));
            Pod stillThere = get(ns, "kept");
            assertThat(stillThere).isNotNull();
            assertThat(stillThere.getStatus().getPhase()).isEqualTo("Running");
            assertThat(kept.getMetadata().getUid()).isEqualTo(stillThere.getMetadata().getUid());
        }
        client.pods().inNamespace(ns).delete();
    }

    @Test
    void anUnscheduledTerminatingPodIsFailedAndForceDeleted() {
        String ns = newNamespace(client, "podgc-unscheduled");
        pod(ns, "pending", null, List.of("qkcm.test/block"));
        client.pods().inNamespace(ns).withName("pending").delete();
        // the finalizer holds the pod: what the controller did stays visible
        await().atMost(TIMEOUT).until(() -> "Failed".equals(get(ns, "pending").getStatus().getPhase()));
        Pod p = get(ns, "pending");
        assertThat(p.getMetadata().getDeletionTimestamp()).isNotNull();
        assertThat(p.getMetadata().getDeletionGracePeriodSeconds()).isZero();
        // no DisruptionTarget condition: only orphans get one
        assertThat(p.getStatus().getConditions() == null ? List.<PodCondition>of() : p.getStatus().getConditions())
                .noneMatch(c -> "DisruptionTarget".equals(c.getType()));
        io.qkcm.testing.Conflicts.retry(() -> client.pods().inNamespace(ns).withName("pending")
                .edit(pod -> new PodBuilder(pod).editMetadata().withFinalizers(List.of()).endMetadata().build()));
        await().atMost(TIMEOUT).until(() -> get(ns, "pending") == null);
    }

    @Test
    void terminatingPodsOnANotReadyOutOfServiceNodeAreForceDeleted() {
        String ns = newNamespace(client, "podgc-oos");
        String outOfService = node("podgc-oos", "False", true);
        String notReady = node("podgc-notready", "False", false);
        new TestKubelet(client, notReady).runningAndReady(pod(ns, "waits", notReady, List.of()));
        new TestKubelet(client, outOfService).runningAndReady(pod(ns, "goes", outOfService, List.of()));
        // graceful deletions: without a kubelet both would stay terminating forever
        client.pods().inNamespace(ns).withName("waits").delete();
        client.pods().inNamespace(ns).withName("goes").delete();
        await().atMost(TIMEOUT).until(() -> get(ns, "goes") == null);
        await().atMost(TIMEOUT).untilAsserted(() -> assertThat(forceDeleted(ns, "out-of-service")).isEqualTo(1.0));
        Pod waits = get(ns, "waits");
        assertThat(waits).isNotNull();
        assertThat(waits.getMetadata().getDeletionTimestamp()).isNotNull();
        assertThat(waits.getStatus().getPhase()).isEqualTo("Running");
        client.pods().inNamespace(ns).withName("waits").withGracePeriod(0).delete();
    }
}
