package io.qkcm.controller.podgc;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodConditionBuilder;
import io.fabric8.kubernetes.api.model.Taint;
import io.fabric8.kubernetes.api.model.TaintBuilder;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.qkcm.runtime.workqueue.RateLimiter;
import io.qkcm.runtime.workqueue.WorkQueue;
import io.qkcm.runtime.workqueue.WorkqueueMetrics;
import io.qkcm.controller.podgc.metrics.PodGCMetrics;

/**
 * Upstream's gc_controller_test tables: TestGCTerminated, TestGCOrphaned (the node queue on a manual
 * clock, as upstream's fake clock), TestGCUnscheduledTerminating, TestGCTerminating and
 * TestGCInspectingPatchedPodBeforeDeletion. The API is a recorder of upstream's calls, as upstream's
 * fake clientset.
 */
class PodGCTest {

    private static final Duration QUARANTINE = PodGCController.QUARANTINE_TIME;
    private static final Instant NOW = Instant.parse("2026-05-06T07:08:09.123Z");

    /** The calls upstream's fake clientset would record. */
    static class RecordingApi implements PodGC.Api {
        final Set<String> clientNodes = Collections.synchronizedSet(new HashSet<>());
        final Set<String> deleted = Collections.synchronizedSet(new TreeSet<>());
        final Map<String, String> patched = Collections.synchronizedMap(new LinkedHashMap<>());

        @Override
        public void patchPodStatus(String namespace, String name, String patch) {
            patched.put(name, patch);
        }

        @Override
        public void deletePod(String namespace, String name) {
            deleted.add(name);
        }

        @Override
        public boolean nodeExists(String name) {
            return clientNodes.contains(name);
        }
    }

    static final class Fixture {
        final RecordingApi api = new RecordingApi();
        final Map<String, Node> informerNodes = Collections.synchronizedMap(new LinkedHashMap<>());
        final ManualDelayer clock = new ManualDelayer();
        final SimpleMeterRegistry registry = new SimpleMeterRegistry();
        final PodGCMetrics metrics = new PodGCMetrics(registry);
        final WorkQueue<String> nodeQueue = new WorkQueue<>("podgc_test_queue", RateLimiter.controllerDefault(), clock,
                WorkqueueMetrics.NONE);
        final PodGC gc;

        Fixture(int threshold) {
            this(threshold, QUARANTINE);
        }

        Fixture(int threshold, Duration quarantine) {
            gc = new PodGC(api, informerNodes::get, threshold, quarantine, nodeQueue, metrics, Runnable::run, true,
                    () -> NOW);
        }

        void gc(List<Pod> pods) throws InterruptedException {
            gc.gc(pods, new ArrayList<>(informerNodes.values()));
        }

        void verify(Set<String> deleted, Set<String> patched, String reason) {
            assertThat(api.deleted).as("deleted pods").containsExactlyInAnyOrderElementsOf(deleted);
            assertThat(api.patched.keySet()).as("patched pods").containsExactlyInAnyOrderElementsOf(patched);
            assertThat(metrics.deletingCount("default", reason)).as("force_delete_pods_total").isEqualTo(deleted.size());
            assertThat(metrics.deletingErrorCount("default", reason)).as("force_delete_pod_errors_total").isZero();
        }
    }

    static Node node(String name) {
        return new NodeBuilder().withNewMetadata().withName(name).endMetadata().build();
    }

    static Pod pod(String name, String nodeName, String phase) {
        return new PodBuilder().withNewMetadata().withName(name).withNamespace("default").endMetadata()
                .withNewSpec().withNodeName(nodeName).endSpec().withNewStatus().withPhase(phase).endStatus().build();
    }

    record Phase(String name, String phase, String reason) {
    }

    record TerminatedCase(String name, List<Phase> pods, int threshold, Set<String> deleted) {
    }

    @Test
    void gcTerminated() throws Exception {
        List<TerminatedCase> cases = List.of(
                new TerminatedCase("delete pod a which is PodFailed and pod b which is PodSucceeded",
                        List.of(new Phase("a", "Failed", null), new Phase("b", "Succeeded", null), new Phase("c", "Failed", null)),
                        1, Set.of("a", "b")),
                new TerminatedCase("threshold = 0, disables terminated pod deletion",
                        List.of(new Phase("a", "Failed", null), new Phase("b", "Succeeded", null)), 0, Set.of()),
                new TerminatedCase("threshold = 1, delete pod b which is PodSucceeded",
                        List.of(new Phase("a", "Running", null), new Phase("b", "Succeeded", null), new Phase("c", "Failed", null)),
                        1, Set.of("b")),
                new TerminatedCase("threshold = 1, delete pod a which is PodFailed",
                        List.of(new Phase("a", "Failed", null), new Phase("b", "Succeeded", null)), 1, Set.of("a")),
                new TerminatedCase("threshold = 5, don't delete pod",
                        List.of(new Phase("a", "Failed", null), new Phase("b", "Succeeded", null)), 5, Set.of()),
                new TerminatedCase("evicted pod first",
                        List.of(new Phase("a", "Failed", null), new Phase("b", "Succeeded", null),
                                new Phase("c", "Failed", PodGC.EVICTION_REASON)),
                        1, Set.of("c", "a")),
                new TerminatedCase("evicted pod only",
                        List.of(new Phase("a", "Running", null), new Phase("b", "Succeeded", null),
                                new Phase("c", "Failed", PodGC.EVICTION_REASON)),
                        1, Set.of("c")));
        for (TerminatedCase c : cases) {
            Fixture f = new Fixture(c.threshold());
            f.api.clientNodes.add("node");
            Instant creation = Instant.EPOCH;
            List<Pod> pods = new ArrayList<>();
            for (Phase p : c.pods()) {
                creation = creation.plus(Duration.ofHours(1));
                Pod pod = pod(p.name(), "node", p.phase());
                pod.getMetadata().setCreationTimestamp(creation.toString());
                pod.getStatus().setReason(p.reason());
                pods.add(pod);
            }
            f.gc(pods);
            f.verify(c.deleted(), Set.of(), PodGCMetrics.REASON_TERMINATED);
        }
    }

    @Test
    void terminatedPodsAreOrderedByEvictionThenCreationThenName() {
        Pod evictedLate = pod("z", "", "Failed");
        evictedLate.getMetadata().setCreationTimestamp("2026-01-01T10:00:00Z");
        evictedLate.getStatus().setReason(PodGC.EVICTION_REASON);
        Pod early = pod("m", "", "Succeeded");
        early.getMetadata().setCreationTimestamp("2026-01-01T08:00:00Z");
        Pod sameTimeB = pod("b", "", "Failed");
        sameTimeB.getMetadata().setCreationTimestamp("2026-01-01T09:00:00Z");
        Pod sameTimeA = pod("a", "", "Failed");
        sameTimeA.getMetadata().setCreationTimestamp("2026-01-01T09:00:00Z");
        List<Pod> pods = new ArrayList<>(List.of(sameTimeB, early, evictedLate, sameTimeA));
        pods.sort(PodGC.BY_EVICTION_AND_CREATION_TIMESTAMP);
        assertThat(pods).extracting(p -> p.getMetadata().getName()).containsExactly("z", "m", "a", "b");
    }

    record OrphanCase(String name, List<String> initialClientNodes, List<String> initialInformerNodes, Duration delay,
            List<String> addedClientNodes, List<String> deletedClientNodes, List<String> addedInformerNodes,
            List<String> deletedInformerNodes, List<Pod> pods, int itemsInQueue, Set<String> deleted,
            Set<String> patched) {
    }

    @Test
    void gcOrphaned() throws Exception {
        Duration twice = QUARANTINE.multipliedBy(2);
        List<OrphanCase> cases = List.of(
                new OrphanCase("nodes present in lister", List.of(), List.of("existing1", "existing2"), twice,
                        List.of(), List.of(), List.of(), List.of(),
                        List.of(pod("a", "existing1", "Running"), pod("b", "existing2", "Failed"),
                                pod("c", "existing2", "Succeeded")),
                        0, Set.of(), Set.of()),
                new OrphanCase("nodes present in client", List.of("existing1", "existing2"), List.of(), twice,
                        List.of(), List.of(), List.of(), List.of(),
                        List.of(pod("a", "existing1", "Running"), pod("b", "existing2", "Failed"),
                                pod("c", "existing2", "Succeeded")),
                        2, Set.of(), Set.of()),
                new OrphanCase("no nodes", List.of(), List.of(), twice, List.of(), List.of(), List.of(), List.of(),
                        List.of(pod("a", "deleted", "Failed"), pod("b", "deleted", "Succeeded")),
                        1, Set.of("a", "b"), Set.of()),
                new OrphanCase("no nodes, one running pod", List.of(), List.of(), twice, List.of(), List.of(), List.of(),
                        List.of(),
                        List.of(pod("a", "deleted", "Failed"), pod("b", "deleted", "Succeeded"),
                                pod("c", "deleted", "Running")),
                        1, Set.of("a", "b", "c"), Set.of("c")),
                new OrphanCase("quarantine not finished", List.of(), List.of(), QUARANTINE.dividedBy(2), List.of(),
                        List.of(), List.of(), List.of(), List.of(pod("a", "deleted", "Failed")), 0, Set.of(), Set.of()),
                new OrphanCase("wrong nodes", List.of(), List.of("existing"), twice, List.of(), List.of(), List.of(),
                        List.of(), List.of(pod("a", "deleted", "Running")), 1, Set.of("a"), Set.of("a")),
                new OrphanCase("some nodes missing", List.of(), List.of("existing"), twice, List.of(), List.of(),
                        List.of(), List.of(),
                        List.of(pod("a", "deleted", "Failed"), pod("b", "existing", "Failed"),
                                pod("c", "deleted", "Succeeded"), pod("d", "deleted", "Running")),
                        1, Set.of("a", "c", "d"), Set.of("d")),
                new OrphanCase("node added to client after quarantine", List.of(), List.of(), twice, List.of("node"),
                        List.of(), List.of(), List.of(), List.of(pod("a", "node", "Running")), 1, Set.of(), Set.of()),
                new OrphanCase("node added to informer after quarantine", List.of(), List.of(), twice, List.of(),
                        List.of(), List.of("node"), List.of(), List.of(pod("a", "node", "Failed")), 1, Set.of(), Set.of()),
                new OrphanCase("node deleted from client after quarantine", List.of("node"), List.of(), twice,
                        List.of(), List.of("node"), List.of(), List.of(), List.of(pod("a", "node", "Failed")), 1,
                        Set.of("a"), Set.of()),
                new OrphanCase("node deleted from informer after quarantine", List.of(), List.of("node"), twice,
                        List.of(), List.of(), List.of(), List.of("node"), List.of(pod("a", "node", "Succeeded")), 0,
                        Set.of(), Set.of()));
        for (OrphanCase c : cases) {
            Fixture f = new Fixture(-1);
            f.api.clientNodes.addAll(c.initialClientNodes());
            c.initialInformerNodes().forEach(n -> f.informerNodes.put(n, node(n)));

            f.gc(c.pods());
            assertThat(f.api.deleted).as(c.name() + ": no pods deleted before the quarantine").isEmpty();

            f.clock.step(c.delay());
            assertThat(f.nodeQueue.length()).as(c.name() + ": nodes in the queue").isEqualTo(c.itemsInQueue());

            f.api.clientNodes.addAll(c.addedClientNodes());
            f.api.clientNodes.removeAll(c.deletedClientNodes());
            c.addedInformerNodes().forEach(n -> f.informerNodes.put(n, node(n)));
            c.deletedInformerNodes().forEach(f.informerNodes::remove);

            f.gc(c.pods());
            assertThat(f.api.deleted).as(c.name()).containsExactlyInAnyOrderElementsOf(c.deleted());
            assertThat(f.api.patched.keySet()).as(c.name()).containsExactlyInAnyOrderElementsOf(c.patched());
            assertThat(f.metrics.deletingCount("default", PodGCMetrics.REASON_ORPHANED)).as(c.name())
                    .isEqualTo(c.deleted().size());
        }
    }

    record UnscheduledCase(String name, String phase, boolean terminating, String nodeName) {
    }

    @Test
    void gcUnscheduledTerminating() {
        // unscheduled pods in any phase must be deleted
        Fixture f = new Fixture(-1);
        f.gc.gcUnscheduledTerminating(pods(List.of(new UnscheduledCase("a", "Failed", true, ""),
                new UnscheduledCase("b", "Succeeded", true, ""), new UnscheduledCase("c", "Running", true, ""))));
        f.verify(Set.of("a", "b", "c"), Set.of("c"), PodGCMetrics.REASON_TERMINATING_UNSCHEDULED);

        // scheduled or not terminating: kept
        Fixture g = new Fixture(-1);
        g.gc.gcUnscheduledTerminating(pods(List.of(new UnscheduledCase("a", "Failed", false, ""),
                new UnscheduledCase("b", "Succeeded", false, "node"), new UnscheduledCase("c", "Running", true, "node"))));
        g.verify(Set.of(), Set.of(), PodGCMetrics.REASON_TERMINATING_UNSCHEDULED);
    }

    private static List<Pod> pods(List<UnscheduledCase> cases) {
        Instant creation = Instant.EPOCH;
        List<Pod> pods = new ArrayList<>();
        for (UnscheduledCase c : cases) {
            creation = creation.plus(Duration.ofHours(1));
            Pod p = pod(c.name(), c.nodeName(), c.phase());
            p.getMetadata().setCreationTimestamp(creation.toString());
            if (c.terminating()) {
                p.getMetadata().setDeletionTimestamp(Instant.EPOCH.toString());
            }
            pods.add(p);
        }
        return pods;
    }

    record NodeSpec(String name, String ready, List<Taint> taints) {
    }

    record PodSpec(String name, String phase, boolean terminating, String nodeName) {
    }

    private static Taint outOfService(String effect, String value) {
        return new TaintBuilder().withKey(PodGC.TAINT_NODE_OUT_OF_SERVICE).withEffect(effect).withValue(value).build();
    }

    @Test
    void gcTerminating() throws Exception {
        record Case(String name, List<NodeSpec> nodes, List<PodSpec> pods, Set<String> deleted, Set<String> patched) {
        }
        List<PodSpec> many = new ArrayList<>();
        String[] nodesOf = { "worker-0", "worker-1", "worker-2", "worker-3", "worker-3", "worker-5" };
        for (int i = 1; i <= 6; i++) {
            String n = nodesOf[i - 1];
            String terminatingNode = i == 5 ? "worker-4" : n;
            many.add(new PodSpec("a" + i, null, false, n));
            many.add(new PodSpec("b" + i, null, true, terminatingNode));
            many.add(new PodSpec("c" + i, "Pending", false, terminatingNode));
            many.add(new PodSpec("d" + i, "Running", false, terminatingNode));
            many.add(new PodSpec("e" + i, "Unknown", false, terminatingNode));
        }
        List<Case> cases = List.of(
                new Case("pods have deletion timestamp set and the corresponding nodes are not ready",
                        List.of(new NodeSpec("worker-0", "False", List.of()), new NodeSpec("worker-1", "False", List.of())),
                        List.of(new PodSpec("a", null, true, "worker-0"), new PodSpec("b", null, true, "worker-1")),
                        Set.of(), Set.of()),
                new Case("some pods have deletion timestamp and/or phase set and some of the corresponding nodes have an"
                        + "outofservice taint that are not ready",
                        List.of(new NodeSpec("worker-0", "False", List.of(outOfService("NoExecute", null))),
                                new NodeSpec("worker-1", "False", List.of()),
                                new NodeSpec("worker-2", "True", List.of()),
                                new NodeSpec("worker-3", "False", List.of(outOfService("NoSchedule", null))),
                                new NodeSpec("worker-4", "False", List.of(outOfService("PreferNoSchedule", null))),
                                new NodeSpec("worker-5", "False", List.of(outOfService("NoExecute", "any-value")))),
                        many, Set.of("b1", "b4", "b5", "b6"), Set.of("b1", "b4", "b5", "b6")),
                new Case("pods deleted from node tainted out-of-service",
                        List.of(new NodeSpec("worker", "False", List.of(outOfService("NoExecute", null)))),
                        List.of(new PodSpec("a", "Running", true, "worker"), new PodSpec("b", "Failed", true, "worker"),
                                new PodSpec("c", "Succeeded", true, "worker")),
                        Set.of("a", "b", "c"), Set.of("a")));
        for (Case c : cases) {
            Fixture f = new Fixture(-1);
            Instant creation = Instant.EPOCH;
            for (NodeSpec n : c.nodes()) {
                creation = creation.plus(Duration.ofHours(2));
                Node node = new NodeBuilder().withNewMetadata().withName(n.name()).withCreationTimestamp(creation.toString())
                        .endMetadata().withNewSpec().withTaints(n.taints()).endSpec().withNewStatus().addNewCondition()
                        .withType("Ready").withStatus(n.ready()).endCondition().endStatus().build();
                f.informerNodes.put(n.name(), node);
                f.api.clientNodes.add(n.name());
            }
            List<Pod> pods = new ArrayList<>();
            for (PodSpec p : c.pods()) {
                creation = creation.plus(Duration.ofHours(1));
                Pod pod = pod(p.name(), p.nodeName(), p.phase());
                pod.getMetadata().setCreationTimestamp(creation.toString());
                if (p.terminating()) {
                    pod.getMetadata().setDeletionTimestamp(Instant.EPOCH.toString());
                }
                pods.add(pod);
            }
            f.gc(pods);
            assertThat(f.api.deleted).as(c.name()).containsExactlyInAnyOrderElementsOf(c.deleted());
            assertThat(f.api.patched.keySet()).as(c.name()).containsExactlyInAnyOrderElementsOf(c.patched());
            assertThat(f.metrics.deletingCount("default", PodGCMetrics.REASON_TERMINATING_OUT_OF_SERVICE)).as(c.name())
                    .isEqualTo(c.deleted().size());
        }
    }

    @Test
    void orphanedPodIsPatchedFailedWithDisruptionTargetBeforeDeletion() throws Exception {
        Fixture f = new Fixture(-1, Duration.ZERO);
        Pod pod = new PodBuilder().withNewMetadata().withName("testPod").withNamespace("default").withUid("uid-1")
                .withGeneration(2L).endMetadata().withNewSpec().withNodeName("deletedNode").endSpec().withNewStatus()
                .withPhase("Running").withConditions(new PodConditionBuilder().withType("Ready").withStatus("True").build())
                .endStatus().build();
        f.gc(List.of(pod));
        assertThat(f.api.deleted).containsExactly("testPod");
        assertThat(f.api.patched).containsOnlyKeys("testPod");
        assertThat(f.api.patched.get("testPod")).isEqualTo("{\"metadata\":{\"uid\":\"uid-1\"},\"status\":{"
                + "\"$setElementOrder/conditions\":[{\"type\":\"Ready\"},{\"type\":\"DisruptionTarget\"}],"
                + "\"conditions\":[{\"lastProbeTime\":null,\"lastTransitionTime\":\"2026-05-06T07:08:09Z\","
                + "\"message\":\"PodGC: node no longer exists\",\"observedGeneration\":2,\"reason\":\"DeletionByPodGC\","
                + "\"status\":\"True\",\"type\":\"DisruptionTarget\"}],\"observedGeneration\":2,\"phase\":\"Failed\"}}");
        // the cached pod is left as it was
        assertThat(pod.getStatus().getConditions()).hasSize(1);
        assertThat(pod.getStatus().getPhase()).isEqualTo("Running");
    }

    @Test
    void aFailingDeletionIsCountedAndTheOthersGoOn() throws Exception {
        Fixture f = new Fixture(1);
        RecordingApi failing = new RecordingApi() {
            @Override
            public void deletePod(String namespace, String name) {
                if (name.equals("a")) {
                    throw new IllegalStateException("pods \"a\" not found");
                }
                super.deletePod(namespace, name);
            }
        };
        PodGC gc = new PodGC(failing, n -> null, 1, QUARANTINE, f.nodeQueue, f.metrics, Runnable::run, true, () -> NOW);
        List<Pod> pods = new ArrayList<>();
        for (String n : List.of("a", "b", "c")) {
            Pod p = pod(n, "", "Succeeded");
            p.getMetadata().setCreationTimestamp("2026-01-01T00:00:0" + pods.size() + "Z");
            pods.add(p);
        }
        gc.gc(pods, List.of());
        assertThat(failing.deleted).containsExactly("b");
        assertThat(f.metrics.deletingCount("default", PodGCMetrics.REASON_TERMINATED)).isEqualTo(2);
        assertThat(f.metrics.deletingErrorCount("default", PodGCMetrics.REASON_TERMINATED)).isEqualTo(1);
    }
}
