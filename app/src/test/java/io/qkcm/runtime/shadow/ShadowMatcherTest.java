package io.qkcm.runtime.shadow;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.qkcm.runtime.shadow.ShadowAction.Side;
import io.qkcm.runtime.shadow.UpstreamWritesTest.StepClock;

/**
 * The matcher's classification of the races two writers of the same object have: upstream creates a
 * Service's Endpoints a few milliseconds before qkcm's controller, whose cache did not have them yet, sends
 * its create; the dry run is answered 409 AlreadyExists and the controller says so in a Warning event, as
 * upstream's does when it loses such a race.
 */
class ShadowMatcherTest {

    static final String CONTROLLER = "endpoint-controller";

    static ShadowAction qkcmCreate(StepClock clock, int code) {
        return new ShadowAction(Side.QKCM, CONTROLLER, "create", "/endpoints", "", "ns", "web", code,
                Map.of("kind", "Status", "code", code, "message", "endpoints \"web\" already exists"), clock.instant());
    }

    static ShadowAction upstreamCreate(StepClock clock) {
        return new ShadowAction(Side.UPSTREAM, ShadowMatcher.UNATTRIBUTED, "create", "/endpoints", "", "ns", "web", 0,
                Map.of("kind", "Endpoints", "metadata", Map.of("namespace", "ns", "name", "web")), clock.instant());
    }

    /** The event upstream's endpoints controller records when its create fails (its object has no namespace). */
    static ShadowAction failedToCreate(StepClock clock, String error) {
        Map<String, Object> event = Map.of("involvedObject", Map.of("kind", "Endpoints", "name", "web"), "reason",
                "FailedToCreateEndpoint", "type", "Warning", "message",
                "Failed to create endpoint for service ns/web: " + error);
        return new ShadowAction(Side.QKCM, CONTROLLER, "event", "events", "", "default", Normalise.eventKey(event), 201,
                event, clock.instant());
    }

    @Test
    void aCreateAnsweredAlreadyExistsAndItsWarningAreUpstreamsRace() {
        StepClock clock = new StepClock();
        try (ShadowMatcher matcher = new ShadowMatcher(Duration.ofSeconds(5), new SimpleMeterRegistry(), clock, false)) {
            matcher.submit(upstreamCreate(clock));
            clock.advance(30);
            matcher.submit(qkcmCreate(clock, 409));
            clock.advance(150);
            matcher.submit(failedToCreate(clock, "endpoints \"web\" already exists"));
            matcher.closeAll();

            assertThat(matcher.latest()).isEmpty();
            assertThat(matcher.totals().get(CONTROLLER)).containsEntry(ShadowMatcher.MATCHED, 1L)
                    .containsEntry(ShadowMatcher.CONVERGED, 1L);
        }
    }

    @Test
    void anAlreadyExistsWarningWithoutAConflictedDryRunInTheWindowIsOnlyQkcms() {
        StepClock clock = new StepClock();
        try (ShadowMatcher matcher = new ShadowMatcher(Duration.ofSeconds(5), new SimpleMeterRegistry(), clock, false)) {
            matcher.submit(upstreamCreate(clock));
            clock.advance(30);
            matcher.submit(qkcmCreate(clock, 409));
            // the warning comes long after that conflict: it is about another write, not this race
            clock.advance(20_000);
            matcher.submit(failedToCreate(clock, "endpoints \"web\" already exists"));
            matcher.closeAll();

            assertThat(matcher.latest()).extracting(ShadowMatcher.Mismatch::cls, ShadowMatcher.Mismatch::key)
                    .containsExactly(org.assertj.core.groups.Tuple.tuple(ShadowMatcher.ONLY_QKCM,
                            "event events default/Endpoints/web:FailedToCreateEndpoint"));
        }
    }

    @Test
    void aWarningOfAnotherFailureIsOnlyQkcmsEvenAfterAConflict() {
        StepClock clock = new StepClock();
        try (ShadowMatcher matcher = new ShadowMatcher(Duration.ofSeconds(5), new SimpleMeterRegistry(), clock, false)) {
            matcher.submit(upstreamCreate(clock));
            clock.advance(30);
            matcher.submit(qkcmCreate(clock, 409));
            clock.advance(150);
            matcher.submit(failedToCreate(clock, "endpoints \"web\" is invalid: subsets[0].addresses[0].ip: Invalid value"));
            matcher.closeAll();

            assertThat(matcher.latest()).extracting(ShadowMatcher.Mismatch::cls).isEqualTo(List.of(ShadowMatcher.ONLY_QKCM));
        }
    }

    static ShadowAction endpointsUpdate(Side side, StepClock clock, List<String> ips) {
        Map<String, Object> object = Map.of("kind", "Endpoints", "metadata", Map.of("namespace", "ns", "name", "web"),
                "subsets", List.of(Map.of("addresses", ips.stream().map(ip -> Map.of("ip", ip)).toList())));
        return new ShadowAction(side, side == Side.QKCM ? CONTROLLER : ShadowMatcher.UNATTRIBUTED, "update", "/endpoints", "",
                "ns", "web", side == Side.QKCM ? 200 : 0, object, clock.instant());
    }

    /**
     * Upstream updates the Endpoints a pod's readiness changed; qkcm's sync for the same pod event started a few
     * milliseconds before upstream's write was decoded and wrote nothing: it may have read the Endpoints after
     * upstream's write reached the cache, or before. The quiet group asks the controller for one more sync: one
     * that writes nothing is qkcm agreeing.
     */
    @Test
    void anUpstreamWriteNoSyncStartedAfterIsJudgedAfterOneMoreSync() {
        StepClock clock = new StepClock();
        try (ShadowMatcher matcher = new ShadowMatcher(Duration.ofSeconds(5), new SimpleMeterRegistry(), clock, false)) {
            java.util.concurrent.atomic.AtomicInteger asked = new java.util.concurrent.atomic.AtomicInteger();
            matcher.synced(CONTROLLER, "Service", "ns/web", clock.millis(), asked::incrementAndGet);
            clock.advance(30);
            matcher.submit(endpointsUpdate(Side.UPSTREAM, clock, List.of("10.0.0.1")));
            clock.advance(5_001);
            matcher.closeDue();

            assertThat(asked).hasValue(1);
            assertThat(matcher.openKeys()).containsExactly("update /endpoints ns/web");
            // the sync asked for: nothing to write
            clock.advance(10);
            matcher.synced(CONTROLLER, "Service", "ns/web", clock.millis(), asked::incrementAndGet);
            clock.advance(5_001);
            matcher.closeDue();

            assertThat(asked).hasValue(1);
            assertThat(matcher.openKeys()).isEmpty();
            assertThat(matcher.latest()).isEmpty();
            assertThat(matcher.total(ShadowMatcher.CONVERGED)).isEqualTo(1L);
        }
    }

    @Test
    void theSyncAskedForWritingSomethingElseIsADifference() {
        StepClock clock = new StepClock();
        try (ShadowMatcher matcher = new ShadowMatcher(Duration.ofSeconds(5), new SimpleMeterRegistry(), clock, false)) {
            matcher.synced(CONTROLLER, "Service", "ns/web", clock.millis(), () -> {
            });
            clock.advance(30);
            matcher.submit(endpointsUpdate(Side.UPSTREAM, clock, List.of("10.0.0.1")));
            clock.advance(5_001);
            matcher.closeDue();
            // qkcm's controller, asked again, would write other addresses
            clock.advance(10);
            matcher.submit(endpointsUpdate(Side.QKCM, clock, List.of("10.0.0.2")));
            clock.advance(5_001);
            matcher.closeDue();

            assertThat(matcher.latest()).extracting(ShadowMatcher.Mismatch::cls)
                    .isEqualTo(List.of(ShadowMatcher.DIFFERENT_CONTENT));
        }
    }

    @Test
    void withoutAControllerToAskTheWriteIsOnlyUpstreams() {
        StepClock clock = new StepClock();
        try (ShadowMatcher matcher = new ShadowMatcher(Duration.ofSeconds(5), new SimpleMeterRegistry(), clock, false)) {
            matcher.synced(CONTROLLER, "Service", "ns/web", clock.millis());
            clock.advance(30);
            matcher.submit(endpointsUpdate(Side.UPSTREAM, clock, List.of("10.0.0.1")));
            clock.advance(5_001);
            matcher.closeDue();

            assertThat(matcher.openKeys()).isEmpty();
            assertThat(matcher.latest()).extracting(ShadowMatcher.Mismatch::cls).isEqualTo(List.of(ShadowMatcher.ONLY_UPSTREAM));
        }
    }

    static Map<String, Object> pod(String tokenVolume) {
        return Map.of("kind", "Pod", "metadata", Map.of("namespace", "ns", "generateName", "web-"), "spec",
                Map.of("containers", List.of(Map.of("name", "app", "volumeMounts", List.of(Map.of("name", tokenVolume)))),
                        "volumes", List.of(Map.of("name", tokenVolume))));
    }

    /** The ServiceAccount admission names each pod's token volume with a generated suffix: not a difference. */
    @Test
    void podsDifferingOnlyInTheirTokenVolumesSuffixMatch() {
        StepClock clock = new StepClock();
        try (ShadowMatcher matcher = new ShadowMatcher(Duration.ofSeconds(5), new SimpleMeterRegistry(), clock, false)) {
            matcher.submit(new ShadowAction(Side.QKCM, "replicaset-controller", "create", "/pods", "", "ns", "web-*", 201,
                    pod("kube-api-access-pzghn"), clock.instant()));
            matcher.submit(new ShadowAction(Side.UPSTREAM, ShadowMatcher.UNATTRIBUTED, "create", "/pods", "", "ns", "web-*", 0,
                    pod("kube-api-access-9wgl8"), clock.instant()));
            // another volume name is a difference still
            matcher.submit(new ShadowAction(Side.QKCM, "replicaset-controller", "create", "/pods", "", "ns", "api-*", 201,
                    pod("kube-api-access-pzghn"), clock.instant()));
            matcher.submit(new ShadowAction(Side.UPSTREAM, ShadowMatcher.UNATTRIBUTED, "create", "/pods", "", "ns", "api-*", 0,
                    pod("config"), clock.instant()));
            matcher.closeAll();

            assertThat(matcher.latest()).extracting(ShadowMatcher.Mismatch::key).containsExactly("create /pods ns/api-*");
            assertThat(matcher.totals().get("replicaset-controller")).containsEntry(ShadowMatcher.MATCHED, 1L)
                    .containsEntry(ShadowMatcher.DIFFERENT_CONTENT, 1L);
        }
    }

    /** Leader election's Leases are each side's own: neither their writes nor qkcm's LeaderElection event are compared. */
    @Test
    void eventsAboutShadowModesOwnLeaseAreNotCompared() {
        StepClock clock = new StepClock();
        try (ShadowMatcher matcher = new ShadowMatcher(Duration.ofSeconds(5), new SimpleMeterRegistry(), clock, false)) {
            matcher.leaderElectionLease("kube-system", "kube-controller-manager");
            matcher.leaderElectionLease("kube-system", "kube-controller-manager-shadow");
            // upstream's Lease, created by upstream: not compared either
            matcher.submit(new ShadowAction(Side.UPSTREAM, ShadowMatcher.UNATTRIBUTED, "create", "coordination.k8s.io/leases",
                    "", "kube-system", "kube-controller-manager", 0, Map.of("kind", "Lease"), clock.instant()));
            for (String lease : List.of("kube-controller-manager-shadow", "other")) {
                Map<String, Object> event = Map.of("involvedObject", Map.of("kind", "Lease", "namespace", "kube-system",
                        "name", lease), "reason", "LeaderElection", "type", "Normal", "message", "x became leader");
                matcher.submit(new ShadowAction(Side.QKCM, "event-broadcaster", "event", "events", "", "kube-system",
                        Normalise.eventKey(event), 201, event, clock.instant()));
            }
            matcher.closeAll();

            assertThat(matcher.intended()).isEqualTo(1);
            assertThat(matcher.latest()).extracting(ShadowMatcher.Mismatch::key)
                    .containsExactly("event events kube-system/Lease/other:LeaderElection");
        }
    }

    /**
     * In a namespace being deleted, qkcm's controllers (like upstream's) try to recreate what the namespace controller
     * deleted; the API server refuses (403 NamespaceTerminating). Counted apart, not a mismatch; any other 403 is.
     */
    @Test
    void aCreateRefusedInATerminatingNamespaceIsNotAMismatch() {
        StepClock clock = new StepClock();
        try (ShadowMatcher matcher = new ShadowMatcher(Duration.ofSeconds(5), new SimpleMeterRegistry(), clock, false)) {
            Map<String, Object> terminating = Map.of("kind", "Status", "code", 403, "reason", "Forbidden", "details",
                    Map.of("causes", List.of(Map.of("reason", "NamespaceTerminating", "message", "namespace ns is being terminated"))));
            Map<String, Object> forbidden = Map.of("kind", "Status", "code", 403, "reason", "Forbidden", "message", "no");
            matcher.submit(new ShadowAction(Side.QKCM, "replicaset-controller", "create", "/pods", "", "ns", "web-*", 403,
                    terminating, clock.instant()));
            matcher.submit(new ShadowAction(Side.QKCM, "replicaset-controller", "create", "/pods", "", "ns", "api-*", 403,
                    forbidden, clock.instant()));
            // an error's body may not be read through the write layer: a create refused 403 in a namespace seen deleted
            matcher.submit(new ShadowAction(Side.UPSTREAM, ShadowMatcher.UNATTRIBUTED, "delete", "/namespaces", "", "", "gone", 0,
                    null, clock.instant()));
            matcher.submit(new ShadowAction(Side.QKCM, "replicaset-controller", "create", "apps/replicasets", "", "gone",
                    "web", 403, null, clock.instant()));
            matcher.closeAll();

            assertThat(matcher.latest()).extracting(ShadowMatcher.Mismatch::key, ShadowMatcher.Mismatch::cls)
                    .containsExactly(org.assertj.core.groups.Tuple.tuple("create /pods ns/api-*", ShadowMatcher.REJECTED));
            assertThat(matcher.totals().get("replicaset-controller")).containsEntry(ShadowMatcher.NAMESPACE_TERMINATING, 2L)
                    .doesNotContainKey(ShadowMatcher.ONLY_QKCM);
        }
    }

    /** A StatefulSet's pods have a generateName but are named by ordinal: each pairs by its name. */
    @Test
    void podsNamedByOrdinalPairByName() {
        Map<String, Object> ordinal = Map.of("metadata", Map.of("name", "ss-2", "generateName", "ss-"));
        Map<String, Object> generated = Map.of("metadata", Map.of("name", "web-7b4xs", "generateName", "web-"));
        assertThat(Normalise.createName(ordinal, Map.of())).isEqualTo("ss-2");
        assertThat(Normalise.createName(generated, Map.of())).isEqualTo("web-*");
        assertThat(Normalise.createName(Map.of(), Map.of("metadata", Map.of("generateName", "web-")))).isEqualTo("web-*");
    }

    static ShadowAction clusterRoleUpdate(Side side, StepClock clock) {
        Map<String, Object> role = Map.of("kind", "ClusterRole", "metadata", Map.of("name", "admin"), "rules",
                List.of(Map.of("verbs", List.of("get"))));
        return new ShadowAction(side, side == Side.QKCM ? "clusterrole-aggregation-controller" : ShadowMatcher.UNATTRIBUTED,
                "update", "rbac.authorization.k8s.io/clusterroles", "", "", "admin", side == Side.QKCM ? 200 : 0, role,
                clock.instant());
    }

    /**
     * What both managers do once at their start comes from upstream as soon as it runs and from qkcm's controllers
     * only once they have started, more than a window later on a slow start: the groups stay open while qkcm
     * starts and one window after, and pair.
     */
    @Test
    void startActionsMoreThanAWindowApartPairWhileQkcmStarts() {
        StepClock clock = new StepClock();
        try (ShadowMatcher matcher = new ShadowMatcher(Duration.ofSeconds(5), new SimpleMeterRegistry(), clock, false)) {
            java.util.concurrent.atomic.AtomicBoolean starting = new java.util.concurrent.atomic.AtomicBoolean(true);
            matcher.holdWhileStarting(starting::get);
            matcher.submit(clusterRoleUpdate(Side.UPSTREAM, clock));
            clock.advance(15_000);
            matcher.closeDue();
            assertThat(matcher.openKeys()).containsExactly("update rbac.authorization.k8s.io/clusterroles admin");
            // qkcm's controllers started; its aggregation, from a cache without upstream's write yet
            starting.set(false);
            matcher.submit(clusterRoleUpdate(Side.QKCM, clock));
            clock.advance(5_001);
            matcher.closeDue();
            assertThat(matcher.openKeys()).hasSize(1); // one window after the start, still held
            clock.advance(5_001);
            matcher.closeDue();

            assertThat(matcher.openKeys()).isEmpty();
            assertThat(matcher.latest()).isEmpty();
            assertThat(matcher.totals().get("clusterrole-aggregation-controller")).containsEntry(ShadowMatcher.MATCHED, 1L);
            // once started, a window apart is apart again
            matcher.submit(clusterRoleUpdate(Side.UPSTREAM, clock));
            clock.advance(5_001);
            matcher.closeDue();
            assertThat(matcher.openKeys()).isEmpty();
        }
    }

    /** Without a start to wait for (a test's matcher, or qkcm started long ago), groups close a window after. */
    @Test
    void aStartThatNeverEndsHoldsNoLongerThanItsCap() {
        StepClock clock = new StepClock();
        try (ShadowMatcher matcher = new ShadowMatcher(Duration.ofSeconds(5), new SimpleMeterRegistry(), clock, false)) {
            matcher.holdWhileStarting(() -> true); // a standby replica: its controllers never start
            matcher.submit(clusterRoleUpdate(Side.UPSTREAM, clock));
            clock.advance(ShadowMatcher.MAX_START.toMillis() - 1);
            matcher.closeDue();
            assertThat(matcher.openKeys()).hasSize(1);
            clock.advance(2);
            matcher.closeDue(); // the cap passed: one window more
            assertThat(matcher.openKeys()).hasSize(1);
            clock.advance(5_001);
            matcher.closeDue();
            assertThat(matcher.openKeys()).isEmpty();
        }
    }

    static ShadowAction registeredNode(Side side, StepClock clock) {
        Map<String, Object> event = Map.of("involvedObject", Map.of("kind", "Node", "name", "node-0"), "reason",
                "RegisteredNode", "type", "Normal", "message", "Node node-0 event: Registered Node node-0 in Controller");
        return new ShadowAction(side, side == Side.QKCM ? "node-controller" : ShadowMatcher.UNATTRIBUTED, "event", "events",
                "", "default", Normalise.eventKey(event), side == Side.QKCM ? 201 : 0, event, clock.instant());
    }

    /**
     * Beside an upstream that started before shadow mode (a kubeadm cluster), upstream's RegisteredNode events predate
     * it: qkcm's node controller, saying the same at its start, matches the event still in the cluster; later, or
     * with another message, it does not.
     */
    @Test
    void anEventUpstreamSaidBeforeShadowModeMatchesWhatQkcmSaysAtItsStart() {
        StepClock clock = new StepClock();
        try (ShadowMatcher matcher = new ShadowMatcher(Duration.ofSeconds(5), new SimpleMeterRegistry(), clock, false)) {
            java.util.concurrent.atomic.AtomicBoolean starting = new java.util.concurrent.atomic.AtomicBoolean(true);
            matcher.holdWhileStarting(starting::get);
            matcher.priorEvent(registeredNode(Side.UPSTREAM, clock));
            clock.advance(3_000);
            matcher.submit(registeredNode(Side.QKCM, clock));
            starting.set(false);
            matcher.closeDue();
            clock.advance(10_002);
            matcher.closeDue();
            assertThat(matcher.latest()).isEmpty();
            assertThat(matcher.totals().get("node-controller")).containsEntry(ShadowMatcher.MATCHED, 1L);

            // after its start, the same event with no upstream event beside it is qkcm's only
            matcher.submit(registeredNode(Side.QKCM, clock));
            clock.advance(5_001);
            matcher.closeDue();
            assertThat(matcher.latest()).extracting(ShadowMatcher.Mismatch::cls, ShadowMatcher.Mismatch::key)
                    .containsExactly(org.assertj.core.groups.Tuple.tuple(ShadowMatcher.ONLY_QKCM,
                            "event events default/Node/node-0:RegisteredNode"));
        }
    }

    /**
     * The root CA publisher (and the ServiceAccount controller) syncs a namespace, not the object it creates there:
     * upstream's creation of a namespace's kube-root-ca.crt that qkcm's publisher then found in its cache converges on
     * that sync of the Namespace; an owned object (a pod) does not.
     */
    @Test
    void anOwnerlessObjectsCreationConvergesOnASyncOfItsNamespace() {
        StepClock clock = new StepClock();
        try (ShadowMatcher matcher = new ShadowMatcher(Duration.ofSeconds(5), new SimpleMeterRegistry(), clock, false)) {
            matcher.submit(new ShadowAction(Side.UPSTREAM, ShadowMatcher.UNATTRIBUTED, "create", "/configmaps", "", "ns",
                    "kube-root-ca.crt", 0, Map.of("kind", "ConfigMap", "metadata", Map.of("namespace", "ns", "name",
                            "kube-root-ca.crt")), clock.instant()));
            matcher.submit(new ShadowAction(Side.UPSTREAM, ShadowMatcher.UNATTRIBUTED, "create", "/pods", "", "ns", "web-*", 0,
                    Map.of("kind", "Pod", "metadata", Map.of("namespace", "ns", "name", "web-x2b4z", "generateName", "web-",
                            "ownerReferences", List.of(Map.of("kind", "ReplicaSet", "name", "web", "controller", true)))),
                    clock.instant()));
            clock.advance(20);
            matcher.synced("root-ca-cert-publisher", "Namespace", "ns", clock.millis());
            clock.advance(5_001);
            matcher.closeDue();

            assertThat(matcher.latest()).extracting(ShadowMatcher.Mismatch::cls, ShadowMatcher.Mismatch::key)
                    .containsExactly(org.assertj.core.groups.Tuple.tuple(ShadowMatcher.ONLY_UPSTREAM, "create /pods ns/web-*"));
            assertThat(matcher.total(ShadowMatcher.CONVERGED)).isEqualTo(1L);
        }
    }

    static ShadowAction daemonPod(Side side, StepClock clock, String node) {
        Map<String, Object> pod = Map.of("kind", "Pod", "metadata", Map.of("namespace", "ns", "generateName", "ds-"), "spec",
                Map.of("affinity", Map.of("nodeAffinity", Map.of("requiredDuringSchedulingIgnoredDuringExecution",
                        Map.of("nodeSelectorTerms", List.of(Map.of("matchFields", List.of(Map.of("key", "metadata.name",
                                "operator", "In", "values", List.of(node))))))))));
        return new ShadowAction(side, side == Side.QKCM ? "daemon-set-controller" : ShadowMatcher.UNATTRIBUTED, "create",
                "/pods", "", "ns", "ds-*", side == Side.QKCM ? 201 : 0, pod, clock.instant());
    }

    /**
     * A DaemonSet's pods share a generateName and differ by their node: qkcm's one creation (upstream's pod for the
     * other node reached its cache first) pairs with upstream's pod for the same node, not with the first.
     */
    @Test
    void creationsWithAGeneratedNamePairWithTheSameContentFirst() {
        StepClock clock = new StepClock();
        try (ShadowMatcher matcher = new ShadowMatcher(Duration.ofSeconds(5), new SimpleMeterRegistry(), clock, false)) {
            matcher.submit(daemonPod(Side.UPSTREAM, clock, "node-0"));
            matcher.submit(daemonPod(Side.UPSTREAM, clock, "node-1"));
            matcher.submit(daemonPod(Side.QKCM, clock, "node-1"));
            // another DaemonSet's: qkcm's pod for a node upstream made none for is a difference still
            ShadowAction other = daemonPod(Side.QKCM, clock, "node-2");
            matcher.submit(new ShadowAction(Side.QKCM, other.controller(), "create", "/pods", "", "ns", "ds2-*", 201,
                    other.object(), clock.instant()));
            ShadowAction theirs = daemonPod(Side.UPSTREAM, clock, "node-0");
            matcher.submit(new ShadowAction(Side.UPSTREAM, theirs.controller(), "create", "/pods", "", "ns", "ds2-*", 0,
                    theirs.object(), clock.instant()));
            matcher.closeAll();

            assertThat(matcher.latest()).extracting(ShadowMatcher.Mismatch::cls, ShadowMatcher.Mismatch::key)
                    .containsExactlyInAnyOrder(
                            org.assertj.core.groups.Tuple.tuple(ShadowMatcher.ONLY_UPSTREAM, "create /pods ns/ds-*"),
                            org.assertj.core.groups.Tuple.tuple(ShadowMatcher.DIFFERENT_CONTENT, "create /pods ns/ds2-*"));
            assertThat(matcher.totals().get("daemon-set-controller")).containsEntry(ShadowMatcher.MATCHED, 1L);
        }
    }
}
