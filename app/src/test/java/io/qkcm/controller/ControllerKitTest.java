package io.qkcm.controller;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;

/** The controller_utils port in isolation: expectations, slow start, ranking, selectors. */
class ControllerKitTest {

    @Test
    void expectationsWaitForObservationsAndExpireAfterFiveMinutes() {
        AtomicLong now = new AtomicLong(0);
        UIDTrackingControllerExpectations exp = new UIDTrackingControllerExpectations(now::get);
        assertThat(exp.satisfiedExpectations("ns/rs")).isTrue();
        exp.expectCreations("ns/rs", 2);
        assertThat(exp.satisfiedExpectations("ns/rs")).isFalse();
        exp.creationObserved("ns/rs");
        assertThat(exp.satisfiedExpectations("ns/rs")).isFalse();
        exp.creationObserved("ns/rs");
        assertThat(exp.satisfiedExpectations("ns/rs")).isTrue();

        exp.expectDeletions("ns/rs", List.of("ns/a", "ns/b"));
        exp.deletionObserved("ns/rs", "ns/a");
        exp.deletionObserved("ns/rs", "ns/a"); // seen twice (update with deletionTimestamp, then delete): once
        exp.deletionObserved("ns/rs", "ns/other");
        assertThat(exp.satisfiedExpectations("ns/rs")).isFalse();
        now.addAndGet(Duration.ofMinutes(5).plusSeconds(1).toNanos());
        assertThat(exp.satisfiedExpectations("ns/rs")).isTrue();
        exp.deleteExpectations("ns/rs");
        assertThat(exp.getUIDs("ns/rs")).isNull();
    }

    @Test
    void slowStartDoublesBatchesAndStopsAtTheFirstFailingBatch() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            AtomicInteger calls = new AtomicInteger();
            SlowStart.Result ok = SlowStart.run(10, 1, pool, () -> calls.incrementAndGet());
            assertThat(ok.successes()).isEqualTo(10);
            assertThat(ok.error()).isNull();
            assertThat(calls.get()).isEqualTo(10);

            // calls 1..3 succeed (batches 1 and 2), the 4th fails inside the batch of 4: the batch
            // completes (3 more successes), nothing after it runs
            AtomicInteger n = new AtomicInteger();
            SlowStart.Result failed = SlowStart.run(100, 1, pool, () -> {
                if (n.incrementAndGet() == 4) {
                    throw new IllegalStateException("quota");
                }
                return null;
            });
            assertThat(n.get()).isEqualTo(7);
            assertThat(failed.successes()).isEqualTo(6);
            assertThat(failed.error()).hasMessage("quota");
        } finally {
            pool.shutdownNow();
        }
    }

    private static Pod pod(String name, String node, String phase, boolean ready, Instant readySince, String cost) {
        PodBuilder b = new PodBuilder().withNewMetadata().withName(name).withUid(name)
                .withCreationTimestamp("2024-01-01T00:00:00Z").endMetadata().withNewSpec().withNodeName(node).endSpec()
                .withNewStatus().withPhase(phase).endStatus();
        if (cost != null) {
            b.editMetadata().addToAnnotations(ActivePods.POD_DELETION_COST, cost).endMetadata();
        }
        if (ready) {
            b.editStatus().addNewCondition().withType("Ready").withStatus("True")
                    .withLastTransitionTime(readySince.toString()).endCondition().endStatus();
        }
        return b.build();
    }

    @Test
    void rankingPutsTheCheapestPodsToDeleteFirst() {
        Instant now = Instant.parse("2024-01-02T00:00:00Z");
        List<ActivePods.Ranked> pods = new ArrayList<>(List.of(
                new ActivePods.Ranked(pod("ready-old-costly", "n1", "Running", true, now.minusSeconds(86400), "10"), 0),
                new ActivePods.Ranked(pod("ready-new", "n1", "Running", true, now.minusSeconds(10), null), 0),
                new ActivePods.Ranked(pod("ready-old", "n1", "Running", true, now.minusSeconds(86400), null), 0),
                new ActivePods.Ranked(pod("ready-old-crowded", "n2", "Running", true, now.minusSeconds(86400), null), 3),
                new ActivePods.Ranked(pod("running-not-ready", "n1", "Running", false, null, null), 0),
                new ActivePods.Ranked(pod("ready-negative-cost", "n1", "Running", true, now.minusSeconds(86400), "-5"), 0),
                new ActivePods.Ranked(pod("unknown", "n1", "Unknown", false, null, null), 0),
                new ActivePods.Ranked(pod("pending-bound", "n1", "Pending", false, null, null), 0),
                new ActivePods.Ranked(pod("unassigned", null, "Pending", false, null, null), 0)));
        ActivePods.sort(pods, ActivePods.withRanks(now, true));
        assertThat(pods.stream().map(r -> r.pod().getMetadata().getName()).toList()).containsExactly(
                "unassigned", "pending-bound", "unknown", "running-not-ready", "ready-negative-cost",
                "ready-old-crowded", "ready-new", "ready-old", "ready-old-costly");

        // with the PodDeletionCost gate off the annotation is ignored
        ActivePods.sort(pods, ActivePods.withRanks(now, false));
        List<String> names = pods.stream().map(r -> r.pod().getMetadata().getName()).toList();
        assertThat(names.indexOf("ready-new")).isLessThan(names.indexOf("ready-negative-cost"));
        // invalid costs count as 0
        assertThat(ActivePods.deletionCost(pod("p", "n", "Running", false, null, "+3"))).isZero();
        assertThat(ActivePods.deletionCost(pod("p", "n", "Running", false, null, "007"))).isZero();
        assertThat(ActivePods.deletionCost(pod("p", "n", "Running", false, null, "-7"))).isEqualTo(-7);
    }

    @Test
    void labelSelectorsFollowApimachinery() {
        assertThat(LabelSelectors.fromLabelSelector(null).matches(Map.of("a", "b"))).isFalse();
        assertThat(LabelSelectors.fromLabelSelector(new LabelSelectorBuilder().build()).matches(Map.of("a", "b")))
                .isTrue();
        LabelSelectors.Selector s = LabelSelectors.fromLabelSelector(new LabelSelectorBuilder()
                .withMatchLabels(Map.of("app", "web")).addNewMatchExpression().withKey("tier").withOperator("NotIn")
                .withValues("db").endMatchExpression().addNewMatchExpression().withKey("track").withOperator("Exists")
                .endMatchExpression().build());
        assertThat(s.matches(Map.of("app", "web", "track", "x"))).isTrue();
        assertThat(s.matches(Map.of("app", "web", "track", "x", "tier", "db"))).isFalse();
        assertThat(s.matches(Map.of("app", "web"))).isFalse();
        assertThat(s.empty()).isFalse();
    }

    /** apimachinery's selector table (labels/selector_test.go TestRequirementMatches and friends), every operator. */
    @Test
    void everyLabelSelectorOperatorMatchesAsApimachinery() {
        LabelSelectors.Selector in = expression("env", "In", "prod", "staging");
        assertThat(in.matches(Map.of("env", "prod"))).isTrue();
        assertThat(in.matches(Map.of("env", "staging"))).isTrue();
        assertThat(in.matches(Map.of("env", "dev"))).isFalse();
        assertThat(in.matches(Map.of())).isFalse();
        assertThat(in.matches(null)).isFalse();
        LabelSelectors.Selector notIn = expression("env", "NotIn", "prod");
        assertThat(notIn.matches(Map.of("env", "dev"))).isTrue();
        assertThat(notIn.matches(Map.of())).as("a missing key is not in any set").isTrue();
        assertThat(notIn.matches(null)).isTrue();
        assertThat(notIn.matches(Map.of("env", "prod"))).isFalse();
        LabelSelectors.Selector exists = expression("env", "Exists");
        assertThat(exists.matches(Map.of("env", ""))).isTrue();
        assertThat(exists.matches(Map.of("other", "x"))).isFalse();
        LabelSelectors.Selector absent = expression("env", "DoesNotExist");
        assertThat(absent.matches(Map.of("other", "x"))).isTrue();
        assertThat(absent.matches(Map.of("env", ""))).isFalse();
        // matchLabels and fromSet: every key with exactly its value, the empty value included
        LabelSelectors.Selector set = LabelSelectors.fromSet(Map.of("app", "web", "tier", ""));
        assertThat(set.matches(Map.of("app", "web", "tier", "", "x", "y"))).isTrue();
        assertThat(set.matches(Map.of("app", "web"))).isFalse();
        assertThat(set.matches(Map.of("app", "webx", "tier", ""))).isFalse();
        assertThat(LabelSelectors.fromSet(Map.of()).matches(Map.of("a", "b"))).isTrue();
        java.util.HashMap<String, String> nullValue = new java.util.HashMap<>();
        nullValue.put("app", null);
        assertThat(LabelSelectors.fromSet(Map.of("app", "web")).matches(nullValue)).isFalse();
        // upstream's validation errors
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> expression("env", "In"))
                .isInstanceOf(IllegalArgumentException.class);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> expression("env", "Exists", "x"))
                .isInstanceOf(IllegalArgumentException.class);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> expression("env", "Gt", "1"))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("\"Gt\" is not a valid");
    }

    private static LabelSelectors.Selector expression(String key, String op, String... values) {
        return LabelSelectors.fromLabelSelector(new LabelSelectorBuilder().addNewMatchExpression().withKey(key)
                .withOperator(op).withValues(values).endMatchExpression().build());
    }

    @Test
    void adoptionAndReleasePatchesMatchUpstream() {
        Pod owner = new PodBuilder().withNewMetadata().withName("web").withUid("owner-uid").endMetadata().build();
        assertThat(ControllerRefManager.ownerRefControllerPatch(owner, "apps/v1", "ReplicaSet", "dep-uid", List.of()))
                .isEqualTo("{\"metadata\":{\"ownerReferences\":[{\"apiVersion\":\"apps/v1\",\"kind\":\"ReplicaSet\","
                        + "\"name\":\"web\",\"uid\":\"owner-uid\",\"controller\":true,\"blockOwnerDeletion\":true}],"
                        + "\"uid\":\"dep-uid\"}}");
        assertThat(ControllerRefManager.deleteOwnerRefStrategicMergePatch("dep-uid", List.of("owner-uid"), List.of()))
                .isEqualTo("{\"metadata\":{\"uid\":\"dep-uid\",\"ownerReferences\":[{\"$patch\":\"delete\","
                        + "\"uid\":\"owner-uid\"}]}}");
    }
}
