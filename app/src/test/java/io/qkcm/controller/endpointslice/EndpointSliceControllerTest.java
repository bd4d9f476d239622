package io.qkcm.controller.endpointslice;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Predicate;
import java.util.stream.Collectors;

import jakarta.inject.Inject;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.NodeConditionBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.micrometer.core.instrument.MeterRegistry;
import io.qkcm.manager.ControllerManager;
import io.qkcm.testing.Conflicts;
import io.qkcm.testing.QueueProbe;
import io.qkcm.testing.RealApiServer;
import io.qkcm.testing.RealApiServerResource;
import io.qkcm.testing.TestKubelet;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;

/** endpointslice-controller alone against a real API server (no garbage collector, no kubelet). */
@QuarkusTest
@TestProfile(EndpointSliceControllerTest.Profile.class)
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
class EndpointSliceControllerTest {

    public static class Profile implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            // a higher QPS than the default 20 keeps the 250-pod test short; nothing else depends on it
            return Map.of("qkcm.controllers", "endpointslice-controller", "qkcm.kube-api-qps", "200",
                    "qkcm.kube-api-burst", "300");
        }
    }

    static final String MANAGED_BY = "endpointslice.kubernetes.io/managed-by";
    static final String SERVICE_NAME = "kubernetes.io/service-name";
    static final Duration TIMEOUT = Duration.ofSeconds(60);

    private KubernetesClient client;
    private String ns;
    private final List<String> nodes = new ArrayList<>();

    @BeforeEach
    void setUp() {
        client = RealApiServer.get().newClient();
        ns = "eps-" + System.nanoTime();
        client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build()).create();
    }

    @AfterEach
    void tearDown() {
        nodes.forEach(n -> client.nodes().withName(n).delete());
        client.namespaces().withName(ns).delete();
        client.close();
    }

    // ---------------------------------------------------------------------------------------------

    @Test
    void endpointsTrackPodReadiness() {
        String node = node(null);
        Service svc = createService(new ServiceBuilder().withNewMetadata().withName("web").withNamespace(ns)
                .withLabels(Map.of("tier", "frontend")).endMetadata().withNewSpec().withSelector(Map.of("app", "web"))
                .addNewPort().withName("http").withPort(80).withTargetPort(new IntOrString(8080)).endPort().endSpec()
                .build());
        TestKubelet kubelet = new TestKubelet(client, node);
        Pod a = kubelet.runningAndReady(createPod("a", Map.of("app", "web"), node));
        // not ready since a minute ago, so its Ready transition below is strictly later (trigger times
        // only move on a later transition; the same second would clear the annotation, as upstream)
        Pod b = kubelet.running(createPod("b", Map.of("app", "web"), node), false,
                java.time.Instant.now().minusSeconds(60));
        createPod("pending", Map.of("app", "web"), null); // no IP: not an endpoint
        createPod("other", Map.of("app", "db"), node);

        EndpointSlice slice = awaitSlices("web", s -> s.size() == 1 && endpoints(s).size() == 2).get(0);
        assertThat(slice.getMetadata().getGenerateName()).isEqualTo("web-");
        assertThat(slice.getMetadata().getName()).startsWith("web-");
        assertThat(slice.getMetadata().getLabels()).containsEntry(SERVICE_NAME, "web")
                .containsEntry(MANAGED_BY, "endpointslice-controller.k8s.io").containsEntry("tier", "frontend")
                .doesNotContainKey("service.kubernetes.io/headless");
        assertThat(slice.getMetadata().getOwnerReferences()).singleElement().satisfies(o -> {
            assertThat(o.getApiVersion()).isEqualTo("v1");
            assertThat(o.getKind()).isEqualTo("Service");
            assertThat(o.getName()).isEqualTo("web");
            assertThat(o.getUid()).isEqualTo(svc.getMetadata().getUid());
            assertThat(o.getController()).isTrue();
            assertThat(o.getBlockOwnerDeletion()).isTrue();
        });
        assertThat(slice.getAddressType()).isEqualTo("IPv4");
        assertThat(slice.getPorts()).singleElement().satisfies(p -> {
            assertThat(p.getName()).isEqualTo("http");
            assertThat(p.getPort()).isEqualTo(8080);
            assertThat(p.getProtocol()).isEqualTo("TCP");
        });
        Endpoint ea = endpoint(slice, "a");
        assertThat(ea.getAddresses()).containsExactly(a.getStatus().getPodIP());
        assertThat(ea.getConditions().getReady()).isTrue();
        assertThat(ea.getConditions().getServing()).isTrue();
        assertThat(ea.getConditions().getTerminating()).isFalse();
        assertThat(ea.getNodeName()).isEqualTo(node);
        assertThat(ea.getZone()).isNull();
        assertThat(ea.getHostname()).isNull();
        assertThat(ea.getTargetRef().getKind()).isEqualTo("Pod");
        assertThat(ea.getTargetRef().getUid()).isEqualTo(a.getMetadata().getUid());
        Endpoint eb = endpoint(slice, "b");
        assertThat(eb.getConditions().getReady()).isFalse();
        assertThat(eb.getConditions().getServing()).isFalse();

        assertThat(slice.getMetadata().getAnnotations()).containsKey("endpoints.kubernetes.io/last-change-trigger-time");

        // b becomes ready: updated in place, same slice, trigger time = b's Ready transition
        Pod readyB = kubelet.runningAndReady(b);
        String readySince = readyB.getStatus().getConditions().stream().filter(c -> "Ready".equals(c.getType()))
                .findFirst().orElseThrow().getLastTransitionTime();
        EndpointSlice after = awaitSlices("web", s -> s.size() == 1
                && Boolean.TRUE.equals(endpoint(s.get(0), "b").getConditions().getReady())).get(0);
        assertThat(after.getMetadata().getName()).isEqualTo(slice.getMetadata().getName());
        assertThat(after.getMetadata().getAnnotations())
                .containsEntry("endpoints.kubernetes.io/last-change-trigger-time", readySince);

        // a leaves the selector: removed from the slice
        Conflicts.retry(() -> client.pods().inNamespace(ns).withName("a")
                .edit(p -> new PodBuilder(p).editMetadata().withLabels(Map.of("app", "gone")).endMetadata().build()));
        awaitSlices("web", s -> s.size() == 1 && names(s).equals(List.of("b")));
    }

    @Test
    void terminatingPodsAreTerminatingAndServingPerReadiness() {
        String node = node(null);
        createService(service("web", Map.of("app", "web")));
        TestKubelet kubelet = new TestKubelet(client, node);
        kubelet.runningAndReady(create(new PodBuilder(createPodObject("t", Map.of("app", "web"), node)).editMetadata()
                .withFinalizers("qkcm.io/test-hold").endMetadata().build()));
        awaitSlices("web", s -> names(s).equals(List.of("t")));

        client.pods().inNamespace(ns).withName("t").delete();
        EndpointSlice slice = awaitSlices("web",
                s -> names(s).equals(List.of("t")) && Boolean.TRUE.equals(endpoint(s.get(0), "t").getConditions().getTerminating()))
                .get(0);
        Endpoint e = endpoint(slice, "t");
        assertThat(e.getConditions().getReady()).isFalse();
        assertThat(e.getConditions().getServing()).isTrue();

        // the terminating pod stops being ready: serving goes false
        Pod p = client.pods().inNamespace(ns).withName("t").get();
        kubelet.running(p, false, null);
        awaitSlices("web", s -> names(s).equals(List.of("t"))
                && Boolean.FALSE.equals(endpoint(s.get(0), "t").getConditions().getServing())
                && Boolean.TRUE.equals(endpoint(s.get(0), "t").getConditions().getTerminating()));

        Conflicts.retry(() -> client.pods().inNamespace(ns).withName("t")
                .edit(x -> new PodBuilder(x).editMetadata().withFinalizers(List.of()).endMetadata().build()));
        // gone: the Service keeps an empty placeholder slice
        EndpointSlice placeholder = awaitSlices("web", s -> s.size() == 1 && endpoints(s).isEmpty()).get(0);
        assertThat(placeholder.getPorts()).isNullOrEmpty();
    }

    @Test
    void namedTargetPortsResolvePerPodIntoSeparateSlices() {
        String node = node(null);
        createService(new ServiceBuilder().withNewMetadata().withName("named").withNamespace(ns).endMetadata()
                .withNewSpec().withSelector(Map.of("app", "named")).addNewPort().withName("web").withPort(80)
                .withTargetPort(new IntOrString("http")).endPort().endSpec().build());
        TestKubelet kubelet = new TestKubelet(client, node);
        kubelet.runningAndReady(podWithPort("p8080", Map.of("app", "named"), node, "http", 8080));
        kubelet.runningAndReady(podWithPort("q8080", Map.of("app", "named"), node, "http", 8080));
        kubelet.runningAndReady(podWithPort("p9090", Map.of("app", "named"), node, "http", 9090));
        kubelet.runningAndReady(podWithPort("noport", Map.of("app", "named"), node, "metrics", 9100));

        List<EndpointSlice> slices = awaitSlices("named", s -> s.size() == 3 && endpoints(s).size() == 4);
        Map<String, List<String>> byPort = new HashMap<>();
        for (EndpointSlice s : slices) {
            String key = s.getPorts() == null || s.getPorts().isEmpty() ? "none"
                    : s.getPorts().get(0).getName() + ":" + s.getPorts().get(0).getPort();
            byPort.put(key, names(List.of(s)));
        }
        assertThat(byPort).containsOnly(Map.entry("web:8080", List.of("p8080", "q8080")),
                Map.entry("web:9090", List.of("p9090")), Map.entry("none", List.of("noport")));
    }

    @Test
    void publishNotReadyAddressesMakesEveryEndpointReady() {
        String node = node(null);
        createService(new ServiceBuilder(service("pnr", Map.of("app", "pnr"))).editSpec()
                .withPublishNotReadyAddresses(true).endSpec().build());
        new TestKubelet(client, node).running(createPod("nr", Map.of("app", "pnr"), node), false, null);
        EndpointSlice slice = awaitSlices("pnr", s -> names(s).equals(List.of("nr"))).get(0);
        Endpoint e = endpoint(slice, "nr");
        assertThat(e.getConditions().getReady()).isTrue();
        assertThat(e.getConditions().getServing()).isFalse();
        assertThat(e.getConditions().getTerminating()).isFalse();
    }

    @Test
    void headlessServiceGetsHeadlessLabelNoPortsAndHostnames() {
        String node = node(null);
        createService(new ServiceBuilder().withNewMetadata().withName("hl").withNamespace(ns).endMetadata().withNewSpec()
                .withClusterIP("None").withSelector(Map.of("app", "hl")).endSpec().build());
        TestKubelet kubelet = new TestKubelet(client, node);
        kubelet.runningAndReady(create(new PodBuilder(createPodObject("h0", Map.of("app", "hl"), node)).editSpec()
                .withHostname("host-0").withSubdomain("hl").endSpec().build()));
        kubelet.runningAndReady(create(new PodBuilder(createPodObject("h1", Map.of("app", "hl"), node)).editSpec()
                .withHostname("host-1").withSubdomain("elsewhere").endSpec().build()));
        EndpointSlice slice = awaitSlices("hl", s -> names(s).size() == 2).get(0);
        assertThat(slice.getMetadata().getLabels()).containsEntry("service.kubernetes.io/headless", "");
        assertThat(slice.getPorts()).isNullOrEmpty();
        assertThat(endpoint(slice, "h0").getHostname()).isEqualTo("host-0");
        assertThat(endpoint(slice, "h1").getHostname()).isNull();
    }

    @Test
    void zoneComesFromTheNodeAndPodsOnMissingNodesAreSkippedWithAnEvent() {
        String zoned = node(Map.of("topology.kubernetes.io/zone", "zone-a"));
        createService(service("z", Map.of("app", "z")));
        new TestKubelet(client, zoned).runningAndReady(createPod("in-a", Map.of("app", "z"), zoned));
        String ghost = "ghost-" + System.nanoTime();
        new TestKubelet(client, ghost).runningAndReady(createPod("on-ghost", Map.of("app", "z"), ghost));

        EndpointSlice slice = awaitSlices("z", s -> names(s).equals(List.of("in-a"))).get(0);
        assertThat(endpoint(slice, "in-a").getZone()).isEqualTo("zone-a");
        await().atMost(TIMEOUT).untilAsserted(() -> assertThat(events("z")).anySatisfy(e -> {
            assertThat(e.getReason()).isEqualTo("FailedToUpdateEndpointSlices");
            assertThat(e.getType()).isEqualTo("Warning");
            assertThat(e.getSource().getComponent()).isEqualTo("endpoint-slice-controller");
            assertThat(e.getMessage()).isEqualTo("Error updating Endpoint Slices for Service " + ns + "/z: skipping Pod "
                    + "on-ghost for Service " + ns + "/z: Node " + ghost + " Not Found");
        }));
    }

    @Test
    void trafficDistributionPreferCloseAndPreferSameNodeSetHints() {
        String node = node(Map.of("topology.kubernetes.io/zone", "zone-b"));
        createService(new ServiceBuilder(service("close", Map.of("app", "close"))).editSpec()
                .withTrafficDistribution("PreferClose").endSpec().build());
        new TestKubelet(client, node).runningAndReady(createPod("c0", Map.of("app", "close"), node));
        EndpointSlice slice = awaitSlices("close", s -> names(s).equals(List.of("c0"))
                && endpoint(s.get(0), "c0").getHints() != null).get(0);
        assertThat(endpoint(slice, "c0").getHints().getForZones()).singleElement()
                .satisfies(z -> assertThat(z.getName()).isEqualTo("zone-b"));
        assertThat(endpoint(slice, "c0").getHints().getForNodes()).isNullOrEmpty();

        // PreferSameNode (PreferSameTrafficDistribution, beta and on in 1.34) adds a node hint
        Conflicts.retry(() -> client.services().inNamespace(ns).withName("close")
                .edit(s -> new ServiceBuilder(s).editSpec().withTrafficDistribution("PreferSameNode").endSpec().build()));
        awaitSlices("close", s -> names(s).equals(List.of("c0")) && endpoint(s.get(0), "c0").getHints() != null
                && endpoint(s.get(0), "c0").getHints().getForNodes() != null
                && endpoint(s.get(0), "c0").getHints().getForNodes().size() == 1
                && node.equals(endpoint(s.get(0), "c0").getHints().getForNodes().get(0).getName()));

        // dropping trafficDistribution removes the hints
        Conflicts.retry(() -> client.services().inNamespace(ns).withName("close")
                .edit(s -> new ServiceBuilder(s).editSpec().withTrafficDistribution(null).endSpec().build()));
        awaitSlices("close", s -> names(s).equals(List.of("c0")) && endpoint(s.get(0), "c0").getHints() == null);
    }

    @Test
    void topologyModeAutoHintsByZoneWithEvents() {
        Map<String, String> readyStatusA = Map.of("topology.kubernetes.io/zone", "tz-a");
        Map<String, String> readyStatusB = Map.of("topology.kubernetes.io/zone", "tz-b");
        String na = readyNode(readyStatusA, "4");
        String nb = readyNode(readyStatusB, "4");
        createService(new ServiceBuilder(service("topo", Map.of("app", "topo"))).editMetadata()
                .withAnnotations(Map.of("service.kubernetes.io/topology-mode", "Auto")).endMetadata().build());
        TestKubelet ka = new TestKubelet(client, na);
        TestKubelet kb = new TestKubelet(client, nb);
        for (int i = 0; i < 3; i++) {
            ka.runningAndReady(createPod("a" + i, Map.of("app", "topo"), na));
            kb.runningAndReady(createPod("b" + i, Map.of("app", "topo"), nb));
        }
        try {
            EndpointSlice slice = awaitSlices("topo", s -> endpoints(s).size() == 6
                    && endpoints(s).stream().allMatch(e -> e.getHints() != null)).get(0);
            for (Endpoint e : slice.getEndpoints()) {
                assertThat(e.getHints().getForZones()).singleElement()
                        .satisfies(z -> assertThat(z.getName()).isEqualTo(e.getZone()));
            }
            await().atMost(TIMEOUT).untilAsserted(() -> assertThat(events("topo")).anySatisfy(e -> {
                assertThat(e.getReason()).isEqualTo("TopologyAwareHintsEnabled");
                assertThat(e.getType()).isEqualTo("Normal");
                assertThat(e.getMessage()).isEqualTo("Topology Aware Hints has been enabled, addressType: IPv4");
            }));

            // annotation removed: hints go, with TopologyAwareHintsDisabled
            Conflicts.retry(() -> client.services().inNamespace(ns).withName("topo")
                    .edit(s -> new ServiceBuilder(s).editMetadata().withAnnotations(Map.of()).endMetadata().build()));
            awaitSlices("topo", s -> endpoints(s).size() == 6 && endpoints(s).stream().allMatch(e -> e.getHints() == null));
            await().atMost(TIMEOUT).untilAsserted(() -> assertThat(events("topo")).anySatisfy(e -> {
                assertThat(e.getReason()).isEqualTo("TopologyAwareHintsDisabled");
                assertThat(e.getMessage()).isEqualTo("Topology Aware Hints has been disabled, addressType: IPv4");
            }));
        } finally {
            // Ready nodes with zones would count in other tests' topology calculations
            client.nodes().withName(na).delete();
            client.nodes().withName(nb).delete();
        }
    }

    @Test
    void twoHundredFiftyPodsMakeThreeSlicesAndChurnLeavesOtherSlicesAlone() {
        String node = node(null);
        createService(service("big", Map.of("app", "big")));
        TestKubelet kubelet = new TestKubelet(client, node);
        for (int i = 0; i < 250; i++) {
            kubelet.runningAndReady(createPod("big-" + i, Map.of("app", "big"), node));
        }
        List<EndpointSlice> slices = awaitSlices("big", s -> endpoints(s).size() == 250
                && endpoints(s).stream().allMatch(e -> Boolean.TRUE.equals(e.getConditions().getReady())));
        assertThat(slices).hasSize(3);
        assertThat(slices).allSatisfy(s -> assertThat(s.getEndpoints()).hasSizeLessThanOrEqualTo(100));
        // settle: no further writes once every pod is in
        Map<String, String> rvs = awaitStableResourceVersions("big");

        // one pod turns unready: only its slice is rewritten
        String victim = "big-17";
        String victimSlice = sliceOf(slices, victim);
        QueueProbe.Mark beforeUnready = queue().mark();
        kubelet.running(client.pods().inNamespace(ns).withName(victim).get(), false, null);
        awaitSlices("big", s -> s.size() == 3 && endpoints(s).size() == 250
                && Boolean.FALSE.equals(endpoint(bySliceName(s, victimSlice), victim).getConditions().getReady()));
        // every sync the change caused is done before the other slices are compared
        queue().awaitProcessedSince(beforeUnready, TIMEOUT);
        List<EndpointSlice> afterReady = slicesOf("big");
        for (EndpointSlice s : afterReady) {
            if (s.getMetadata().getName().equals(victimSlice)) {
                assertThat(s.getMetadata().getResourceVersion()).isNotEqualTo(rvs.get(victimSlice));
            } else {
                assertThat(s.getMetadata().getResourceVersion()).as("untouched slice %s", s.getMetadata().getName())
                        .isEqualTo(rvs.get(s.getMetadata().getName()));
            }
        }
        rvs = awaitStableResourceVersions("big");

        // one pod is deleted: only its slice is rewritten
        String gone = "big-200";
        String goneSlice = sliceOf(afterReady, gone);
        QueueProbe.Mark beforeDelete = queue().mark();
        client.pods().inNamespace(ns).withName(gone).withGracePeriod(0).delete();
        awaitSlices("big", s -> s.size() == 3 && endpoints(s).size() == 249);
        queue().awaitProcessedSince(beforeDelete, TIMEOUT);
        List<EndpointSlice> afterDelete = slicesOf("big");
        for (EndpointSlice s : afterDelete) {
            if (s.getMetadata().getName().equals(goneSlice)) {
                assertThat(s.getMetadata().getResourceVersion()).isNotEqualTo(rvs.get(goneSlice));
            } else {
                assertThat(s.getMetadata().getResourceVersion()).as("untouched slice %s", s.getMetadata().getName())
                        .isEqualTo(rvs.get(s.getMetadata().getName()));
            }
        }
    }

    @Test
    void deletedServiceLeavesSlicesToTheGarbageCollectorAndARecreatedServiceReplacesThem() {
        String node = node(null);
        Service svc = createService(service("gone", Map.of("app", "gone")));
        new TestKubelet(client, node).runningAndReady(createPod("g0", Map.of("app", "gone"), node));
        EndpointSlice slice = awaitSlices("gone", s -> names(s).equals(List.of("g0"))).get(0);

        // Upstream's controller does not delete the slices of a deleted Service: they are owned by it and
        // the garbage collector (not running in this test) removes them. The controller only forgets it.
        // Once the controller has synced the deleted Service's key, the slice is as it was.
        QueueProbe.Mark before = queue().mark();
        client.services().inNamespace(ns).withName("gone").delete();
        queue().awaitProcessedSince(before, QueueProbe.cacheHolds(informer(Service.class), svc, true), TIMEOUT);
        EndpointSlice kept = client.discovery().v1().endpointSlices().inNamespace(ns)
                .withName(slice.getMetadata().getName()).get();
        assertThat(kept).isNotNull();
        assertThat(kept.getMetadata().getResourceVersion()).isEqualTo(slice.getMetadata().getResourceVersion());
        assertThat(kept.getMetadata().getOwnerReferences().get(0).getUid()).isEqualTo(svc.getMetadata().getUid());

        // A new Service of the same name does not adopt them: the old slice is deleted and a new one,
        // owned by the new Service, takes its place.
        Service again = createService(service("gone", Map.of("app", "gone")));
        List<EndpointSlice> replaced = awaitSlices("gone", s -> s.size() == 1 && names(s).equals(List.of("g0"))
                && s.get(0).getMetadata().getOwnerReferences().get(0).getUid().equals(again.getMetadata().getUid()));
        assertThat(replaced.get(0).getMetadata().getName()).isNotEqualTo(slice.getMetadata().getName());
    }

    @Test
    void slicesManagedByAnotherControllerAreLeftAlone() {
        String node = node(null);
        createService(service("mixed", Map.of("app", "mixed")));
        EndpointSlice foreign = client.discovery().v1().endpointSlices().inNamespace(ns)
                .resource(new EndpointSliceBuilder().withNewMetadata().withName("mixed-foreign")
                        .withLabels(Map.of(SERVICE_NAME, "mixed", MANAGED_BY, "someone-else"))
                        .endMetadata().withAddressType("IPv4").addNewEndpoint().withAddresses("10.99.0.1")
                        .endEndpoint().build())
                .create();
        new TestKubelet(client, node).runningAndReady(createPod("m0", Map.of("app", "mixed"), node));
        awaitSlices("mixed", s -> names(s).equals(List.of("m0")));
        // churn the Service a few times
        for (int i = 0; i < 3; i++) {
            int n = i;
            Conflicts.retry(() -> client.services().inNamespace(ns).withName("mixed").edit(
                    s -> new ServiceBuilder(s).editMetadata().addToLabels("rev", "r" + n).endMetadata().build()));
        }
        awaitSlices("mixed", s -> s.size() == 1 && "r2".equals(s.get(0).getMetadata().getLabels().get("rev")));
        EndpointSlice still = client.discovery().v1().endpointSlices().inNamespace(ns).withName("mixed-foreign").get();
        assertThat(still.getMetadata().getResourceVersion()).isEqualTo(foreign.getMetadata().getResourceVersion());
    }

    @Test
    void servicesWithoutSelectorOrExternalNameGetNoSlices() {
        QueueProbe.Mark before = queue().mark();
        createService(new ServiceBuilder().withNewMetadata().withName("nosel").withNamespace(ns).endMetadata()
                .withNewSpec().addNewPort().withPort(80).endPort().endSpec().build());
        createService(new ServiceBuilder().withNewMetadata().withName("ext").withNamespace(ns).endMetadata()
                .withNewSpec().withType("ExternalName").withExternalName("example.com")
                .withSelector(Map.of("app", "x")).endSpec().build());
        // a Service with a selector, created after them on the same watch: once the controller has synced
        // it and drained its queue, it has synced the other two as well
        Service marker = createService(service("marker", Map.of("app", "marker")));
        awaitSlices("marker", s -> s.size() == 1);
        queue().awaitProcessedSince(before, QueueProbe.cacheHolds(informer(Service.class), marker, false), TIMEOUT);
        assertThat(slicesOf("nosel")).isEmpty();
        assertThat(slicesOf("ext")).isEmpty();
    }

    // ---------------------------------------------------------------------------------------------

    private Service service(String name, Map<String, String> selector) {
        return new ServiceBuilder().withNewMetadata().withName(name).withNamespace(ns).endMetadata().withNewSpec()
                .withSelector(selector).addNewPort().withName("http").withPort(80).withTargetPort(new IntOrString(8080))
                .endPort().endSpec().build();
    }

    private Service createService(Service svc) {
        return client.services().inNamespace(ns).resource(svc).create();
    }

    private Pod createPodObject(String name, Map<String, String> labels, String node) {
        return new PodBuilder().withNewMetadata().withName(name).withNamespace(ns).withLabels(labels).endMetadata()
                .withNewSpec().withNodeName(node).withTerminationGracePeriodSeconds(0L).addNewContainer().withName("c")
                .withImage("nginx").endContainer().endSpec().build();
    }

    private Pod create(Pod pod) {
        return client.pods().inNamespace(ns).resource(pod).create();
    }

    private Pod createPod(String name, Map<String, String> labels, String node) {
        return client.pods().inNamespace(ns).resource(createPodObject(name, labels, node)).create();
    }

    private Pod podWithPort(String name, Map<String, String> labels, String node, String portName, int port) {
        return client.pods().inNamespace(ns).resource(new PodBuilder(createPodObject(name, labels, node)).editSpec()
                .editFirstContainer().addNewPort().withName(portName).withContainerPort(port).endPort().endContainer()
                .endSpec().build()).create();
    }

    /** A Node object (no status) so pods on it are endpoints; labels e.g. its zone. */
    private String node(Map<String, String> labels) {
        String name = "eps-node-" + System.nanoTime();
        client.nodes().resource(new NodeBuilder().withNewMetadata().withName(name).withLabels(labels).endMetadata().build())
                .create();
        nodes.add(name);
        return name;
    }

    /** A Ready Node with allocatable CPU, as topology-aware hints need. */
    private String readyNode(Map<String, String> labels, String cpu) {
        String name = node(labels);
        client.nodes().withName(name).editStatus(n -> new NodeBuilder(n).withNewStatus()
                .withAllocatable(Map.of("cpu", new Quantity(cpu)))
                .withConditions(new NodeConditionBuilder().withType("Ready").withStatus("True").build())
                .endStatus().build());
        return name;
    }

    private List<EndpointSlice> slicesOf(String service) {
        return client.discovery().v1().endpointSlices().inNamespace(ns)
                .withLabels(Map.of(SERVICE_NAME, service, MANAGED_BY, "endpointslice-controller.k8s.io")).list()
                .getItems();
    }

    private List<EndpointSlice> awaitSlices(String service, Predicate<List<EndpointSlice>> condition) {
        List<List<EndpointSlice>> last = new ArrayList<>();
        await().atMost(TIMEOUT).pollInterval(Duration.ofMillis(200)).until(() -> {
            List<EndpointSlice> s = slicesOf(service);
            last.clear();
            last.add(s);
            try {
                return condition.test(s);
            } catch (RuntimeException e) {
                return false;
            }
        });
        return last.get(0);
    }

    @Inject
    MeterRegistry registry;
    @Inject
    ControllerManager manager;

    /** The application's endpointslice-controller queue. */
    private QueueProbe queue() {
        return QueueProbe.of(registry, "endpoint_slice");
    }

    private <T extends HasMetadata> SharedIndexInformer<T> informer(Class<T> type) {
        return manager.informers().informerFor(type);
    }

    /** The slices' resource versions once the controller's queue has drained: nothing more will be written. */
    private Map<String, String> awaitStableResourceVersions(String service) {
        queue().awaitIdle(TIMEOUT);
        return slicesOf(service).stream().collect(
                Collectors.toMap(s -> s.getMetadata().getName(), s -> s.getMetadata().getResourceVersion()));
    }

    private static List<Endpoint> endpoints(List<EndpointSlice> slices) {
        return slices.stream().flatMap(s -> s.getEndpoints() == null ? java.util.stream.Stream.empty()
                : s.getEndpoints().stream()).toList();
    }

    private static List<String> names(List<EndpointSlice> slices) {
        return endpoints(slices).stream().map(e -> e.getTargetRef().getName()).sorted().toList();
    }

    private static Endpoint endpoint(EndpointSlice slice, String pod) {
        return slice.getEndpoints().stream().filter(e -> pod.equals(e.getTargetRef().getName())).findFirst()
                .orElseThrow(() -> new AssertionError("no endpoint for " + pod + " in " + slice.getMetadata().getName()));
    }

    private static String sliceOf(List<EndpointSlice> slices, String pod) {
        return slices.stream().filter(s -> s.getEndpoints().stream().anyMatch(e -> pod.equals(e.getTargetRef().getName())))
                .findFirst().orElseThrow().getMetadata().getName();
    }

    private static EndpointSlice bySliceName(List<EndpointSlice> slices, String name) {
        return slices.stream().filter(s -> Objects.equals(s.getMetadata().getName(), name)).findFirst().orElseThrow();
    }

    private List<Event> events(String service) {
        return client.v1().events().inNamespace(ns).list().getItems().stream()
                .filter(e -> "Service".equals(e.getInvolvedObject().getKind())
                        && service.equals(e.getInvolvedObject().getName()))
                .toList();
    }
}
