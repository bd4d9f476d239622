package io.qkcm.endpointslice.topologycache;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceBuilder;

class TopologyCacheTest {

    static Node node(String name, String zone, String cpu, boolean ready) {
        return new NodeBuilder().withNewMetadata().withName(name)
                .withLabels(zone == null ? Map.of() : Map.of("topology.kubernetes.io/zone", zone)).endMetadata()
                .withNewStatus().withAllocatable(Map.of("cpu", new Quantity(cpu))).addNewCondition().withType("Ready")
                .withStatus(ready ? "True" : "False").endCondition().endStatus().build();
    }

    static EndpointSlice slice(String... zones) {
        List<Endpoint> eps = new ArrayList<>();
        int i = 0;
        for (String z : zones) {
            eps.add(new EndpointBuilder().withAddresses("10.0.0." + (++i)).withZone(z).withNewConditions().withReady(true)
                    .endConditions().build());
        }
        return new EndpointSliceBuilder().withNewMetadata().withName("s").endMetadata().withAddressType("IPv4")
                .withEndpoints(eps).build();
    }

    static Map<String, Integer> hintCounts(List<EndpointSlice> slices) {
        Map<String, Integer> out = new HashMap<>();
        for (EndpointSlice s : slices) {
            for (Endpoint e : s.getEndpoints()) {
                out.merge(e.getHints().getForZones().get(0).getName(), 1, Integer::sum);
            }
        }
        return out;
    }

    @Test
    void balancedZonesGetOwnZoneHintsAndAnEnabledEvent() {
        TopologyCache tc = new TopologyCache();
        tc.setNodes(List.of(node("a", "zone-a", "4", true), node("b", "zone-b", "4", true)));
        SliceInfo si = new SliceInfo("ns/svc", "IPv4", List.of(slice("zone-a", "zone-a", "zone-b", "zone-b")), List.of(),
                List.of());
        TopologyCache.Result r = tc.addHints(si);
        for (Endpoint e : r.toCreate().get(0).getEndpoints()) {
            assertThat(e.getHints().getForZones().get(0).getName()).isEqualTo(e.getZone());
        }
        assertThat(r.events()).singleElement().satisfies(ev -> {
            assertThat(ev.reason()).isEqualTo("TopologyAwareHintsEnabled");
            assertThat(ev.message()).isEqualTo("Topology Aware Hints has been enabled, addressType: IPv4");
        });
        assertThat(tc.hasPopulatedHints("ns/svc")).isTrue();
        // a second time: no new event
        assertThat(tc.addHints(new SliceInfo("ns/svc", "IPv4", List.of(slice("zone-a", "zone-a", "zone-b", "zone-b")),
                List.of(), List.of())).events()).isEmpty();
    }

    @Test
    void endpointsAreRedistributedTowardsCpu() {
        TopologyCache tc = new TopologyCache();
        tc.setNodes(List.of(node("a", "zone-a", "4", true), node("b", "zone-b", "4", true)));
        // 5 endpoints in zone-a, 1 in zone-b, equal CPU: zone-b must receive hints
        TopologyCache.Result r = tc.addHints(new SliceInfo("ns/svc", "IPv4",
                List.of(slice("zone-a", "zone-a", "zone-a", "zone-a", "zone-a", "zone-b")), List.of(), List.of()));
        assertThat(hintCounts(r.toCreate())).containsEntry("zone-a", 3).containsEntry("zone-b", 3);
    }

    @Test
    void notEnoughInformationOrEndpointsDisablesHintsWithUpstreamMessages() {
        TopologyCache tc = new TopologyCache();
        TopologyCache.Result r = tc.addHints(new SliceInfo("ns/svc", "IPv4", List.of(slice("zone-a")), List.of(), List.of()));
        assertThat(r.events()).singleElement().satisfies(ev -> {
            assertThat(ev.reason()).isEqualTo("TopologyAwareHintsDisabled");
            assertThat(ev.message()).isEqualTo("Nodes only ready in one zone, addressType: IPv4");
        });

        tc.setNodes(List.of(node("a", "zone-a", "4", true), node("b", null, "4", true)));
        assertThat(tc.addHints(new SliceInfo("ns/svc", "IPv4", List.of(slice("zone-a")), List.of(), List.of())).events())
                .singleElement().satisfies(ev -> assertThat(ev.message()).isEqualTo(
                        "Insufficient Node information: allocatable CPU or zone not specified on one or more nodes, addressType: IPv4"));

        tc.setNodes(List.of(node("a", "zone-a", "4", true), node("b", "zone-b", "4", true), node("c", "zone-c", "4", true)));
        assertThat(tc.addHints(new SliceInfo("ns/svc", "IPv4", List.of(slice("zone-a", "zone-b")), List.of(), List.of()))
                .events()).singleElement().satisfies(ev -> assertThat(ev.message())
                        .isEqualTo("Insufficient number of endpoints (2 endpoints, 3 zones), addressType: IPv4"));
    }

    @Test
    void endpointWithoutZoneDisablesHints() {
        TopologyCache tc = new TopologyCache();
        tc.setNodes(List.of(node("a", "zone-a", "4", true), node("b", "zone-b", "4", true)));
        TopologyCache.Result r = tc.addHints(new SliceInfo("ns/svc", "IPv4", List.of(slice("zone-a", "zone-a", "zone-b", "")),
                List.of(), List.of()));
        assertThat(r.events()).singleElement().satisfies(ev -> assertThat(ev.message())
                .isEqualTo("One or more endpoints do not have a zone specified, addressType: IPv4"));
        assertThat(r.toCreate().get(0).getEndpoints()).allSatisfy(e -> assertThat(e.getHints()).isNull());
    }

    @Test
    void notReadyAndControlPlaneNodesDoNotCount() {
        TopologyCache tc = new TopologyCache();
        Node cp = new NodeBuilder(node("cp", "zone-c", "8", true)).editMetadata()
                .addToLabels("node-role.kubernetes.io/control-plane", "").endMetadata().build();
        tc.setNodes(List.of(node("a", "zone-a", "4", true), node("b", "zone-b", "4", true), node("x", null, "4", false), cp));
        assertThat(tc.cpuRatiosByZone()).containsOnlyKeys("zone-a", "zone-b");
    }

    @Test
    void overloadedServicesAfterNodeChanges() {
        TopologyCache tc = new TopologyCache();
        tc.setNodes(List.of(node("a", "zone-a", "4", true), node("b", "zone-b", "4", true)));
        tc.setHints("ns/svc", "IPv4", Map.of("zone-a", 3, "zone-b", 3));
        assertThat(tc.overloadedServices()).isEmpty();
        // zone-b grows to 4x the CPU: 3 of 6 endpoints is far under its share
        tc.setNodes(List.of(node("a", "zone-a", "1", true), node("b", "zone-b", "4", true)));
        assertThat(tc.overloadedServices()).containsExactly("ns/svc");
    }

    @Test
    void unchangedSlicesWithValidHintsStayUnchanged() {
        TopologyCache tc = new TopologyCache();
        tc.setNodes(List.of(node("a", "zone-a", "4", true), node("b", "zone-b", "4", true)));
        TopologyCache.Result first = tc.addHints(new SliceInfo("ns/svc", "IPv4", List.of(slice("zone-a", "zone-b")),
                List.of(), List.of()));
        EndpointSlice stored = first.toCreate().get(0);
        SliceInfo si = new SliceInfo("ns/svc", "IPv4", List.of(), List.of(), List.of(stored));
        TopologyCache.Result again = tc.addHints(si);
        assertThat(again.toUpdate()).isEmpty();
        assertThat(si.unchanged).containsExactly(stored);
    }
}
