package io.qkcm.controller.podautoscaler;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.autoscaling.v2.HPAScalingPolicy;
import io.fabric8.kubernetes.api.model.autoscaling.v2.HPAScalingRules;
import io.fabric8.kubernetes.api.model.autoscaling.v2.HorizontalPodAutoscaler;
import io.fabric8.kubernetes.api.model.autoscaling.v2.HorizontalPodAutoscalerBuilder;
import io.fabric8.kubernetes.api.model.autoscaling.v2.HorizontalPodAutoscalerCondition;

/**
 * Upstream's horizontal_test.go tables for what the controller does with a proposal:
 * TestNormalizeDesiredReplicas, TestConvertDesiredReplicasWithRules, TestCalculateScaleUp/DownLimit*,
 * TestScalingWithRules, TestNormalizeDesiredReplicasWithBehavior and TestStoreScaleEvents' outdating,
 * on a clock the tests move.
 */
class ScaleRecommendationsTest {

    static final Instant NOW = Instant.parse("2026-11-27T02:00:00Z");

    /** A clock the test moves. */
    static final class MovingClock extends Clock {
        Instant now = NOW;

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return now;
        }
    }

    final MovingClock clock = new MovingClock();

    ScaleRecommendations recommendations(Duration window) {
        return new ScaleRecommendations(clock, window);
    }

    static ScaleRecommendations.TimestampedRecommendation rec(int r, Duration ago) {
        return new ScaleRecommendations.TimestampedRecommendation(r, NOW.minus(ago));
    }

    static Duration min(long m) {
        return Duration.ofMinutes(m);
    }

    // TestNormalizeDesiredReplicas
    void stabilize(List<ScaleRecommendations.TimestampedRecommendation> log, int prenormalized, int expected, int logLength) {
        ScaleRecommendations r = recommendations(Duration.ofMinutes(5));
        r.recommendations.put("", new ArrayList<>(log));
        assertThat(r.stabilizeRecommendation("", prenormalized)).isEqualTo(expected);
        assertThat(r.recommendations.get("")).hasSize(logLength);
    }

    @Test
    void stabilizeRecommendation() {
        stabilize(List.of(), 5, 5, 1);
        stabilize(List.of(rec(4, min(2)), rec(5, min(1))), 3, 5, 3);
        stabilize(List.of(rec(1, min(2)), rec(2, min(1))), 3, 3, 3);
        // recommendations older than the window are replaced, not appended
        stabilize(List.of(rec(10, min(10)), rec(9, min(9))), 3, 3, 2);
        stabilize(List.of(rec(10, min(10)), rec(4, min(1)), rec(5, min(2)), rec(9, min(9))), 3, 5, 4);
    }

    @Test
    void convertDesiredReplicasWithRules() {
        check(ScaleRecommendations.convertDesiredReplicasWithRules(5, 7, 3, 8), 7, "DesiredWithinRange");
        check(ScaleRecommendations.convertDesiredReplicasWithRules(3, 1, 2, 8), 2, "TooFewReplicas");
        check(ScaleRecommendations.convertDesiredReplicasWithRules(1, 0, 0, 10), 0, "DesiredWithinRange");
        check(ScaleRecommendations.convertDesiredReplicasWithRules(20, 1000, 1, 10), 10, "TooManyReplicas");
        check(ScaleRecommendations.convertDesiredReplicasWithRules(3, 1000, 1, 2000),
                ScaleRecommendations.calculateScaleUpLimit(3), "ScaleUpLimit");
        assertThat(ScaleRecommendations.calculateScaleUpLimit(3)).isEqualTo(6);
        assertThat(ScaleRecommendations.calculateScaleUpLimit(1)).isEqualTo(4);
    }

    static void check(ScaleRecommendations.Limited l, int replicas, String reason) {
        assertThat(l.replicas()).isEqualTo(replicas);
        assertThat(l.reason()).isEqualTo(reason);
    }

    static HPAScalingPolicy policy(String type, int value, int period) {
        return new HPAScalingPolicy(period, type, value);
    }

    @Test
    void scaleLimitsWithMinChangePolicy() {
        HPAScalingRules rules = new HPAScalingRules(List.of(policy("Pods", 2, 60), policy("Percent", 50, 60)), "Min", 300, null);
        ScaleRecommendations r = recommendations(Duration.ofMinutes(5));
        assertThat(r.calculateScaleUpLimitWithScalingRules(1, List.of(), List.of(), rules)).isEqualTo(2);
        assertThat(r.calculateScaleDownLimitWithBehaviors(5, List.of(), List.of(), rules)).isEqualTo(3);
        rules.setSelectPolicy("Disabled");
        assertThat(r.calculateScaleUpLimitWithScalingRules(1, List.of(), List.of(), rules)).isEqualTo(1);
        assertThat(r.calculateScaleDownLimitWithBehaviors(5, List.of(), List.of(), rules)).isEqualTo(5);
    }

    /** Upstream's generateScalingRules: Max select policy, the policies whose value is not 0. */
    static HPAScalingRules rules(int pods, int podsPeriod, int percent, int percentPeriod, int window) {
        List<HPAScalingPolicy> policies = new ArrayList<>();
        if (pods != 0) {
            policies.add(policy("Pods", pods, podsPeriod));
        }
        if (percent != 0) {
            policies.add(policy("Percent", percent, percentPeriod));
        }
        return new HPAScalingRules(policies.isEmpty() ? null : policies, "Max", window, null);
    }

    /** The API server's defaults of a scale-up rule (GenerateHPAScaleUpRules). */
    static HPAScalingRules defaultedUp(HPAScalingRules from) {
        HPAScalingRules to = new HPAScalingRules(List.of(policy("Pods", 4, 15), policy("Percent", 100, 15)), "Max", 0, null);
        return copy(from, to);
    }

    /** The API server's defaults of a scale-down rule (GenerateHPAScaleDownRules). */
    static HPAScalingRules defaultedDown(HPAScalingRules from) {
        HPAScalingRules to = new HPAScalingRules(List.of(policy("Percent", 100, 15)), "Max", null, null);
        return copy(from, to);
    }

    private static HPAScalingRules copy(HPAScalingRules from, HPAScalingRules to) {
        if (from == null) {
            return to;
        }
        if (from.getSelectPolicy() != null) {
            to.setSelectPolicy(from.getSelectPolicy());
        }
        if (from.getStabilizationWindowSeconds() != null) {
            to.setStabilizationWindowSeconds(from.getStabilizationWindowSeconds());
        }
        if (from.getPolicies() != null) {
            to.setPolicies(from.getPolicies());
        }
        return to;
    }

    /** Upstream's generateEventsUniformDistribution: each event in the middle of its share of the period. */
    static List<ScaleRecommendations.TimestampedScaleEvent> events(int periodSeconds, int... changes) {
        List<ScaleRecommendations.TimestampedScaleEvent> events = new ArrayList<>();
        double segment = (double) periodSeconds / changes.length;
        for (int i = 0; i < changes.length; i++) {
            long ago = (long) (periodSeconds - segment * (i + 1) + segment / 2);
            events.add(new ScaleRecommendations.TimestampedScaleEvent(changes[i], NOW.minusSeconds(ago), false));
        }
        return events;
    }

    /** One row of TestScalingWithRules. */
    void scaling(String name, List<ScaleRecommendations.TimestampedScaleEvent> ups,
            List<ScaleRecommendations.TimestampedScaleEvent> downs, int minReplicas, int maxReplicas, HPAScalingRules up,
            HPAScalingRules down, int current, int desired, int expected, String condition) {
        ScaleRecommendations r = recommendations(Duration.ofMinutes(5));
        r.scaleUpEvents.put("", new ArrayList<>(ups));
        r.scaleDownEvents.put("", new ArrayList<>(downs));
        ScaleRecommendations.Limited l = r.convertDesiredReplicasWithBehaviorRate(new ScaleRecommendations.NormalizationArg(
                "", defaultedUp(up), defaultedDown(down), minReplicas, maxReplicas, current, desired));
        assertThat(l.replicas()).as(name).isEqualTo(expected);
        assertThat(l.reason()).as(name).isEqualTo(condition);
    }

    @Test
    void scalingWithRules() {
        List<ScaleRecommendations.TimestampedScaleEvent> none = List.of();
        scaling("within range", none, none, 3, 8, null, null, 5, 7, 7, "DesiredWithinRange");
        scaling("< minReplicas", none, none, 2, 8, null, null, 3, 1, 2, "TooFewReplicas");
        scaling("within range when minReplicas is 0", none, none, 0, 10, null, null, 1, 0, 0, "DesiredWithinRange");
        scaling("maxReplicas < scaleUpLimit", none, none, 1, 10, null, null, 20, 1000, 10, "TooManyReplicas");
        scaling("more than the maximum", none, none, 100, 150, null, null, 100, 1000, 150, "TooManyReplicas");
        scaling("scaleUpLimit < maxReplicas with user policies", none, none, 1, 2000, rules(0, 0, 1, 60, 0), null, 3, 1000,
                4, "ScaleUpLimit");
        scaling("scaleUp with default behavior", none, none, 1, 1000, null, null, 10, 50, 20, "ScaleUpLimit");
        scaling("pods policy larger than percent policy", none, none, 1, 1000, rules(100, 60, 100, 60, 0), null, 10, 500,
                110, "ScaleUpLimit");
        scaling("percent policy larger than pods policy", none, none, 1, 1000, rules(2, 60, 100, 60, 0), null, 10, 500, 20,
                "ScaleUpLimit");
        scaling("large pod policy", none, none, 1, 1000, rules(100, 60, 0, 0, 0), null, 10, 50, 50, "DesiredWithinRange");
        scaling("large percent policy", none, none, 1, 1000, rules(10000, 60, 0, 0, 0), null, 10, 50, 50,
                "DesiredWithinRange");
        scaling("pod policy limitation", none, none, 1, 1000, rules(30, 60, 0, 0, 0), null, 10, 50, 40, "ScaleUpLimit");
        scaling("percent policy limitation", none, none, 1, 1000, rules(0, 0, 200, 60, 0), null, 10, 50, 30, "ScaleUpLimit");
        scaling("scaleDown percent larger than pods", none, none, 1, 1000, null, rules(20, 60, 1, 60, 300), 100, 2, 80,
                "ScaleDownLimit");
        scaling("scaleDown pods larger than percent", none, none, 1, 1000, null, rules(2, 60, 1, 60, 300), 100, 2, 98,
                "ScaleDownLimit");
        scaling("scaleDown MinReplicas with large pod policy", none, none, 1, 1000, null, rules(100, 60, 0, 0, 300), 10, 0, 1,
                "TooFewReplicas");
        scaling("scaleDown MinReplicas with large percent policy", none, none, 5, 1000, null, rules(0, 0, 100, 60, 300), 10,
                2, 5, "TooFewReplicas");
        scaling("scaleDown pod policy limitation", none, none, 1, 1000, null, rules(5, 60, 0, 0, 300), 10, 2, 5,
                "ScaleDownLimit");
        scaling("scaleDown percent policy limitation", none, none, 1, 1000, null, rules(0, 0, 50, 60, 300), 10, 5, 5,
                "DesiredWithinRange");
        scaling("MaxReplicas with large pod policy and events", events(120, 1, 5, 9), none, 1, 200, rules(300, 60, 0, 0, 0),
                null, 100, 500, 200, "TooManyReplicas");
        scaling("MaxReplicas with large percent policy and events", events(120, 1, 5, 9), none, 1, 200,
                rules(0, 0, 10000, 60, 0), null, 100, 500, 200, "TooManyReplicas");
        scaling("a lot of recent scale up events", events(120, 1, 5, 9), none, 1, 1000, rules(5, 120, 0, 0, 0), null, 100,
                500, 100, "ScaleUpLimit");
        scaling("pod policy and previous scale up events", events(120, 1, 5, 9), none, 1, 1000, rules(150, 120, 0, 0, 0),
                null, 100, 500, 235, "ScaleUpLimit");
        scaling("percent policy and previous scale up events", events(120, 1, 5, 9), none, 1, 1000,
                rules(0, 0, 200, 120, 0), null, 100, 500, 255, "ScaleUpLimit");
        scaling("percent policy and previous scale up and down events", events(120, 4), events(120, 2), 1, 1000,
                rules(0, 0, 300, 300, 0), null, 6, 24, 16, "ScaleUpLimit");
        scaling("scaleDown default policy and previous events", none, events(120, 1, 5, 9), 1, 1000, null, null, 10, 5, 5,
                "DesiredWithinRange");
        scaling("scaleDown MinReplicas=nil, large pod policy, events", none, events(120, 1, 5, 9), 1, 1000, null,
                rules(115, 120, 0, 0, 300), 100, 0, 1, "TooFewReplicas");
        scaling("scaleDown MinReplicas, large pod policy, events", none, events(120, 1, 5, 9), 5, 1000, null,
                rules(130, 120, 0, 0, 300), 100, 0, 5, "TooFewReplicas");
        scaling("scaleDown MinReplicas, large percent policy, events", none, events(120, 1, 5, 9), 5, 1000, null,
                rules(0, 0, 100, 120, 300), 100, 2, 5, "TooFewReplicas");
        scaling("scaleDown pod policy and previous events", none, events(120, 1, 5, 9), 1, 1000, null,
                rules(5, 120, 0, 0, 300), 100, 2, 100, "ScaleDownLimit");
        scaling("scaleDown percent policy and previous events", none, events(120, 2, 4, 6), 1, 1000, null,
                rules(0, 0, 50, 120, 300), 100, 0, 56, "ScaleDownLimit");
        scaling("scaleDown percent policy, previous up and down events", events(120, 2), events(120, 4), 1, 1000, null,
                rules(0, 0, 50, 180, 0), 10, 1, 6, "ScaleDownLimit");
        scaling("previous events preventing further scale down", none, events(120, 10, 10, 10), 1, 1000, null,
                rules(0, 0, 10, 120, 300), 100, 0, 100, "ScaleDownLimit");
        scaling("previous events still allowing more scale down", none, events(120, 10, 10, 10), 1, 1000, null,
                rules(0, 0, 1000, 120, 300), 10, 5, 5, "DesiredWithinRange");
        scaling("'outdated' events for one behavior for up", events(120, 8, 12, 9, 11), none, 1, 1000,
                rules(1000, 60, 0, 0, 0), null, 100, 200, 200, "DesiredWithinRange");
        scaling("'outdated' events for two policies for up", events(120, 8, 12, 9, 11), none, 1, 1000,
                rules(1000, 30, 100, 60, 0), null, 100, 200, 200, "DesiredWithinRange");
        scaling("'outdated' events for one behavior for down", none, events(120, 8, 12, 9, 11), 1, 1000, null,
                rules(1000, 60, 0, 0, 300), 100, 5, 5, "DesiredWithinRange");
    }

    /** One row of TestNormalizeDesiredReplicasWithBehavior. */
    void withBehavior(List<ScaleRecommendations.TimestampedRecommendation> log, int current, int prenormalized,
            int upWindow, int downWindow, int expected, int... storedRecommendations) {
        ScaleRecommendations r = recommendations(Duration.ofMinutes(5));
        r.recommendations.put("", new ArrayList<>(log));
        HPAScalingRules up = new HPAScalingRules(null, null, upWindow, null);
        HPAScalingRules down = new HPAScalingRules(null, null, downWindow, null);
        ScaleRecommendations.Limited l = r.stabilizeRecommendationWithBehaviors(
                new ScaleRecommendations.NormalizationArg("", up, down, 0, 0, current, prenormalized));
        assertThat(l.replicas()).isEqualTo(expected);
        if (storedRecommendations.length > 0) {
            assertThat(r.recommendations.get("").stream().map(ScaleRecommendations.TimestampedRecommendation::recommendation).toList())
                    .containsExactlyElementsOf(java.util.Arrays.stream(storedRecommendations).boxed().toList());
        }
    }

    @Test
    void stabilizeRecommendationWithBehaviors() {
        withBehavior(List.of(), 100, 5, 0, 0, 5, 5);
        withBehavior(List.of(rec(4, min(2)), rec(5, min(1))), 100, 3, 0, 180, 5, 4, 5, 3);
        withBehavior(List.of(rec(4, min(2)), rec(5, min(1))), 1, 7, 300, 0, 4, 4, 5, 7);
        withBehavior(List.of(rec(1, min(2)), rec(2, min(1))), 100, 3, 300, 0, 3, 1, 2, 3);
        withBehavior(List.of(rec(4, min(2)), rec(5, min(1))), 1, 3, 0, 300, 3, 4, 5, 3);
        withBehavior(List.of(rec(10, min(10)), rec(9, min(9))), 100, 3, 0, 0, 3, 10, 3);
        withBehavior(List.of(rec(10, min(10)), rec(9, min(9))), 1, 100, 0, 0, 100, 10, 100);
        withBehavior(List.of(rec(10, min(10)), rec(4, min(1)), rec(5, min(2)), rec(9, min(9))), 100, 3, 0, 180, 5,
                10, 4, 5, 3);
        withBehavior(List.of(rec(10, min(100)), rec(6, min(1)), rec(5, min(2)), rec(9, min(3))), 1, 100, 300, 0, 5,
                100, 6, 5, 9);
        withBehavior(List.of(rec(2, min(100)), rec(3, min(3))), 2, 1, 300, 300, 2);
        withBehavior(List.of(rec(2, min(100)), rec(1, min(3))), 2, 3, 300, 300, 2);
    }

    static HorizontalPodAutoscaler hpa(int min, int max, HPAScalingRules up, HPAScalingRules down) {
        HorizontalPodAutoscalerBuilder b = new HorizontalPodAutoscalerBuilder().withNewMetadata().withName("h")
                .withNamespace("ns").endMetadata().withNewSpec().withMinReplicas(min).withMaxReplicas(max).endSpec();
        HorizontalPodAutoscaler hpa = b.build();
        if (up != null || down != null) {
            hpa.getSpec().setBehavior(new io.fabric8.kubernetes.api.model.autoscaling.v2.HorizontalPodAutoscalerBehavior(
                    down, up));
        }
        return hpa;
    }

    static HorizontalPodAutoscalerCondition condition(HorizontalPodAutoscaler hpa, String type) {
        return Conditions.get(hpa, type);
    }

    @Test
    void downscaleStabilizationWithoutBehaviorHoldsTheHighestRecentRecommendation() {
        // TestStabilizeDownscale / TestScaleDownStabilizeInitialSize: the first sync's size is a recommendation
        ScaleRecommendations r = recommendations(Duration.ofMinutes(5));
        HorizontalPodAutoscaler hpa = hpa(1, 10, null, null);
        r.recordInitial(5, "ns/h");
        assertThat(r.normalizeDesiredReplicas(hpa, "ns/h", 5, 2, 1)).isEqualTo(5);
        assertThat(condition(hpa, "AbleToScale").getReason()).isEqualTo("ScaleDownStabilized");
        assertThat(condition(hpa, "ScalingLimited").getStatus()).isEqualTo("False");
        assertThat(condition(hpa, "ScalingLimited").getReason()).isEqualTo("DesiredWithinRange");
        clock.now = NOW.plus(Duration.ofMinutes(5)).plusSeconds(1);
        assertThat(r.normalizeDesiredReplicas(hpa, "ns/h", 5, 2, 1)).isEqualTo(2);
        assertThat(condition(hpa, "AbleToScale").getReason()).isEqualTo("ReadyForNewScale");
        // a scale up beyond the rate limit: limited, ScalingLimited true
        assertThat(r.normalizeDesiredReplicas(hpa, "ns/h", 2, 9, 1)).isEqualTo(4);
        assertThat(condition(hpa, "ScalingLimited").getStatus()).isEqualTo("True");
        assertThat(condition(hpa, "ScalingLimited").getReason()).isEqualTo("ScaleUpLimit");
        assertThat(condition(hpa, "ScalingLimited").getMessage())
                .isEqualTo("the desired replica count is increasing faster than the maximum scale rate");
    }

    @Test
    void behaviorWithoutScaleDownWindowTakesTheFlag() {
        ScaleRecommendations r = recommendations(Duration.ofMinutes(3));
        HorizontalPodAutoscaler hpa = hpa(1, 10, defaultedUp(null), defaultedDown(null));
        r.recordInitial(6, "ns/h");
        assertThat(r.normalizeDesiredReplicasWithBehaviors(hpa, "ns/h", 6, 2, 1)).isEqualTo(6);
        assertThat(hpa.getSpec().getBehavior().getScaleDown().getStabilizationWindowSeconds()).isEqualTo(180);
        assertThat(condition(hpa, "AbleToScale").getReason()).isEqualTo("ScaleDownStabilized");
        clock.now = NOW.plus(Duration.ofMinutes(3)).plusSeconds(1);
        assertThat(r.normalizeDesiredReplicasWithBehaviors(hpa, "ns/h", 6, 2, 1)).isEqualTo(2);
        // the scale event then limits a scale up within the policies' period: 2 -> 4 pods policy, 15 s
        r.storeScaleEvent(hpa.getSpec().getBehavior(), "ns/h", 6, 2);
        assertThat(r.normalizeDesiredReplicasWithBehaviors(hpa, "ns/h", 2, 20, 1)).isEqualTo(10);
        assertThat(condition(hpa, "ScalingLimited").getReason()).isEqualTo("TooManyReplicas");
    }

    @Test
    void storeScaleEventsReplacesOutdatedOnes() {
        // TestStoreScaleEvents: an event older than the longest policy period is overwritten, not kept
        ScaleRecommendations r = recommendations(Duration.ofMinutes(5));
        HPAScalingRules up = rules(5, 60, 0, 0, 0);
        var behavior = new io.fabric8.kubernetes.api.model.autoscaling.v2.HorizontalPodAutoscalerBehavior(
                defaultedDown(null), up);
        r.storeScaleEvent(behavior, "k", 1, 3);
        clock.now = NOW.plusSeconds(30);
        r.storeScaleEvent(behavior, "k", 3, 6);
        assertThat(r.scaleUpEvents.get("k")).hasSize(2);
        clock.now = NOW.plusSeconds(70);
        r.storeScaleEvent(behavior, "k", 6, 7);
        assertThat(r.scaleUpEvents.get("k")).hasSize(2);
        assertThat(r.scaleUpEvents.get("k").stream().mapToInt(e -> e.replicaChange)).containsExactly(1, 3);
        // within the last 60 s: 3 + 1 added
        assertThat(r.replicasChangePerPeriod(60, r.scaleUpEvents.get("k"))).isEqualTo(4);
        r.storeScaleEvent(null, "k", 7, 1);
        assertThat(r.scaleDownEvents.get("k")).isNull();
    }
}
