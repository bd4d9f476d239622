package io.qkcm.runtime.shadow;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.reflect.Proxy;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.ManagedFieldsEntryBuilder;
import io.fabric8.kubernetes.api.model.apps.ReplicaSet;
import io.fabric8.kubernetes.api.model.apps.ReplicaSetBuilder;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.qkcm.runtime.shadow.ShadowAction.Side;

/**
 * An upstream write is dated when the informer decoded it, not when the shadow handler ran: the informer
 * may run qkcm's controller's handler first, and a sync it triggered must count as having seen the write.
 */
class UpstreamWritesTest {

    /** A clock the test moves. */
    static final class StepClock extends Clock {
        Instant now = Instant.parse("2026-11-27T05:00:00Z");

        @Override
        public Instant instant() {
            return now;
        }

        @Override
        public ZoneOffset getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(java.time.ZoneId zone) {
            return this;
        }

        void advance(long millis) {
            now = now.plusMillis(millis);
        }
    }

    @SuppressWarnings("unchecked")
    static ResourceEventHandler<ReplicaSet> handlerOf(UpstreamWrites writes) {
        AtomicReference<ResourceEventHandler<ReplicaSet>> handler = new AtomicReference<>();
        SharedIndexInformer<ReplicaSet> informer = (SharedIndexInformer<ReplicaSet>) Proxy.newProxyInstance(
                UpstreamWritesTest.class.getClassLoader(), new Class<?>[] { SharedIndexInformer.class }, (p, m, args) -> {
                    if (m.getName().equals("addEventHandler")) {
                        handler.set((ResourceEventHandler<ReplicaSet>) args[0]);
                    }
                    return null;
                });
        writes.watch(ReplicaSet.class, informer);
        return handler.get();
    }

    static ReplicaSet replicaSet(String resourceVersion, int replicas, String managedTime) {
        return new ReplicaSetBuilder().withNewMetadata().withNamespace("ns").withName("web").withUid("u-1")
                .withResourceVersion(resourceVersion).withCreationTimestamp("2026-11-27T04:59:00Z")
                .withManagedFields(new ManagedFieldsEntryBuilder().withManager(UpstreamWrites.UPSTREAM_MANAGER)
                        .withOperation("Update").withSubresource("status").withApiVersion("apps/v1").withTime(managedTime)
                        .build())
                .endMetadata().withNewStatus().withReplicas(replicas).withFullyLabeledReplicas(replicas).endStatus().build();
    }

    /** A matcher on a clock the test moves, and upstream's writes of ReplicaSets fed to it by the test. */
    static final class Fixture implements AutoCloseable {
        final StepClock clock = new StepClock();
        final ShadowMatcher matcher = new ShadowMatcher(Duration.ofSeconds(5), new SimpleMeterRegistry(), clock, false);
        final UpstreamWrites writes;
        final ResourceEventHandler<ReplicaSet> handler;

        /** Shadow mode started {@code sinceSecondsAgo} before the clock's start. */
        Fixture(long sinceSecondsAgo) {
            writes = new UpstreamWrites(matcher, UpstreamWrites.UPSTREAM_MANAGER, clock.instant().minusSeconds(sinceSecondsAgo));
            handler = handlerOf(writes);
        }

        /** The informer decodes {@code now} (upstream's entries read) and runs the shadow handler for it. */
        void seen(ReplicaSet before, ReplicaSet now) {
            writes.observe(now.getMetadata());
            if (before == null) {
                handler.onAdd(now);
            } else {
                handler.onUpdate(before, now);
            }
        }

        /** qkcm's dry run of a status of {@code replicas}, accepted at {@code at}. */
        void qkcmMeantStatus(int replicas, java.time.Instant at) {
            matcher.submit(new ShadowAction(Side.QKCM, "replicaset-controller", "update", "apps/replicasets", "status", "ns",
                    "web", 200, Map.of("kind", "ReplicaSet", "metadata", Map.of("namespace", "ns", "name", "web"), "status",
                            Map.of("replicas", replicas, "fullyLabeledReplicas", replicas)),
                    at));
        }

        @Override
        public void close() {
            matcher.close();
        }
    }

    @Test
    void aSyncStartedBetweenDecodingAndTheShadowHandlerSawUpstreamsWrite() {
        try (Fixture f = new Fixture(120)) {
            ReplicaSet before = replicaSet("10", 1, "2026-11-27T05:00:00Z");
            f.seen(null, before);

            // qkcm, from a cache with one pod, meant a status of 1 replica
            f.clock.advance(100);
            f.qkcmMeantStatus(1, f.clock.instant());
            // upstream, with three pods, wrote 3: the informer decodes that version ...
            f.clock.advance(100);
            ReplicaSet after = replicaSet("11", 3, "2026-11-27T05:00:01Z");
            f.writes.observe(after.getMetadata());
            // ... runs qkcm's handler first: its sync starts, sees 3 and writes nothing ...
            f.clock.advance(5);
            f.matcher.synced("replicaset-controller", "ReplicaSet", "ns/web", f.clock.millis());
            // ... and the shadow handler last
            f.clock.advance(20);
            f.handler.onUpdate(before, after);
            f.matcher.closeAll();

            assertThat(f.matcher.latest()).isEmpty();
            assertThat(f.matcher.totals().get("replicaset-controller")).containsEntry(ShadowMatcher.CONVERGED, 1L);
        }
    }

    @Test
    void aSyncStartedBeforeUpstreamsWriteWasDecodedDidNotSeeIt() {
        try (Fixture f = new Fixture(120)) {
            ReplicaSet before = replicaSet("10", 1, "2026-11-27T05:00:00Z");
            f.seen(null, before);
            f.clock.advance(100);
            f.qkcmMeantStatus(1, f.clock.instant());
            f.clock.advance(50);
            f.matcher.synced("replicaset-controller", "ReplicaSet", "ns/web", f.clock.millis());
            f.clock.advance(50);
            ReplicaSet after = replicaSet("11", 3, "2026-11-27T05:00:01Z");
            f.writes.observe(after.getMetadata());
            f.clock.advance(20);
            f.handler.onUpdate(before, after);
            f.matcher.closeAll();

            assertThat(f.matcher.latest()).extracting(ShadowMatcher.Mismatch::cls).isEqualTo(List.of(ShadowMatcher.DIFFERENT_CONTENT));
        }
    }

    @Test
    void aSecondWriteOfUpstreamsWithinTheSameSecondIsSeen() {
        try (Fixture f = new Fixture(0)) {
            ReplicaSet created = replicaSet("10", 0, "2026-11-27T04:59:59Z");
            f.seen(null, created);
            ReplicaSet first = replicaSet("11", 1, "2026-11-27T05:00:01Z");
            f.seen(created, first);
            // the same manager, the same fields, the same second: its entry is unchanged
            ReplicaSet second = replicaSet("12", 3, "2026-11-27T05:00:01Z");
            f.seen(first, second);
            // qkcm meant the second one only
            f.qkcmMeantStatus(3, f.clock.instant());
            f.matcher.closeAll();

            assertThat(f.matcher.latest()).isEmpty();
            assertThat(f.matcher.totals().get("replicaset-controller")).containsEntry(ShadowMatcher.MATCHED, 1L);
        }
    }

    @Test
    void anotherManagersRewriteIsNotUpstreams() {
        try (Fixture f = new Fixture(0)) {
            ReplicaSet created = replicaSet("10", 0, "2026-11-27T05:00:01Z");
            created.getMetadata().getManagedFields().add(new ManagedFieldsEntryBuilder().withManager("someone")
                    .withOperation("Update").withSubresource("status").withApiVersion("apps/v1")
                    .withTime("2026-11-27T05:00:02Z").build());
            f.seen(null, created);
            // "someone" writes the status again in its second: upstream's entry is older, the write is not upstream's
            ReplicaSet again = replicaSet("11", 2, "2026-11-27T05:00:01Z");
            again.getMetadata().getManagedFields().add(new ManagedFieldsEntryBuilder().withManager("someone")
                    .withOperation("Update").withSubresource("status").withApiVersion("apps/v1")
                    .withTime("2026-11-27T05:00:02Z").build());
            f.seen(created, again);
            f.matcher.closeAll();

            assertThat(f.matcher.totals()).isEmpty();
        }
    }

    @Test
    void qkcmsWriteFromAnOlderCacheAnsweredAfterUpstreamsThenASilentSyncConverges() {
        try (Fixture f = new Fixture(0)) {
            ReplicaSet created = replicaSet("10", 0, "2026-11-27T04:59:59Z");
            f.seen(null, created);
            // upstream writes 2 replicas; qkcm's dry run of 1 (from a cache one pod behind) is answered just after
            ReplicaSet two = replicaSet("11", 2, "2026-11-27T05:00:00Z");
            f.seen(created, two);
            f.clock.advance(10);
            f.qkcmMeantStatus(1, f.clock.instant());
            f.clock.advance(40);
            // qkcm's next sync sees both pods and upstream's status: nothing to write
            f.matcher.synced("replicaset-controller", "ReplicaSet", "ns/web", f.clock.millis());
            f.matcher.closeAll();

            assertThat(f.matcher.latest()).isEmpty();
            assertThat(f.matcher.totals().get("replicaset-controller")).containsEntry(ShadowMatcher.CONVERGED, 1L);
        }
    }

    @Test
    void aGracefulDeletionIsNotAnUpdateOfUpstreams() {
        try (Fixture f = new Fixture(0)) {
            ReplicaSet created = replicaSet("10", 1, "2026-11-27T05:00:01Z");
            f.seen(null, created);
            // a DELETE sets the deletionTimestamp and touches no managedFields entry
            ReplicaSet deleting = replicaSet("11", 1, "2026-11-27T05:00:01Z");
            deleting.getMetadata().setDeletionTimestamp("2026-11-27T05:00:02Z");
            f.seen(created, deleting);
            f.matcher.closeAll();

            // a deletion qkcm did not intend is not counted; an update would be (only-upstream)
            assertThat(f.matcher.totals()).isEmpty();
        }
    }

    /**
     * A namespace's default ServiceAccount sets no field but its name: the API server keeps no managedFields entry
     * for its creator. Such a creation confirms a creation qkcm intended, and alone is not counted.
     */
    @Test
    void aCreationWithoutManagedFieldsConfirmsQkcmsIntendedCreation() {
        StepClock clock = new StepClock();
        try (ShadowMatcher matcher = new ShadowMatcher(Duration.ofSeconds(5), new SimpleMeterRegistry(), clock, false)) {
            UpstreamWrites writes = new UpstreamWrites(matcher, UpstreamWrites.UPSTREAM_MANAGER, clock.instant().minusSeconds(120));
            ResourceEventHandler<ReplicaSet> handler = handlerOf(writes);
            for (String name : List.of("web", "other")) {
                // decoded without managedFields: the tap never sees it
                ReplicaSet rs = new ReplicaSetBuilder().withNewMetadata().withNamespace("ns").withName(name).withUid("u-" + name)
                        .withResourceVersion("10").withCreationTimestamp("2026-11-27T04:59:30Z").endMetadata().build();
                handler.onAdd(rs);
            }
            // qkcm meant to create "web" (its dry run answered AlreadyExists)
            matcher.submit(new ShadowAction(Side.QKCM, "replicaset-controller", "create", "apps/replicasets", "", "ns", "web",
                    409, null, clock.instant()));
            matcher.closeAll();

            assertThat(matcher.latest()).isEmpty();
            assertThat(matcher.totals()).containsOnlyKeys("replicaset-controller");
            assertThat(matcher.totals().get("replicaset-controller")).containsOnly(Map.entry(ShadowMatcher.MATCHED, 1L));
        }
    }

    static io.fabric8.kubernetes.api.model.Event registeredNode(String uid, String manager) {
        return new io.fabric8.kubernetes.api.model.EventBuilder().withNewMetadata().withNamespace("default")
                .withName("node-0." + uid).withUid(uid).withResourceVersion("5").withCreationTimestamp("2026-11-27T04:00:00Z")
                .withManagedFields(new ManagedFieldsEntryBuilder().withManager(manager).withOperation("Update")
                        .withApiVersion("v1").withTime("2026-11-27T04:00:00Z").build())
                .endMetadata().withNewInvolvedObject().withKind("Node").withName("node-0").endInvolvedObject()
                .withReason("RegisteredNode").withType("Normal")
                .withMessage("Node node-0 event: Registered Node node-0 in Controller").build();
    }

    /**
     * Upstream's RegisteredNode event from its own start, an hour before shadow mode started (the informer's first
     * list), is what qkcm's node controller's event at qkcm's start is compared with; another manager's is not.
     */
    @Test
    @SuppressWarnings("unchecked")
    void upstreamsEventsFromBeforeShadowModeMeetQkcmsAtItsStart() {
        for (String manager : List.of(UpstreamWrites.UPSTREAM_MANAGER, "kubelet")) {
            StepClock clock = new StepClock();
            try (ShadowMatcher matcher = new ShadowMatcher(Duration.ofSeconds(5), new SimpleMeterRegistry(), clock, false)) {
                UpstreamWrites writes = new UpstreamWrites(matcher, UpstreamWrites.UPSTREAM_MANAGER, clock.instant());
                AtomicReference<ResourceEventHandler<io.fabric8.kubernetes.api.model.Event>> handler = new AtomicReference<>();
                writes.watch(io.fabric8.kubernetes.api.model.Event.class,
                        (SharedIndexInformer<io.fabric8.kubernetes.api.model.Event>) Proxy.newProxyInstance(
                                UpstreamWritesTest.class.getClassLoader(), new Class<?>[] { SharedIndexInformer.class },
                                (p, m, args) -> {
                                    if (m.getName().equals("addEventHandler")) {
                                        handler.set((ResourceEventHandler<io.fabric8.kubernetes.api.model.Event>) args[0]);
                                    }
                                    return null;
                                }));
                java.util.concurrent.atomic.AtomicBoolean starting = new java.util.concurrent.atomic.AtomicBoolean(true);
                matcher.holdWhileStarting(starting::get);
                io.fabric8.kubernetes.api.model.Event prior = registeredNode("e-1", manager);
                writes.observe(prior.getMetadata());
                handler.get().onAdd(prior);
                clock.advance(2_000);
                Map<String, Object> event = Map.of("involvedObject", Map.of("kind", "Node", "name", "node-0"), "reason",
                        "RegisteredNode", "type", "Normal", "message", "Node node-0 event: Registered Node node-0 in Controller");
                matcher.submit(new ShadowAction(Side.QKCM, "node-controller", "event", "events", "", "default",
                        Normalise.eventKey(event), 201, event, clock.instant()));
                starting.set(false);
                matcher.closeDue();
                clock.advance(10_002);
                matcher.closeDue();

                assertThat(matcher.openKeys()).isEmpty();
                assertThat(matcher.totals().get("node-controller")).as(manager)
                        .containsOnlyKeys(manager.equals(UpstreamWrites.UPSTREAM_MANAGER) ? ShadowMatcher.MATCHED
                                : ShadowMatcher.ONLY_QKCM);
            }
        }
    }

    /** A ReplicaSet whose only managedFields entry is {@code manager}'s, owning spec.replicas and, if given, minReadySeconds. */
    static ReplicaSet owned(String resourceVersion, String manager, String time, Integer minReadySeconds) {
        Map<String, Object> spec = new java.util.TreeMap<>(Map.of("f:replicas", Map.of()));
        if (minReadySeconds != null) {
            spec.put("f:minReadySeconds", Map.of());
        }
        return new ReplicaSetBuilder().withNewMetadata().withNamespace("ns").withName("web").withUid("u-1")
                .withResourceVersion(resourceVersion).withCreationTimestamp("2026-11-27T04:59:00Z")
                .withManagedFields(new ManagedFieldsEntryBuilder().withManager(manager).withOperation("Update")
                        .withApiVersion("apps/v1").withTime(time).withNewFieldsV1()
                        .addToAdditionalProperties("f:spec", spec).endFieldsV1().build())
                .endMetadata().withNewSpec().withReplicas(2).withMinReadySeconds(minReadySeconds).endSpec().build();
    }

    @SuppressWarnings("unchecked")
    static ShadowAction qkcmUpdate(ReplicaSet result, Instant at) {
        return new ShadowAction(Side.QKCM, "node-controller", "update", "apps/replicasets", "", "ns", "web", 200,
                io.qkcm.runtime.Json.api().convertValue(result, Map.class), at);
    }

    /**
     * Upstream's controllers that apply server-side name their own field manager (the ClusterRole aggregation's
     * clusterrole-aggregation-controller, the ServiceCIDRs' service-cidr-controller): such a write is upstream's.
     */
    @Test
    void anApplyUnderAnUpstreamControllersFieldManagerIsUpstreams() {
        try (Fixture f = new Fixture(120)) {
            f.seen(null, owned("10", "kubectl", "2026-11-27T04:59:00Z", null));
            f.clock.advance(100);
            ReplicaSet applied = owned("11", "clusterrole-aggregation-controller", "2026-11-27T05:00:00Z", null);
            f.seen(owned("10", "kubectl", "2026-11-27T04:59:00Z", null), applied);
            f.matcher.submit(qkcmUpdate(applied, f.clock.instant()));
            f.matcher.closeAll();

            assertThat(f.matcher.latest()).isEmpty();
            assertThat(f.matcher.totals().get("node-controller")).containsOnly(Map.entry(ShadowMatcher.MATCHED, 1L));
        }
    }

    /**
     * A write that only removes fields (the node controller's removal of a node's not-ready taint) leaves its writer no
     * managedFields entry: seen as a change of what another manager owns, no entry newer. It confirms qkcm's update
     * when the object reached the state qkcm meant; with another state, or alone, it counts for nothing.
     */
    @Test
    void aRemovalThatLeavesNoFieldManagerConfirmsTheUpdateQkcmMeant() {
        for (boolean same : List.of(true, false)) {
            try (Fixture f = new Fixture(120)) {
                ReplicaSet before = owned("10", "kwokctl", "2026-11-27T04:59:00Z", 5);
                f.seen(null, before);
                f.clock.advance(100);
                ReplicaSet meant = owned("10", "kwokctl", "2026-11-27T04:59:00Z", null);
                f.matcher.submit(qkcmUpdate(same ? meant : owned("10", "kwokctl", "2026-11-27T04:59:00Z", 7), f.clock.instant()));
                f.clock.advance(100);
                f.seen(before, owned("11", "kwokctl", "2026-11-27T04:59:00Z", null));
                f.matcher.closeAll();

                assertThat(f.matcher.totals().get("node-controller")).as("same state: %s", same)
                        .containsOnly(Map.entry(same ? ShadowMatcher.MATCHED : ShadowMatcher.ONLY_QKCM, 1L));
            }
        }
        try (Fixture f = new Fixture(120)) {
            ReplicaSet before = owned("10", "kwokctl", "2026-11-27T04:59:00Z", 5);
            f.seen(null, before);
            f.seen(before, owned("11", "kwokctl", "2026-11-27T04:59:00Z", null));
            f.matcher.closeAll();
            assertThat(f.matcher.totals()).isEmpty();
        }
        // a write that left an entry with its time (another manager's, within the second) is no such removal
        try (Fixture f = new Fixture(120)) {
            ReplicaSet before = owned("10", "kwokctl", "2026-11-27T04:59:00Z", 5);
            f.seen(null, before);
            f.clock.advance(100);
            f.matcher.submit(qkcmUpdate(owned("10", "kwokctl", "2026-11-27T04:59:00Z", null), f.clock.instant()));
            f.seen(before, owned("11", "kwokctl", "2026-11-27T05:00:00Z", null));
            f.matcher.closeAll();
            assertThat(f.matcher.totals().get("node-controller")).containsOnly(Map.entry(ShadowMatcher.ONLY_QKCM, 1L));
        }
    }
}
