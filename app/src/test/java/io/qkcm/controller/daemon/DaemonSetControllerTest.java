package io.qkcm.controller.daemon;

import static io.qkcm.controller.daemon.DaemonTestSupport.activePods;
import static io.qkcm.controller.daemon.DaemonTestSupport.controllerRef;
import static io.qkcm.controller.daemon.DaemonTestSupport.createNode;
import static io.qkcm.controller.daemon.DaemonTestSupport.daemonSet;
import static io.qkcm.controller.daemon.DaemonTestSupport.targetNode;
import static io.qkcm.testing.TestNamespaces.newNamespace;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Taint;
import io.fabric8.kubernetes.api.model.Toleration;
import io.fabric8.kubernetes.api.model.apps.ControllerRevision;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.DaemonSetUpdateStrategy;
import io.fabric8.kubernetes.api.model.apps.DaemonSetUpdateStrategyBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.qkcm.controller.daemon.DaemonTestSupport.FakeNodes;
import io.qkcm.controller.history.ControllerHistory;
import io.qkcm.testing.RealApiServer;
import io.qkcm.testing.RealApiServerResource;
import io.qkcm.testing.TestKubelet;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;

/**
 * The DaemonSet controller against a real API server. There is no scheduler and no kubelet: the
 * tests create Node objects, and {@link FakeNodes} binds the daemon pods through the binding
 * subresource to the node their required node affinity names, then runs them.
 */
@QuarkusTest
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
@TestProfile(DaemonSetControllerTest.Profile.class)
class DaemonSetControllerTest {

    public static class Profile implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("qkcm.controllers", "daemonset-controller,garbage-collector-controller");
        }
    }

    private static final PatchContext MERGE = PatchContext.of(PatchType.JSON_MERGE);
    private static final PatchContext STRATEGIC = PatchContext.of(PatchType.STRATEGIC_MERGE);
    private static final Duration TIMEOUT = Duration.ofSeconds(90);

    static KubernetesClient client;
    private final List<String> nodes = new ArrayList<>();
    private final List<AutoCloseable> closeables = new ArrayList<>();

    @BeforeAll
    static void setUp() {
        client = RealApiServer.get().newClient();
    }

    @AfterAll
    static void tearDown() {
        client.close();
    }

    @AfterEach
    void cleanUp() throws Exception {
        for (AutoCloseable c : closeables) {
            c.close();
        }
        for (String n : nodes) {
            client.nodes().withName(n).delete();
        }
    }

    /** A unique node-selector label per test, so nodes of other tests are never eligible. */
    private static Map<String, String> pool(String test) {
        return Map.of("qkcm.test/pool", test + "-" + Long.toString(System.nanoTime() % 1_000_000L, 36));
    }

    private Node node(String name, Map<String, String> labels) {
        return node(name, labels, List.of());
    }

    private Node node(String name, Map<String, String> labels, List<Taint> taints) {
        String unique = name + "-" + Long.toString(System.nanoTime() % 1_000_000_000L, 36);
        nodes.add(unique);
        return createNode(client, unique, labels, taints);
    }

    private FakeNodes fakeNodes(String ns) {
        FakeNodes f = new FakeNodes(client, ns);
        closeables.add(f);
        return f;
    }

    private DaemonSet ds(String ns, String name) {
        return client.apps().daemonSets().inNamespace(ns).withName(name).get();
    }

    private List<Event> events(String ns, String involvedName) {
        return client.v1().events().inNamespace(ns).list().getItems().stream()
                .filter(e -> involvedName.equals(e.getInvolvedObject().getName())).toList();
    }

    private List<ControllerRevision> revisions(String ns) {
        return client.apps().controllerRevisions().inNamespace(ns).list().getItems();
    }

    private static DaemonSetUpdateStrategy rolling(IntOrString maxUnavailable, IntOrString maxSurge) {
        return new DaemonSetUpdateStrategyBuilder().withType("RollingUpdate").withNewRollingUpdate()
                .withMaxUnavailable(maxUnavailable).withMaxSurge(maxSurge).endRollingUpdate().build();
    }

    private static DaemonSetUpdateStrategy onDelete() {
        return new DaemonSetUpdateStrategyBuilder().withType("OnDelete").build();
    }

    private static Map<String, String> labels(String app) {
        return Map.of("app", app);
    }

    private void setImage(String ns, String name, String image) {
        io.qkcm.testing.Conflicts.retry(() -> client.apps().daemonSets().inNamespace(ns).withName(name).edit(d -> {
            d.getSpec().getTemplate().getSpec().getContainers().get(0).setImage(image);
            return d;
        }));
    }

    /** A change to the DaemonSet that makes the controller sync it, as any update would. */
    private void touch(String ns, String name) {
        client.apps().daemonSets().inNamespace(ns).withName(name)
                .patch(MERGE, "{\"metadata\":{\"annotations\":{\"touch\":\"" + System.nanoTime() + "\"}}}");
    }

    private static String hashOf(Pod p) {
        return p.getMetadata().getLabels().get("controller-revision-hash");
    }

    @Test
    void onePodPerEligibleNodeBoundByNodeAffinityWithLabelsStatusRevisionAndEvents() {
        String ns = newNamespace(client, "ds-basic");
        Map<String, String> pool = pool("basic");
        Node n1 = node("basic-a", pool);
        Node n2 = node("basic-b", pool);
        node("basic-other", Map.of("qkcm.test/pool", "elsewhere"));
        fakeNodes(ns);
        DaemonSet created = client.apps().daemonSets().inNamespace(ns)
                .resource(daemonSet("agent", labels("agent"), pool, rolling(new IntOrString(1), null))).create();

        await().atMost(TIMEOUT).untilAsserted(() -> {
            List<Pod> pods = activePods(client, ns);
            assertThat(pods).hasSize(2);
            assertThat(pods.stream().map(DaemonTestSupport::targetNode).collect(Collectors.toSet()))
                    .containsExactlyInAnyOrder(n1.getMetadata().getName(), n2.getMetadata().getName());
            DaemonSet ds = ds(ns, "agent");
            assertThat(ds.getStatus().getDesiredNumberScheduled()).isEqualTo(2);
            assertThat(ds.getStatus().getCurrentNumberScheduled()).isEqualTo(2);
            assertThat(ds.getStatus().getNumberReady()).isEqualTo(2);
            assertThat(ds.getStatus().getNumberAvailable()).isEqualTo(2);
            assertThat(ds.getStatus().getUpdatedNumberScheduled()).isEqualTo(2);
            assertThat(ds.getStatus().getNumberMisscheduled()).isZero();
            assertThat(ds.getStatus().getNumberUnavailable()).isNull(); // 0 is omitted
            assertThat(ds.getStatus().getObservedGeneration()).isEqualTo(ds.getMetadata().getGeneration());
        });
        List<ControllerRevision> revisions = revisions(ns);
        assertThat(revisions).hasSize(1);
        ControllerRevision rev = revisions.get(0);
        String hash = rev.getMetadata().getLabels().get("controller-revision-hash");
        assertThat(rev.getMetadata().getName()).isEqualTo("agent-" + hash);
        assertThat(rev.getRevision()).isEqualTo(1L);
        assertThat(rev.getMetadata().getLabels()).containsEntry("app", "agent");
        assertThat(ControllerHistory.rawData(rev)).isEqualTo(RevisionData.getPatch(ds(ns, "agent")));
        assertThat(rev.getMetadata().getOwnerReferences()).singleElement()
                .satisfies(r -> assertThat(r.getUid()).isEqualTo(created.getMetadata().getUid()));

        for (Pod p : activePods(client, ns)) {
            assertThat(p.getMetadata().getGenerateName()).isEqualTo("agent-");
            assertThat(p.getMetadata().getLabels()).containsEntry("app", "agent")
                    .containsEntry("controller-revision-hash", hash).containsEntry("pod-template-generation", "1");
            OwnerReference ref = controllerRef(p);
            assertThat(ref.getKind()).isEqualTo("DaemonSet");
            assertThat(ref.getApiVersion()).isEqualTo("apps/v1");
            assertThat(ref.getUid()).isEqualTo(created.getMetadata().getUid());
            assertThat(ref.getBlockOwnerDeletion()).isTrue();
            var required = p.getSpec().getAffinity().getNodeAffinity().getRequiredDuringSchedulingIgnoredDuringExecution();
            assertThat(required.getNodeSelectorTerms()).singleElement().satisfies(t -> {
                assertThat(t.getMatchExpressions()).isNullOrEmpty();
                assertThat(t.getMatchFields()).singleElement().satisfies(f -> {
                    assertThat(f.getKey()).isEqualTo("metadata.name");
                    assertThat(f.getOperator()).isEqualTo("In");
                    assertThat(f.getValues()).containsExactly(p.getSpec().getNodeName());
                });
            });
            assertThat(p.getSpec().getTolerations()).extracting(Toleration::getKey).containsExactly(
                    "node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable", "node.kubernetes.io/disk-pressure",
                    "node.kubernetes.io/memory-pressure", "node.kubernetes.io/pid-pressure",
                    "node.kubernetes.io/unschedulable");
        }
        Set<String> podNames = activePods(client, ns).stream().map(p -> p.getMetadata().getName()).collect(Collectors.toSet());
        await().atMost(TIMEOUT).untilAsserted(() -> assertThat(events(ns, "agent").stream()
                .filter(e -> "SuccessfulCreate".equals(e.getReason())).map(Event::getMessage).collect(Collectors.toSet()))
                .isEqualTo(podNames.stream().map(n -> "Created pod: " + n).collect(Collectors.toSet())));
        assertThat(events(ns, "agent").get(0).getSource().getComponent()).isEqualTo("daemonset-controller");
    }

    @Test
    void nodesAddedTaintedRelabelledAndDeletedGainAndLosePodsAsUpstream() {
        String ns = newNamespace(client, "ds-nodes");
        Map<String, String> pool = pool("nodes");
        Node a = node("nodes-a", pool);
        FakeNodes fake = fakeNodes(ns);
        client.apps().daemonSets().inNamespace(ns)
                .resource(daemonSet("agent", labels("agent"), pool, rolling(new IntOrString(1), null))).create();
        await().atMost(TIMEOUT).untilAsserted(() -> assertThat(activePods(client, ns)).hasSize(1));

        // a node added gets a pod
        Node b = node("nodes-b", pool);
        String bName = b.getMetadata().getName();
        await().atMost(TIMEOUT).untilAsserted(() -> assertThat(activePods(client, ns))
                .extracting(DaemonTestSupport::targetNode).containsExactlyInAnyOrder(a.getMetadata().getName(), bName));

        // NoSchedule without toleration: the running pod stays (shouldContinueRunning), a new node gets none
        client.nodes().withName(bName).edit(n -> {
            n.getSpec().setTaints(List.of(new Taint("NoSchedule", "dedicated", null, "gpu")));
            return n;
        });
        Node c = node("nodes-c", pool, List.of(new Taint("NoSchedule", "dedicated", null, "gpu")));
        await().atMost(TIMEOUT).untilAsserted(() -> {
            // upstream's syncNodeUpdate queues the DaemonSet for neither node (b keeps its pod, c gets none, nothing
            // misscheduled yet): the status follows at the DaemonSet's next sync (here: a touch)
            touch(ns, "agent");
            assertThat(activePods(client, ns)).extracting(DaemonTestSupport::targetNode)
                    .containsExactlyInAnyOrder(a.getMetadata().getName(), bName);
            DaemonSet ds = ds(ns, "agent");
            assertThat(ds.getStatus().getDesiredNumberScheduled()).isEqualTo(1);
            assertThat(ds.getStatus().getNumberMisscheduled()).isEqualTo(1);
        });
        // NoExecute on b: its pod goes
        client.nodes().withName(bName).edit(n -> {
            n.getSpec().setTaints(List.of(new Taint("NoExecute", "dedicated", null, "gpu")));
            return n;
        });
        await().atMost(TIMEOUT).untilAsserted(() -> {
            assertThat(activePods(client, ns)).extracting(DaemonTestSupport::targetNode)
                    .containsExactly(a.getMetadata().getName());
            DaemonSet ds = ds(ns, "agent");
            assertThat(ds.getStatus().getDesiredNumberScheduled()).isEqualTo(1);
            assertThat(ds.getStatus().getNumberMisscheduled()).isZero();
        });

        // a tolerating DaemonSet runs on the tainted nodes too
        io.qkcm.testing.Conflicts.retry(() -> client.apps().daemonSets().inNamespace(ns).withName("agent").edit(d -> {
            d.getSpec().getTemplate().getSpec().setTolerations(List.of(new Toleration(null, "dedicated", "Exists", null, null)));
            return d;
        }));
        await().atMost(TIMEOUT).untilAsserted(() -> assertThat(activePods(client, ns))
                .extracting(DaemonTestSupport::targetNode)
                .containsExactlyInAnyOrder(a.getMetadata().getName(), bName, c.getMetadata().getName()));

        // nodeSelector: a node losing the label loses its pod
        client.nodes().withName(bName).edit(n -> {
            n.getMetadata().getLabels().remove("qkcm.test/pool");
            return n;
        });
        await().atMost(TIMEOUT).untilAsserted(() -> assertThat(activePods(client, ns))
                .extracting(DaemonTestSupport::targetNode)
                .containsExactlyInAnyOrder(a.getMetadata().getName(), c.getMetadata().getName()));

        // a node deleted: its bound pod is the pod GC's (not running here), so remove it as that would;
        // no replacement follows, and the status drops the node
        String cName = c.getMetadata().getName();
        // no scheduler binds a pod to a deleted node
        fake.deadNodes.add(cName);
        client.nodes().withName(cName).delete();
        for (Pod p : activePods(client, ns)) {
            if (cName.equals(p.getSpec().getNodeName())) {
                client.pods().inNamespace(ns).withName(p.getMetadata().getName()).withGracePeriod(0).delete();
            }
        }
        // the controller may have replaced the deleted pod before its cache lost the node: that pod is
        // unbound, and upstream (no node delete handler) removes it at the DaemonSet's next sync
        await().atMost(TIMEOUT).untilAsserted(() -> {
            client.apps().daemonSets().inNamespace(ns).withName("agent")
                    .patch(MERGE, "{\"metadata\":{\"annotations\":{\"touch\":\"" + System.nanoTime() + "\"}}}");
            assertThat(activePods(client, ns)).extracting(DaemonTestSupport::targetNode)
                    .containsExactly(a.getMetadata().getName());
            assertThat(ds(ns, "agent").getStatus().getDesiredNumberScheduled()).isEqualTo(1);
        });

        // a pending pod whose node is deleted (never bound) is deleted by the DaemonSet controller itself
        Node d = node("nodes-d", pool);
        String dName = d.getMetadata().getName();
        fake.deadNodes.add(dName);
        await().atMost(TIMEOUT).untilAsserted(() -> assertThat(activePods(client, ns))
                .extracting(DaemonTestSupport::targetNode).contains(dName));
        client.nodes().withName(dName).delete();
        // upstream has no node delete handler: the next sync of the DaemonSet (here: a label on it) cleans up
        await().atMost(TIMEOUT).untilAsserted(() -> {
            client.apps().daemonSets().inNamespace(ns).withName("agent")
                    .patch(MERGE, "{\"metadata\":{\"annotations\":{\"touch\":\"" + System.nanoTime() + "\"}}}");
            assertThat(activePods(client, ns)).extracting(DaemonTestSupport::targetNode)
                    .containsExactly(a.getMetadata().getName());
        });
    }

    @Test
    void aFailedPodIsReplacedWithBackoffAndFailedDaemonPodEvents() {
        String ns = newNamespace(client, "ds-failed");
        Map<String, String> pool = pool("failed");
        node("failed-a", pool);
        fakeNodes(ns);
        client.apps().daemonSets().inNamespace(ns)
                .resource(daemonSet("agent", labels("agent"), pool, rolling(new IntOrString(1), null))).create();
        await().atMost(TIMEOUT).untilAsserted(() -> {
            List<Pod> pods = activePods(client, ns);
            assertThat(pods).hasSize(1);
            assertThat(pods.get(0).getStatus().getPhase()).isEqualTo("Running");
        });
        Set<String> failed = new java.util.HashSet<>();
        for (int round = 0; round < 3; round++) {
            Pod pod = activePods(client, ns).get(0);
            new TestKubelet(client, pod.getSpec().getNodeName()).failed(pod);
            failed.add(pod.getMetadata().getName());
            await().atMost(TIMEOUT).untilAsserted(() -> {
                assertThat(client.pods().inNamespace(ns).list().getItems()).noneMatch(p -> failed.contains(p.getMetadata().getName()));
                List<Pod> pods = activePods(client, ns);
                assertThat(pods).hasSize(1);
                assertThat(pods.get(0).getStatus().getPhase()).isEqualTo("Running");
            });
        }
        List<Event> failedEvents = events(ns, "agent").stream().filter(e -> "FailedDaemonPod".equals(e.getReason())).toList();
        assertThat(failedEvents).hasSize(3).allSatisfy(e -> {
            assertThat(e.getType()).isEqualTo("Warning");
            assertThat(e.getMessage()).matches("Found failed daemon pod " + ns + "/agent-[a-z0-9]{5} on node failed-a-[a-z0-9]+, will try to kill it");
        });
        // one creation per failure, no hot loop
        assertThat(events(ns, "agent").stream().filter(e -> "SuccessfulCreate".equals(e.getReason()))
                .mapToInt(e -> e.getCount() == null ? 1 : e.getCount()).sum()).isEqualTo(4);
        assertThat(events(ns, "agent").stream().filter(e -> "SuccessfulDelete".equals(e.getReason()))
                .mapToInt(e -> e.getCount() == null ? 1 : e.getCount()).sum()).isEqualTo(3);
    }

    /** Counts, per node, the live (not terminating) pods seen at once by a watch, to check upper bounds. */
    private static final class PodsPerNode implements Watcher<Pod> {
        final Map<String, Pod> live = new ConcurrentHashMap<>();
        final Set<String> uids = ConcurrentHashMap.newKeySet();
        volatile int maxPerNode;
        volatile int maxUnavailable;

        @Override
        public synchronized void eventReceived(Action action, Pod pod) {
            uids.add(pod.getMetadata().getUid());
            if (action == Action.DELETED || pod.getMetadata().getDeletionTimestamp() != null) {
                live.remove(pod.getMetadata().getName());
            } else {
                live.put(pod.getMetadata().getName(), pod);
            }
            Map<String, Integer> perNode = new HashMap<>();
            for (Pod p : live.values()) {
                perNode.merge(String.valueOf(targetNode(p)), 1, Integer::sum);
            }
            maxPerNode = Math.max(maxPerNode, perNode.values().stream().max(Comparator.naturalOrder()).orElse(0));
        }

        @Override
        public void onClose(WatcherException cause) {
        }
    }

    @Test
    void rollingUpdateWithMaxUnavailableOneUpdatesEveryPodAndKeepsHistory() {
        String ns = newNamespace(client, "ds-rolling");
        Map<String, String> pool = pool("rolling");
        node("rolling-a", pool);
        node("rolling-b", pool);
        node("rolling-c", pool);
        fakeNodes(ns);
        client.apps().daemonSets().inNamespace(ns)
                .resource(daemonSet("agent", labels("agent"), pool, rolling(new IntOrString(1), null))).create();
        await().atMost(TIMEOUT).untilAsserted(() -> assertThat(ds(ns, "agent").getStatus().getNumberAvailable()).isEqualTo(3));
        String oldHash = hashOf(activePods(client, ns).get(0));
        PodsPerNode watcher = new PodsPerNode();
        try (Watch w = client.pods().inNamespace(ns).watch(watcher)) {
            setImage(ns, "agent", "registry.k8s.io/pause:3.9");
            await().atMost(TIMEOUT).untilAsserted(() -> {
                DaemonSet ds = ds(ns, "agent");
                assertThat(ds.getStatus().getObservedGeneration()).isEqualTo(2L);
                assertThat(ds.getStatus().getUpdatedNumberScheduled()).isEqualTo(3);
                assertThat(ds.getStatus().getNumberAvailable()).isEqualTo(3);
                List<Pod> pods = activePods(client, ns);
                assertThat(pods).hasSize(3).allSatisfy(p -> {
                    assertThat(hashOf(p)).isNotEqualTo(oldHash);
                    assertThat(p.getMetadata().getLabels()).containsEntry("pod-template-generation", "2");
                    assertThat(p.getSpec().getContainers().get(0).getImage()).isEqualTo("registry.k8s.io/pause:3.9");
                });
            });
            // maxUnavailable 1 without surge: never two pods on a node
            assertThat(watcher.maxPerNode).isEqualTo(1);
        }
        List<ControllerRevision> revs = revisions(ns);
        assertThat(revs).hasSize(2);
        Map<Long, ControllerRevision> byRevision = revs.stream()
                .collect(Collectors.toMap(ControllerRevision::getRevision, r -> r));
        assertThat(byRevision.get(1L).getMetadata().getLabels()).containsEntry("controller-revision-hash", oldHash);
        String newHash = hashOf(activePods(client, ns).get(0));
        assertThat(byRevision.get(2L).getMetadata().getName()).isEqualTo("agent-" + newHash);

        // kubectl rollout undo: the template of revision 1 patched back; the revision is reused as 3
        String undo = ControllerHistory.rawData(byRevision.get(1L));
        client.apps().daemonSets().inNamespace(ns).withName("agent").patch(STRATEGIC, undo);
        await().atMost(TIMEOUT).untilAsserted(() -> {
            List<ControllerRevision> now = revisions(ns);
            assertThat(now).hasSize(2);
            assertThat(now.stream().filter(r -> r.getMetadata().getName().equals("agent-" + oldHash)).findFirst()
                    .orElseThrow().getRevision()).isEqualTo(3L);
            List<Pod> pods = activePods(client, ns);
            assertThat(pods).hasSize(3).allSatisfy(p -> assertThat(hashOf(p)).isEqualTo(oldHash));
            assertThat(ds(ns, "agent").getStatus().getUpdatedNumberScheduled()).isEqualTo(3);
        });
        assertThat(events(ns, "agent")).noneMatch(e -> "Warning".equals(e.getType()));
    }

    @Test
    void revisionHistoryLimitCleansUpOldRevisions() {
        String ns = newNamespace(client, "ds-history");
        Map<String, String> pool = pool("history");
        node("history-a", pool);
        fakeNodes(ns);
        DaemonSet ds = daemonSet("agent", labels("agent"), pool, rolling(new IntOrString(1), null));
        ds.getSpec().setRevisionHistoryLimit(1);
        client.apps().daemonSets().inNamespace(ns).resource(ds).create();
        for (int i = 1; i <= 3; i++) {
            String image = "registry.k8s.io/pause:3." + i;
            setImage(ns, "agent", image);
            await().atMost(TIMEOUT).untilAsserted(() -> {
                DaemonSet cur = ds(ns, "agent");
                assertThat(cur.getStatus().getObservedGeneration()).isEqualTo(cur.getMetadata().getGeneration());
                assertThat(cur.getStatus().getUpdatedNumberScheduled()).isEqualTo(1);
                assertThat(activePods(client, ns)).singleElement()
                        .satisfies(p -> assertThat(p.getSpec().getContainers().get(0).getImage()).isEqualTo(image));
            });
        }
        // the current revision and one old one
        await().atMost(TIMEOUT).untilAsserted(() -> assertThat(revisions(ns)).extracting(ControllerRevision::getRevision)
                .containsExactlyInAnyOrder(3L, 4L));
    }

    @Test
    void onDeleteReplacesOnlyDeletedPods() {
        String ns = newNamespace(client, "ds-ondelete");
        Map<String, String> pool = pool("ondelete");
        node("ondelete-a", pool);
        node("ondelete-b", pool);
        fakeNodes(ns);
        client.apps().daemonSets().inNamespace(ns).resource(daemonSet("agent", labels("agent"), pool, onDelete())).create();
        await().atMost(TIMEOUT).untilAsserted(() -> assertThat(ds(ns, "agent").getStatus().getNumberAvailable()).isEqualTo(2));
        Set<String> before = activePods(client, ns).stream().map(p -> p.getMetadata().getName()).collect(Collectors.toSet());
        String oldHash = hashOf(activePods(client, ns).get(0));
        setImage(ns, "agent", "registry.k8s.io/pause:3.9");
        // the sync that observed generation 2 has already run manage: nothing was replaced
        await().atMost(TIMEOUT).untilAsserted(() -> {
            DaemonSet ds = ds(ns, "agent");
            assertThat(ds.getStatus().getObservedGeneration()).isEqualTo(2L);
            assertThat(ds.getStatus().getUpdatedNumberScheduled()).isNull();
        });
        assertThat(activePods(client, ns).stream().map(p -> p.getMetadata().getName()).collect(Collectors.toSet()))
                .isEqualTo(before);
        String victim = before.iterator().next();
        client.pods().inNamespace(ns).withName(victim).delete();
        await().atMost(TIMEOUT).untilAsserted(() -> {
            List<Pod> pods = activePods(client, ns);
            assertThat(pods).hasSize(2);
            assertThat(pods).extracting(p -> p.getMetadata().getName()).doesNotContain(victim);
            assertThat(pods.stream().filter(p -> !hashOf(p).equals(oldHash)).count()).isEqualTo(1);
            assertThat(ds(ns, "agent").getStatus().getUpdatedNumberScheduled()).isEqualTo(1);
        });

        // deleting the DaemonSet: the garbage collector removes its pods and revisions
        client.apps().daemonSets().inNamespace(ns).withName("agent").delete();
        await().atMost(TIMEOUT).untilAsserted(() -> {
            assertThat(client.pods().inNamespace(ns).list().getItems()).isEmpty();
            assertThat(revisions(ns)).isEmpty();
        });
    }

    @Test
    void maxSurgeStartsTheNewPodBeforeTheOldOneGoes() {
        String ns = newNamespace(client, "ds-surge");
        Map<String, String> pool = pool("surge");
        Node a = node("surge-a", pool);
        node("surge-b", pool);
        FakeNodes fake = fakeNodes(ns);
        client.apps().daemonSets().inNamespace(ns)
                .resource(daemonSet("agent", labels("agent"), pool, rolling(new IntOrString(0), new IntOrString(1))))
                .create();
        await().atMost(TIMEOUT).untilAsserted(() -> assertThat(ds(ns, "agent").getStatus().getNumberAvailable()).isEqualTo(2));
        String oldHash = hashOf(activePods(client, ns).get(0));
        PodsPerNode watcher = new PodsPerNode();
        try (Watch w = client.pods().inNamespace(ns).watch(watcher)) {
            // new pods stay unready: one node surges (two pods), the other waits (maxSurge 1)
            fake.pause(true);
            setImage(ns, "agent", "registry.k8s.io/pause:3.9");
            await().atMost(TIMEOUT).untilAsserted(() -> {
                List<Pod> pods = activePods(client, ns);
                assertThat(pods).hasSize(3);
                assertThat(pods.stream().filter(p -> !hashOf(p).equals(oldHash)).count()).isEqualTo(1);
            });
            Pod surged = activePods(client, ns).stream().filter(p -> !hashOf(p).equals(oldHash)).findFirst().orElseThrow();
            String surgedNode = targetNode(surged);
            assertThat(activePods(client, ns).stream().filter(p -> surgedNode.equals(targetNode(p))).count()).isEqualTo(2);
            fake.pause(false);
            await().atMost(TIMEOUT).untilAsserted(() -> {
                List<Pod> pods = activePods(client, ns);
                assertThat(pods).hasSize(2).allSatisfy(p -> assertThat(hashOf(p)).isNotEqualTo(oldHash));
                DaemonSet ds = ds(ns, "agent");
                assertThat(ds.getStatus().getUpdatedNumberScheduled()).isEqualTo(2);
                assertThat(ds.getStatus().getNumberAvailable()).isEqualTo(2);
            });
            assertThat(watcher.maxPerNode).isEqualTo(2);
        }
        assertThat(a).isNotNull();
    }

    /**
     * A node disappears in the middle of a rollout (its bound pod removed as the pod GC would): the
     * rollout goes on over the nodes left, no pod is created for the deleted node, and the status ends
     * at the remaining nodes, all updated and available.
     */
    @Test
    void aNodeDeletedMidRolloutLeavesTheRolloutToFinishOnTheOthers() {
        String ns = newNamespace(client, "ds-node-gone");
        Map<String, String> pool = pool("gone");
        node("gone-a", pool);
        node("gone-b", pool);
        Node c = node("gone-c", pool);
        FakeNodes fake = fakeNodes(ns);
        client.apps().daemonSets().inNamespace(ns)
                .resource(daemonSet("agent", labels("agent"), pool, rolling(new IntOrString(1), null))).create();
        await().atMost(TIMEOUT).untilAsserted(() -> assertThat(ds(ns, "agent").getStatus().getNumberAvailable()).isEqualTo(3));
        String oldHash = hashOf(activePods(client, ns).get(0));
        setImage(ns, "agent", "registry.k8s.io/pause:3.9");
        // the rollout has begun: the first node's pod is being replaced
        await().atMost(TIMEOUT).untilAsserted(() -> assertThat(client.pods().inNamespace(ns).list().getItems())
                .anyMatch(p -> !hashOf(p).equals(oldHash) || p.getMetadata().getDeletionTimestamp() != null));
        String cName = c.getMetadata().getName();
        fake.deadNodes.add(cName);
        client.nodes().withName(cName).delete();
        for (Pod p : activePods(client, ns)) {
            if (cName.equals(targetNode(p))) {
                client.pods().inNamespace(ns).withName(p.getMetadata().getName()).withGracePeriod(0).delete();
            }
        }
        await().atMost(TIMEOUT).untilAsserted(() -> {
            // upstream has no node delete handler: a pod recreated for the node before the controller's
            // cache lost it is removed at the DaemonSet's next sync (here: a touch)
            client.apps().daemonSets().inNamespace(ns).withName("agent")
                    .patch(MERGE, "{\"metadata\":{\"annotations\":{\"touch\":\"" + System.nanoTime() + "\"}}}");
            List<Pod> pods = activePods(client, ns);
            assertThat(pods).extracting(DaemonTestSupport::targetNode).doesNotContain(cName).hasSize(2);
            assertThat(pods).allSatisfy(p -> assertThat(hashOf(p)).isNotEqualTo(oldHash));
            DaemonSet ds = ds(ns, "agent");
            assertThat(ds.getStatus().getDesiredNumberScheduled()).isEqualTo(2);
            assertThat(ds.getStatus().getUpdatedNumberScheduled()).isEqualTo(2);
            assertThat(ds.getStatus().getNumberAvailable()).isEqualTo(2);
            assertThat(ds.getStatus().getNumberUnavailable() == null ? 0 : ds.getStatus().getNumberUnavailable()).isZero();
        });
    }

    @Test
    void kubectlRolloutStatusHistoryUndoAndRestart() throws Exception {
        String ns = newNamespace(client, "ds-kubectl");
        Map<String, String> pool = pool("kubectl");
        node("kubectl-a", pool);
        node("kubectl-b", pool);
        fakeNodes(ns);
        java.nio.file.Path kubeconfig = RealApiServer.get().kubeconfig();
        client.apps().daemonSets().inNamespace(ns)
                .resource(daemonSet("agent", labels("agent"), pool, rolling(new IntOrString(1), null))).create();
        DaemonTestSupport.Result r = DaemonTestSupport.kubectl(kubeconfig, Duration.ofSeconds(90), "-n", ns, "rollout",
                "status", "daemonset/agent", "--timeout=80s");
        assertThat(r.exitCode()).as(r.output()).isZero();
        assertThat(r.output()).contains("daemon set \"agent\" successfully rolled out");

        r = DaemonTestSupport.kubectl(kubeconfig, Duration.ofSeconds(30), "-n", ns, "set", "image", "daemonset/agent",
                "app=registry.k8s.io/pause:3.9");
        assertThat(r.exitCode()).as(r.output()).isZero();
        r = DaemonTestSupport.kubectl(kubeconfig, Duration.ofSeconds(90), "-n", ns, "rollout", "status", "daemonset/agent",
                "--timeout=80s");
        assertThat(r.exitCode()).as(r.output()).isZero();
        assertThat(r.output()).contains("successfully rolled out");

        r = DaemonTestSupport.kubectl(kubeconfig, Duration.ofSeconds(30), "-n", ns, "rollout", "history", "daemonset/agent");
        assertThat(r.exitCode()).as(r.output()).isZero();
        assertThat(r.output()).containsPattern("(?m)^1\\s").containsPattern("(?m)^2\\s");
        r = DaemonTestSupport.kubectl(kubeconfig, Duration.ofSeconds(30), "-n", ns, "rollout", "history", "daemonset/agent",
                "--revision=1");
        assertThat(r.exitCode()).as(r.output()).isZero();
        assertThat(r.output()).contains("registry.k8s.io/pause:3.10");

        r = DaemonTestSupport.kubectl(kubeconfig, Duration.ofSeconds(30), "-n", ns, "rollout", "undo", "daemonset/agent");
        assertThat(r.exitCode()).as(r.output()).isZero();
        assertThat(r.output()).contains("rolled back");
        r = DaemonTestSupport.kubectl(kubeconfig, Duration.ofSeconds(90), "-n", ns, "rollout", "status", "daemonset/agent",
                "--timeout=80s");
        assertThat(r.exitCode()).as(r.output()).isZero();
        await().atMost(TIMEOUT).untilAsserted(() -> assertThat(activePods(client, ns)).hasSize(2).allSatisfy(
                p -> assertThat(p.getSpec().getContainers().get(0).getImage()).isEqualTo("registry.k8s.io/pause:3.10")));
        r = DaemonTestSupport.kubectl(kubeconfig, Duration.ofSeconds(30), "-n", ns, "rollout", "history", "daemonset/agent");
        assertThat(r.output()).containsPattern("(?m)^2\\s").containsPattern("(?m)^3\\s").doesNotContainPattern("(?m)^1\\s");

        r = DaemonTestSupport.kubectl(kubeconfig, Duration.ofSeconds(30), "-n", ns, "rollout", "restart", "daemonset/agent");
        assertThat(r.exitCode()).as(r.output()).isZero();
        r = DaemonTestSupport.kubectl(kubeconfig, Duration.ofSeconds(90), "-n", ns, "rollout", "status", "daemonset/agent",
                "--timeout=80s");
        assertThat(r.exitCode()).as(r.output()).isZero();
        await().atMost(TIMEOUT).untilAsserted(() -> assertThat(activePods(client, ns)).hasSize(2).allSatisfy(
                p -> assertThat(p.getMetadata().getAnnotations()).containsKey("kubectl.kubernetes.io/restartedAt")));
        assertThat(revisions(ns)).extracting(ControllerRevision::getRevision).containsExactlyInAnyOrder(2L, 3L, 4L);
    }

    @Test
    void matchingOrphansAreAdoptedAndPodsThatStopMatchingAreReleased() {
        String ns = newNamespace(client, "ds-adopt");
        Map<String, String> pool = pool("adopt");
        Node a = node("adopt-a", pool);
        Node b = node("adopt-b", pool);
        fakeNodes(ns);
        // an orphan that matches the selector, already running on node a
        Pod orphan = client.pods().inNamespace(ns).resource(new io.fabric8.kubernetes.api.model.PodBuilder()
                .withNewMetadata().withName("orphan").withLabels(labels("agent")).endMetadata().withNewSpec()
                .addNewContainer().withName("app").withImage("registry.k8s.io/pause:3.10").endContainer().endSpec().build())
                .create();
        new TestKubelet(client, a.getMetadata().getName()).runningAndReady(orphan);
        DaemonSet created = client.apps().daemonSets().inNamespace(ns)
                .resource(daemonSet("agent", labels("agent"), pool, onDelete())).create();
        await().atMost(TIMEOUT).untilAsserted(() -> {
            Pod adopted = client.pods().inNamespace(ns).withName("orphan").get();
            assertThat(controllerRef(adopted)).isNotNull()
                    .satisfies(r -> assertThat(r.getUid()).isEqualTo(created.getMetadata().getUid()));
            List<Pod> pods = activePods(client, ns);
            assertThat(pods).hasSize(2);
            assertThat(pods).extracting(DaemonTestSupport::targetNode)
                    .containsExactlyInAnyOrder(a.getMetadata().getName(), b.getMetadata().getName());
            assertThat(ds(ns, "agent").getStatus().getCurrentNumberScheduled()).isEqualTo(2);
        });
        // the adopted pod stops matching: released, and node a gets a new daemon pod
        io.qkcm.testing.Conflicts.retry(() -> client.pods().inNamespace(ns).withName("orphan").edit(p -> {
            p.getMetadata().setLabels(Map.of("app", "other"));
            return p;
        }));
        await().atMost(TIMEOUT).untilAsserted(() -> {
            assertThat(client.pods().inNamespace(ns).withName("orphan").get().getMetadata().getOwnerReferences())
                    .isNullOrEmpty();
            List<Pod> owned = activePods(client, ns).stream().filter(p -> controllerRef(p) != null).toList();
            assertThat(owned).extracting(DaemonTestSupport::targetNode)
                    .containsExactlyInAnyOrder(a.getMetadata().getName(), b.getMetadata().getName());
        });
        // an orphaned revision matching the selector is adopted too
        ControllerRevision rev = revisions(ns).get(0);
        io.qkcm.testing.Conflicts.retry(() -> client.apps().controllerRevisions().inNamespace(ns).withName(rev.getMetadata().getName()).edit(r -> {
            r.getMetadata().setOwnerReferences(null);
            return r;
        }));
        client.apps().daemonSets().inNamespace(ns).withName("agent")
                .patch(MERGE, "{\"metadata\":{\"annotations\":{\"touch\":\"1\"}}}");
        await().atMost(TIMEOUT).untilAsserted(() -> assertThat(revisions(ns)).singleElement().satisfies(r -> assertThat(
                r.getMetadata().getOwnerReferences()).singleElement()
                .satisfies(o -> assertThat(o.getUid()).isEqualTo(created.getMetadata().getUid()))));
    }
}
