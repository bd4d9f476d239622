package io.qkcm.endpointslice.trafficdist;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointHints;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.ForNode;
import io.fabric8.kubernetes.api.model.discovery.v1.ForZone;

class TrafficDistTest {

    static Endpoint ep(String addr, String zone, String node, boolean ready, EndpointHints hints) {
        return new EndpointBuilder().withAddresses(addr).withZone(zone).withNodeName(node).withNewConditions()
                .withReady(ready).endConditions().withHints(hints).build();
    }

    static EndpointSlice slice(String name, Endpoint... eps) {
        return new EndpointSliceBuilder().withNewMetadata().withName(name).endMetadata().withAddressType("IPv4")
                .withEndpoints(new ArrayList<>(List.of(eps))).build();
    }

    static EndpointHints zoneHint(String zone) {
        return new EndpointHints(null, List.of(new ForZone(zone)));
    }

    @Test
    void preferCloseHintsReadyEndpointsWithTheirZone() {
        EndpointSlice create = slice("c", ep("10.0.0.1", "a", "n1", true, null), ep("10.0.0.2", "b", "n2", false, null),
                ep("10.0.0.3", null, "n3", true, zoneHint("stale")));
        TrafficDist.Result r = TrafficDist.reconcileHints("PreferClose", List.of(create), List.of(), List.of());
        List<Endpoint> e = r.toCreate().get(0).getEndpoints();
        assertThat(e.get(0).getHints().getForZones()).extracting(ForZone::getName).containsExactly("a");
        assertThat(e.get(0).getHints().getForNodes()).isNullOrEmpty();
        assertThat(e.get(1).getHints()).isNull(); // not ready: untouched
        assertThat(e.get(2).getHints()).isNull(); // no zone: no hint
    }

    @Test
    void unchangedSlicesWithCorrectHintsStayUnchangedOthersAreCopiedToUpdate() {
        EndpointSlice good = slice("good", ep("10.0.0.1", "a", "n1", true, zoneHint("a")));
        EndpointSlice wrong = slice("wrong", ep("10.0.0.2", "b", "n2", true, zoneHint("a")));
        TrafficDist.Result r = TrafficDist.reconcileHints("PreferSameZone", List.of(), List.of(), List.of(good, wrong));
        assertThat(r.unchanged()).containsExactly(good);
        assertThat(r.toUpdate()).singleElement().satisfies(s -> {
            assertThat(s).isNotSameAs(wrong);
            assertThat(s.getEndpoints().get(0).getHints().getForZones()).extracting(ForZone::getName).containsExactly("b");
        });
        // the informer's object is not modified
        assertThat(wrong.getEndpoints().get(0).getHints().getForZones()).extracting(ForZone::getName).containsExactly("a");
    }

    @Test
    void preferSameNodeAddsNodeHints() {
        EndpointSlice unchanged = slice("u", ep("10.0.0.1", "a", "n1", true, zoneHint("a")));
        TrafficDist.Result r = TrafficDist.reconcileHints("PreferSameNode", List.of(), List.of(), List.of(unchanged));
        assertThat(r.toUpdate()).singleElement().satisfies(s -> {
            EndpointHints h = s.getEndpoints().get(0).getHints();
            assertThat(h.getForZones()).extracting(ForZone::getName).containsExactly("a");
            assertThat(h.getForNodes()).extracting(ForNode::getName).containsExactly("n1");
        });
    }

    @Test
    void otherValuesRemoveHints() {
        EndpointSlice hinted = slice("h", ep("10.0.0.1", "a", "n1", true, zoneHint("a")));
        EndpointSlice clean = slice("c", ep("10.0.0.2", "a", "n1", true, null));
        TrafficDist.Result r = TrafficDist.reconcileHints(null, List.of(), List.of(), List.of(hinted, clean));
        assertThat(r.unchanged()).containsExactly(clean);
        assertThat(r.toUpdate()).singleElement().satisfies(s -> assertThat(s.getEndpoints().get(0).getHints()).isNull());
    }
}
