package io.qkcm.endpointslice.util;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.ObjectReferenceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.ServicePort;
import io.fabric8.kubernetes.api.model.ServicePortBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointPort;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointPortBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceBuilder;

class EndpointSliceUtilTest {

    static Pod pod(String name, String rv, boolean ready, String ip, Map<String, String> labels) {
        return new PodBuilder().withNewMetadata().withName(name).withNamespace("ns").withUid("uid-" + name)
                .withResourceVersion(rv).withLabels(labels).endMetadata()
                .withNewSpec().addNewContainer().withName("c").addNewPort().withName("http").withContainerPort(8080)
                .withProtocol("TCP").endPort().endContainer()
                .addNewInitContainer().withName("sidecar").withRestartPolicy("Always").addNewPort().withName("proxy")
                .withContainerPort(15001).withProtocol("TCP").endPort().endInitContainer()
                .addNewInitContainer().withName("init").addNewPort().withName("init-only").withContainerPort(1)
                .withProtocol("TCP").endPort().endInitContainer().endSpec()
                .withNewStatus().withPhase("Running").withPodIP(ip).addNewPodIP().withIp(ip).endPodIP()
                .addNewCondition().withType("Ready").withStatus(ready ? "True" : "False")
                .withLastTransitionTime("2026-11-21T10:00:00Z").endCondition().endStatus().build();
    }

    static ServicePort port(IntOrString target, String protocol) {
        return new ServicePortBuilder().withPort(80).withTargetPort(target).withProtocol(protocol).build();
    }

    @Test
    void findPortResolvesNumbersNamesAndSidecarsOnly() throws Exception {
        Pod p = pod("a", "1", true, "10.0.0.1", Map.of());
        assertThat(EndpointSliceUtil.findPort(p, port(new IntOrString(9376), "TCP"))).isEqualTo(9376);
        assertThat(EndpointSliceUtil.findPort(p, port(new IntOrString("http"), "TCP"))).isEqualTo(8080);
        assertThat(EndpointSliceUtil.findPort(p, port(new IntOrString("proxy"), "TCP"))).isEqualTo(15001);
        assertThatThrownBy(() -> EndpointSliceUtil.findPort(p, port(new IntOrString("http"), "UDP")))
                .isInstanceOf(PortNotFoundException.class).hasMessage("no suitable port for manifest: uid-a");
        assertThatThrownBy(() -> EndpointSliceUtil.findPort(p, port(new IntOrString("init-only"), "TCP")))
                .isInstanceOf(PortNotFoundException.class);
    }

    @Test
    void podsWithoutIpTerminalOrDeletingAreNoEndpoints() {
        Pod p = pod("a", "1", false, "10.0.0.1", Map.of());
        assertThat(EndpointSliceUtil.shouldPodBeInEndpoints(p, false)).isTrue();
        Pod noIp = new PodBuilder(p).editStatus().withPodIP(null).withPodIPs(List.of()).endStatus().build();
        assertThat(EndpointSliceUtil.shouldPodBeInEndpoints(noIp, true)).isFalse();
        Pod done = new PodBuilder(p).editStatus().withPhase("Succeeded").endStatus().build();
        assertThat(EndpointSliceUtil.shouldPodBeInEndpoints(done, true)).isFalse();
        Pod deleting = new PodBuilder(p).editMetadata().withDeletionTimestamp("2026-11-21T10:00:00Z").endMetadata().build();
        assertThat(EndpointSliceUtil.shouldPodBeInEndpoints(deleting, false)).isFalse();
        assertThat(EndpointSliceUtil.shouldPodBeInEndpoints(deleting, true)).isTrue();
    }

    @Test
    void hostnameOnlyForTheSubdomainService() {
        Pod p = new PodBuilder(pod("a", "1", true, "10.0.0.1", Map.of())).editSpec().withHostname("web-0")
                .withSubdomain("web").endSpec().build();
        assertThat(EndpointSliceUtil.shouldSetHostname(p,
                new ServiceBuilder().withNewMetadata().withName("web").withNamespace("ns").endMetadata().build())).isTrue();
        assertThat(EndpointSliceUtil.shouldSetHostname(p,
                new ServiceBuilder().withNewMetadata().withName("other").withNamespace("ns").endMetadata().build())).isFalse();
    }

    @Test
    void podChangesThatMatter() {
        Pod a = pod("a", "1", false, "10.0.0.1", Map.of("app", "x"));
        assertThat(EndpointSliceUtil.podEndpointsChanged(a, pod("a", "2", false, "10.0.0.1", Map.of("app", "x"))))
                .containsExactly(false, false);
        assertThat(EndpointSliceUtil.podEndpointsChanged(a, pod("a", "2", true, "10.0.0.1", Map.of("app", "x"))))
                .containsExactly(true, false);
        assertThat(EndpointSliceUtil.podEndpointsChanged(a, pod("a", "2", false, "10.0.0.2", Map.of("app", "x"))))
                .containsExactly(true, false);
        assertThat(EndpointSliceUtil.podEndpointsChanged(a, pod("a", "2", false, "10.0.0.1", Map.of("app", "y"))))
                .containsExactly(false, true);
        // label-only changes update the services joined or left; a real change updates both sides
        assertThat(EndpointSliceUtil.determineNeededServiceUpdates(Set.of("ns/a", "ns/b"), Set.of("ns/b", "ns/c"), false))
                .containsExactlyInAnyOrder("ns/a", "ns/c");
        assertThat(EndpointSliceUtil.determineNeededServiceUpdates(Set.of("ns/a", "ns/b"), Set.of("ns/b", "ns/c"), true))
                .containsExactlyInAnyOrder("ns/a", "ns/b", "ns/c");
    }

    @Test
    void portsAreOrderedByUpstreamDigest() {
        // digests from hack/golden/podtemplatehash md5: http/8080 3a66…, ""/UDP/53 4b47…, https/8443/h2c fd81…
        EndpointPort https = new EndpointPortBuilder().withName("https").withProtocol("TCP").withPort(8443)
                .withAppProtocol("kubernetes.io/h2c").build();
        EndpointPort dns = new EndpointPortBuilder().withName("").withProtocol("UDP").withPort(53).build();
        EndpointPort http = new EndpointPortBuilder().withName("http").withProtocol("TCP").withPort(8080).build();
        List<EndpointPort> ports = new ArrayList<>(List.of(https, dns, http));
        String key = EndpointSliceUtil.portMapKey(ports);
        assertThat(ports).containsExactly(http, dns, https);
        assertThat(EndpointSliceUtil.portMapKey(new ArrayList<>(List.of(dns, https, http)))).isEqualTo(key);
        assertThat(EndpointSliceUtil.portMapKey(new ArrayList<>(List.of(dns, http)))).isNotEqualTo(key);
    }

    @Test
    void endpointEqualityBeyondIdentity() {
        Endpoint a = new EndpointBuilder().withAddresses("10.0.0.1").withNodeName("n").withNewConditions()
                .withReady(true).endConditions().withTargetRef(new ObjectReferenceBuilder().withKind("Pod")
                        .withName("p").withNamespace("ns").withResourceVersion("1").build()).build();
        Endpoint b = new EndpointBuilder(a).editTargetRef().withResourceVersion("2").endTargetRef().build();
        assertThat(EndpointSliceUtil.endpointsEqualBeyondHash(a, b)).isTrue();
        assertThat(EndpointSliceUtil.endpointsEqualBeyondHash(a,
                new EndpointBuilder(a).editConditions().withReady(false).endConditions().build())).isFalse();
        assertThat(EndpointSliceUtil.endpointsEqualBeyondHash(a, new EndpointBuilder(a).withZone("z").build())).isFalse();
    }

    @Test
    void endpointSetIdentityIsAddressesHostnameAndTarget() {
        Endpoint a = new EndpointBuilder().withAddresses("10.0.0.2", "10.0.0.1").withTargetRef(
                new ObjectReferenceBuilder().withName("p").withNamespace("ns").build()).build();
        EndpointSet set = new EndpointSet().insert(a);
        assertThat(a.getAddresses()).containsExactly("10.0.0.1", "10.0.0.2");
        Endpoint sameIdentity = new EndpointBuilder(a).withNodeName("other").build();
        assertThat(set.has(sameIdentity)).isTrue();
        assertThat(set.get(sameIdentity)).isSameAs(a);
        assertThat(set.has(new EndpointBuilder(a).withHostname("h").build())).isFalse();
        assertThat(set.popAny()).isSameAs(a);
        assertThat(set.size()).isZero();
        assertThat(set.popAny()).isNull();
    }

    static EndpointSlice slice(String uid, long generation) {
        return new EndpointSliceBuilder().withNewMetadata().withName("s-" + uid).withNamespace("ns").withUid(uid)
                .withGeneration(generation).withLabels(Map.of("kubernetes.io/service-name", "svc")).endMetadata()
                .withAddressType("IPv4").build();
    }

    @Test
    void trackerDetectsOwnWritesAndStaleCaches() {
        EndpointSliceTracker t = new EndpointSliceTracker();
        var svc = new ServiceBuilder().withNewMetadata().withName("svc").withNamespace("ns").endMetadata().build();
        assertThat(t.shouldSync(slice("a", 1))).isTrue();
        t.update(slice("a", 2));
        assertThat(t.has(slice("a", 1))).isTrue();
        assertThat(t.shouldSync(slice("a", 2))).isFalse();
        assertThat(t.shouldSync(slice("a", 3))).isTrue();
        assertThat(t.staleSlices(svc, List.of(slice("a", 1)))).isTrue();
        assertThat(t.staleSlices(svc, List.of(slice("a", 2)))).isFalse();
        assertThat(t.staleSlices(svc, List.of())).isTrue();
        t.expectDeletion(slice("a", 2));
        assertThat(t.staleSlices(svc, List.of(slice("a", 2)))).isTrue();
        assertThat(t.staleSlices(svc, List.of())).isFalse();
        assertThat(t.handleDeletion(slice("a", 2))).isTrue();
        t.update(slice("b", 1));
        assertThat(t.handleDeletion(slice("b", 1))).isFalse();
        t.update(slice("c", 1));
        t.deleteService("ns", "svc");
        assertThat(t.has(slice("c", 1))).isFalse();
    }

    @Test
    void triggerTimeIsCreationFirstThenEarliestNewChange() {
        TriggerTimeTracker t = new TriggerTimeTracker();
        var svc = new ServiceBuilder().withNewMetadata().withName("svc").withNamespace("ns")
                .withCreationTimestamp("2026-11-21T09:00:00Z").endMetadata().build();
        Pod a = pod("a", "1", true, "10.0.0.1", Map.of());
        assertThat(t.computeEndpointLastChangeTriggerTime("ns", svc, List.of(a)))
                .isEqualTo(Instant.parse("2026-11-21T09:00:00Z"));
        assertThat(t.computeEndpointLastChangeTriggerTime("ns", svc, List.of(a))).isNull();
        Pod b = new PodBuilder(pod("b", "1", true, "10.0.0.2", Map.of())).editStatus().editFirstCondition()
                .withLastTransitionTime("2026-11-21T11:00:00Z").endCondition().endStatus().build();
        Pod a2 = new PodBuilder(a).editStatus().editFirstCondition().withLastTransitionTime("2026-11-21T10:30:00Z")
                .endCondition().endStatus().build();
        assertThat(t.computeEndpointLastChangeTriggerTime("ns", svc, List.of(a2, b)))
                .isEqualTo(Instant.parse("2026-11-21T10:30:00Z"));
        t.deleteService("ns", "svc");
        assertThat(t.computeEndpointLastChangeTriggerTime("ns", svc, List.of(a2, b)))
                .isEqualTo(Instant.parse("2026-11-21T09:00:00Z"));
    }
}
