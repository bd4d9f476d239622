package io.qkcm.endpointslice;


import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceBuilder;
import io.qkcm.controller.GoIP;
import io.qkcm.controller.GoTime;
import io.qkcm.runtime.events.EventRecorder;
import io.qkcm.endpointslice.metrics.EndpointSliceMetrics;
import io.qkcm.endpointslice.util.EndpointSliceTracker;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

/** The reconciler's packing, without an API server (a recording writer stands in for the client). */
class ReconcilerTest {

    static final String NS = "ns";
    static final String CONTROLLER = "endpointslice-controller.k8s.io";

    /** Records writes and plays the API server: names, uids and generations. */
    static final class FakeWriter implements EndpointSliceWriter {
        final List<EndpointSlice> created = new ArrayList<>();
        final List<EndpointSlice> updated = new ArrayList<>();
        final List<String> deleted = new ArrayList<>();
        final AtomicInteger seq = new AtomicInteger();

        @Override
        public EndpointSlice create(EndpointSlice slice) {
            EndpointSlice stored = new EndpointSliceBuilder(slice).editMetadata()
                    .withName(slice.getMetadata().getGenerateName() + "x" + seq.incrementAndGet())
                    .withUid("uid-" + seq.get()).withGeneration(1L).withResourceVersion("1").endMetadata().build();
            created.add(stored);
            return stored;
        }

        @Override
        public EndpointSlice update(EndpointSlice slice) {
            long gen = slice.getMetadata().getGeneration() == null ? 1 : slice.getMetadata().getGeneration() + 1;
            EndpointSlice stored = new EndpointSliceBuilder(slice).editMetadata().withGeneration(gen).endMetadata().build();
            updated.add(stored);
            return stored;
        }

        @Override
        public void delete(String namespace, String name) {
            deleted.add(name);
        }

        int writes() {
            return created.size() + updated.size() + deleted.size();
        }

        /** The slices as the API would now hold them, given the previous state. */
        List<EndpointSlice> apply(List<EndpointSlice> before) {
            Map<String, EndpointSlice> byName = new java.util.LinkedHashMap<>();
            before.forEach(s -> byName.put(s.getMetadata().getName(), s));
            deleted.forEach(byName::remove);
            updated.forEach(s -> byName.put(s.getMetadata().getName(), s));
            created.forEach(s -> byName.put(s.getMetadata().getName(), s));
            return new ArrayList<>(byName.values());
        }
    }

    static final class Events implements EventRecorder {
        final List<String> recorded = new ArrayList<>();

        @Override
        public void event(HasMetadata object, String type, String reason, String message) {
            recorded.add(type + " " + reason + " " + message);
        }
    }

    final FakeWriter writer = new FakeWriter();
    final Events events = new Events();
    final Map<String, Node> nodes = new HashMap<>();
    final EndpointSliceTracker tracker = new EndpointSliceTracker();

    Reconciler reconciler(int max) {
        nodes.putIfAbsent("node-1", new NodeBuilder().withNewMetadata().withName("node-1").endMetadata().build());
        return new Reconciler(writer, nodes::get, max, tracker, null, events, CONTROLLER, true, true,
                new EndpointSliceMetrics(new SimpleMeterRegistry()));
    }

    static Service service(String... families) {
        return new ServiceBuilder().withNewMetadata().withName("svc").withNamespace(NS).withUid("svc-uid")
                .withLabels(Map.of("team", "a")).endMetadata().withNewSpec().withClusterIP("10.96.0.10")
                .withIpFamilies(families.length == 0 ? List.of("IPv4") : List.of(families))
                .withSelector(Map.of("app", "x")).addNewPort().withName("http").withPort(80).withProtocol("TCP")
                .withTargetPort(new IntOrString(8080)).endPort().endSpec().build();
    }

    static Pod pod(int i, boolean ready, String... ips) {
        List<String> addrs = ips.length == 0 ? List.of("10.0." + (i / 250) + "." + (i % 250 + 1)) : List.of(ips);
        return new PodBuilder().withNewMetadata().withName("pod-" + i).withNamespace(NS).withUid("pod-uid-" + i)
                .withResourceVersion("1").withLabels(Map.of("app", "x")).endMetadata().withNewSpec()
                .withNodeName("node-1").addNewContainer().withName("c").endContainer().endSpec().withNewStatus()
                .withPhase("Running").withPodIP(addrs.get(0))
                .withPodIPs(addrs.stream().map(io.fabric8.kubernetes.api.model.PodIP::new).toList())
                .addNewCondition().withType("Ready").withStatus(ready ? "True" : "False").endCondition().endStatus()
                .build();
    }

    static List<Pod> pods(int from, int to) {
        List<Pod> out = new ArrayList<>();
        for (int i = from; i < to; i++) {
            out.add(pod(i, true));
        }
        return out;
    }

    /** Runs a reconcile against the current state and returns the state after it. */
    List<EndpointSlice> run(Reconciler r, Service svc, List<Pod> pods, List<EndpointSlice> existing) {
        writer.created.clear();
        writer.updated.clear();
        writer.deleted.clear();
        r.reconcile(svc, pods, existing, null);
        return writer.apply(existing);
    }

    static int total(List<EndpointSlice> slices) {
        return slices.stream().mapToInt(s -> s.getEndpoints().size()).sum();
    }

    @Test
    void onePodMakesOneSliceWithUpstreamMetadata() {
        Reconciler r = reconciler(100);
        Instant trigger = Instant.parse("2024-05-01T10:00:00.120Z");
        r.reconcile(service(), List.of(pod(0, true)), List.of(), trigger);
        assertThat(writer.created).singleElement().satisfies(s -> {
            assertThat(s.getMetadata().getGenerateName()).isEqualTo("svc-");
            assertThat(s.getMetadata().getLabels()).containsExactlyInAnyOrderEntriesOf(Map.of("team", "a",
                    "kubernetes.io/service-name", "svc", "endpointslice.kubernetes.io/managed-by", CONTROLLER));
            assertThat(s.getMetadata().getAnnotations())
                    .containsEntry("endpoints.kubernetes.io/last-change-trigger-time", "2024-05-01T10:00:00.12Z");
            assertThat(s.getMetadata().getOwnerReferences()).singleElement().satisfies(o -> {
                assertThat(o.getUid()).isEqualTo("svc-uid");
                assertThat(o.getController()).isTrue();
                assertThat(o.getBlockOwnerDeletion()).isTrue();
            });
            assertThat(s.getAddressType()).isEqualTo("IPv4");
            assertThat(s.getPorts()).singleElement().satisfies(p -> {
                assertThat(p.getName()).isEqualTo("http");
                assertThat(p.getPort()).isEqualTo(8080);
            });
            Endpoint e = s.getEndpoints().get(0);
            assertThat(e.getAddresses()).containsExactly("10.0.0.1");
            assertThat(e.getConditions().getReady()).isTrue();
            assertThat(e.getNodeName()).isEqualTo("node-1");
            assertThat(e.getTargetRef().getName()).isEqualTo("pod-0");
        });
    }

    @Test
    void noPodsMakeOnePlaceholderThatIsKept() {
        Reconciler r = reconciler(100);
        List<EndpointSlice> state = run(r, service(), List.of(), List.of());
        assertThat(writer.created).singleElement().satisfies(s -> {
            assertThat(s.getEndpoints()).isEmpty();
            assertThat(s.getPorts()).isEmpty();
        });
        run(r, service(), List.of(), state);
        assertThat(writer.writes()).isZero();
    }

    @Test
    void placeholderIsReusedForTheFirstEndpoints() {
        Reconciler r = reconciler(100);
        List<EndpointSlice> state = run(r, service(), List.of(), List.of());
        String placeholder = state.get(0).getMetadata().getName();
        state = run(r, service(), List.of(pod(0, true)), state);
        // create turned into an update of the slice that would be deleted
        assertThat(writer.created).isEmpty();
        assertThat(writer.deleted).isEmpty();
        assertThat(writer.updated).singleElement().satisfies(s -> assertThat(s.getMetadata().getName()).isEqualTo(placeholder));
        assertThat(state).hasSize(1);
    }

    @Test
    void twoHundredFiftyEndpointsPackIntoThreeSlices() {
        Reconciler r = reconciler(100);
        List<EndpointSlice> state = run(r, service(), pods(0, 250), List.of());
        assertThat(state).hasSize(3);
        assertThat(state.stream().map(s -> s.getEndpoints().size()).sorted().toList()).containsExactly(50, 100, 100);
        // the same pods again: nothing to write
        run(r, service(), pods(0, 250), state);
        assertThat(writer.writes()).isZero();
    }

    @Test
    void aChangedEndpointRewritesOnlyItsSlice() {
        Reconciler r = reconciler(100);
        List<EndpointSlice> state = run(r, service(), pods(0, 250), List.of());
        List<Pod> changed = pods(0, 250);
        changed.set(17, pod(17, false));
        String holder = state.stream().filter(s -> s.getEndpoints().stream()
                .anyMatch(e -> e.getTargetRef().getName().equals("pod-17"))).findFirst().orElseThrow().getMetadata().getName();
        state = run(r, service(), changed, state);
        assertThat(writer.created).isEmpty();
        assertThat(writer.deleted).isEmpty();
        assertThat(writer.updated).singleElement().satisfies(s -> assertThat(s.getMetadata().getName()).isEqualTo(holder));
        assertThat(total(state)).isEqualTo(250);
    }

    @Test
    void aRemovedEndpointRewritesOnlyItsSlice() {
        Reconciler r = reconciler(100);
        List<EndpointSlice> state = run(r, service(), pods(0, 250), List.of());
        List<Pod> fewer = pods(0, 250);
        fewer.remove(200);
        state = run(r, service(), fewer, state);
        assertThat(writer.updated).hasSize(1);
        assertThat(writer.created).isEmpty();
        assertThat(total(state)).isEqualTo(249);
    }

    @Test
    void newEndpointsGoToTheUnchangedSliceThatEndsClosestToFull() {
        Reconciler r = reconciler(100);
        // two slices: 80 and 10 endpoints
        List<EndpointSlice> state = new ArrayList<>(run(r, service(), pods(0, 80), List.of()));
        FakeWriter other = writer;
        other.created.clear();
        List<EndpointSlice> second = run(r, service(), pods(1000, 1010), List.of());
        // pretend both exist together
        List<EndpointSlice> both = new ArrayList<>(state);
        both.addAll(second);
        List<Pod> all = new ArrayList<>(pods(0, 80));
        all.addAll(pods(1000, 1010));
        all.addAll(pods(2000, 2015));
        both = run(r, service(), all, both);
        // 15 new endpoints fit in the 80 slice (95 <= 100): one update, no create
        assertThat(writer.created).isEmpty();
        assertThat(writer.updated).singleElement().satisfies(s -> assertThat(s.getEndpoints()).hasSize(95));
        assertThat(both).hasSize(2);
    }

    @Test
    void slicesBeingUpdatedAreFilledBeforeNewOnes() {
        Reconciler r = reconciler(10);
        List<EndpointSlice> state = run(r, service(), pods(0, 10), List.of());
        assertThat(state).hasSize(1);
        // pod-0 leaves, pod-10 and pod-11 arrive: the slice being updated takes one, a new one the other
        List<Pod> next = pods(1, 12);
        state = run(r, service(), next, state);
        assertThat(writer.updated).singleElement().satisfies(s -> assertThat(s.getEndpoints()).hasSize(10));
        assertThat(writer.created).singleElement().satisfies(s -> assertThat(s.getEndpoints()).hasSize(1));
        assertThat(total(state)).isEqualTo(11);
    }

    @Test
    void emptiedSliceIsDeletedUnlessACreateCanReuseIt() {
        Reconciler r = reconciler(2);
        List<EndpointSlice> state = run(r, service(), pods(0, 4), List.of());
        assertThat(state).hasSize(2);
        // pods 0..1 (one full slice) go away; nothing else wanted: that slice is deleted
        List<EndpointSlice> after = run(r, service(), pods(2, 4), state);
        if (writer.deleted.isEmpty()) {
            // the pods may have been packed the other way round; the emptied slice is the one deleted
            throw new AssertionError("expected a delete, got " + writer.updated.size() + " updates");
        }
        assertThat(writer.deleted).hasSize(1);
        assertThat(after).hasSize(1);
    }

    @Test
    void serviceLabelChangesUpdateEverySliceAndReservedLabelsAreIgnored() {
        Reconciler r = reconciler(100);
        List<EndpointSlice> state = run(r, service(), pods(0, 150), List.of());
        Service relabelled = new ServiceBuilder(service()).editMetadata()
                .withLabels(Map.of("team", "b", "kubernetes.io/service-name", "evil")).endMetadata().build();
        state = run(r, relabelled, pods(0, 150), state);
        assertThat(writer.updated).hasSize(2);
        assertThat(state).allSatisfy(s -> assertThat(s.getMetadata().getLabels()).containsEntry("team", "b")
                .containsEntry("kubernetes.io/service-name", "svc"));
    }

    @Test
    void headlessServiceSlicesCarryTheHeadlessLabel() {
        Reconciler r = reconciler(100);
        Service headless = new ServiceBuilder(service()).editSpec().withClusterIP("None").withPorts(List.of()).endSpec().build();
        run(r, headless, pods(0, 1), List.of());
        assertThat(writer.created).singleElement().satisfies(s -> {
            assertThat(s.getMetadata().getLabels()).containsEntry("service.kubernetes.io/headless", "");
            assertThat(s.getPorts()).isEmpty();
        });
    }

    @Test
    void dualStackServiceGetsOneSliceSetPerFamily() {
        Reconciler r = reconciler(100);
        Pod p = pod(0, true, "10.0.0.5", "fd00:0:0:0:0:0:0:5");
        List<EndpointSlice> state = run(r, service("IPv4", "IPv6"), List.of(p), List.of());
        assertThat(state).hasSize(2);
        Map<String, List<String>> byType = new HashMap<>();
        state.forEach(s -> byType.put(s.getAddressType(), s.getEndpoints().get(0).getAddresses()));
        assertThat(byType).containsEntry("IPv4", List.of("10.0.0.5")).containsEntry("IPv6", List.of("fd00::5"));

        // the Service drops IPv6: its slices are deleted
        state = run(r, service("IPv4"), List.of(p), state);
        assertThat(writer.deleted).hasSize(1);
        assertThat(state).singleElement().satisfies(s -> assertThat(s.getAddressType()).isEqualTo("IPv4"));
    }

    @Test
    void addressTypesFollowFamiliesOrClusterIP() {
        assertThat(ReconcilerUtils.addressTypesForService(service("IPv6"))).containsExactly("IPv6");
        assertThat(ReconcilerUtils.addressTypesForService(service("IPv4", "IPv6"))).containsExactly("IPv4", "IPv6");
        Service noFamilies = new ServiceBuilder(service()).editSpec().withIpFamilies(List.of()).withClusterIP("fd00::10")
                .endSpec().build();
        assertThat(ReconcilerUtils.addressTypesForService(noFamilies)).containsExactly("IPv6");
        Service headlessNoFamilies = new ServiceBuilder(noFamilies).editSpec().withClusterIP("None").endSpec().build();
        assertThat(ReconcilerUtils.addressTypesForService(headlessNoFamilies)).containsExactly("IPv4", "IPv6");
    }

    @Test
    void slicesOfAnOlderServiceOfTheSameNameAreReplaced() {
        Reconciler r = reconciler(100);
        List<EndpointSlice> state = run(r, service(), pods(0, 3), List.of());
        Service recreated = new ServiceBuilder(service()).editMetadata().withUid("new-uid").endMetadata().build();
        state = run(r, recreated, pods(0, 3), state);
        assertThat(writer.deleted).hasSize(1);
        assertThat(writer.created).singleElement().satisfies(
                s -> assertThat(s.getMetadata().getOwnerReferences().get(0).getUid()).isEqualTo("new-uid"));
        assertThat(writer.updated).isEmpty();
    }

    @Test
    void podOnAMissingNodeIsSkippedWithAnErrorUnlessNotReadyAddressesArePublished() {
        Reconciler r = reconciler(100);
        Pod lost = new PodBuilder(pod(1, true)).editSpec().withNodeName("ghost").endSpec().build();
        assertThatThrownBy(() -> r.reconcile(service(), List.of(pod(0, true), lost), List.of(), null))
                .hasMessage("skipping Pod pod-1 for Service ns/svc: Node ghost Not Found");
        assertThat(writer.created).singleElement().satisfies(s -> assertThat(s.getEndpoints()).hasSize(1));

        writer.created.clear();
        Service pnr = new ServiceBuilder(service()).editSpec().withPublishNotReadyAddresses(true).endSpec().build();
        r.reconcile(pnr, List.of(pod(0, false), lost), List.of(), null);
        assertThat(writer.created).singleElement().satisfies(s -> {
            assertThat(s.getEndpoints()).hasSize(2);
            assertThat(s.getEndpoints()).allSatisfy(e -> assertThat(e.getConditions().getReady()).isTrue());
        });
    }

    @Test
    void terminatingPodIsTerminatingAndNotReady() {
        Reconciler r = reconciler(100);
        Pod t = new PodBuilder(pod(0, true)).editMetadata().withDeletionTimestamp("2024-01-01T00:00:00Z").endMetadata().build();
        r.reconcile(service(), List.of(t), List.of(), null);
        Endpoint e = writer.created.get(0).getEndpoints().get(0);
        assertThat(e.getConditions().getReady()).isFalse();
        assertThat(e.getConditions().getServing()).isTrue();
        assertThat(e.getConditions().getTerminating()).isTrue();
    }

    @Test
    void noCreatesWhileTheServiceIsBeingDeleted() {
        Reconciler r = reconciler(100);
        Service deleting = new ServiceBuilder(service()).editMetadata().withDeletionTimestamp("2024-01-01T00:00:00Z")
                .endMetadata().build();
        r.reconcile(deleting, pods(0, 3), List.of(), null);
        assertThat(writer.created).isEmpty();
    }

    @Test
    void existingHintsAreRemovedWithoutTrafficDistribution() {
        Reconciler r = reconciler(100);
        List<EndpointSlice> state = run(r, service(), pods(0, 2), List.of());
        EndpointSlice hinted = new EndpointSliceBuilder(state.get(0)).build();
        hinted.getEndpoints().forEach(e -> e.setHints(new io.fabric8.kubernetes.api.model.discovery.v1.EndpointHints(
                null, List.of(new io.fabric8.kubernetes.api.model.discovery.v1.ForZone("z")))));
        run(r, service(), pods(0, 2), List.of(hinted));
        assertThat(writer.updated).singleElement()
                .satisfies(s -> assertThat(s.getEndpoints()).allSatisfy(e -> assertThat(e.getHints()).isNull()));
    }

    @Test
    void slicesReadBackAsJsonCauseNoFurtherWrites() {
        // an unnamed port is written as name "" (as upstream); read back it must group the same way
        Service unnamed = new ServiceBuilder(service()).editSpec().withPorts(new io.fabric8.kubernetes.api.model.ServicePortBuilder()
                .withPort(80).withProtocol("UDP").withTargetPort(new IntOrString(53)).build()).endSpec().build();
        Reconciler r = reconciler(100);
        List<EndpointSlice> state = run(r, unnamed, pods(0, 120), List.of());
        List<EndpointSlice> readBack = state.stream().map(s -> io.fabric8.kubernetes.client.utils.Serialization
                .unmarshal(io.fabric8.kubernetes.client.utils.Serialization.asJson(s), EndpointSlice.class)).toList();
        assertThat(readBack).allSatisfy(s -> assertThat(s.getPorts()).singleElement()
                .satisfies(p -> assertThat(p.getName()).isEqualTo("")));
        run(r, unnamed, pods(0, 120), readBack);
        assertThat(writer.writes()).isZero();
    }

    @Test
    void goTimeFormatDropsTrailingZeros() {
        assertThat(GoTime.rfc3339NanoUtc(Instant.parse("2024-05-01T10:00:00Z"))).isEqualTo("2024-05-01T10:00:00Z");
        assertThat(GoTime.rfc3339NanoUtc(Instant.parse("2024-05-01T10:00:00.500Z"))).isEqualTo("2024-05-01T10:00:00.5Z");
        assertThat(GoTime.rfc3339NanoUtc(Instant.parse("2024-05-01T10:00:00.000000001Z")))
                .isEqualTo("2024-05-01T10:00:00.000000001Z");
    }

    @Test
    void goIpParsingAndFormatting() {
        assertThat(GoIP.format(GoIP.parseSloppy("010.000.000.001"))).isEqualTo("10.0.0.1");
        assertThat(GoIP.format(GoIP.parseSloppy("2001:DB8:0:0:0:0:0:1"))).isEqualTo("2001:db8::1");
        assertThat(GoIP.format(GoIP.parseSloppy("fe80:0:0:1:0:0:0:1"))).isEqualTo("fe80:0:0:1::1");
        assertThat(GoIP.format(GoIP.parseSloppy("2001:db8:0:1:1:1:1:1"))).isEqualTo("2001:db8:0:1:1:1:1:1");
        assertThat(GoIP.format(GoIP.parseSloppy("::"))).isEqualTo("::");
        assertThat(GoIP.format(GoIP.parseSloppy("::1"))).isEqualTo("::1");
        byte[] mapped = GoIP.parseSloppy("::ffff:1.2.3.4");
        assertThat(GoIP.isIPv6(mapped)).isFalse();
        assertThat(GoIP.format(mapped)).isEqualTo("1.2.3.4");
        assertThat(GoIP.format(GoIP.parseSloppy("::1.2.3.4"))).isEqualTo("::102:304");
        assertThat(GoIP.parseSloppy("not-an-ip")).isNull();
        assertThat(GoIP.format(null)).isEqualTo("<nil>");
        assertThat(GoIP.parseSloppy("1:2:3:4:5:6:7:8:9")).isNull();
        assertThat(GoIP.parseSloppy("1::2::3")).isNull();
    }

    @Test
    void endpointSlicePrefix() {
        assertThat(ReconcilerUtils.endpointSlicePrefix("web")).isEqualTo("web-");
    }

    @Test
    void hintsEnabledAnnotations() {
        assertThat(ReconcilerUtils.hintsEnabled(Map.of("service.kubernetes.io/topology-mode", "Auto"))).isTrue();
        assertThat(ReconcilerUtils.hintsEnabled(Map.of("service.kubernetes.io/topology-mode", "auto"))).isTrue();
        assertThat(ReconcilerUtils.hintsEnabled(Map.of("service.kubernetes.io/topology-mode", "PreferZone"))).isFalse();
        // the deprecated annotation wins when both are set
        assertThat(ReconcilerUtils.hintsEnabled(Map.of("service.kubernetes.io/topology-aware-hints", "disabled",
                "service.kubernetes.io/topology-mode", "Auto"))).isFalse();
        assertThat(ReconcilerUtils.hintsEnabled(null)).isFalse();
    }

    @Test
    void validTrafficDistributionFollowsGates() {
        Reconciler both = new Reconciler(writer, n -> null, 100, tracker, null, events, CONTROLLER, true, true,
                new EndpointSliceMetrics(new SimpleMeterRegistry()));
        Reconciler closeOnly = new Reconciler(writer, n -> null, 100, tracker, null, events, CONTROLLER, true, false,
                new EndpointSliceMetrics(new SimpleMeterRegistry()));
        Reconciler none = new Reconciler(writer, n -> null, 100, tracker, null, events, CONTROLLER, false, true,
                new EndpointSliceMetrics(new SimpleMeterRegistry()));
        assertThat(both.validTrafficDistribution("PreferSameNode")).isTrue();
        assertThat(both.validTrafficDistribution("Bogus")).isFalse();
        assertThat(closeOnly.validTrafficDistribution("PreferClose")).isTrue();
        assertThat(closeOnly.validTrafficDistribution("PreferSameZone")).isFalse();
        assertThat(none.validTrafficDistribution("PreferClose")).isFalse();
    }

    @Test
    void deepCopyDoesNotShareEndpointsOrLabels() {
        EndpointSlice s = ReconcilerUtils.newEndpointSlice(service(), List.of(), "IPv4", CONTROLLER);
        s.getEndpoints().add(ReconcilerUtils.podToEndpoint(pod(0, true), null, service(), "IPv4"));
        EndpointSlice c = Reconciler.deepCopy(s);
        c.getMetadata().getLabels().put("x", "y");
        c.getEndpoints().get(0).getConditions().setReady(false);
        c.getEndpoints().add(new Endpoint());
        assertThat(s.getMetadata().getLabels()).doesNotContainKey("x");
        assertThat(s.getEndpoints()).hasSize(1);
        assertThat(s.getEndpoints().get(0).getConditions().getReady()).isTrue();
    }
}
