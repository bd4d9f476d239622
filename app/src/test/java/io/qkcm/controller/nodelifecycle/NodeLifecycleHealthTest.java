package io.qkcm.controller.nodelifecycle;

import static io.qkcm.testing.TestNamespaces.newNamespace;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

import jakarta.inject.Inject;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.NodeCondition;
import io.fabric8.kubernetes.api.model.NodeConditionBuilder;
import io.fabric8.kubernetes.api.model.NodeStatusBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Taint;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.qkcm.controller.PodUtil;
import io.qkcm.controller.nodelifecycle.metrics.NodeLifecycleMetrics;
import io.qkcm.testing.ControllerHarness;
import io.qkcm.testing.ManagerOffProfile;
import io.qkcm.testing.RealApiServer;
import io.qkcm.testing.RealApiServerResource;
import io.qkcm.testing.TestKubelet;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.vertx.core.Vertx;

/**
 * Node health monitoring against a real API server, after upstream's node_lifecycle_controller_test
 * (TestMonitorNodeHealthUpdateNodeAndPodStatusWithLease, TestApplyNoExecuteTaintsToUnreachableNode,
 * TestSwapUnreachableNotReadyTaints, TestMonitorNodeHealth's zones, TestProcessPodMarkPodNotReady): the
 * controller is built as the manager builds it, on a clock the test sets, and its health and tainting
 * passes are run by hand, as upstream's tests call monitorNodeHealth and doNoExecuteTaintingPass. Leases,
 * node statuses and pods are written as a kubelet would.
 */
@QuarkusTest
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
@TestProfile(ManagerOffProfile.class)
class NodeLifecycleHealthTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final String LEASE_NS = "kube-node-lease";

    @Inject
    Vertx vertx;

    static KubernetesClient client;
    private final List<String> nodes = new ArrayList<>();
    private ControllerHarness<NodeLifecycleController> harness;
    private MutableClock clock;
    private String anchor;

    @BeforeAll
    static void setUp() {
        client = RealApiServer.get().newClient();
        if (client.namespaces().withName(LEASE_NS).get() == null) {
            client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(LEASE_NS).endMetadata().build())
                    .create();
        }
    }

    @AfterAll
    static void tearDown() {
        client.close();
    }

    @AfterEach
    void cleanUp() {
        if (harness != null) {
            harness.close();
        }
        for (String n : nodes) {
            client.nodes().withName(n).delete();
            client.leases().inNamespace(LEASE_NS).withName(n).delete();
        }
    }

    // ---- scenarios ----

    @Test
    void silentNodeBecomesUnknownGetsUnreachableTaintAndItsPodsNotReadyThenComesBack() throws Exception {
        String zone = "zone-" + suffix();
        clock = new MutableClock(now());
        String name = node("lease", zone, List.of(condition("Ready", "True", clock.instant()),
                condition("MemoryPressure", "False", clock.instant())));
        renewLease(name, clock.instant());
        String ns = newNamespace(client, "nlc-health");
        Pod pod = new TestKubelet(client, name).runningAndReady(pod(ns, "on-node"));
        anchor();
        start(settings(50, 1000));
        cached(name, n -> true);

        pass();
        assertThat(event(name, "RegisteredNode")).isEqualTo("Node " + name + " event: Registered Node " + name
                + " in Controller");
        assertThat(readyOf(get(name))).isEqualTo("True");

        // the Lease keeps the node healthy, however old its status' heartbeat: a renewal seen is a probe
        clock.advance(Duration.ofSeconds(40));
        renewLease(name, clock.instant());
        cachedLease(name);
        pass();
        clock.advance(Duration.ofSeconds(40));
        pass();
        assertThat(readyOf(get(name))).as("renewal seen 40s ago, grace 50s").isEqualTo("True");

        // neither Lease nor status for longer than the grace period
        await().atMost(TIMEOUT).until(() -> cachedPod(ns, "on-node") != null && PodUtil.isReady(cachedPod(ns, "on-node")));
        clock.advance(Duration.ofSeconds(11));
        pass();
        Node unknown = get(name);
        assertThat(conditionOf(unknown, "Ready")).satisfies(c -> {
            assertThat(c.getStatus()).isEqualTo("Unknown");
            assertThat(c.getReason()).isEqualTo("NodeStatusUnknown");
            assertThat(c.getMessage()).isEqualTo("Kubelet stopped posting node status.");
            assertThat(Instant.parse(c.getLastTransitionTime())).isEqualTo(clock.instant().truncatedTo(ChronoUnit.SECONDS));
        });
        assertThat(conditionOf(unknown, "MemoryPressure").getReason()).isEqualTo("NodeStatusUnknown");
        for (String never : List.of("DiskPressure", "PIDPressure")) {
            assertThat(conditionOf(unknown, never)).as(never).satisfies(c -> {
                assertThat(c.getStatus()).isEqualTo("Unknown");
                assertThat(c.getReason()).isEqualTo("NodeStatusNeverUpdated");
                assertThat(c.getMessage()).isEqualTo("Kubelet never posted node status.");
                assertThat(c.getLastHeartbeatTime()).isEqualTo(unknown.getMetadata().getCreationTimestamp());
            });
        }
        assertThat(conditionOf(unknown, "NetworkUnavailable")).as("left to the control plane").isNull();
        assertThat(event(name, "NodeNotReady")).isEqualTo("Node " + name + " status is now: NodeNotReady");
        Pod notReady = client.pods().inNamespace(ns).withName("on-node").get();
        assertThat(PodUtil.readyCondition(notReady).getStatus()).isEqualTo("False");
        await().atMost(TIMEOUT).until(() -> !client.v1().events().inNamespace(ns).list().getItems().stream()
                .filter(e -> "NodeNotReady".equals(e.getReason()) && "Warning".equals(e.getType())
                        && "Node is not ready".equals(e.getMessage()))
                .toList().isEmpty());
        assertThat(noExecute(name)).as("tainted only by the tainting pass").isEmpty();

        cached(name, n -> "Unknown".equals(readyOf(n)));
        monitor().doNoExecuteTaintingPass();
        Node tainted = get(name);
        assertThat(noExecute(tainted)).containsExactly("node.kubernetes.io/unreachable");
        assertThat(tainted.getSpec().getTaints()).filteredOn(t -> t.getEffect().equals("NoExecute"))
                .allSatisfy(t -> assertThat(t.getTimeAdded()).isNotNull());
        assertThat(metrics().evictionsCount(":\0:" + zone)).isEqualTo(1);

        // the kubelet is back: status posted, Lease renewed
        clock.advance(Duration.ofSeconds(5));
        postStatus(name, List.of(condition("Ready", "True", clock.instant()),
                condition("MemoryPressure", "False", clock.instant())));
        renewLease(name, clock.instant());
        cached(name, n -> "True".equals(readyOf(n)) && !noExecute(n).isEmpty());
        pass();
        assertThat(noExecute(name)).isEmpty();
        monitor().doNoExecuteTaintingPass();
        assertThat(noExecute(name)).as("nothing left queued").isEmpty();
        assertThat(pod.getMetadata().getName()).isEqualTo("on-node");
    }

    @Test
    void nodeWithoutLeaseOrStatusIsLeftAloneDuringStartupGrace() throws Exception {
        String zone = "zone-" + suffix();
        String name = node("new", zone, List.of());
        clock = new MutableClock(Instant.parse(get(name).getMetadata().getCreationTimestamp()));
        anchor();
        start(settings(50, 1000));
        cached(name, n -> true);

        pass();
        clock.advance(Duration.ofSeconds(55));
        pass();
        assertThat(get(name).getStatus().getConditions()).as("55s into a 60s startup grace").isNullOrEmpty();

        clock.advance(Duration.ofSeconds(6));
        pass();
        Node unknown = get(name);
        for (String type : List.of("Ready", "MemoryPressure", "DiskPressure", "PIDPressure")) {
            assertThat(conditionOf(unknown, type)).as(type).satisfies(c -> {
                assertThat(c.getStatus()).isEqualTo("Unknown");
                assertThat(c.getReason()).isEqualTo("NodeStatusNeverUpdated");
                assertThat(c.getMessage()).isEqualTo("Kubelet never posted node status.");
            });
        }
        // queued by that pass; the tainting pass reads the Ready condition from the cache
        cached(name, n -> "Unknown".equals(readyOf(n)));
        taintUntil(() -> !noExecute(name).isEmpty());
        assertThat(noExecute(name)).containsExactly("node.kubernetes.io/unreachable");
    }

    @Test
    void notReadyNodeGetsNotReadyTaintSwappedToUnreachableWhenItFallsSilent() throws Exception {
        String zone = "zone-" + suffix();
        clock = new MutableClock(now());
        String name = node("notready", zone, List.of(condition("Ready", "False", clock.instant())));
        renewLease(name, clock.instant());
        anchor();
        start(settings(50, 1000));
        cached(name, n -> true);

        pass();
        taintUntil(() -> !noExecute(name).isEmpty());
        assertThat(noExecute(name)).containsExactly("node.kubernetes.io/not-ready");

        // silent past the grace: Unknown, and the taint swapped at once, without the queue
        clock.advance(Duration.ofSeconds(51));
        cached(name, n -> !noExecute(n).isEmpty());
        pass();
        assertThat(readyOf(get(name))).isEqualTo("Unknown");
        assertThat(noExecute(name)).containsExactly("node.kubernetes.io/unreachable");
    }

    @Test
    void wholeZoneSilentIsFullDisruptionAndEverySilentZoneStopsTainting() throws Exception {
        String healthyZone = "zone-" + suffix();
        String silentZone = "zone-" + suffix();
        clock = new MutableClock(now());
        String healthy = node("healthy", healthyZone, List.of(condition("Ready", "True", clock.instant())));
        String silent1 = node("silent1", silentZone, List.of(condition("Ready", "True", clock.instant())));
        String silent2 = node("silent2", silentZone, List.of(condition("Ready", "True", clock.instant())));
        for (String n : List.of(healthy, silent1, silent2)) {
            renewLease(n, clock.instant());
        }
        start(settings(50, 1000));
        for (String n : List.of(healthy, silent1, silent2)) {
            cached(n, x -> true);
        }
        monitor().monitorNodeHealth();
        assertThat(monitor().zoneState(":\0:" + silentZone)).isEqualTo(ZoneState.NORMAL);

        // one zone silent, another one healthy: the silent zone is fully disrupted and tainted at the normal rate
        clock.advance(Duration.ofSeconds(51));
        renewLease(healthy, clock.instant());
        cachedLease(healthy);
        monitor().monitorNodeHealth();
        assertThat(monitor().zoneState(":\0:" + silentZone)).isEqualTo(ZoneState.FULL_DISRUPTION);
        assertThat(monitor().zoneState(":\0:" + healthyZone)).isEqualTo(ZoneState.NORMAL);
        assertThat(metrics().gaugeValue("zone.size", ":\0:" + silentZone)).isEqualTo(2);
        assertThat(metrics().gaugeValue("unhealthy.nodes.in.zone", ":\0:" + silentZone)).isEqualTo(2);
        assertThat(metrics().gaugeValue("zone.health", ":\0:" + silentZone)).isZero();
        assertThat(metrics().gaugeValue("zone.health", ":\0:" + healthyZone)).isEqualTo(100);
        cached(silent1, n -> "Unknown".equals(readyOf(n)));
        cached(silent2, n -> "Unknown".equals(readyOf(n)));
        // a token per node: the queue may need more than one pass
        taintUntil(() -> !noExecute(silent1).isEmpty() && !noExecute(silent2).isEmpty());
        assertThat(noExecute(silent1)).containsExactly("node.kubernetes.io/unreachable");
        assertThat(noExecute(silent2)).containsExactly("node.kubernetes.io/unreachable");
        assertThat(noExecute(healthy)).isEmpty();

        // every node silent: the control plane is the one cut off — taints removed, tainting stopped
        cached(silent1, n -> !noExecute(n).isEmpty());
        cached(silent2, n -> !noExecute(n).isEmpty());
        clock.advance(Duration.ofSeconds(51));
        monitor().monitorNodeHealth();
        assertThat(readyOf(get(healthy))).isEqualTo("Unknown");
        assertThat(monitor().zoneState(":\0:" + healthyZone)).isEqualTo(ZoneState.FULL_DISRUPTION);
        for (String n : List.of(healthy, silent1, silent2)) {
            assertThat(noExecute(n)).as(n).isEmpty();
        }
        cached(healthy, n -> "Unknown".equals(readyOf(n)));
        cached(silent1, n -> noExecute(n).isEmpty());
        cached(silent2, n -> noExecute(n).isEmpty());
        monitor().monitorNodeHealth();
        for (int i = 0; i < 5; i++) {
            monitor().doNoExecuteTaintingPass();
            Thread.sleep(20);
        }
        for (String n : List.of(healthy, silent1, silent2)) {
            assertThat(noExecute(n)).as("%s while every zone is fully disrupted", n).isEmpty();
        }
    }

    @Test
    void partialDisruptionStopsTaintingInASmallZoneAndSlowsItInALargeOne() throws Exception {
        // --large-cluster-size-threshold 4: a zone of 5 is large, a zone of 4 small; 0.01 taints/s in the large one
        String large = "zone-" + suffix();
        String small = "zone-" + suffix();
        clock = new MutableClock(now());
        List<String> healthy = new ArrayList<>();
        List<String> silentLarge = new ArrayList<>();
        List<String> silentSmall = new ArrayList<>();
        healthy.add(node("large-up", large, List.of(condition("Ready", "True", clock.instant()))));
        healthy.add(node("small-up", small, List.of(condition("Ready", "True", clock.instant()))));
        for (int i = 0; i < 4; i++) {
            silentLarge.add(node("large-down" + i, large, List.of(condition("Ready", "True", clock.instant()))));
        }
        for (int i = 0; i < 3; i++) {
            silentSmall.add(node("small-down" + i, small, List.of(condition("Ready", "True", clock.instant()))));
        }
        for (String n : nodes) {
            renewLease(n, clock.instant());
        }
        start(settings(50, 4));
        for (String n : nodes) {
            cached(n, x -> true);
        }
        monitor().monitorNodeHealth();

        clock.advance(Duration.ofSeconds(51));
        for (String n : healthy) {
            renewLease(n, clock.instant());
            cachedLease(n);
        }
        monitor().monitorNodeHealth();
        assertThat(monitor().zoneState(":\0:" + large)).isEqualTo(ZoneState.PARTIAL_DISRUPTION);
        assertThat(monitor().zoneState(":\0:" + small)).isEqualTo(ZoneState.PARTIAL_DISRUPTION);
        assertThat(monitor().zoneTainter(":\0:" + large).qps()).isEqualTo(0.01f);
        for (String n : silentLarge) {
            cached(n, x -> "Unknown".equals(readyOf(x)));
        }
        for (String n : silentSmall) {
            cached(n, x -> "Unknown".equals(readyOf(x)));
        }
        // a second of tainting passes: the large zone's one token, nothing in the small zone
        for (int i = 0; i < 10; i++) {
            monitor().doNoExecuteTaintingPass();
            Thread.sleep(100);
        }
        assertThat(silentLarge.stream().filter(n -> !noExecute(n).isEmpty()).count()).isEqualTo(1);
        for (String n : silentSmall) {
            assertThat(noExecute(n)).as(n).isEmpty();
        }
        for (String n : healthy) {
            assertThat(noExecute(n)).as(n).isEmpty();
        }
    }

    @Test
    void podBoundToAnUnhealthyNodeIsMarkedNotReadyAndDeletedNodeIsRemoved() throws Exception {
        String zone = "zone-" + suffix();
        clock = new MutableClock(now());
        String name = node("bind", zone, List.of(condition("Ready", "False", clock.instant())));
        renewLease(name, clock.instant());
        String ns = newNamespace(client, "nlc-pod");
        start(settings(50, 1000));
        cached(name, n -> true);
        monitor().monitorNodeHealth();

        Pod pod = new TestKubelet(client, name).runningAndReady(pod(ns, "late"));
        await().atMost(TIMEOUT).until(() -> cachedPod(ns, "late") != null && PodUtil.isReady(cachedPod(ns, "late")));
        harness.controller.podReconciler().sync(ns + "/late");
        assertThat(PodUtil.readyCondition(client.pods().inNamespace(ns).withName("late").get()).getStatus())
                .isEqualTo("False");
        assertThat(pod.getSpec().getNodeName()).isEqualTo(name);

        client.nodes().withName(name).delete();
        await().atMost(TIMEOUT).until(() -> harness.informers.informerFor(Node.class).getStore().getByKey(name) == null);
        monitor().monitorNodeHealth();
        assertThat(event(name, "RemovingNode")).isEqualTo("Node " + name + " event: Removing Node " + name
                + " from Controller");
    }

    // ---- the controller ----

    private static NodeHealthMonitor.Settings settings(float evictionQps, int largeCluster) {
        return new NodeHealthMonitor.Settings(Duration.ofSeconds(5), Duration.ofMinutes(1), Duration.ofSeconds(50),
                evictionQps, 0.01f, largeCluster, 0.55f);
    }

    private void start(NodeHealthMonitor.Settings settings) throws InterruptedException {
        harness = ControllerHarness.create(vertx, NodeLifecycleController.NAME, "node-controller", Map.of(),
                context -> new NodeLifecycleController(context, settings, clock, false)).start();
        if (anchor != null) {
            cached(anchor, n -> true);
        }
    }

    /**
     * A healthy node in a zone of its own, its Lease renewed before every {@link #pass}: with every zone
     * fully disrupted, upstream stops tainting altogether (wholeZoneSilent... tests that rule).
     */
    private void anchor() {
        anchor = node("anchor", "anchor-" + suffix(), List.of(condition("Ready", "True", clock.instant())));
        renewLease(anchor, clock.instant());
    }

    /** A health pass, the anchor's Lease renewed just before it, as its kubelet would. */
    private void pass() throws InterruptedException {
        if (anchor != null) {
            renewLease(anchor, clock.instant());
            cachedLease(anchor);
        }
        monitor().monitorNodeHealth();
    }

    private NodeHealthMonitor monitor() {
        return harness.controller.monitor();
    }

    /** Runs the tainting pass until {@code done}, as its 100 ms loop would. */
    private void taintUntil(java.util.concurrent.Callable<Boolean> done) {
        await().atMost(TIMEOUT).pollInterval(Duration.ofMillis(50)).until(() -> {
            monitor().doNoExecuteTaintingPass();
            return done.call();
        });
    }

    private Pod cachedPod(String ns, String name) {
        return harness.informers.informerFor(Pod.class).getStore().getByKey(ns + "/" + name);
    }

    private NodeLifecycleMetrics metrics() {
        return new NodeLifecycleMetrics(harness.context.metrics());
    }

    /** Waits until the controller's node cache holds the node as last written and {@code also} holds. */
    private void cached(String name, Predicate<Node> also) {
        Node live = get(name);
        long rv = Long.parseLong(live.getMetadata().getResourceVersion());
        await().atMost(TIMEOUT).until(() -> {
            Node n = harness.informers.informerFor(Node.class).getStore().getByKey(name);
            return n != null && Long.parseLong(n.getMetadata().getResourceVersion()) >= rv && also.test(n);
        });
        Lease lease = client.leases().inNamespace(LEASE_NS).withName(name).get();
        if (lease != null) {
            cachedLease(name);
        }
    }

    private void cachedLease(String name) {
        Lease live = client.leases().inNamespace(LEASE_NS).withName(name).get();
        long rv = Long.parseLong(live.getMetadata().getResourceVersion());
        await().atMost(TIMEOUT).until(() -> {
            Lease l = harness.informers.informerFor(Lease.class).getStore().getByKey(LEASE_NS + "/" + name);
            return l != null && Long.parseLong(l.getMetadata().getResourceVersion()) >= rv;
        });
    }

    // ---- objects, as a kubelet writes them ----

    private static String suffix() {
        return Long.toString(System.nanoTime() % 1_000_000_000L, 36);
    }

    private static Instant now() {
        return Instant.now().truncatedTo(ChronoUnit.SECONDS);
    }

    private String node(String prefix, String zone, List<NodeCondition> conditions) {
        String name = "nlc-" + prefix + "-" + suffix();
        Map<String, String> labels = new LinkedHashMap<>();
        labels.put("topology.kubernetes.io/zone", zone);
        Node created = client.nodes().resource(new NodeBuilder().withNewMetadata().withName(name).withLabels(labels)
                .endMetadata().withNewSpec().endSpec().build()).create();
        nodes.add(name);
        if (!conditions.isEmpty()) {
            created.setStatus(new NodeStatusBuilder().withConditions(conditions).build());
            client.nodes().resource(created).updateStatus();
        }
        return name;
    }

    private static void postStatus(String name, List<NodeCondition> conditions) {
        await().atMost(TIMEOUT).ignoreExceptions().until(() -> client.nodes().withName(name).editStatus(n -> {
            n.getStatus().setConditions(conditions);
            return n;
        }) != null);
    }

    private static void renewLease(String name, Instant renewTime) {
        ZonedDateTime at = ZonedDateTime.ofInstant(renewTime, ZoneOffset.UTC);
        Lease existing = client.leases().inNamespace(LEASE_NS).withName(name).get();
        if (existing == null) {
            client.leases().inNamespace(LEASE_NS).resource(new LeaseBuilder().withNewMetadata().withName(name)
                    .withNamespace(LEASE_NS).endMetadata().withNewSpec().withHolderIdentity(name)
                    .withLeaseDurationSeconds(40).withRenewTime(at).endSpec().build()).create();
        } else {
            existing.getSpec().setRenewTime(at);
            client.leases().inNamespace(LEASE_NS).resource(existing).update();
        }
    }

    private static NodeCondition condition(String type, String status, Instant at) {
        return new NodeConditionBuilder().withType(type).withStatus(status).withReason("KubeletSays")
                .withLastHeartbeatTime(at.toString()).withLastTransitionTime(at.toString()).build();
    }

    private static Pod pod(String ns, String name) {
        return client.pods().inNamespace(ns).resource(new PodBuilder().withNewMetadata().withName(name).endMetadata()
                .withNewSpec().addNewContainer().withName("main").withImage("registry.k8s.io/pause:3.10").endContainer()
                .endSpec().build()).create();
    }

    private static Node get(String name) {
        return client.nodes().withName(name).get();
    }

    private static NodeCondition conditionOf(Node node, String type) {
        return NodeHealthMonitor.condition(node.getStatus(), type);
    }

    private static String readyOf(Node node) {
        NodeCondition c = conditionOf(node, "Ready");
        return c == null ? null : c.getStatus();
    }

    private static List<String> noExecute(String name) {
        return noExecute(get(name));
    }

    private static List<String> noExecute(Node node) {
        List<Taint> taints = node.getSpec().getTaints() == null ? List.of() : node.getSpec().getTaints();
        return taints.stream().filter(t -> "NoExecute".equals(t.getEffect())).map(Taint::getKey).toList();
    }

    /** The message of the node's event of that reason, once it is recorded. */
    private static String event(String nodeName, String reason) {
        List<Event>[] found = new List[1];
        await().atMost(TIMEOUT).until(() -> {
            found[0] = client.v1().events().inNamespace("default").list().getItems().stream()
                    .filter(e -> nodeName.equals(e.getInvolvedObject().getName()) && reason.equals(e.getReason()))
                    .toList();
            return !found[0].isEmpty();
        });
        Event e = found[0].get(0);
        assertThat(e.getInvolvedObject().getKind()).isEqualTo("Node");
        assertThat(e.getSource().getComponent()).isEqualTo("node-controller");
        return e.getMessage();
    }

    /** A clock the test sets. */
    static final class MutableClock extends Clock {
        private volatile Instant now;

        MutableClock(Instant now) {
            this.now = now;
        }

        void advance(Duration d) {
            now = now.plus(d);
        }

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return now;
        }
    }
}
