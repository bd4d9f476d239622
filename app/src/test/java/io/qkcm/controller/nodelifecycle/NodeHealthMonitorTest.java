package io.qkcm.controller.nodelifecycle;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.NodeCondition;
import io.fabric8.kubernetes.api.model.NodeConditionBuilder;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.qkcm.controller.nodelifecycle.metrics.NodeLifecycleMetrics;

/** The pure parts of node health monitoring: zone states, zone keys, exclusion, label reconciliation. */
class NodeHealthMonitorTest {

    static NodeHealthMonitor.Settings settings(float evictionQps, float secondaryQps, int largeCluster,
            float unhealthyThreshold) {
        return new NodeHealthMonitor.Settings(Duration.ofSeconds(5), Duration.ofMinutes(1), Duration.ofSeconds(50),
                evictionQps, secondaryQps, largeCluster, unhealthyThreshold);
    }

    private static NodeHealthMonitor monitor(NodeHealthMonitor.Settings settings) {
        return new NodeHealthMonitor(settings, Clock.systemUTC(), null, n -> null, List::of, k -> null,
                n -> List.of(), (o, t, r, m) -> {
                }, new NodeLifecycleMetrics(new SimpleMeterRegistry()), null);
    }

    private static List<NodeCondition> ready(int readyNodes, int notReady, int unknown, int missing) {
        List<NodeCondition> c = new ArrayList<>();
        for (int i = 0; i < readyNodes; i++) {
            c.add(new NodeConditionBuilder().withType("Ready").withStatus("True").build());
        }
        for (int i = 0; i < notReady; i++) {
            c.add(new NodeConditionBuilder().withType("Ready").withStatus("False").build());
        }
        for (int i = 0; i < unknown; i++) {
            c.add(new NodeConditionBuilder().withType("Ready").withStatus("Unknown").build());
        }
        for (int i = 0; i < missing; i++) {
            c.add(null);
        }
        return c;
    }

    record ZoneCase(String name, List<NodeCondition> conditions, int unhealthy, ZoneState state) {
    }

    @Test
    void computeZoneState() {
        NodeHealthMonitor m = monitor(settings(0.1f, 0.01f, 50, 0.55f));
        List<ZoneCase> cases = List.of(
                new ZoneCase("all ready", ready(3, 0, 0, 0), 0, ZoneState.NORMAL),
                new ZoneCase("none ready", ready(0, 1, 1, 0), 2, ZoneState.FULL_DISRUPTION),
                new ZoneCase("a node without Ready condition counts as not ready", ready(0, 0, 0, 1), 1,
                        ZoneState.FULL_DISRUPTION),
                new ZoneCase("2 of 3 not ready: not more than 2", ready(1, 2, 0, 0), 2, ZoneState.NORMAL),
                new ZoneCase("3 of 5 not ready: 60% >= 55%", ready(2, 2, 1, 0), 3, ZoneState.PARTIAL_DISRUPTION),
                new ZoneCase("3 of 6 not ready: 50% < 55%", ready(3, 3, 0, 0), 3, ZoneState.NORMAL),
                new ZoneCase("empty zone", ready(0, 0, 0, 0), 0, ZoneState.NORMAL));
        for (ZoneCase c : cases) {
            NodeHealthMonitor.ZoneStateResult r = m.computeZoneState(c.conditions());
            assertThat(r.unhealthy()).as(c.name()).isEqualTo(c.unhealthy());
            assertThat(r.state()).as(c.name()).isEqualTo(c.state());
        }
    }

    @Test
    void partialDisruptionSlowsLargeZonesAndStopsSmallOnes() {
        NodeHealthMonitor m = monitor(settings(0.1f, 0.01f, 50, 0.55f));
        assertThat(m.reducedQps(51)).isEqualTo(0.01f);
        assertThat(m.reducedQps(50)).isZero();
        assertThat(m.healthyQps(3)).isEqualTo(0.1f);
    }

    private static Node node(Map<String, String> labels) {
        return new NodeBuilder().withNewMetadata().withName("n").withLabels(labels).endMetadata().build();
    }

    @Test
    void zoneKeyPrefersTheBetaLabels() {
        assertThat(NodeHealthMonitor.zoneKey(node(Map.of()))).isEmpty();
        assertThat(NodeHealthMonitor.zoneKey(node(Map.of("topology.kubernetes.io/region", "r",
                "topology.kubernetes.io/zone", "z")))).isEqualTo("r:\0:z");
        assertThat(NodeHealthMonitor.zoneKey(node(Map.of("failure-domain.beta.kubernetes.io/region", "br",
                "failure-domain.beta.kubernetes.io/zone", "bz", "topology.kubernetes.io/region", "r",
                "topology.kubernetes.io/zone", "z")))).isEqualTo("br:\0:bz");
        assertThat(NodeHealthMonitor.zoneKey(node(Map.of("topology.kubernetes.io/zone", "z")))).isEqualTo(":\0:z");
    }

    @Test
    void excludedFromDisruptionChecksByLabel() {
        // upstream's Test_isNodeExcludedFromDisruptionChecks
        assertThat(NodeHealthMonitor.isNodeExcludedFromDisruptionChecks(node(Map.of()))).isFalse();
        assertThat(NodeHealthMonitor.isNodeExcludedFromDisruptionChecks(
                node(Map.of("node.kubernetes.io/exclude-disruption", "")))).isTrue();
    }

    record LabelCase(String name, Map<String, String> labels, Map<String, String> expectedUpdate) {
    }

    @Test
    void reconcileNodeLabels() {
        // upstream's TestReconcileNodeLabels
        List<LabelCase> cases = List.of(
                new LabelCase("no labels", Map.of(), Map.of()),
                new LabelCase("beta labels created from the stable ones",
                        Map.of("kubernetes.io/os", "linux", "kubernetes.io/arch", "amd64"),
                        Map.of("beta.kubernetes.io/os", "linux", "beta.kubernetes.io/arch", "amd64")),
                new LabelCase("beta labels follow the stable ones",
                        Map.of("kubernetes.io/os", "linux", "beta.kubernetes.io/os", "windows",
                                "kubernetes.io/arch", "arm64", "beta.kubernetes.io/arch", "arm64"),
                        Map.of("beta.kubernetes.io/os", "linux")),
                new LabelCase("a beta label alone is left as it is", Map.of("beta.kubernetes.io/os", "linux"), Map.of()));
        for (LabelCase c : cases) {
            assertThat(NodeLifecycleController.labelsToReconcile(node(c.labels()))).as(c.name())
                    .isEqualTo(c.expectedUpdate());
        }
    }
}
