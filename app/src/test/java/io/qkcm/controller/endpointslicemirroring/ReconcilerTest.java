package io.qkcm.controller.endpointslicemirroring;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import io.fabric8.kubernetes.api.model.EndpointAddress;
import io.fabric8.kubernetes.api.model.EndpointAddressBuilder;
import io.fabric8.kubernetes.api.model.EndpointPort;
import io.fabric8.kubernetes.api.model.EndpointPortBuilder;
import io.fabric8.kubernetes.api.model.EndpointSubset;
import io.fabric8.kubernetes.api.model.EndpointSubsetBuilder;
import io.fabric8.kubernetes.api.model.Endpoints;
import io.fabric8.kubernetes.api.model.EndpointsBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.http.BasicBuilder;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.Interceptor;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.qkcm.controller.EndpointSubsets;
import io.qkcm.controller.endpointslicemirroring.metrics.MirroringMetrics;
import io.qkcm.endpointslice.util.EndpointSliceTracker;
import io.qkcm.runtime.events.EventRecorder;
import io.qkcm.testing.RealApiServer;

/**
 * The reconciler against a real API server: upstream's TestReconcile table (reconciler_test.go, case
 * for case, with its expected slice count, client writes and metrics), then qkcm's own cases for the
 * events and for the create/update/delete decisions over successive reconciles.
 *
 * <p>The API server is one of its own ({@link RealApiServer#isolated()}): no controller of another test
 * class's application watches it, so no mirroring controller or garbage collector touches the slices
 * these cases write (they are owned by Endpoints that exist only in the test, as upstream's, whose
 * reconciler reads the Endpoints it is given and never the API). Two differences from upstream's fake
 * clientset, both forced by the real API server's validation: an Endpoints without a UID gets a random
 * one (an owner reference must name a UID), and invalid IPs live only in the Endpoints handed to the
 * reconciler (the API server would refuse to store them, and the reconciler never reads them back).
 */
class ReconcilerTest {

    private static final String NAME = "test-ep";
    private static final String MIRRORING = "endpointslicemirroring-controller.k8s.io";
    private static final String LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration";
    private static final String TRIGGER_TIME = "endpoints.kubernetes.io/last-change-trigger-time";
    private static final String M = "endpoint.slice.mirroring.controller.";

    private static KubernetesClient client;
    /** Writes (POST, PUT, PATCH, DELETE) the client has sent: upstream's client actions. */
    private static final AtomicInteger writes = new AtomicInteger();

    @BeforeAll
    static void connect() {
        client = new KubernetesClientBuilder()
                .withConfig(io.fabric8.kubernetes.client.Config.fromKubeconfig(RealApiServer.isolated().kubeconfigYaml()))
                .withHttpClientBuilderConsumer(b -> b.addOrReplaceInterceptor("count-writes", new Interceptor() {
                    @Override
                    public void before(BasicBuilder builder, HttpRequest request, RequestTags tags) {
                        if (!"GET".equals(request.method())) {
                            writes.incrementAndGet();
                        }
                    }
                }))
                .build();
    }

    @AfterAll
    static void close() {
        client.close();
    }

    record Recorded(String type, String reason, String message) {
    }

    private final List<Recorded> events = Collections.synchronizedList(new ArrayList<>());
    private final EventRecorder recorder = new EventRecorder() {
        @Override
        public void event(HasMetadata object, String type, String reason, String message) {
            events.add(new Recorded(type, reason, message));
        }
    };
    private final MeterRegistry registry = new SimpleMeterRegistry();
    private String ns;

    @BeforeEach
    void namespace() {
        ns = "mirror-reconciler-" + UUID.randomUUID().toString().substring(0, 8);
        client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build())
                .create();
    }

    private Reconciler reconciler(int max) {
        return new Reconciler(client, new EndpointSliceTracker(), recorder, max, new MirroringMetrics(registry));
    }

    // --- upstream's table

    /** Upstream's expectedMetrics. */
    record Expected(int desiredSlices, int actualSlices, int desiredEndpoints, int addedPerSync, int updatedPerSync,
            int removedPerSync, int skippedPerSync, int numCreated, int numUpdated, int numDeleted) {
    }

    /** One row of upstream's table. */
    static final class Case {
        final String name;
        List<EndpointSubset> subsets = List.of();
        Map<String, String> labels;
        Map<String, String> annotations;
        String uid = "";
        boolean deletionPending;
        int maxEndpointsPerSubset;
        List<EndpointSlice> existing = List.of();
        int expectedNumSlices;
        int expectedClientActions;
        Expected metrics;

        Case(String name) {
            this.name = name;
        }

        Case subsets(EndpointSubset... s) {
            subsets = List.of(s);
            return this;
        }

        Case existing(EndpointSlice... s) {
            existing = List.of(s);
            return this;
        }

        Case expect(int slices, int actions) {
            expectedNumSlices = slices;
            expectedClientActions = actions;
            return this;
        }

        /** desiredSlices, actualSlices, desiredEndpoints, added, updated, removed, skipped, created, updates, deletes. */
        Case metrics(int... m) {
            metrics = new Expected(m[0], m[1], m[2], m[3], m[4], m[5], m[6], m[7], m[8], m[9]);
            return this;
        }

        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Case> table() {
        String lastApplied = "{\"apiVersion\":\"v1\",\"kind\":\"Endpoints\",\"subsets\":[]}";
        Case lastAppliedRemoved = new Case(
                "Annotation mirroring should remove the last-applied-configuration annotation from existing endpoint slices")
                .subsets(subset(List.of(port("http", 80, "TCP")), List.of(address("10.0.0.1", "pod-1", null)), List.of()))
                .existing(slice("test-ep-1", Map.of(LAST_APPLIED, lastApplied), List.of(), "IPv4",
                        List.of(slicePort("http", 80, "TCP")), endpoint(List.of("10.0.0.1"), "pod-1", null, true)))
                .expect(1, 1);
        return Stream.of(
                new Case("Endpoints with no subsets").expect(0, 0).metrics(0, 0, 0, 0, 0, 0, 0, 0, 0, 0),
                new Case("Endpoints with no addresses").subsets(subset(List.of(port("http", 80, "TCP")), List.of(), List.of()))
                        .expect(0, 0).metrics(0, 0, 0, 0, 0, 0, 0, 0, 0, 0),
                new Case("Endpoints with 1 subset, port, and address")
                        .subsets(subset(List.of(port("http", 80, "TCP")), List.of(address("10.0.0.1", "pod-1", "node-1")), List.of()))
                        .expect(1, 1).metrics(1, 1, 1, 1, 0, 0, 0, 1, 0, 0),
                new Case("Endpoints with 2 subset, different port and address")
                        .subsets(subset(List.of(port("http", 80, "TCP")), List.of(address("10.0.0.1", "pod-1", "node-1")), List.of()),
                                subset(List.of(port("https", 443, "TCP")), List.of(address("10.0.0.2", "pod-2", "node-1")), List.of()))
                        .expect(2, 2).metrics(2, 2, 2, 2, 0, 0, 0, 2, 0, 0),
                new Case("Endpoints with 2 subset, different port and same address")
                        .subsets(subset(List.of(port("http", 80, "TCP")), List.of(address("10.0.0.1", "pod-1", "node-1")), List.of()),
                                subset(List.of(port("https", 443, "TCP")), List.of(address("10.0.0.1", "pod-1", "node-1")), List.of()))
                        .expect(1, 1).metrics(1, 1, 1, 1, 0, 0, 0, 1, 0, 0),
                new Case("Endpoints with 2 subset, different address and same port")
                        .subsets(subset(List.of(port("http", 80, "TCP")), List.of(address("10.0.0.1", "pod-1", "node-1")), List.of()),
                                subset(List.of(port("http", 80, "TCP")), List.of(address("10.0.0.2", "pod-2", "node-1")), List.of()))
                        .expect(1, 1).metrics(1, 1, 2, 2, 0, 0, 0, 1, 0, 0),
                pendingDeletion(new Case("Endpoints with 1 subset, port, and address, pending deletion")
                        .subsets(subset(List.of(port("http", 80, "TCP")), List.of(address("10.0.0.1", "pod-1", "node-1")), List.of()))
                        .expect(0, 0)),
                withUid(new Case("Endpoints with 1 subset, port, and address and existing slice with same fields")
                        .subsets(subset(List.of(port("http", 80, "TCP")), List.of(address("10.0.0.1", "pod-1", null)), List.of()))
                        .existing(slice("test-ep-1", null, List.of(owner("d8f2c1f6-5285-4b3c-b3c1-9b89f9e7ed7a")), "IPv4",
                                List.of(slicePort("http", 80, "TCP")), endpoint(List.of("10.0.0.1"), "pod-1", null, true)))
                        .expect(1, 0), "d8f2c1f6-5285-4b3c-b3c1-9b89f9e7ed7a"),
                withUid(new Case("Endpoints with 1 subset, port, and address and existing slice with same fields but different OwnerReferences")
                        .subsets(subset(List.of(port("http", 80, "TCP")), List.of(address("10.0.0.1", "pod-1", null)), List.of()))
                        .existing(slice("test-ep-1", null, List.of(owner("fb91e798-1875-4857-b5eb-e2c878157b4d")), "IPv4",
                                List.of(slicePort("http", 80, "TCP")), endpoint(List.of("10.0.0.1"), "pod-1", null, true)))
                        .expect(1, 1), "d8f2c1f6-5285-4b3c-b3c1-9b89f9e7ed7a"),
                new Case("Endpoints with 1 subset, port, and address and existing slice with an additional annotation")
                        .subsets(subset(List.of(port("http", 80, "TCP")), List.of(address("10.0.0.1", "pod-1", null)), List.of()))
                        .existing(slice("test-ep-1", Map.of("foo", "bar"), List.of(), "IPv4",
                                List.of(slicePort("http", 80, "TCP")), endpoint(List.of("10.0.0.1"), "pod-1", null, true)))
                        .expect(1, 1),
                withLabels(new Case("Endpoints with 1 subset, port, label and address and existing slice with same fields but the label")
                        .subsets(subset(List.of(port("http", 80, "TCP")), List.of(address("10.0.0.1", "pod-1", null)), List.of()))
                        .existing(slice("test-ep-1", Map.of("foo", "bar"), List.of(), "IPv4",
                                List.of(slicePort("http", 80, "TCP")), endpoint(List.of("10.0.0.1"), "pod-1", null, true)))
                        .expect(1, 1), Map.of("foo", "bar")),
                new Case("Endpoints with 1 subset, 2 ports, and 2 addresses")
                        .subsets(subset(httpHttps(80, 443), List.of(address("10.0.0.1", "pod-1", "node-1"),
                                address("10.0.0.2", "pod-2", "node-2")), List.of()))
                        .expect(1, 1).metrics(1, 1, 2, 2, 0, 0, 0, 1, 0, 0),
                new Case("Endpoints with 1 subset, 2 ports, and 2 not ready addresses")
                        .subsets(subset(httpHttps(80, 443), List.of(), List.of(address("10.0.0.1", "pod-1", "node-1"),
                                address("10.0.0.2", "pod-2", "node-2"))))
                        .expect(1, 1).metrics(1, 1, 2, 2, 0, 0, 0, 1, 0, 0),
                new Case("Endpoints with 1 subset, 2 ports, and 2 ready and 2 not ready addresses")
                        .subsets(subset(httpHttps(80, 443),
                                List.of(address("10.1.1.1", "pod-11", "node-1"), address("10.1.1.2", "pod-12", "node-2")),
                                List.of(address("10.0.0.1", "pod-1", "node-1"), address("10.0.0.2", "pod-2", "node-2"))))
                        .expect(1, 1).metrics(1, 1, 4, 4, 0, 0, 0, 1, 0, 0),
                new Case("Endpoints with 2 subsets, multiple ports and addresses").subsets(twoSubsets())
                        .expect(2, 2).metrics(2, 2, 5, 5, 0, 0, 0, 2, 0, 0),
                new Case("Endpoints with 2 subsets, multiple ports and addresses, existing empty EndpointSlice")
                        .subsets(twoSubsets())
                        .existing(slice("test-ep-1", null, List.of(), "IPv4",
                                List.of(slicePort("http", 80, "TCP"), slicePort("https", 443, "UDP"))))
                        .expect(2, 2).metrics(2, 2, 5, 5, 0, 0, 0, 1, 1, 0),
                new Case("Endpoints with 2 subsets, multiple ports and addresses, existing EndpointSlice with some addresses")
                        .subsets(twoSubsets())
                        .existing(slice("test-ep-1", null, List.of(), "IPv4",
                                List.of(slicePort("http", 80, "TCP"), slicePort("https", 443, "UDP")),
                                endpoint(List.of("10.0.0.2"), "pod-2", null, null),
                                endpoint(List.of("10.0.0.1", "10.0.0.3"), "pod-1", null, null)))
                        .expect(2, 2).metrics(2, 2, 5, 4, 1, 1, 0, 1, 1, 0),
                new Case("Endpoints with 2 subsets, multiple ports and addresses, existing EndpointSlice identical to subset")
                        .subsets(twoSubsets())
                        .existing(slice("test-ep-1", null, List.of(), "IPv4",
                                List.of(slicePort("http", 80, "TCP"), slicePort("https", 443, "UDP")),
                                endpoint(List.of("10.0.0.1"), "pod-1", "node-1", true),
                                endpoint(List.of("10.0.0.2"), "pod-2", "node-2", true)))
                        .expect(2, 1).metrics(2, 2, 5, 3, 0, 0, 0, 1, 0, 0),
                new Case("Endpoints with 2 subsets, multiple ports, and dual stack addresses")
                        .subsets(subset(httpHttps(80, 443), List.of(
                                address("2001:db8:2222:3333:4444:5555:6666:7777", "pod-1", "node-1"),
                                address("10.0.0.2", "pod-2", "node-2")), List.of()),
                                subset(httpHttps(3000, 3001), List.of(address("10.0.1.1", "pod-11", "node-1"),
                                        address("10.0.1.2", "pod-12", "node-2"),
                                        address("2001:db8:3333:4444:5555:6666:7777:8888", "pod-13", "node-3")), List.of()))
                        .expect(4, 4).metrics(4, 4, 5, 5, 0, 0, 0, 4, 0, 0),
                new Case("Endpoints with 2 subsets, multiple ports, ipv6 only addresses")
                        .subsets(subset(httpHttps(80, 443), List.of(
                                address("2001:db8:1111:3333:4444:5555:6666:7777", "pod-1", "node-1"),
                                address("2001:db8:2222:3333:4444:5555:6666:7777", "pod-2", "node-2")), List.of()),
                                subset(httpHttps(3000, 3001), List.of(
                                        address("2001:db8:3333:3333:4444:5555:6666:7777", "pod-11", "node-1"),
                                        address("2001:db8:4444:3333:4444:5555:6666:7777", "pod-12", "node-2"),
                                        address("2001:db8:5555:3333:4444:5555:6666:7777", "pod-13", "node-3")), List.of()))
                        .expect(2, 2).metrics(2, 2, 5, 5, 0, 0, 0, 2, 0, 0),
                new Case("Endpoints with 2 subsets, multiple ports, some invalid addresses")
                        .subsets(subset(httpHttps(80, 443), List.of(
                                address("2001:db8:1111:3333:4444:5555:6666:7777", "pod-1", "node-1"),
                                address("this-is-not-an-ip", "pod-2", "node-2")), List.of()),
                                subset(httpHttps(3000, 3001), List.of(
                                        address("this-is-also-not-an-ip", "pod-11", "node-1"),
                                        address("2001:db8:4444:3333:4444:5555:6666:7777", "pod-12", "node-2"),
                                        address("2001:db8:5555:3333:4444:5555:6666:7777", "pod-13", "node-3")), List.of()))
                        .expect(2, 2).metrics(2, 2, 3, 3, 0, 0, 2, 2, 0, 0),
                new Case("Endpoints with 2 subsets, multiple ports, all invalid addresses")
                        .subsets(subset(httpHttps(80, 443), List.of(address("this-is-not-an-ip1", "pod-1", "node-1"),
                                address("this-is-not-an-ip12", "pod-2", "node-2")), List.of()),
                                subset(httpHttps(3000, 3001), List.of(address("this-is-not-an-ip11", "pod-11", "node-1"),
                                        address("this-is-not-an-ip12", "pod-12", "node-2"),
                                        address("this-is-not-an-ip3", "pod-13", "node-3")), List.of()))
                        .expect(0, 0).metrics(0, 0, 0, 0, 0, 0, 5, 0, 0, 0),
                withMax(new Case("Endpoints with 2 subsets, 1 exceeding maxEndpointsPerSubset").subsets(twoSubsets())
                        .expect(2, 2).metrics(2, 2, 4, 4, 0, 0, 1, 2, 0, 0), 2),
                withAnnotations(new Case(
                        "The last-applied-configuration annotation should not get mirrored to created or updated endpoint slices")
                        .subsets(subset(List.of(port("http", 80, "TCP")), List.of(address("10.0.0.1", "pod-1", null)), List.of()))
                        .expect(1, 1).metrics(1, 1, 1, 1, 0, 0, 0, 1, 0, 0), Map.of(LAST_APPLIED, lastApplied)),
                new Case("The last-applied-configuration annotation shouldn't get added to created endpoint slices")
                        .subsets(subset(List.of(port("http", 80, "TCP")), List.of(address("10.0.0.1", "pod-1", null)), List.of()))
                        .expect(1, 1).metrics(1, 1, 1, 1, 0, 0, 0, 1, 0, 0),
                withAnnotations(new Case(
                        "The last-applied-configuration shouldn't get mirrored to endpoint slices when it's value is empty")
                        .subsets(subset(List.of(port("http", 80, "TCP")), List.of(address("10.0.0.1", "pod-1", null)), List.of()))
                        .expect(1, 1).metrics(1, 1, 1, 1, 0, 0, 0, 1, 0, 0), Map.of(LAST_APPLIED, "")),
                withAnnotations(new Case("Annotations other than last-applied-configuration should get correctly mirrored")
                        .subsets(subset(List.of(port("http", 80, "TCP")), List.of(address("10.0.0.1", "pod-1", null)), List.of()))
                        .expect(1, 1).metrics(1, 1, 1, 1, 0, 0, 0, 1, 0, 0), Map.of(LAST_APPLIED, lastApplied, "foo", "bar")),
                lastAppliedRemoved);
    }

    private static Case pendingDeletion(Case c) {
        c.deletionPending = true;
        return c;
    }

    private static Case withUid(Case c, String uid) {
        c.uid = uid;
        return c;
    }

    private static Case withLabels(Case c, Map<String, String> labels) {
        c.labels = labels;
        return c;
    }

    private static Case withAnnotations(Case c, Map<String, String> annotations) {
        c.annotations = annotations;
        return c;
    }

    private static Case withMax(Case c, int max) {
        c.maxEndpointsPerSubset = max;
        return c;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("table")
    void reconcile(Case tc) {
        Endpoints endpoints = new EndpointsBuilder().withNewMetadata().withName(NAME).withNamespace(ns)
                .withLabels(tc.labels).withAnnotations(tc.annotations)
                .withUid(tc.uid.isEmpty() ? UUID.randomUUID().toString() : tc.uid)
                .withDeletionTimestamp(tc.deletionPending ? java.time.Instant.now().toString() : null).endMetadata()
                .withSubsets(tc.subsets).build();

        List<EndpointSlice> existing = new ArrayList<>();
        for (EndpointSlice slice : tc.existing) {
            EndpointSlice s = new EndpointSliceBuilder(slice).editMetadata().withNamespace(ns)
                    .withLabels(Map.of("kubernetes.io/service-name", NAME, "endpointslice.kubernetes.io/managed-by", MIRRORING))
                    .endMetadata().build();
            existing.add(client.discovery().v1().endpointSlices().inNamespace(ns).resource(s).create());
        }

        int max = tc.maxEndpointsPerSubset == 0 ? 1000 : tc.maxEndpointsPerSubset;
        int before = writes.get();
        reconciler(max).reconcile(endpoints, existing);
        assertThat(writes.get() - before).as("client writes").isEqualTo(tc.expectedClientActions);

        if (tc.metrics != null) {
            Expected e = tc.metrics;
            assertThat(gauge("desired.endpoint.slices")).as("desiredEndpointSlices").isEqualTo(e.desiredSlices());
            assertThat(gauge("num.endpoint.slices")).as("numEndpointSlices").isEqualTo(e.actualSlices());
            assertThat(gauge("endpoints.desired")).as("desiredEndpoints").isEqualTo(e.desiredEndpoints());
            assertThat(sum("endpoints.added.per.sync")).as("endpointsAddedPerSync").isEqualTo(e.addedPerSync());
            assertThat(sum("endpoints.updated.per.sync")).as("endpointsUpdatedPerSync").isEqualTo(e.updatedPerSync());
            assertThat(sum("endpoints.removed.per.sync")).as("endpointsRemovedPerSync").isEqualTo(e.removedPerSync());
            assertThat(sum("addresses.skipped.per.sync")).as("addressesSkippedPerSync").isEqualTo(e.skippedPerSync());
            assertThat(changes("create")).as("changes create").isEqualTo(e.numCreated());
            assertThat(changes("update")).as("changes update").isEqualTo(e.numUpdated());
            assertThat(changes("delete")).as("changes delete").isEqualTo(e.numDeleted());
        }

        List<EndpointSlice> slices = client.discovery().v1().endpointSlices().inNamespace(ns)
                .withLabel("endpointslice.kubernetes.io/managed-by", MIRRORING).list().getItems();
        expectEndpointSlices(tc.expectedNumSlices, max, endpoints, slices);
    }

    /** Upstream's expectEndpointSlices. */
    private static void expectEndpointSlices(int num, int max, Endpoints endpoints, List<EndpointSlice> slices) {
        assertThat(slices).as("EndpointSlices").hasSize(num);
        if (num == 0) {
            return;
        }
        for (EndpointSlice s : slices) {
            assertThat(s.getMetadata().getName()).startsWith(endpoints.getMetadata().getName());
            assertThat(s.getMetadata().getLabels()).containsEntry("kubernetes.io/service-name", endpoints.getMetadata().getName());
            Map<String, String> annotations = s.getMetadata().getAnnotations() == null ? Map.of() : s.getMetadata().getAnnotations();
            assertThat(annotations).doesNotContainKeys(LAST_APPLIED, TRIGGER_TIME);
            if (endpoints.getMetadata().getAnnotations() != null) {
                endpoints.getMetadata().getAnnotations().forEach((k, v) -> {
                    if (!k.equals(LAST_APPLIED) && !k.equals(TRIGGER_TIME)) {
                        assertThat(annotations).as("mirrored annotation %s", k).containsEntry(k, v);
                    }
                });
            }
        }
        for (EndpointSubset subset : EndpointSubsets.repack(endpoints.getSubsets())) {
            if (subset.getAddresses().isEmpty() && subset.getNotReadyAddresses().isEmpty()) {
                continue;
            }
            List<Endpoint> v4 = new ArrayList<>();
            List<Endpoint> v6 = new ArrayList<>();
            for (EndpointSlice s : slices) {
                if (portsMatch(subset.getPorts(), s.getPorts())) {
                    switch (s.getAddressType()) {
                        case "IPv4" -> v4.addAll(s.getEndpoints());
                        case "IPv6" -> v6.addAll(s.getEndpoints());
                        default -> throw new AssertionError("unexpected address type " + s.getAddressType());
                    }
                }
            }
            assertThat(v4.size() + v6.size()).as("endpoints matching subset %s", subset.getPorts()).isPositive();
            expectMatchingAddresses(subset, v4, "IPv4", max);
            expectMatchingAddresses(subset, v6, "IPv6", max);
        }
    }

    /** Upstream's portsMatch. */
    private static boolean portsMatch(List<EndpointPort> endpointsPorts,
            List<io.fabric8.kubernetes.api.model.discovery.v1.EndpointPort> slicePorts) {
        if (endpointsPorts.size() != slicePorts.size()) {
            return false;
        }
        Map<Integer, EndpointPort> toMatch = new HashMap<>();
        endpointsPorts.forEach(p -> toMatch.put(p.getPort(), p));
        for (var sp : slicePorts) {
            EndpointPort p = toMatch.remove(sp.getPort());
            if (p == null || !java.util.Objects.equals(p.getName(), sp.getName())
                    || !java.util.Objects.equals(p.getProtocol(), sp.getProtocol())
                    || !java.util.Objects.equals(p.getAppProtocol(), sp.getAppProtocol())) {
                return false;
            }
        }
        return true;
    }

    /** Upstream's expectMatchingAddresses. */
    private static void expectMatchingAddresses(EndpointSubset subset, List<Endpoint> sliceEndpoints, String addressType,
            int max) {
        record Expect(boolean ready, EndpointAddress address) {
        }
        Map<String, Expect> expected = new LinkedHashMap<>();
        for (EndpointAddress a : subset.getAddresses()) {
            var e = MirroringUtil.addressToEndpoint(a, true);
            if (e != null && e.getValue().equals(addressType) && expected.size() < max) {
                expected.put(a.getIp(), new Expect(true, a));
            }
        }
        for (EndpointAddress a : subset.getNotReadyAddresses()) {
            var e = MirroringUtil.addressToEndpoint(a, true);
            if (e != null && e.getValue().equals(addressType) && expected.size() < max) {
                expected.put(a.getIp(), new Expect(false, a));
            }
        }
        assertThat(sliceEndpoints).as("%s endpoints", addressType).hasSize(expected.size());
        for (Endpoint endpoint : sliceEndpoints) {
            assertThat(endpoint.getAddresses()).hasSize(1);
            Expect e = expected.get(endpoint.getAddresses().get(0));
            assertThat(e).as("endpoint with address %s", endpoint.getAddresses().get(0)).isNotNull();
            assertThat(endpoint.getConditions().getReady()).isEqualTo(e.ready());
            String hostname = e.address().getHostname();
            assertThat(endpoint.getHostname()).isEqualTo(hostname == null || hostname.isEmpty() ? null : hostname);
            if (e.address().getNodeName() != null) {
                assertThat(endpoint.getNodeName()).isEqualTo(e.address().getNodeName());
            }
        }
    }

    private double gauge(String name) {
        Gauge g = registry.find(M + name).gauge();
        return g == null ? 0 : g.value();
    }

    private double sum(String name) {
        DistributionSummary s = registry.find(M + name).summary();
        return s == null ? 0 : s.totalAmount();
    }

    private double changes(String operation) {
        Counter c = registry.find(M + "changes").tag("operation", operation).counter();
        return c == null ? 0 : c.count();
    }

    // --- the table's builders

    private static EndpointPort port(String name, int port, String protocol) {
        return new EndpointPortBuilder().withName(name).withPort(port).withProtocol(protocol).build();
    }

    private static List<EndpointPort> httpHttps(int http, int https) {
        return List.of(port("http", http, "TCP"), port("https", https, "UDP"));
    }

    private static EndpointAddress address(String ip, String hostname, String nodeName) {
        return new EndpointAddressBuilder().withIp(ip).withHostname(hostname).withNodeName(nodeName).build();
    }

    private static EndpointSubset subset(List<EndpointPort> ports, List<EndpointAddress> ready,
            List<EndpointAddress> notReady) {
        return new EndpointSubsetBuilder().withPorts(ports).withAddresses(ready).withNotReadyAddresses(notReady).build();
    }

    /** The two subsets several of upstream's cases share. */
    private static EndpointSubset[] twoSubsets() {
        return new EndpointSubset[] {
                subset(httpHttps(80, 443), List.of(address("10.0.0.1", "pod-1", "node-1"),
                        address("10.0.0.2", "pod-2", "node-2")), List.of()),
                subset(httpHttps(3000, 3001), List.of(address("10.0.1.1", "pod-11", "node-1"),
                        address("10.0.1.2", "pod-12", "node-2"), address("10.0.1.3", "pod-13", "node-3")), List.of()) };
    }

    private static io.fabric8.kubernetes.api.model.discovery.v1.EndpointPort slicePort(String name, int port,
            String protocol) {
        return new io.fabric8.kubernetes.api.model.discovery.v1.EndpointPortBuilder().withName(name).withPort(port)
                .withProtocol(protocol).build();
    }

    private static Endpoint endpoint(List<String> addresses, String hostname, String nodeName, Boolean ready) {
        return new EndpointBuilder().withAddresses(addresses).withHostname(hostname).withNodeName(nodeName)
                .withNewConditions().withReady(ready).endConditions().build();
    }

    private static OwnerReference owner(String uid) {
        return new OwnerReferenceBuilder().withApiVersion("v1").withKind("Endpoints").withName(NAME).withUid(uid).build();
    }

    private static EndpointSlice slice(String name, Map<String, String> annotations, List<OwnerReference> owners,
            String addressType, List<io.fabric8.kubernetes.api.model.discovery.v1.EndpointPort> ports,
            Endpoint... endpoints) {
        return new EndpointSliceBuilder().withNewMetadata().withName(name).withAnnotations(annotations)
                .withOwnerReferences(owners).endMetadata().withAddressType(addressType).withPorts(ports)
                .withEndpoints(endpoints).build();
    }

    // --- qkcm's own cases: the events, and successive reconciles

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
        namespace();
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
