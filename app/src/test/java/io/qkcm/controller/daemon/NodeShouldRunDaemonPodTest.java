package io.qkcm.controller.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Affinity;
import io.fabric8.kubernetes.api.model.AffinityBuilder;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.NodeSelectorRequirement;
import io.fabric8.kubernetes.api.model.NodeSelectorTermBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Taint;
import io.fabric8.kubernetes.api.model.Toleration;
import io.fabric8.kubernetes.api.model.TolerationBuilder;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.DaemonSetBuilder;
import io.fabric8.kubernetes.api.model.apps.DaemonSetUpdateStrategy;
import io.fabric8.kubernetes.api.model.apps.DaemonSetUpdateStrategyBuilder;
import io.qkcm.controller.daemon.DaemonSetsController.ShouldRun;

/**
 * Upstream's TestNodeShouldRunDaemonPod table (for both update strategies), its taint and
 * toleration cases, TestGetUnavailableNumbers (updatedDesiredNodeCounts), findUpdatedPodsOnNode and
 * the failed-pods backoff.
 */
class NodeShouldRunDaemonPodTest {

    static final Map<String, String> SIMPLE_DAEMON_SET_LABEL = Map.of("name", "simple-daemon", "type", "production");
    static final Map<String, String> SIMPLE_DAEMON_SET_LABEL2 = Map.of("name", "simple-daemon", "type", "test");

    static Node node(String name, Map<String, String> labels) {
        return new NodeBuilder().withNewMetadata().withName(name).withLabels(labels).endMetadata().withNewSpec()
                .endSpec().build();
    }

    static List<DaemonSetUpdateStrategy> updateStrategies() {
        return List.of(new DaemonSetUpdateStrategyBuilder().withType("OnDelete").build(),
                new DaemonSetUpdateStrategyBuilder().withType("RollingUpdate").withNewRollingUpdate()
                        .withMaxUnavailable(new IntOrString(1)).endRollingUpdate().build(),
                new DaemonSetUpdateStrategyBuilder().withType("RollingUpdate").withNewRollingUpdate()
                        .withMaxUnavailable(new IntOrString(0)).withMaxSurge(new IntOrString(1)).endRollingUpdate()
                        .build());
    }

    static DaemonSet ds(PodSpec spec) {
        return new DaemonSetBuilder().withNewMetadata().withName("foo").withNamespace("default").withUid("ds-uid")
                .endMetadata().withNewSpec().withNewSelector().withMatchLabels(SIMPLE_DAEMON_SET_LABEL).endSelector()
                .withNewTemplate().withNewMetadata().withLabels(SIMPLE_DAEMON_SET_LABEL).endMetadata()
                .withSpec(spec).endTemplate().endSpec().build();
    }

    static PodSpec spec() {
        return new PodSpec();
    }

    static PodSpec nodeName(String nodeName) {
        PodSpec s = new PodSpec();
        s.setNodeName(nodeName);
        return s;
    }

    static PodSpec nodeSelector(Map<String, String> sel) {
        PodSpec s = new PodSpec();
        s.setNodeSelector(sel);
        return s;
    }

    static Affinity requiredLabel(String key, String op, String... values) {
        return new AffinityBuilder().withNewNodeAffinity().withNewRequiredDuringSchedulingIgnoredDuringExecution()
                .withNodeSelectorTerms(new NodeSelectorTermBuilder().withMatchExpressions(
                        new NodeSelectorRequirement(key, op, values.length == 0 ? null : new ArrayList<>(List.of(values))))
                        .build())
                .endRequiredDuringSchedulingIgnoredDuringExecution().endNodeAffinity().build();
    }

    static PodSpec affinity(Affinity a) {
        PodSpec s = new PodSpec();
        s.setAffinity(a);
        return s;
    }

    record Case(String predicateName, PodSpec spec, boolean unschedulable, boolean shouldRun, boolean shouldContinueRunning) {
    }

    @Test
    void upstreamTable() {
        List<Case> cases = List.of(
                new Case("ShouldRunDaemonPod", spec(), false, true, true),
                new Case("ErrPodNotMatchHostName", nodeName("other-node"), false, false, false),
                new Case("ShouldRunDaemonPod (own node name)", nodeName("test-node"), false, true, true),
                new Case("ErrNodeSelectorNotMatch", nodeSelector(SIMPLE_DAEMON_SET_LABEL2), false, false, false),
                new Case("ShouldRunDaemonPod (node selector)", nodeSelector(SIMPLE_DAEMON_SET_LABEL), false, true, true),
                new Case("ErrPodAffinityNotMatch", affinity(requiredLabel("type", "In", "test")), false, false, false),
                new Case("ShouldRunDaemonPod (affinity)", affinity(requiredLabel("type", "In", "production")), false,
                        true, true),
                new Case("ShouldRunDaemonPodOnUnschedulableNode", spec(), true, true, true));
        for (Case c : cases) {
            for (DaemonSetUpdateStrategy strategy : updateStrategies()) {
                Node node = node("test-node", SIMPLE_DAEMON_SET_LABEL);
                node.getSpec().setUnschedulable(c.unschedulable());
                DaemonSet ds = ds(c.spec());
                ds.getSpec().setUpdateStrategy(strategy);
                ShouldRun r = DaemonSetsController.nodeShouldRunDaemonPod(node, ds);
                assertThat(r.shouldRun()).as("%s %s shouldRun", c.predicateName(), strategy.getType())
                        .isEqualTo(c.shouldRun());
                assertThat(r.shouldContinueRunning()).as("%s %s shouldContinueRunning", c.predicateName(),
                        strategy.getType()).isEqualTo(c.shouldContinueRunning());
            }
        }
    }

    @Test
    void requiredNodeAffinityOperatorsAndFields() {
        Node node = node("test-node", Map.of("type", "production", "cores", "8"));
        record A(Affinity affinity, boolean run) {
        }
        List<A> cases = List.of(
                new A(requiredLabel("type", "NotIn", "test"), true),
                new A(requiredLabel("type", "NotIn", "production"), false),
                new A(requiredLabel("missing", "NotIn", "x"), true),
                new A(requiredLabel("type", "Exists"), true),
                new A(requiredLabel("type", "DoesNotExist"), false),
                new A(requiredLabel("cores", "Gt", "4"), true),
                new A(requiredLabel("cores", "Lt", "4"), false),
                new A(requiredLabel("type", "Gt", "4"), false),
                // unparsable terms never match
                new A(requiredLabel("type", "In"), false),
                new A(requiredLabel("type", "Exists", "x"), false),
                new A(requiredLabel("type", "Bogus", "x"), false),
                new A(requiredLabel("cores", "Gt", "four"), false),
                // matchFields on metadata.name
                new A(fields("metadata.name", "In", "test-node"), true),
                new A(fields("metadata.name", "In", "other"), false),
                new A(fields("metadata.name", "NotIn", "other"), true),
                new A(fields("metadata.name", "Exists"), false),
                // an empty term matches nothing; any matching term is enough
                new A(new AffinityBuilder().withNewNodeAffinity().withNewRequiredDuringSchedulingIgnoredDuringExecution()
                        .withNodeSelectorTerms(new NodeSelectorTermBuilder().build())
                        .endRequiredDuringSchedulingIgnoredDuringExecution().endNodeAffinity().build(), false),
                new A(new AffinityBuilder().withNewNodeAffinity().withNewRequiredDuringSchedulingIgnoredDuringExecution()
                        .withNodeSelectorTerms(
                                new NodeSelectorTermBuilder().withMatchExpressions(
                                        new NodeSelectorRequirement("type", "In", List.of("test"))).build(),
                                new NodeSelectorTermBuilder().withMatchExpressions(
                                        new NodeSelectorRequirement("type", "Bogus", List.of("x"))).build(),
                                new NodeSelectorTermBuilder().withMatchExpressions(
                                        new NodeSelectorRequirement("cores", "In", List.of("8"))).build())
                        .endRequiredDuringSchedulingIgnoredDuringExecution().endNodeAffinity().build(), true));
        for (A c : cases) {
            ShouldRun r = DaemonSetsController.nodeShouldRunDaemonPod(node, ds(affinity(c.affinity())));
            assertThat(r.shouldRun()).as("%s", c.affinity()).isEqualTo(c.run());
            assertThat(r.shouldContinueRunning()).as("%s", c.affinity()).isEqualTo(c.run());
        }
    }

    static Affinity fields(String key, String op, String... values) {
        return new AffinityBuilder().withNewNodeAffinity().withNewRequiredDuringSchedulingIgnoredDuringExecution()
                .withNodeSelectorTerms(new NodeSelectorTermBuilder().withMatchFields(
                        new NodeSelectorRequirement(key, op, values.length == 0 ? null : new ArrayList<>(List.of(values))))
                        .build())
                .endRequiredDuringSchedulingIgnoredDuringExecution().endNodeAffinity().build();
    }

    static Taint taint(String key, String value, String effect) {
        return new Taint(effect, key, null, value);
    }

    static Toleration toleration(String key, String op, String value, String effect) {
        return new TolerationBuilder().withKey(key).withOperator(op).withValue(value).withEffect(effect).build();
    }

    record T(String name, List<Taint> taints, List<Toleration> tolerations, boolean hostNetwork, boolean shouldRun,
            boolean shouldContinueRunning) {
    }

    @Test
    void taintsAgainstTolerations() {
        Taint noSchedule = taint("dedicated", "gpu", "NoSchedule");
        Taint noExecute = taint("dedicated", "gpu", "NoExecute");
        List<T> cases = List.of(
                new T("untolerated NoSchedule: no new pod, a running one stays", List.of(noSchedule), List.of(), false,
                        false, true),
                new T("untolerated NoExecute: no pod at all", List.of(noExecute), List.of(), false, false, false),
                new T("PreferNoSchedule is not a predicate", List.of(taint("dedicated", "gpu", "PreferNoSchedule")),
                        List.of(), false, true, true),
                new T("tolerated by Equal", List.of(noSchedule, noExecute),
                        List.of(toleration("dedicated", "Equal", "gpu", null)), false, true, true),
                new T("value mismatch", List.of(noSchedule), List.of(toleration("dedicated", "Equal", "cpu", null)),
                        false, false, true),
                new T("tolerated by Exists without key", List.of(noExecute), List.of(toleration(null, "Exists", null, null)),
                        false, true, true),
                new T("effect mismatch", List.of(noExecute),
                        List.of(toleration("dedicated", "Exists", null, "NoSchedule")), false, false, false),
                new T("not-ready NoExecute tolerated by default", List.of(taint("node.kubernetes.io/not-ready", null,
                        "NoExecute")), List.of(), false, true, true),
                new T("unreachable NoExecute tolerated by default", List.of(taint("node.kubernetes.io/unreachable", null,
                        "NoExecute")), List.of(), false, true, true),
                new T("not-ready NoSchedule is not tolerated", List.of(taint("node.kubernetes.io/not-ready", null,
                        "NoSchedule")), List.of(), false, false, true),
                new T("pressure and unschedulable tolerated by default",
                        List.of(taint("node.kubernetes.io/disk-pressure", null, "NoSchedule"),
                                taint("node.kubernetes.io/memory-pressure", null, "NoSchedule"),
                                taint("node.kubernetes.io/pid-pressure", null, "NoSchedule"),
                                taint("node.kubernetes.io/unschedulable", null, "NoSchedule")),
                        List.of(), false, true, true),
                new T("network-unavailable without host network", List.of(taint("node.kubernetes.io/network-unavailable",
                        null, "NoSchedule")), List.of(), false, false, true),
                new T("network-unavailable with host network", List.of(taint("node.kubernetes.io/network-unavailable",
                        null, "NoSchedule")), List.of(), true, true, true));
        for (T c : cases) {
            Node node = node("test-node", SIMPLE_DAEMON_SET_LABEL);
            node.getSpec().setTaints(c.taints());
            PodSpec spec = new PodSpec();
            spec.setTolerations(new ArrayList<>(c.tolerations()));
            spec.setHostNetwork(c.hostNetwork());
            ShouldRun r = DaemonSetsController.nodeShouldRunDaemonPod(node, ds(spec));
            assertThat(r).as(c.name()).isEqualTo(new ShouldRun(c.shouldRun(), c.shouldContinueRunning()));
        }
    }

    static Pod pod(String name, String node, Map<String, String> labels, boolean ready, boolean deleting) {
        PodBuilder b = new PodBuilder().withNewMetadata().withName(name).withNamespace("default").withLabels(labels)
                .endMetadata().withNewSpec().withNodeName(node).endSpec();
        if (ready) {
            b.withNewStatus().withPhase("Running").addNewCondition().withType("Ready").withStatus("True")
                    .withLastTransitionTime("2020-01-01T00:00:00Z").endCondition().endStatus();
        }
        if (deleting) {
            b.editMetadata().withDeletionTimestamp("2020-01-01T00:00:00Z").endMetadata();
        }
        return b.build();
    }

    static List<Node> nodes(int n) {
        List<Node> nodes = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            nodes.add(node("node-" + i, Map.of()));
        }
        return nodes;
    }

    static DaemonSet strategyDs(DaemonSetUpdateStrategy strategy) {
        DaemonSet ds = ds(spec());
        ds.getSpec().setUpdateStrategy(strategy);
        return ds;
    }

    static DaemonSetUpdateStrategy unavailable(IntOrString v) {
        return new DaemonSetUpdateStrategyBuilder().withType("RollingUpdate").withNewRollingUpdate().withMaxUnavailable(v)
                .endRollingUpdate().build();
    }

    static DaemonSetUpdateStrategy surge(IntOrString v) {
        return new DaemonSetUpdateStrategyBuilder().withType("RollingUpdate").withNewRollingUpdate()
                .withMaxUnavailable(new IntOrString(0)).withMaxSurge(v).endRollingUpdate().build();
    }

    // TestGetUnavailableNumbers
    @Test
    void getUnavailableNumbers() throws Exception {
        record U(String name, int nodes, DaemonSetUpdateStrategy strategy, Map<String, List<Pod>> nodeToPods, int maxSurge,
                int maxUnavailable, int desired, int emptyNodes) {
        }
        Map<String, String> l = SIMPLE_DAEMON_SET_LABEL;
        List<U> cases = List.of(
                new U("No nodes", 0, unavailable(new IntOrString(0)), new HashMap<>(), 0, 0, 0, 0),
                new U("Two nodes with ready pods", 2, unavailable(new IntOrString(1)), new HashMap<>(Map.of(
                        "node-0", List.of(pod("pod-0", "node-0", l, true, false)),
                        "node-1", List.of(pod("pod-1", "node-1", l, true, false)))), 0, 1, 2, 0),
                new U("Two nodes, one node without pods", 2, unavailable(new IntOrString(0)), new HashMap<>(Map.of(
                        "node-0", List.of(pod("pod-0", "node-0", l, true, false)))), 0, 1, 2, 1),
                new U("Two nodes, one node without pods, surge", 2, surge(new IntOrString(0)), new HashMap<>(Map.of(
                        "node-0", List.of(pod("pod-0", "node-0", l, true, false)))), 0, 1, 2, 1),
                new U("Two nodes with pods, MaxUnavailable in percents", 2, unavailable(new IntOrString("50%")),
                        new HashMap<>(Map.of("node-0", List.of(pod("pod-0", "node-0", l, true, false)),
                                "node-1", List.of(pod("pod-1", "node-1", l, true, false)))), 0, 1, 2, 0),
                new U("Two nodes with pods, MaxUnavailable in percents, surge", 2, surge(new IntOrString("50%")),
                        new HashMap<>(Map.of("node-0", List.of(pod("pod-0", "node-0", l, true, false)),
                                "node-1", List.of(pod("pod-1", "node-1", l, true, false)))), 1, 0, 2, 0),
                new U("Two nodes with pods, MaxUnavailable is 100%, surge", 2, surge(new IntOrString("100%")),
                        new HashMap<>(Map.of("node-0", List.of(pod("pod-0", "node-0", l, true, false)),
                                "node-1", List.of(pod("pod-1", "node-1", l, true, false)))), 2, 0, 2, 0),
                new U("Two nodes with pods, MaxUnavailable in percents, pod terminating", 3,
                        unavailable(new IntOrString("50%")),
                        new HashMap<>(Map.of("node-0", List.of(pod("pod-0", "node-0", l, true, false)),
                                "node-1", List.of(pod("pod-1", "node-1", l, true, true)))), 0, 2, 3, 1));
        for (U c : cases) {
            Update.NodeCounts counts = Update.updatedDesiredNodeCounts(strategyDs(c.strategy()), nodes(c.nodes()),
                    c.nodeToPods());
            assertThat(counts).as(c.name()).isEqualTo(new Update.NodeCounts(c.maxSurge(), c.maxUnavailable(), c.desired()));
            assertThat(c.nodeToPods().values().stream().filter(List::isEmpty).count()).as(c.name())
                    .isEqualTo(c.emptyNodes());
        }
    }

    @Test
    void findUpdatedPodsOnNodeAllowsOneOldAndOneNew() {
        Map<String, String> newLabels = Map.of("controller-revision-hash", "new");
        Map<String, String> oldLabels = Map.of("controller-revision-hash", "old");
        Pod n1 = pod("n1", "node-0", newLabels, true, false);
        Pod o1 = pod("o1", "node-0", oldLabels, true, false);
        Pod o2 = pod("o2", "node-0", oldLabels, true, false);
        Pod deletedNew = pod("n2", "node-0", newLabels, true, true);
        assertThat(Update.findUpdatedPodsOnNode(List.of(n1, o1, deletedNew), "new", null))
                .isEqualTo(new Update.UpdatedPods(n1, o1));
        assertThat(Update.findUpdatedPodsOnNode(List.of(o1, o2), "new", null)).isNull();
        assertThat(Update.findUpdatedPodsOnNode(List.of(), "new", null)).isEqualTo(new Update.UpdatedPods(null, null));
        // the template generation label counts as updated too
        Pod gen = pod("g", "node-0", Map.of("pod-template-generation", "3"), true, false);
        assertThat(Update.findUpdatedPodsOnNode(List.of(gen), "new", 3L)).isEqualTo(new Update.UpdatedPods(gen, null));
    }

    @Test
    void failedPodsBackoffDoublesUpToFifteenMinutesAndExpires() {
        AtomicLong now = new AtomicLong(0);
        FailedPodsBackoff b = new FailedPodsBackoff(Duration.ofSeconds(1), Duration.ofMinutes(15), now::get);
        String id = "uid/1/node";
        assertThat(b.isInBackOffSinceUpdate(id, now.get())).isFalse();
        b.next(id, now.get());
        assertThat(b.get(id)).isEqualTo(Duration.ofSeconds(1));
        assertThat(b.isInBackOffSinceUpdate(id, now.get())).isTrue();
        now.addAndGet(Duration.ofMillis(1001).toNanos());
        assertThat(b.isInBackOffSinceUpdate(id, now.get())).isFalse();
        for (int i = 0; i < 20; i++) {
            b.next(id, now.get());
        }
        assertThat(b.get(id)).isEqualTo(Duration.ofMinutes(15));
        now.addAndGet(Duration.ofMinutes(31).toNanos());
        assertThat(b.isInBackOffSinceUpdate(id, now.get())).isFalse();
        b.gc();
        assertThat(b.size()).isZero();
        b.next(id, now.get());
        assertThat(b.get(id)).isEqualTo(Duration.ofSeconds(1));
    }

    @Test
    void backoffKeyAndNodeUpdateFilterAsUpstream() {
        DaemonSet ds = ds(spec());
        assertThat(DaemonSetsController.failedPodsBackoffKey(ds, "n1")).isEqualTo("ds-uid/0/n1");
        Node a = node("n", Map.of("a", "1"));
        Node b = node("n", Map.of("a", "1"));
        b.setStatus(new io.fabric8.kubernetes.api.model.NodeStatusBuilder().addNewCondition().withType("Ready")
                .withStatus("True").endCondition().build());
        assertThat(DaemonSetsController.shouldIgnoreNodeUpdate(a, b)).isTrue();
        Node c = node("n", Map.of("a", "2"));
        assertThat(DaemonSetsController.shouldIgnoreNodeUpdate(a, c)).isFalse();
        Node d = node("n", Map.of("a", "1"));
        d.getSpec().setTaints(List.of(taint("k", "v", "NoSchedule")));
        assertThat(DaemonSetsController.shouldIgnoreNodeUpdate(a, d)).isFalse();
    }
}
