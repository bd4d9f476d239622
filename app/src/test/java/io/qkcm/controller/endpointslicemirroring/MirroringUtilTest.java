package io.qkcm.controller.endpointslicemirroring;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.EndpointAddressBuilder;
import io.fabric8.kubernetes.api.model.Endpoints;
import io.fabric8.kubernetes.api.model.EndpointsBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointPort;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;

class MirroringUtilTest {

    @Test
    void generateNamePrefix() {
        assertThat(MirroringUtil.endpointSlicePrefix("web")).isEqualTo("web-");
        String longName = "a".repeat(253);
        assertThat(MirroringUtil.endpointSlicePrefix(longName)).isEqualTo(longName + "-");
        // a name that is no valid subdomain: the prefix keeps it without the dash
        assertThat(MirroringUtil.endpointSlicePrefix("Web")).isEqualTo("Web");
    }

    @Test
    void newSliceCopiesLabelsAndAnnotationsButTheDroppedOnes() {
        Endpoints ep = new EndpointsBuilder().withNewMetadata().withNamespace("ns").withName("svc").withUid("u1")
                .withLabels(Map.of("a", "b", "kubernetes.io/service-name", "other"))
                .withAnnotations(Map.of("x", "y", "endpoints.kubernetes.io/last-change-trigger-time", "t",
                        "kubectl.kubernetes.io/last-applied-configuration", "{}"))
                .endMetadata().build();
        EndpointSlice s = MirroringUtil.newEndpointSlice(ep, List.of(), "IPv4", null);
        assertThat(s.getMetadata().getLabels()).containsExactlyInAnyOrderEntriesOf(Map.of("a", "b",
                "kubernetes.io/service-name", "svc",
                "endpointslice.kubernetes.io/managed-by", "endpointslicemirroring-controller.k8s.io"));
        assertThat(s.getMetadata().getAnnotations()).containsExactlyInAnyOrderEntriesOf(Map.of("x", "y"));
        assertThat(s.getMetadata().getGenerateName()).isEqualTo("svc-");
        assertThat(s.getMetadata().getName()).isNull();
        assertThat(s.getMetadata().getNamespace()).isEqualTo("ns");
        assertThat(s.getMetadata().getOwnerReferences()).singleElement().satisfies(o -> {
            assertThat(o.getKind()).isEqualTo("Endpoints");
            assertThat(o.getUid()).isEqualTo("u1");
            assertThat(o.getController()).isTrue();
        });
        EndpointSlice named = MirroringUtil.newEndpointSlice(ep, List.of(), "IPv6", "svc-abcde");
        assertThat(named.getMetadata().getName()).isEqualTo("svc-abcde");
        assertThat(named.getMetadata().getGenerateName()).isNull();
        assertThat(named.getAddressType()).isEqualTo("IPv6");
    }

    @Test
    void addressToEndpoint() {
        Map.Entry<Endpoint, String> e = MirroringUtil.addressToEndpoint(new EndpointAddressBuilder()
                .withIp("010.0.0.1").withHostname("h").withNodeName("n").build(), false);
        assertThat(e.getValue()).isEqualTo("IPv4");
        assertThat(e.getKey().getAddresses()).containsExactly("10.0.0.1");
        assertThat(e.getKey().getConditions().getReady()).isFalse();
        assertThat(e.getKey().getHostname()).isEqualTo("h");
        assertThat(e.getKey().getNodeName()).isEqualTo("n");
        Map.Entry<Endpoint, String> v6 = MirroringUtil.addressToEndpoint(
                new EndpointAddressBuilder().withIp("fd00::0:1").withHostname("").build(), true);
        assertThat(v6.getValue()).isEqualTo("IPv6");
        assertThat(v6.getKey().getAddresses()).containsExactly("fd00::1");
        assertThat(v6.getKey().getHostname()).isNull();
        assertThat(MirroringUtil.addressToEndpoint(new EndpointAddressBuilder().withIp("nope").build(), true))
                .isNull();
    }

    @Test
    void portsAndKeys() {
        List<EndpointPort> ports = MirroringUtil.epPortsToEpsPorts(List.of(
                new io.fabric8.kubernetes.api.model.EndpointPortBuilder().withPort(80).withProtocol("TCP").build()));
        assertThat(ports).singleElement().satisfies(p -> {
            assertThat(p.getName()).isEqualTo("");
            assertThat(p.getPort()).isEqualTo(80);
        });
        String v4 = MirroringUtil.addrTypePortMapKey(ports, "IPv4");
        String v6 = MirroringUtil.addrTypePortMapKey(ports, "IPv6");
        assertThat(v4).startsWith("IPv4-").isNotEqualTo(v6);
        assertThat(MirroringUtil.addressTypeOfKey(v4)).isEqualTo("IPv4");
        assertThat(MirroringUtil.addressTypeOfKey(v6)).isEqualTo("IPv6");
    }

    @Test
    void labelRules() {
        assertThat(MirroringUtil.skipMirror(Map.of("endpointslice.kubernetes.io/skip-mirror", "true"))).isTrue();
        assertThat(MirroringUtil.skipMirror(Map.of("endpointslice.kubernetes.io/skip-mirror", "True"))).isFalse();
        assertThat(MirroringUtil.skipMirror(null)).isFalse();
        assertThat(MirroringUtil.hasLeaderElection(Map.of("control-plane.alpha.kubernetes.io/leader", ""))).isTrue();
        assertThat(MirroringUtil.semanticEqual(null, Map.of())).isTrue();
    }
}
