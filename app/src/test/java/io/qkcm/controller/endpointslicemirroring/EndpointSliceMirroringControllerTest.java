package io.qkcm.controller.endpointslicemirroring;

import static io.qkcm.testing.TestNamespaces.newNamespace;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;

import jakarta.inject.Inject;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.EndpointAddress;
import io.fabric8.kubernetes.api.model.EndpointAddressBuilder;
import io.fabric8.kubernetes.api.model.EndpointPortBuilder;
import io.fabric8.kubernetes.api.model.EndpointSubset;
import io.fabric8.kubernetes.api.model.EndpointSubsetBuilder;
import io.fabric8.kubernetes.api.model.Endpoints;
import io.fabric8.kubernetes.api.model.EndpointsBuilder;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.micrometer.core.instrument.MeterRegistry;
import io.qkcm.manager.ControllerManager;
import io.qkcm.testing.QueueProbe;
import io.qkcm.testing.RealApiServer;
import io.qkcm.testing.RealApiServerResource;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;

/** endpointslice-mirroring-controller against a real API server. */
@QuarkusTest
@TestProfile(EndpointSliceMirroringControllerTest.Profile.class)
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
class EndpointSliceMirroringControllerTest {

    /** The mirroring controller alone, with a small per-subset limit so truncation is cheap to show. */
    public static class Profile implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("qkcm.controllers", "endpointslice-mirroring-controller",
                    "qkcm.mirroring-max-endpoints-per-subset", "5");
        }
    }

    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final PatchContext MERGE = PatchContext.of(PatchType.JSON_MERGE);
    private static final String MANAGED_BY = "endpointslice.kubernetes.io/managed-by";
    private static final String SERVICE_NAME = "kubernetes.io/service-name";
    private static final String MIRRORING = "endpointslicemirroring-controller.k8s.io";

    static KubernetesClient client;

    @BeforeAll
    static void setUp() {
        client = RealApiServer.get().newClient();
    }

    @AfterAll
    static void tearDown() {
        client.close();
    }

    @Test
    void mirrorsCustomEndpointsOfASelectorlessServiceAndUpdatesInPlace() {
        String ns = newNamespace(client, "mirror-basic");
        service(ns, "ext", null);
        Endpoints ep = client.endpoints().inNamespace(ns).resource(new EndpointsBuilder().withNewMetadata()
                .withName("ext").withLabels(Map.of("team", "a"))
                .withAnnotations(Map.of("note", "x", "kubectl.kubernetes.io/last-applied-configuration", "{}",
                        "endpoints.kubernetes.io/last-change-trigger-time", "2024-01-01T00:00:00Z"))
                .endMetadata()
                .withSubsets(new EndpointSubsetBuilder()
                        .withAddresses(
                                new EndpointAddressBuilder().withIp("10.1.0.1").withHostname("web-0")
                                        .withNodeName("node-a").build(),
                                new EndpointAddressBuilder().withIp("10.1.0.2").withNewTargetRef().withKind("Pod")
                                        .withNamespace(ns).withName("p2").withUid("uid-p2").endTargetRef().build(),
                                address("fd00::1"))
                        .withNotReadyAddresses(address("10.1.0.3"))
                        .withPorts(new EndpointPortBuilder().withName("http").withPort(80).withProtocol("TCP").build())
                        .build())
                .build()).create();

        await().atMost(TIMEOUT).untilAsserted(() -> assertThat(mirrored(ns, "ext")).hasSize(2));
        EndpointSlice v4 = slice(ns, "ext", "IPv4");
        assertThat(v4.getMetadata().getGenerateName()).isEqualTo("ext-");
        assertThat(v4.getMetadata().getName()).matches("ext-[a-z0-9]{5}");
        assertThat(v4.getMetadata().getLabels()).containsExactlyInAnyOrderEntriesOf(
                Map.of("team", "a", SERVICE_NAME, "ext", MANAGED_BY, MIRRORING));
        // the trigger time and kubectl's last-applied configuration are not mirrored
        assertThat(v4.getMetadata().getAnnotations()).containsExactlyInAnyOrderEntriesOf(Map.of("note", "x"));
        OwnerReference owner = v4.getMetadata().getOwnerReferences().get(0);
        assertThat(v4.getMetadata().getOwnerReferences()).hasSize(1);
        assertThat(owner.getApiVersion()).isEqualTo("v1");
        assertThat(owner.getKind()).isEqualTo("Endpoints");
        assertThat(owner.getName()).isEqualTo("ext");
        assertThat(owner.getUid()).isEqualTo(ep.getMetadata().getUid());
        assertThat(owner.getController()).isTrue();
        assertThat(owner.getBlockOwnerDeletion()).isTrue();
        assertThat(v4.getPorts()).singleElement().satisfies(p -> {
            assertThat(p.getName()).isEqualTo("http");
            assertThat(p.getPort()).isEqualTo(80);
            assertThat(p.getProtocol()).isEqualTo("TCP");
        });
        List<Endpoint> eps = sorted(v4);
        assertThat(eps).extracting(e -> e.getAddresses().get(0)).containsExactly("10.1.0.1", "10.1.0.2", "10.1.0.3");
        assertThat(eps).extracting(e -> e.getConditions().getReady()).containsExactly(true, true, false);
        assertThat(eps.get(0).getHostname()).isEqualTo("web-0");
        assertThat(eps.get(0).getNodeName()).isEqualTo("node-a");
        assertThat(eps.get(1).getHostname()).isNull();
        assertThat(eps.get(1).getTargetRef().getName()).isEqualTo("p2");
        assertThat(eps.get(1).getTargetRef().getKind()).isEqualTo("Pod");
        // only "ready" is set, as upstream: no serving/terminating for mirrored endpoints
        assertThat(eps.get(2).getConditions().getServing()).isNull();
        assertThat(eps.get(2).getConditions().getTerminating()).isNull();
        EndpointSlice v6 = slice(ns, "ext", "IPv6");
        assertThat(v6.getEndpoints()).singleElement()
                .satisfies(e -> assertThat(e.getAddresses()).containsExactly("fd00::1"));

        // an update of the Endpoints updates the same slice in place; the IPv6 slice goes
        client.endpoints().inNamespace(ns).withName("ext").edit(e -> new EndpointsBuilder(e).editMetadata()
                .addToLabels("team", "b").endMetadata()
                .withSubsets(new EndpointSubsetBuilder(e.getSubsets().get(0))
                        .withAddresses(address("10.1.0.1"), address("10.1.0.4")).build())
                .build());
        await().atMost(TIMEOUT).untilAsserted(() -> {
            List<EndpointSlice> slices = mirrored(ns, "ext");
            assertThat(slices).singleElement().satisfies(s -> {
                assertThat(s.getMetadata().getName()).isEqualTo(v4.getMetadata().getName());
                assertThat(s.getMetadata().getUid()).isEqualTo(v4.getMetadata().getUid());
                assertThat(s.getMetadata().getLabels()).containsEntry("team", "b");
                assertThat(sorted(s)).extracting(e -> e.getAddresses().get(0) + "/" + e.getConditions().getReady())
                        .containsExactly("10.1.0.1/true", "10.1.0.3/false", "10.1.0.4/true");
            });
        });
    }

    @Test
    void skipMirrorLabelLeaderElectionLocksAndServicelessEndpointsAreNotMirrored() {
        String ns = newNamespace(client, "mirror-skip");
        service(ns, "skipped", null);
        service(ns, "lock", null);
        service(ns, "plain", null);
        QueueProbe.Mark before = queue().mark();
        endpoints(ns, "skipped", Map.of("endpointslice.kubernetes.io/skip-mirror", "true"), Map.of(),
                subset(80, List.of("10.3.0.1"), List.of()));
        endpoints(ns, "lock", Map.of(), Map.of("control-plane.alpha.kubernetes.io/leader", "{}"),
                subset(80, List.of("10.3.0.2"), List.of()));
        // Endpoints without a Service are not mirrored either
        endpoints(ns, "orphan", Map.of(), Map.of(), subset(80, List.of("10.3.0.4"), List.of()));
        Endpoints plain = endpoints(ns, "plain", Map.of(), Map.of(), subset(80, List.of("10.3.0.3"), List.of()));

        // "plain" comes last on the Endpoints watch: once it is mirrored and the queue has drained, the
        // controller has been given the others and synced whatever it queued for them
        await().atMost(TIMEOUT).untilAsserted(() -> assertThat(mirrored(ns, "plain")).hasSize(1));
        queue().awaitProcessedSince(before, cached(Endpoints.class, plain), TIMEOUT);
        assertThat(mirrored(ns, "skipped")).isEmpty();
        assertThat(mirrored(ns, "lock")).isEmpty();
        assertThat(mirrored(ns, "orphan")).isEmpty();

        // labelling a mirrored Endpoints skip-mirror removes its slices
        client.endpoints().inNamespace(ns).withName("plain")
                .patch(MERGE, "{\"metadata\":{\"labels\":{\"endpointslice.kubernetes.io/skip-mirror\":\"true\"}}}");
        await().atMost(TIMEOUT).untilAsserted(() -> assertThat(mirrored(ns, "plain")).isEmpty());
        // and removing the label mirrors it again
        client.endpoints().inNamespace(ns).withName("plain")
                .patch(MERGE, "{\"metadata\":{\"labels\":{\"endpointslice.kubernetes.io/skip-mirror\":null}}}");
        await().atMost(TIMEOUT).untilAsserted(() -> assertThat(mirrored(ns, "plain")).hasSize(1));
    }

    @Test
    void servicesWithASelectorAreNotMirroredAndGainingOneRemovesSlices() {
        String ns = newNamespace(client, "mirror-selector");
        service(ns, "selected", Map.of("app", "web"));
        service(ns, "custom", null);
        QueueProbe.Mark before = queue().mark();
        endpoints(ns, "selected", Map.of(), Map.of(), subset(80, List.of("10.4.0.1"), List.of()));
        Endpoints custom = endpoints(ns, "custom", Map.of(), Map.of(), subset(80, List.of("10.4.0.2"), List.of()));

        // "custom" comes after "selected" on the same watch: once it is mirrored and the queue has drained,
        // "selected" has been synced too
        await().atMost(TIMEOUT).untilAsserted(() -> assertThat(mirrored(ns, "custom")).hasSize(1));
        queue().awaitProcessedSince(before, cached(Endpoints.class, custom), TIMEOUT);
        assertThat(mirrored(ns, "selected")).isEmpty();

        // the Service gains a selector: its mirrored slices go
        client.services().inNamespace(ns).withName("custom")
                .patch(MERGE, "{\"spec\":{\"selector\":{\"app\":\"custom\"}}}");
        await().atMost(TIMEOUT).untilAsserted(() -> assertThat(mirrored(ns, "custom")).isEmpty());
        // and loses it again: mirrored once more
        client.services().inNamespace(ns).withName("custom").patch(MERGE, "{\"spec\":{\"selector\":null}}");
        await().atMost(TIMEOUT).untilAsserted(() -> assertThat(mirrored(ns, "custom")).hasSize(1));
    }

    @Test
    void addressesBeyondMaxEndpointsPerSubsetAreSkippedWithAnEvent() {
        String ns = newNamespace(client, "mirror-max");
        service(ns, "big", null);
        endpoints(ns, "big", Map.of(), Map.of(), subset(8080,
                List.of("10.5.0.1", "10.5.0.2", "10.5.0.3", "10.5.0.4", "10.5.0.5", "10.5.0.6"),
                List.of("10.5.0.7", "10.5.0.8")));

        await().atMost(TIMEOUT).untilAsserted(() -> assertThat(mirrored(ns, "big")).hasSize(1));
        // ready addresses first, in RepackSubsets order, up to the limit of 5
        assertThat(sorted(mirrored(ns, "big").get(0))).extracting(e -> e.getAddresses().get(0))
                .containsExactly("10.5.0.1", "10.5.0.2", "10.5.0.3", "10.5.0.4", "10.5.0.5");
        await().atMost(TIMEOUT).untilAsserted(() -> assertThat(events(ns, "big", "TooManyAddressesToMirror"))
                .isNotEmpty().allSatisfy(e -> {
                    assertThat(e.getType()).isEqualTo("Warning");
                    assertThat(e.getMessage()).isEqualTo(
                            "A max of 5 addresses can be mirrored to EndpointSlices per Endpoints subset. 3 addresses were skipped");
                    assertThat(e.getSource().getComponent()).isEqualTo("endpoint-slice-mirroring-controller");
                    assertThat(e.getInvolvedObject().getKind()).isEqualTo("Endpoints");
                }));
        assertThat(events(ns, "big", "InvalidIPAddress")).isEmpty();
    }

    @Test
    void deletingTheEndpointsOrTheServiceRemovesMirroredSlices() {
        String ns = newNamespace(client, "mirror-delete");
        service(ns, "a", null);
        service(ns, "b", null);
        endpoints(ns, "a", Map.of(), Map.of(), subset(80, List.of("10.6.0.1"), List.of()));
        endpoints(ns, "b", Map.of(), Map.of(), subset(80, List.of("10.6.0.2"), List.of()));
        await().atMost(TIMEOUT).untilAsserted(() -> {
            assertThat(mirrored(ns, "a")).hasSize(1);
            assertThat(mirrored(ns, "b")).hasSize(1);
        });

        client.endpoints().inNamespace(ns).withName("a").delete();
        await().atMost(TIMEOUT).untilAsserted(() -> assertThat(mirrored(ns, "a")).isEmpty());

        // (the API server deletes a Service's Endpoints with it; either event leads to the cleanup)
        client.services().inNamespace(ns).withName("b").delete();
        await().atMost(TIMEOUT).untilAsserted(() -> assertThat(mirrored(ns, "b")).isEmpty());
    }

    @Test
    void aMirroredSliceDeletedByHandIsRecreatedAndForeignSlicesAreLeftAlone() {
        String ns = newNamespace(client, "mirror-foreign");
        service(ns, "ext", null);
        EndpointSlice foreign = client.discovery().v1().endpointSlices().inNamespace(ns).resource(
                new EndpointSliceBuilder().withNewMetadata().withName("ext-by-hand")
                        .withLabels(Map.of(SERVICE_NAME, "ext", MANAGED_BY, "someone-else"))
                        .endMetadata().withAddressType("IPv4").addNewEndpoint().withAddresses("10.7.0.9")
                        .endEndpoint().build())
                .create();
        endpoints(ns, "ext", Map.of(), Map.of(), subset(80, List.of("10.7.0.1"), List.of()));
        await().atMost(TIMEOUT).untilAsserted(() -> assertThat(mirrored(ns, "ext")).hasSize(1));
        String first = mirrored(ns, "ext").get(0).getMetadata().getName();

        client.discovery().v1().endpointSlices().inNamespace(ns).withName(first).delete();
        await().atMost(TIMEOUT).untilAsserted(() -> assertThat(mirrored(ns, "ext")).singleElement()
                .satisfies(s -> assertThat(s.getMetadata().getName()).isNotEqualTo(first)));

        client.endpoints().inNamespace(ns).withName("ext").delete();
        await().atMost(TIMEOUT).untilAsserted(() -> assertThat(mirrored(ns, "ext")).isEmpty());
        EndpointSlice after = client.discovery().v1().endpointSlices().inNamespace(ns).withName("ext-by-hand").get();
        assertThat(after).isNotNull();
        assertThat(after.getMetadata().getResourceVersion()).isEqualTo(foreign.getMetadata().getResourceVersion());
    }

    // --- helpers

    private Service service(String ns, String name, Map<String, String> selector) {
        return client.services().inNamespace(ns).resource(new ServiceBuilder().withNewMetadata().withName(name)
                .endMetadata().withNewSpec().withSelector(selector).addNewPort().withName("http").withPort(80)
                .endPort().endSpec().build()).create();
    }

    private Endpoints endpoints(String ns, String name, Map<String, String> labels, Map<String, String> annotations,
            EndpointSubset subset) {
        return client.endpoints().inNamespace(ns).resource(new EndpointsBuilder().withNewMetadata().withName(name)
                .withLabels(labels).withAnnotations(annotations).endMetadata().withSubsets(subset).build()).create();
    }

    private static EndpointSubset subset(int port, List<String> ready, List<String> notReady) {
        return new EndpointSubsetBuilder().withAddresses(ready.stream().map(EndpointSliceMirroringControllerTest::address).toList())
                .withNotReadyAddresses(notReady.stream().map(EndpointSliceMirroringControllerTest::address).toList())
                .withPorts(new EndpointPortBuilder().withName("http").withPort(port).withProtocol("TCP").build())
                .build();
    }

    private static EndpointAddress address(String ip) {
        return new EndpointAddressBuilder().withIp(ip).build();
    }

    private List<EndpointSlice> mirrored(String ns, String service) {
        return client.discovery().v1().endpointSlices().inNamespace(ns)
                .withLabels(Map.of(SERVICE_NAME, service, MANAGED_BY, MIRRORING)).list().getItems();
    }

    private EndpointSlice slice(String ns, String service, String addressType) {
        return mirrored(ns, service).stream().filter(s -> addressType.equals(s.getAddressType())).findFirst()
                .orElseThrow();
    }

    private static List<Endpoint> sorted(EndpointSlice s) {
        return s.getEndpoints().stream().sorted(Comparator.comparing(e -> e.getAddresses().get(0))).toList();
    }

    private List<Event> events(String ns, String involvedName, String reason) {
        return client.v1().events().inNamespace(ns).list().getItems().stream()
                .filter(e -> involvedName.equals(e.getInvolvedObject().getName()) && reason.equals(e.getReason()))
                .toList();
    }

    @Inject
    MeterRegistry registry;
    @Inject
    ControllerManager manager;

    /** The application's endpointslice-mirroring-controller queue. */
    private QueueProbe queue() {
        return QueueProbe.of(registry, EndpointSliceMirroringController.QUEUE);
    }

    /** The application's cache holds {@code object} as the API server returned it after a change. */
    private BooleanSupplier cached(Class<? extends HasMetadata> type, HasMetadata object) {
        return QueueProbe.cacheHolds(manager.informers().informerFor(type), object, false);
    }
}
