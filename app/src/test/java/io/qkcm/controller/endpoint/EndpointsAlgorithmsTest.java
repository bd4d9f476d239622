package io.qkcm.controller.endpoint;

import io.qkcm.controller.GoIP;
import io.qkcm.controller.GoTime;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.EndpointAddress;
import io.fabric8.kubernetes.api.model.EndpointAddressBuilder;
import io.fabric8.kubernetes.api.model.EndpointPort;
import io.fabric8.kubernetes.api.model.EndpointPortBuilder;
import io.fabric8.kubernetes.api.model.EndpointSubset;
import io.fabric8.kubernetes.api.model.Endpoints;
import io.fabric8.kubernetes.api.model.EndpointsBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.ServicePortBuilder;

/** The algorithms of endpoints-controller, against upstream's unit-test tables. */
class EndpointsAlgorithmsTest {

    // ---- truncateEndpoints (upstream TestTruncateEndpoints) ----

    private static List<EndpointSubset> subsets(int[] ready, int[] notReady) {
        List<EndpointSubset> out = new ArrayList<>();
        for (int i = 0; i < ready.length; i++) {
            EndpointSubset s = new EndpointSubset();
            List<EndpointAddress> r = new ArrayList<>();
            for (int j = 0; j < ready[i]; j++) {
                r.add(new EndpointAddress());
            }
            List<EndpointAddress> n = new ArrayList<>();
            for (int j = 0; j < notReady[i]; j++) {
                n.add(new EndpointAddress());
            }
            s.setAddresses(r);
            s.setNotReadyAddresses(n);
            out.add(s);
        }
        return out;
    }

    private static void assertTruncation(int[] ready, int[] notReady, int[] expReady, int[] expNotReady,
            boolean truncated) {
        List<EndpointSubset> s = subsets(ready, notReady);
        assertThat(EndpointsCapacity.truncate(s)).isEqualTo(truncated);
        for (int i = 0; i < s.size(); i++) {
            assertThat(s.get(i).getAddresses()).as("ready in subset %d", i).hasSize(expReady[i]);
            assertThat(s.get(i).getNotReadyAddresses()).as("not ready in subset %d", i).hasSize(expNotReady[i]);
        }
    }

    @Test
    void truncateEmpty() {
        assertTruncation(new int[0], new int[0], new int[0], new int[0], false);
    }

    @Test
    void truncateBelowAndAtCapacityKeepsEverything() {
        assertTruncation(new int[] {50, 100, 100, 100, 100}, new int[] {50, 100, 100, 100, 100},
                new int[] {50, 100, 100, 100, 100}, new int[] {50, 100, 100, 100, 100}, false);
        assertTruncation(new int[] {100, 100, 100, 100, 100}, new int[] {100, 100, 100, 100, 100},
                new int[] {100, 100, 100, 100, 100}, new int[] {100, 100, 100, 100, 100}, false);
    }

    @Test
    void truncateNotReadyProportionallyWhenReadyFit() {
        assertTruncation(new int[] {90, 110, 50, 10, 20}, new int[] {101, 200, 200, 201, 298},
                new int[] {90, 110, 50, 10, 20}, new int[] {73, 144, 144, 145, 214}, true);
    }

    @Test
    void truncateReadyProportionallyAndDropNotReadyWhenReadyExceed() {
        assertTruncation(new int[] {205, 400, 402, 400, 693}, new int[] {100, 200, 200, 200, 300},
                new int[] {98, 191, 192, 191, 328}, new int[] {0, 0, 0, 0, 0}, true);
    }

    // ---- capacityAnnotationSetCorrectly ----

    @Test
    void capacityAnnotation() {
        List<EndpointSubset> atCap = subsets(new int[] {1000}, new int[] {0});
        List<EndpointSubset> overCap = subsets(new int[] {1000}, new int[] {1});
        Map<String, String> annotated = Map.of(EndpointsCapacity.OVER_CAPACITY_ANNOTATION, "truncated");
        assertThat(EndpointsCapacity.annotationSetCorrectly(null, atCap)).isTrue();
        assertThat(EndpointsCapacity.annotationSetCorrectly(Map.of(), atCap)).isTrue();
        assertThat(EndpointsCapacity.annotationSetCorrectly(annotated, atCap)).isFalse();
        assertThat(EndpointsCapacity.annotationSetCorrectly(Map.of(), overCap)).isFalse();
        assertThat(EndpointsCapacity.annotationSetCorrectly(annotated, overCap)).isFalse();
        assertThat(EndpointsCapacity.annotationSetCorrectly(Map.of("other", "x"), null)).isTrue();
    }

    // ---- endpointSubsetsEqualIgnoreResourceVersion (upstream TestEndpointSubsetsEqualIgnoreResourceVersion) ----

    private static EndpointAddress address(String ip, String podRv) {
        return new EndpointAddressBuilder().withIp(ip).withNodeName("n1").withNewTargetRef().withKind("Pod")
                .withNamespace("ns").withName("p-" + ip).withUid("uid-" + ip).withResourceVersion(podRv).endTargetRef()
                .build();
    }

    private static EndpointSubset subset(List<EndpointAddress> ready, List<EndpointAddress> notReady, int port) {
        EndpointSubset s = new EndpointSubset();
        s.setAddresses(ready);
        s.setNotReadyAddresses(notReady);
        s.setPorts(new ArrayList<>(List.of(new EndpointPortBuilder().withName("http").withPort(port)
                .withProtocol("TCP").build())));
        return s;
    }

    @Test
    void subsetsEqualIgnoringTargetResourceVersion() {
        List<EndpointSubset> a = List.of(subset(List.of(address("10.0.0.1", "1")), List.of(address("10.0.0.2", "1")), 80));
        List<EndpointSubset> b = List.of(subset(List.of(address("10.0.0.1", "2")), List.of(address("10.0.0.2", "3")), 80));
        assertThat(EndpointsComparison.subsetsEqualIgnoreResourceVersion(a, b)).isTrue();
        // anything else differing is a difference
        List<EndpointSubset> ip = List.of(subset(List.of(address("10.0.0.9", "1")), List.of(address("10.0.0.2", "1")), 80));
        List<EndpointSubset> port = List.of(subset(List.of(address("10.0.0.1", "1")), List.of(address("10.0.0.2", "1")), 81));
        List<EndpointSubset> readiness = List.of(subset(List.of(address("10.0.0.1", "1"), address("10.0.0.2", "1")),
                List.of(), 80));
        assertThat(EndpointsComparison.subsetsEqualIgnoreResourceVersion(a, ip)).isFalse();
        assertThat(EndpointsComparison.subsetsEqualIgnoreResourceVersion(a, port)).isFalse();
        assertThat(EndpointsComparison.subsetsEqualIgnoreResourceVersion(a, readiness)).isFalse();
        EndpointAddress noNode = address("10.0.0.1", "1");
        noNode.setNodeName(null);
        EndpointAddress emptyNode = address("10.0.0.1", "1");
        emptyNode.setNodeName("");
        // nodeName is a pointer upstream: unset and "" differ
        assertThat(EndpointsComparison.subsetsEqualIgnoreResourceVersion(
                List.of(subset(List.of(noNode), null, 80)), List.of(subset(List.of(emptyNode), List.of(), 80)))).isFalse();
        // hostname is a plain string: unset and "" are the same; a nil list equals an empty one
        EndpointAddress noHost = address("10.0.0.1", "1");
        EndpointAddress emptyHost = address("10.0.0.1", "1");
        emptyHost.setHostname("");
        assertThat(EndpointsComparison.subsetsEqualIgnoreResourceVersion(
                List.of(subset(List.of(noHost), null, 80)), List.of(subset(List.of(emptyHost), List.of(), 80)))).isTrue();
        assertThat(EndpointsComparison.subsetsEqualIgnoreResourceVersion(null, List.of())).isTrue();
        assertThat(EndpointsComparison.subsetsEqualIgnoreResourceVersion(null, a)).isFalse();
        EndpointPort app = new EndpointPortBuilder().withName("http").withPort(80).withProtocol("TCP")
                .withAppProtocol("h2c").build();
        EndpointSubset withApp = subset(List.of(address("10.0.0.1", "1")), List.of(address("10.0.0.2", "1")), 80);
        withApp.setPorts(List.of(app));
        assertThat(EndpointsComparison.subsetsEqualIgnoreResourceVersion(a, List.of(withApp))).isFalse();
    }

    // ---- labelsCorrectForEndpoints ----

    @Test
    void labelsCorrect() {
        String mb = EndpointsComparison.LABEL_MANAGED_BY;
        String hl = EndpointsComparison.IS_HEADLESS_SERVICE;
        assertThat(EndpointsComparison.labelsCorrect(Map.of(mb, "endpoint-controller"), null)).isTrue();
        assertThat(EndpointsComparison.labelsCorrect(Map.of(), Map.of())).isFalse();
        assertThat(EndpointsComparison.labelsCorrect(Map.of(mb, "someone-else"), Map.of())).isFalse();
        assertThat(EndpointsComparison.labelsCorrect(Map.of(mb, "endpoint-controller", hl, "", "a", "1"),
                Map.of("a", "1"))).isTrue();
        assertThat(EndpointsComparison.labelsCorrect(Map.of(mb, "endpoint-controller", "a", "1"),
                Map.of("a", "2"))).isFalse();
        assertThat(EndpointsComparison.labelsCorrect(Map.of(mb, "endpoint-controller", "a", "1"),
                Map.of("a", "1", "b", "2"))).isFalse();
        assertThat(EndpointsComparison.labelsCorrect(Map.of(mb, "endpoint-controller", "a", "1", "x", "y"),
                Map.of("a", "1"))).isFalse();
    }

    // ---- StaleEndpointsTracker ----

    @Test
    void staleTracker() {
        StaleEndpointsTracker t = new StaleEndpointsTracker();
        Endpoints v1 = new EndpointsBuilder().withNewMetadata().withNamespace("ns").withName("a")
                .withResourceVersion("1").endMetadata().build();
        Endpoints v2 = new EndpointsBuilder(v1).editMetadata().withResourceVersion("2").endMetadata().build();
        assertThat(t.isStale(v1)).isFalse();
        t.stale(v1);
        assertThat(t.isStale(v1)).isTrue();
        assertThat(t.isStale(v2)).isFalse();
        t.delete("ns", "a");
        assertThat(t.isStale(v1)).isFalse();
    }

    // ---- IPs and times as Go formats them ----

    @Test
    void goIPs() {
        assertThat(GoIP.format(GoIP.parseSloppy("10.0.0.1"))).isEqualTo("10.0.0.1");
        assertThat(GoIP.format(GoIP.parseSloppy("010.000.001.002"))).isEqualTo("10.0.1.2");
        assertThat(GoIP.isIPv6(GoIP.parseSloppy("10.0.0.1"))).isFalse();
        assertThat(GoIP.isIPv6(GoIP.parseSloppy("::ffff:10.0.0.1"))).isFalse();
        assertThat(GoIP.format(GoIP.parseSloppy("::ffff:10.0.0.1"))).isEqualTo("10.0.0.1");
        assertThat(GoIP.isIPv6(GoIP.parseSloppy("2001:db8::1"))).isTrue();
        assertThat(GoIP.format(GoIP.parseSloppy("2001:0DB8:0000:0000:0000:0000:0000:0001"))).isEqualTo("2001:db8::1");
        assertThat(GoIP.format(GoIP.parseSloppy("2001:db8:0:1:0:0:0:1"))).isEqualTo("2001:db8:0:1::1");
        assertThat(GoIP.format(GoIP.parseSloppy("2001:0:0:1:0:0:1:1"))).isEqualTo("2001::1:0:0:1:1");
        assertThat(GoIP.format(GoIP.parseSloppy("2001:db8:1:1:1:1:0:1"))).isEqualTo("2001:db8:1:1:1:1:0:1");
        assertThat(GoIP.format(GoIP.parseSloppy("::"))).isEqualTo("::");
        assertThat(GoIP.format(GoIP.parseSloppy("fe80::"))).isEqualTo("fe80::");
        assertThat(GoIP.format(GoIP.parseSloppy("::1"))).isEqualTo("::1");
        assertThat(GoIP.format(GoIP.parseSloppy("::1.2.3.4"))).isEqualTo("::102:304");
        assertThat(GoIP.parseSloppy("300.1.1.1")).isNull();
        assertThat(GoIP.parseSloppy("fe80::1%eth0")).isNull();
        assertThat(GoIP.parseSloppy("1::2::3")).isNull();
        assertThat(GoIP.parseSloppy("not-an-ip")).isNull();
        assertThat(GoIP.parseSloppy("")).isNull();
    }

    @Test
    void rfc3339Nano() {
        assertThat(GoTime.rfc3339NanoUtc(Instant.parse("2024-05-06T07:08:09Z"))).isEqualTo("2024-05-06T07:08:09Z");
        assertThat(GoTime.rfc3339NanoUtc(Instant.parse("2024-05-06T07:08:09.120Z"))).isEqualTo("2024-05-06T07:08:09.12Z");
        assertThat(GoTime.rfc3339NanoUtc(Instant.parse("2024-05-06T07:08:09.000000001Z")))
                .isEqualTo("2024-05-06T07:08:09.000000001Z");
    }

    // ---- podToEndpointAddressForService (upstream TestPodToEndpointAddressForService) ----

    private static Pod dualStackPod(String... ips) {
        PodBuilder b = new PodBuilder().withNewMetadata().withNamespace("ns").withName("p").withUid("u1")
                .withResourceVersion("7").endMetadata().withNewSpec().withNodeName("node-1").endSpec().withNewStatus()
                .withPodIP(ips[0]).endStatus();
        for (String ip : ips) {
            b.editStatus().addNewPodIP().withIp(ip).endPodIP().endStatus();
        }
        return b.build();
    }

    private static Service service(String clusterIP, String... families) {
        return new ServiceBuilder().withNewMetadata().withNamespace("ns").withName("s").endMetadata().withNewSpec()
                .withClusterIP(clusterIP).withIpFamilies(families).endSpec().build();
    }

    @Test
    void podAddressOfTheServiceFamily() {
        Pod pod = dualStackPod("010.0.0.5", "3000:0:0::5");
        EndpointAddress v4 = EndpointsController.podToEndpointAddressForService(service("10.0.0.1", "IPv4"), pod);
        assertThat(v4.getIp()).isEqualTo("10.0.0.5");
        assertThat(v4.getNodeName()).isEqualTo("node-1");
        assertThat(v4.getHostname()).isNull();
        assertThat(v4.getTargetRef().getKind()).isEqualTo("Pod");
        assertThat(v4.getTargetRef().getNamespace()).isEqualTo("ns");
        assertThat(v4.getTargetRef().getName()).isEqualTo("p");
        assertThat(v4.getTargetRef().getUid()).isEqualTo("u1");
        assertThat(v4.getTargetRef().getResourceVersion()).isNull();
        assertThat(EndpointsController.podToEndpointAddressForService(service("None", "IPv6"), pod).getIp())
                .isEqualTo("3000::5");
        assertThat(EndpointsController.podToEndpointAddressForService(service("3000::1", "IPv6"),
                dualStackPod("10.0.0.5"))).isNull();
        // no ipFamilies (never from an API server): the clusterIP's family
        assertThat(EndpointsController.podToEndpointAddressForService(service("3000::1"), pod).getIp())
                .isEqualTo("3000::5");
        assertThat(EndpointsController.podToEndpointAddressForService(service("None"), pod).getIp())
                .isEqualTo("10.0.0.5");
    }

    @Test
    void endpointPortFromServicePort() {
        EndpointPort p = EndpointsController.endpointPortFromServicePort(new ServicePortBuilder().withName("http")
                .withPort(80).withProtocol("UDP").withAppProtocol("dns").withNewTargetPort("named").build(), 5353);
        assertThat(p.getName()).isEqualTo("http");
        assertThat(p.getPort()).isEqualTo(5353);
        assertThat(p.getProtocol()).isEqualTo("UDP");
        assertThat(p.getAppProtocol()).isEqualTo("dns");
    }

    @Test
    void serviceIPSet() {
        assertThat(EndpointsController.isServiceIPSet(service("10.0.0.1"))).isTrue();
        assertThat(EndpointsController.isServiceIPSet(service("None"))).isFalse();
        assertThat(EndpointsController.isServiceIPSet(service(""))).isFalse();
        assertThat(EndpointsController.isServiceIPSet(service(null))).isFalse();
    }
}
