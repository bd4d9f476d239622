package io.qkcm.controller.endpointslicemirroring;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.EndpointAddressBuilder;
import io.fabric8.kubernetes.api.model.EndpointPortBuilder;
import io.fabric8.kubernetes.api.model.EndpointSubsetBuilder;
import io.fabric8.kubernetes.api.model.Endpoints;
import io.fabric8.kubernetes.api.model.EndpointsBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.qkcm.controller.endpointslicemirroring.metrics.MirroringMetrics;
import io.qkcm.runtime.events.EventRecorder;
import io.qkcm.endpointslice.util.EndpointSliceTracker;

/**
 * The reconciler against fabric8's CRUD mock API: the cases a real API server cannot produce (it
 * rejects invalid IPs in Endpoints) and the create/update/delete decisions.
 */
@EnableKubernetesMockClient(crud = true)
class ReconcilerTest {

    static KubernetesClient client;

    record Recorded(String type, String reason, String message) {
    }

    private final List<Recorded> events = Collections.synchronizedList(new ArrayList<>());
    private final EventRecorder recorder = new EventRecorder() {
        @Override
        public void event(HasMetadata object, String type, String reason, String message) {
            events.add(new Recorded(type, reason, message));
        }
    };
    private String ns;

    @BeforeEach
    void namespace() {
        ns = "t" + System.nanoTime();
    }

    private Reconciler reconciler(int max) {
        return new Reconciler(client, new EndpointSliceTracker(), recorder, max, new MirroringMetrics(new io.micrometer.core.instrument.simple.SimpleMeterRegistry()));
    }

    private Endpoints endpoints(int port, List<String> ready, List<String> notReady) {
        return new EndpointsBuilder().withNewMetadata().withNamespace(ns).withName("svc").withUid("uid-1")
                .endMetadata()
                .withSubsets(new EndpointSubsetBuilder()
                        .withAddresses(ready.stream().map(ip -> new EndpointAddressBuilder().withIp(ip).build()).toList())
                        .withNotReadyAddresses(
                                notReady.stream().map(ip -> new EndpointAddressBuilder().withIp(ip).build()).toList())
                        .withPorts(new EndpointPortBuilder().withName("http").withPort(port).withProtocol("TCP").build())
                        .build())
                .build();
    }

    private List<EndpointSlice> slices() {
        List<EndpointSlice> items = new ArrayList<>(
                client.discovery().v1().endpointSlices().inNamespace(ns).list().getItems());
        items.sort(Comparator.comparing(EndpointSlice::getAddressType));
        return items;
    }

    private static List<String> addresses(EndpointSlice s) {
        return s.getEndpoints().stream().map(e -> e.getAddresses().get(0)).sorted().toList();
    }

    @Test
    void invalidAddressesAreSkippedWithAWarningEvent() {
        reconciler(1000).reconcile(endpoints(80, List.of("10.0.0.1", "not-an-ip", "1.2.3"), List.of("fd00::0:1")),
                List.of());
        List<EndpointSlice> slices = slices();
        assertThat(slices).extracting(EndpointSlice::getAddressType).containsExactly("IPv4", "IPv6");
        assertThat(addresses(slices.get(0))).containsExactly("10.0.0.1");
        assertThat(addresses(slices.get(1))).containsExactly("fd00::1");
        assertThat(slices.get(1).getEndpoints().get(0).getConditions().getReady()).isFalse();
        assertThat(events).containsExactly(new Recorded("Warning", "InvalidIPAddress",
                "Skipped 2 invalid IP addresses when mirroring to EndpointSlices"));
    }

    @Test
    void addressesOverTheLimitAreSkippedWithTheirOwnEvent() {
        // "bad" sorts after the IPs (RepackSubsets order), so the limit is reached before it is looked at
        reconciler(2).reconcile(endpoints(80, List.of("10.0.0.1", "10.0.0.2", "10.0.0.3", "bad"), List.of()),
                List.of());
        assertThat(addresses(slices().get(0))).containsExactly("10.0.0.1", "10.0.0.2");
        assertThat(events).containsExactly(new Recorded("Warning", "TooManyAddressesToMirror",
                "A max of 2 addresses can be mirrored to EndpointSlices per Endpoints subset. 2 addresses were skipped"));

        events.clear();
        ns = ns + "b";
        // an invalid address before the limit: both events, the second counting every skipped address
        reconciler(2).reconcile(endpoints(80, List.of("1.1", "10.0.0.1", "10.0.0.2", "10.0.0.3"), List.of()),
                List.of());
        assertThat(events).containsExactly(
                new Recorded("Warning", "InvalidIPAddress", "Skipped 1 invalid IP addresses when mirroring to EndpointSlices"),
                new Recorded("Warning", "TooManyAddressesToMirror",
                        "A max of 2 addresses can be mirrored to EndpointSlices per Endpoints subset. 2 addresses were skipped"));
    }

    @Test
    void unchangedEndpointsWriteNothingAndChangesUpdateInPlace() {
        Reconciler r = reconciler(1000);
        Endpoints ep = endpoints(80, List.of("10.0.0.1"), List.of("10.0.0.2"));
        r.reconcile(ep, List.of());
        EndpointSlice first = slices().get(0);

        r.reconcile(ep, slices());
        assertThat(slices()).singleElement().satisfies(s -> assertThat(s.getMetadata().getResourceVersion())
                .isEqualTo(first.getMetadata().getResourceVersion()));

        r.reconcile(endpoints(80, List.of("10.0.0.1", "10.0.0.3"), List.of()), slices());
        assertThat(slices()).singleElement().satisfies(s -> {
            assertThat(s.getMetadata().getName()).isEqualTo(first.getMetadata().getName());
            assertThat(addresses(s)).containsExactly("10.0.0.1", "10.0.0.3");
        });

        // other ports: a new port map, and the old slice is recycled for it instead of delete + create
        r.reconcile(endpoints(8080, List.of("10.0.0.1"), List.of()), slices());
        assertThat(slices()).singleElement().satisfies(s -> {
            assertThat(s.getMetadata().getName()).isEqualTo(first.getMetadata().getName());
            assertThat(s.getPorts().get(0).getPort()).isEqualTo(8080);
        });

        // no addresses: no slices
        r.reconcile(endpoints(8080, List.of(), List.of()), slices());
        assertThat(slices()).isEmpty();
    }

    @Test
    void aSliceOwnedByAnEarlierEndpointsOfTheSameNameIsRebuilt() {
        Reconciler r = reconciler(1000);
        Endpoints ep = endpoints(80, List.of("10.0.0.1"), List.of());
        r.reconcile(ep, List.of());
        EndpointSlice s = slices().get(0);
        s.getMetadata().setOwnerReferences(List.of(new OwnerReferenceBuilder().withApiVersion("v1")
                .withKind("Endpoints").withName("svc").withUid("uid-0").withController(true).build()));
        client.discovery().v1().endpointSlices().inNamespace(ns).resource(s).update();

        assertThat(Reconciler.needRebuildExistingSlices(ep, slices().get(0))).isTrue();
        r.reconcile(ep, slices());
        assertThat(slices()).singleElement().satisfies(
                after -> assertThat(after.getMetadata().getOwnerReferences().get(0).getUid()).isEqualTo("uid-1"));
    }

    @Test
    void extraSlicesForOnePortMapAreDeleted() {
        Reconciler r = reconciler(1000);
        Endpoints ep = endpoints(80, List.of("10.0.0.1"), List.of());
        r.reconcile(ep, List.of());
        EndpointSlice copy = slices().get(0);
        copy.getMetadata().setName(copy.getMetadata().getName() + "x");
        copy.getMetadata().setResourceVersion(null);
        copy.getMetadata().setUid(null);
        client.discovery().v1().endpointSlices().inNamespace(ns).resource(copy).create();
        assertThat(slices()).hasSize(2);

        r.reconcile(ep, slices());
        assertThat(slices()).hasSize(1);
    }
}
