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

    @Test
    void aSyncStartedBetweenDecodingAndTheShadowHandlerSawUpstreamsWrite() {
        StepClock clock = new StepClock();
        try (ShadowMatcher matcher = new ShadowMatcher(Duration.ofSeconds(5), new SimpleMeterRegistry(), clock, false)) {
            UpstreamWrites writes = new UpstreamWrites(matcher, UpstreamWrites.UPSTREAM_MANAGER, clock.instant().minusSeconds(120));
            ResourceEventHandler<ReplicaSet> handler = handlerOf(writes);
            ReplicaSet before = replicaSet("10", 1, "2026-11-27T05:00:00Z");
            writes.observe(before.getMetadata());
            handler.onAdd(before);

            // qkcm, from a cache with one pod, meant a status of 1 replica
            clock.advance(100);
            matcher.submit(new ShadowAction(Side.QKCM, "replicaset-controller", "update", "apps/replicasets", "status", "ns",
                    "web", 200, Map.of("kind", "ReplicaSet", "metadata", Map.of("namespace", "ns", "name", "web"), "status",
                            Map.of("replicas", 1, "fullyLabeledReplicas", 1)),
                    clock.instant()));
            // upstream, with three pods, wrote 3: the informer decodes that version ...
            clock.advance(100);
            ReplicaSet after = replicaSet("11", 3, "2026-11-27T05:00:01Z");
            writes.observe(after.getMetadata());
            // ... runs qkcm's handler first: its sync starts, sees 3 and writes nothing ...
            clock.advance(5);
            matcher.synced("replicaset-controller", "ReplicaSet", "ns/web", clock.millis());
            // ... and the shadow handler last
            clock.advance(20);
            handler.onUpdate(before, after);
            matcher.closeAll();

            assertThat(matcher.latest()).isEmpty();
            assertThat(matcher.totals().get("replicaset-controller")).containsEntry(ShadowMatcher.CONVERGED, 1L);
        }
    }

    @Test
    void aSyncStartedBeforeUpstreamsWriteWasDecodedDidNotSeeIt() {
        StepClock clock = new StepClock();
        try (ShadowMatcher matcher = new ShadowMatcher(Duration.ofSeconds(5), new SimpleMeterRegistry(), clock, false)) {
            UpstreamWrites writes = new UpstreamWrites(matcher, UpstreamWrites.UPSTREAM_MANAGER, clock.instant().minusSeconds(120));
            ResourceEventHandler<ReplicaSet> handler = handlerOf(writes);
            ReplicaSet before = replicaSet("10", 1, "2026-11-27T05:00:00Z");
            writes.observe(before.getMetadata());
            handler.onAdd(before);
            clock.advance(100);
            matcher.submit(new ShadowAction(Side.QKCM, "replicaset-controller", "update", "apps/replicasets", "status", "ns",
                    "web", 200, Map.of("kind", "ReplicaSet", "metadata", Map.of("namespace", "ns", "name", "web"), "status",
                            Map.of("replicas", 1, "fullyLabeledReplicas", 1)),
                    clock.instant()));
            clock.advance(50);
            matcher.synced("replicaset-controller", "ReplicaSet", "ns/web", clock.millis());
            clock.advance(50);
            ReplicaSet after = replicaSet("11", 3, "2026-11-27T05:00:01Z");
            writes.observe(after.getMetadata());
            clock.advance(20);
            handler.onUpdate(before, after);
            matcher.closeAll();

            assertThat(matcher.latest()).extracting(ShadowMatcher.Mismatch::cls).isEqualTo(List.of(ShadowMatcher.DIFFERENT_CONTENT));
        }
    }

    @Test
    void aSecondWriteOfUpstreamsWithinTheSameSecondIsSeen() {
        StepClock clock = new StepClock();
        try (ShadowMatcher matcher = new ShadowMatcher(Duration.ofSeconds(5), new SimpleMeterRegistry(), clock, false)) {
            UpstreamWrites writes = new UpstreamWrites(matcher, UpstreamWrites.UPSTREAM_MANAGER, clock.instant());
            ResourceEventHandler<ReplicaSet> handler = handlerOf(writes);
            ReplicaSet created = replicaSet("10", 0, "2026-11-27T04:59:59Z");
            writes.observe(created.getMetadata());
            handler.onAdd(created);
            ReplicaSet first = replicaSet("11", 1, "2026-11-27T05:00:01Z");
            writes.observe(first.getMetadata());
            handler.onUpdate(created, first);
            // the same manager, the same fields, the same second: its entry is unchanged
            ReplicaSet second = replicaSet("12", 3, "2026-11-27T05:00:01Z");
            writes.observe(second.getMetadata());
            handler.onUpdate(first, second);
            // qkcm meant the second one only
            matcher.submit(new ShadowAction(Side.QKCM, "replicaset-controller", "update", "apps/replicasets", "status", "ns",
                    "web", 200, Map.of("kind", "ReplicaSet", "metadata", Map.of("namespace", "ns", "name", "web"), "status",
                            Map.of("replicas", 3, "fullyLabeledReplicas", 3)),
                    clock.instant()));
            matcher.closeAll();

            assertThat(matcher.latest()).isEmpty();
            assertThat(matcher.totals().get("replicaset-controller")).containsEntry(ShadowMatcher.MATCHED, 1L);
        }
    }

    @Test
    void anotherManagersRewriteIsNotUpstreams() {
        StepClock clock = new StepClock();
        try (ShadowMatcher matcher = new ShadowMatcher(Duration.ofSeconds(5), new SimpleMeterRegistry(), clock, false)) {
            UpstreamWrites writes = new UpstreamWrites(matcher, UpstreamWrites.UPSTREAM_MANAGER, clock.instant());
            ResourceEventHandler<ReplicaSet> handler = handlerOf(writes);
            ReplicaSet created = replicaSet("10", 0, "2026-11-27T05:00:01Z");
            created.getMetadata().getManagedFields().add(new ManagedFieldsEntryBuilder().withManager("someone")
                    .withOperation("Update").withSubresource("status").withApiVersion("apps/v1")
                    .withTime("2026-11-27T05:00:02Z").build());
            writes.observe(created.getMetadata());
            handler.onAdd(created);
            // "someone" writes the status again in its second: upstream's entry is older, the write is not upstream's
            ReplicaSet again = replicaSet("11", 2, "2026-11-27T05:00:01Z");
            again.getMetadata().getManagedFields().add(new ManagedFieldsEntryBuilder().withManager("someone")
                    .withOperation("Update").withSubresource("status").withApiVersion("apps/v1")
                    .withTime("2026-11-27T05:00:02Z").build());
            writes.observe(again.getMetadata());
            handler.onUpdate(created, again);
            matcher.closeAll();

            assertThat(matcher.totals()).isEmpty();
        }
    }

    @Test
    void qkcmsWriteFromAnOlderCacheAnsweredAfterUpstreamsThenASilentSyncConverges() {
        StepClock clock = new StepClock();
        try (ShadowMatcher matcher = new ShadowMatcher(Duration.ofSeconds(5), new SimpleMeterRegistry(), clock, false)) {
            UpstreamWrites writes = new UpstreamWrites(matcher, UpstreamWrites.UPSTREAM_MANAGER, clock.instant());
            ResourceEventHandler<ReplicaSet> handler = handlerOf(writes);
            ReplicaSet created = replicaSet("10", 0, "2026-11-27T04:59:59Z");
            writes.observe(created.getMetadata());
            handler.onAdd(created);
            // upstream writes 2 replicas; qkcm's dry run of 1 (from a cache one pod behind) is answered just after
            ReplicaSet two = replicaSet("11", 2, "2026-11-27T05:00:00Z");
            writes.observe(two.getMetadata());
            handler.onUpdate(created, two);
            clock.advance(10);
            matcher.submit(new ShadowAction(Side.QKCM, "replicaset-controller", "update", "apps/replicasets", "status", "ns",
                    "web", 200, Map.of("kind", "ReplicaSet", "metadata", Map.of("namespace", "ns", "name", "web"), "status",
                            Map.of("replicas", 1, "fullyLabeledReplicas", 1)),
                    clock.instant()));
            clock.advance(40);
            // qkcm's next sync sees both pods and upstream's status: nothing to write
            matcher.synced("replicaset-controller", "ReplicaSet", "ns/web", clock.millis());
            matcher.closeAll();

            assertThat(matcher.latest()).isEmpty();
            assertThat(matcher.totals().get("replicaset-controller")).containsEntry(ShadowMatcher.CONVERGED, 1L);
        }
    }

    @Test
    void aGracefulDeletionIsNotAnUpdateOfUpstreams() {
        StepClock clock = new StepClock();
        try (ShadowMatcher matcher = new ShadowMatcher(Duration.ofSeconds(5), new SimpleMeterRegistry(), clock, false)) {
            UpstreamWrites writes = new UpstreamWrites(matcher, UpstreamWrites.UPSTREAM_MANAGER, clock.instant());
            ResourceEventHandler<ReplicaSet> handler = handlerOf(writes);
            ReplicaSet created = replicaSet("10", 1, "2026-11-27T05:00:01Z");
            writes.observe(created.getMetadata());
            handler.onAdd(created);
            // a DELETE sets the deletionTimestamp and touches no managedFields entry
            ReplicaSet deleting = replicaSet("11", 1, "2026-11-27T05:00:01Z");
            deleting.getMetadata().setDeletionTimestamp("2026-11-27T05:00:02Z");
            writes.observe(deleting.getMetadata());
            handler.onUpdate(created, deleting);
            matcher.closeAll();

            // a deletion qkcm did not intend is not counted; an update would be (only-upstream)
            assertThat(matcher.totals()).isEmpty();
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
}
