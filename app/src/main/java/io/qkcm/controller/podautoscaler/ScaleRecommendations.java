package io.qkcm.controller.podautoscaler;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.fabric8.kubernetes.api.model.autoscaling.v2.HPAScalingPolicy;
import io.fabric8.kubernetes.api.model.autoscaling.v2.HPAScalingRules;
import io.fabric8.kubernetes.api.model.autoscaling.v2.HorizontalPodAutoscaler;
import io.fabric8.kubernetes.api.model.autoscaling.v2.HorizontalPodAutoscalerBehavior;

/**
 * The HPA controller's memory between syncs and what it does with it (upstream's recommendations,
 * scaleUpEvents and scaleDownEvents with normalizeDesiredReplicas, normalizeDesiredReplicasWithBehaviors
 * and storeScaleEvent): stabilization windows over past recommendations, scaling policies over past
 * scale events, and min/max/rate limits, each setting AbleToScale and ScalingLimited as upstream.
 */
final class ScaleRecommendations {

    /** Without behavior: at most twice the current replicas, and at least 4, per sync. */
    static final double SCALE_UP_LIMIT_FACTOR = 2.0;
    static final double SCALE_UP_LIMIT_MINIMUM = 4.0;

    record TimestampedRecommendation(int recommendation, Instant timestamp) {
    }

    static final class TimestampedScaleEvent {
        final int replicaChange;
        final Instant timestamp;
        boolean outdated;

        TimestampedScaleEvent(int replicaChange, Instant timestamp, boolean outdated) {
            this.replicaChange = replicaChange;
            this.timestamp = timestamp;
            this.outdated = outdated;
        }
    }

    /** A limited count and why: the reason and message of ScalingLimited (or of AbleToScale). */
    record Limited(int replicas, String reason, String message) {
    }

    private final Clock clock;
    private final Duration downscaleStabilisationWindow;
    final Map<String, List<TimestampedRecommendation>> recommendations = new ConcurrentHashMap<>();
    final Map<String, List<TimestampedScaleEvent>> scaleUpEvents = new ConcurrentHashMap<>();
    final Map<String, List<TimestampedScaleEvent>> scaleDownEvents = new ConcurrentHashMap<>();

    ScaleRecommendations(Clock clock, Duration downscaleStabilisationWindow) {
        this.clock = clock;
        this.downscaleStabilisationWindow = downscaleStabilisationWindow;
    }

    /** The HPA is gone: its memory goes with it. */
    void forget(String key) {
        recommendations.remove(key);
        scaleUpEvents.remove(key);
        scaleDownEvents.remove(key);
    }

    /** recordInitialRecommendation: the first sync remembers the current count as a recommendation. */
    void recordInitial(int currentReplicas, String key) {
        recommendations.computeIfAbsent(key, k -> {
            List<TimestampedRecommendation> l = new ArrayList<>();
            l.add(new TimestampedRecommendation(currentReplicas, clock.instant()));
            return l;
        });
    }

    /** stabilizeRecommendation: the highest recommendation within the downscale window. */
    int stabilizeRecommendation(String key, int prenormalized) {
        int max = prenormalized;
        boolean foundOld = false;
        int oldIndex = 0;
        Instant now = clock.instant();
        Instant cutoff = now.minus(downscaleStabilisationWindow);
        synchronized (recommendations) {
            List<TimestampedRecommendation> recs = recommendations.computeIfAbsent(key, k -> new ArrayList<>());
            for (int i = 0; i < recs.size(); i++) {
                TimestampedRecommendation rec = recs.get(i);
                if (rec.timestamp().isBefore(cutoff)) {
                    foundOld = true;
                    oldIndex = i;
                } else if (rec.recommendation() > max) {
                    max = rec.recommendation();
                }
            }
            if (foundOld) {
                recs.set(oldIndex, new TimestampedRecommendation(prenormalized, now));
            } else {
                recs.add(new TimestampedRecommendation(prenormalized, now));
            }
        }
        return max;
    }

    /** normalizeDesiredReplicas: the HPA without behavior. */
    int normalizeDesiredReplicas(HorizontalPodAutoscaler hpa, String key, int currentReplicas, int prenormalized,
            int minReplicas) {
        Instant now = clock.instant();
        int stabilized = stabilizeRecommendation(key, prenormalized);
        if (stabilized != prenormalized) {
            Conditions.set(hpa, Conditions.ABLE_TO_SCALE, "True", "ScaleDownStabilized",
                    "recent recommendations were higher than current one, applying the highest recent recommendation", now);
        } else {
            Conditions.set(hpa, Conditions.ABLE_TO_SCALE, "True", "ReadyForNewScale",
                    "recommended size matches current size", now);
        }
        Limited limited = convertDesiredReplicasWithRules(currentReplicas, stabilized, minReplicas,
                hpa.getSpec().getMaxReplicas());
        Conditions.set(hpa, Conditions.SCALING_LIMITED, limited.replicas() == stabilized ? "False" : "True",
                limited.reason(), limited.message(), now);
        return limited.replicas();
    }

    /** Upstream's NormalizationArg. */
    record NormalizationArg(String key, HPAScalingRules scaleUp, HPAScalingRules scaleDown, int minReplicas,
            int maxReplicas, int currentReplicas, int desiredReplicas) {
        NormalizationArg withDesired(int desired) {
            return new NormalizationArg(key, scaleUp, scaleDown, minReplicas, maxReplicas, currentReplicas, desired);
        }
    }

    /** normalizeDesiredReplicasWithBehaviors: the HPA's (defaulted) behavior. */
    int normalizeDesiredReplicasWithBehaviors(HorizontalPodAutoscaler hpa, String key, int currentReplicas,
            int prenormalized, int minReplicas) {
        Instant now = clock.instant();
        maybeInitScaleDownStabilizationWindow(hpa);
        HorizontalPodAutoscalerBehavior behavior = hpa.getSpec().getBehavior();
        NormalizationArg arg = new NormalizationArg(key, behavior.getScaleUp(), behavior.getScaleDown(), minReplicas,
                hpa.getSpec().getMaxReplicas(), currentReplicas, prenormalized);
        Limited stabilized = stabilizeRecommendationWithBehaviors(arg);
        arg = arg.withDesired(stabilized.replicas());
        if (stabilized.replicas() != prenormalized) {
            Conditions.set(hpa, Conditions.ABLE_TO_SCALE, "True", stabilized.reason(), stabilized.message(), now);
        } else {
            Conditions.set(hpa, Conditions.ABLE_TO_SCALE, "True", "ReadyForNewScale",
                    "recommended size matches current size", now);
        }
        Limited limited = convertDesiredReplicasWithBehaviorRate(arg);
        Conditions.set(hpa, Conditions.SCALING_LIMITED, limited.replicas() == stabilized.replicas() ? "False" : "True",
                limited.reason(), limited.message(), now);
        return limited.replicas();
    }

    /** A scale-down rule without a window takes --horizontal-pod-autoscaler-downscale-stabilization. */
    void maybeInitScaleDownStabilizationWindow(HorizontalPodAutoscaler hpa) {
        HorizontalPodAutoscalerBehavior behavior = hpa.getSpec().getBehavior();
        if (behavior != null && behavior.getScaleDown() != null
                && behavior.getScaleDown().getStabilizationWindowSeconds() == null) {
            behavior.getScaleDown().setStabilizationWindowSeconds((int) downscaleStabilisationWindow.toSeconds());
        }
    }

    /**
     * stabilizeRecommendationWithBehaviors: the current count moved toward the desired one no further than
     * the lowest recommendation of the scale-up window and the highest of the scale-down window.
     */
    Limited stabilizeRecommendationWithBehaviors(NormalizationArg args) {
        Instant now = clock.instant();
        boolean foundOld = false;
        int oldIndex = 0;
        int upRecommendation = args.desiredReplicas();
        Instant upCutoff = now.minusSeconds(windowSeconds(args.scaleUp()));
        int downRecommendation = args.desiredReplicas();
        Instant downCutoff = now.minusSeconds(windowSeconds(args.scaleDown()));
        synchronized (recommendations) {
            List<TimestampedRecommendation> recs = recommendations.computeIfAbsent(args.key(), k -> new ArrayList<>());
            for (int i = 0; i < recs.size(); i++) {
                TimestampedRecommendation rec = recs.get(i);
                if (rec.timestamp().isAfter(upCutoff)) {
                    upRecommendation = Math.min(rec.recommendation(), upRecommendation);
                }
                if (rec.timestamp().isAfter(downCutoff)) {
                    downRecommendation = Math.max(rec.recommendation(), downRecommendation);
                }
                if (rec.timestamp().isBefore(upCutoff) && rec.timestamp().isBefore(downCutoff)) {
                    foundOld = true;
                    oldIndex = i;
                }
            }
            int recommendation = args.currentReplicas();
            if (recommendation < upRecommendation) {
                recommendation = upRecommendation;
            }
            if (recommendation > downRecommendation) {
                recommendation = downRecommendation;
            }
            TimestampedRecommendation added = new TimestampedRecommendation(args.desiredReplicas(), clock.instant());
            if (foundOld) {
                recs.set(oldIndex, added);
            } else {
                recs.add(added);
            }
            if (args.desiredReplicas() >= args.currentReplicas()) {
                return new Limited(recommendation, "ScaleUpStabilized",
                        "recent recommendations were lower than current one, applying the lowest recent recommendation");
            }
            return new Limited(recommendation, "ScaleDownStabilized",
                    "recent recommendations were higher than current one, applying the highest recent recommendation");
        }
    }

    private static long windowSeconds(HPAScalingRules rules) {
        return rules == null || rules.getStabilizationWindowSeconds() == null ? 0 : rules.getStabilizationWindowSeconds();
    }

    /** convertDesiredReplicasWithBehaviorRate: the policies' limits over past scale events, then min/max. */
    Limited convertDesiredReplicasWithBehaviorRate(NormalizationArg args) {
        String reason;
        String message;
        List<TimestampedScaleEvent> ups = scaleUpEvents.getOrDefault(args.key(), List.of());
        List<TimestampedScaleEvent> downs = scaleDownEvents.getOrDefault(args.key(), List.of());
        if (args.desiredReplicas() > args.currentReplicas()) {
            int scaleUpLimit;
            synchronized (scaleUpEvents) {
                scaleUpLimit = calculateScaleUpLimitWithScalingRules(args.currentReplicas(), ups, downs, args.scaleUp());
            }
            if (scaleUpLimit < args.currentReplicas()) {
                // a scale-up policy never proposes a scale down
                scaleUpLimit = args.currentReplicas();
            }
            int maximumAllowed = args.maxReplicas();
            if (maximumAllowed > scaleUpLimit) {
                maximumAllowed = scaleUpLimit;
                reason = "ScaleUpLimit";
                message = "the desired replica count is increasing faster than the maximum scale rate";
            } else {
                reason = "TooManyReplicas";
                message = "the desired replica count is more than the maximum replica count";
            }
            if (args.desiredReplicas() > maximumAllowed) {
                return new Limited(maximumAllowed, reason, message);
            }
        } else if (args.desiredReplicas() < args.currentReplicas()) {
            int scaleDownLimit;
            synchronized (scaleUpEvents) {
                scaleDownLimit = calculateScaleDownLimitWithBehaviors(args.currentReplicas(), ups, downs, args.scaleDown());
            }
            if (scaleDownLimit > args.currentReplicas()) {
                scaleDownLimit = args.currentReplicas();
            }
            int minimumAllowed = args.minReplicas();
            if (minimumAllowed < scaleDownLimit) {
                minimumAllowed = scaleDownLimit;
                reason = "ScaleDownLimit";
                message = "the desired replica count is decreasing faster than the maximum scale rate";
            } else {
                reason = "TooFewReplicas";
                message = "the desired replica count is less than the minimum replica count";
            }
            if (args.desiredReplicas() < minimumAllowed) {
                return new Limited(minimumAllowed, reason, message);
            }
        }
        return new Limited(args.desiredReplicas(), "DesiredWithinRange", "the desired count is within the acceptable range");
    }

    /** convertDesiredReplicasWithRules: min, max, and the default scale-up rate of an HPA without behavior. */
    static Limited convertDesiredReplicasWithRules(int currentReplicas, int desiredReplicas, int minReplicas,
            int maxReplicas) {
        int maximumAllowed;
        String reason;
        String message;
        int scaleUpLimit = calculateScaleUpLimit(currentReplicas);
        if (maxReplicas > scaleUpLimit) {
            maximumAllowed = scaleUpLimit;
            reason = "ScaleUpLimit";
            message = "the desired replica count is increasing faster than the maximum scale rate";
        } else {
            maximumAllowed = maxReplicas;
            reason = "TooManyReplicas";
            message = "the desired replica count is more than the maximum replica count";
        }
        if (desiredReplicas < minReplicas) {
            return new Limited(minReplicas, "TooFewReplicas",
                    "the desired replica count is less than the minimum replica count");
        } else if (desiredReplicas > maximumAllowed) {
            return new Limited(maximumAllowed, reason, message);
        }
        return new Limited(desiredReplicas, "DesiredWithinRange", "the desired count is within the acceptable range");
    }

    static int calculateScaleUpLimit(int currentReplicas) {
        return (int) Math.max(SCALE_UP_LIMIT_FACTOR * currentReplicas, SCALE_UP_LIMIT_MINIMUM);
    }

    /** storeScaleEvent: remembers a scale for the policies (only of an HPA with behavior). */
    void storeScaleEvent(HorizontalPodAutoscalerBehavior behavior, String key, int prevReplicas, int newReplicas) {
        if (behavior == null) {
            return;
        }
        boolean up = newReplicas > prevReplicas;
        int longest = longestPolicyPeriod(up ? behavior.getScaleUp() : behavior.getScaleDown());
        Map<String, List<TimestampedScaleEvent>> events = up ? scaleUpEvents : scaleDownEvents;
        synchronized (scaleUpEvents) {
            List<TimestampedScaleEvent> list = events.computeIfAbsent(key, k -> new ArrayList<>());
            markScaleEventsOutdated(list, longest);
            int change = up ? newReplicas - prevReplicas : prevReplicas - newReplicas;
            boolean foundOld = false;
            int oldIndex = 0;
            for (int i = 0; i < list.size(); i++) {
                if (list.get(i).outdated) {
                    foundOld = true;
                    oldIndex = i;
                }
            }
            TimestampedScaleEvent event = new TimestampedScaleEvent(change, clock.instant(), false);
            if (foundOld) {
                list.set(oldIndex, event);
            } else {
                list.add(event);
            }
        }
    }

    private void markScaleEventsOutdated(List<TimestampedScaleEvent> events, int longestPolicyPeriod) {
        Instant cutoff = clock.instant().minusSeconds(longestPolicyPeriod);
        for (TimestampedScaleEvent e : events) {
            if (e.timestamp.isBefore(cutoff)) {
                e.outdated = true;
            }
        }
    }

    static int longestPolicyPeriod(HPAScalingRules rules) {
        int longest = 0;
        if (rules != null && rules.getPolicies() != null) {
            for (HPAScalingPolicy p : rules.getPolicies()) {
                if (p.getPeriodSeconds() != null && p.getPeriodSeconds() > longest) {
                    longest = p.getPeriodSeconds();
                }
            }
        }
        return longest;
    }

    /** getReplicasChangePerPeriod: the replicas changed within the last {@code periodSeconds}. */
    int replicasChangePerPeriod(int periodSeconds, List<TimestampedScaleEvent> events) {
        Instant cutoff = clock.instant().minusSeconds(periodSeconds);
        int replicas = 0;
        for (TimestampedScaleEvent e : events) {
            if (e.timestamp.isAfter(cutoff)) {
                replicas += e.replicaChange;
            }
        }
        return replicas;
    }

    /** calculateScaleUpLimitWithScalingRules. */
    int calculateScaleUpLimitWithScalingRules(int currentReplicas, List<TimestampedScaleEvent> ups,
            List<TimestampedScaleEvent> downs, HPAScalingRules rules) {
        String select = rules.getSelectPolicy();
        boolean minChange;
        int result;
        if ("Disabled".equals(select)) {
            return currentReplicas;
        } else if ("Min".equals(select)) {
            result = Integer.MAX_VALUE;
            minChange = true;
        } else {
            result = Integer.MIN_VALUE;
            minChange = false;
        }
        for (HPAScalingPolicy policy : rules.getPolicies() == null ? List.<HPAScalingPolicy>of() : rules.getPolicies()) {
            int added = replicasChangePerPeriod(policy.getPeriodSeconds(), ups);
            int deleted = replicasChangePerPeriod(policy.getPeriodSeconds(), downs);
            int periodStart = currentReplicas - added + deleted;
            int proposed = 0;
            if ("Pods".equals(policy.getType())) {
                proposed = periodStart + policy.getValue();
            } else if ("Percent".equals(policy.getType())) {
                proposed = (int) Math.ceil(periodStart * (1 + policy.getValue() / 100.0));
            }
            result = minChange ? Math.min(result, proposed) : Math.max(result, proposed);
        }
        return result;
    }

    /** calculateScaleDownLimitWithBehaviors. */
    int calculateScaleDownLimitWithBehaviors(int currentReplicas, List<TimestampedScaleEvent> ups,
            List<TimestampedScaleEvent> downs, HPAScalingRules rules) {
        String select = rules.getSelectPolicy();
        boolean minChange;
        int result;
        if ("Disabled".equals(select)) {
            return currentReplicas;
        } else if ("Min".equals(select)) {
            result = Integer.MIN_VALUE;
            minChange = true;
        } else {
            result = Integer.MAX_VALUE;
            minChange = false;
        }
        for (HPAScalingPolicy policy : rules.getPolicies() == null ? List.<HPAScalingPolicy>of() : rules.getPolicies()) {
            int added = replicasChangePerPeriod(policy.getPeriodSeconds(), ups);
            int deleted = replicasChangePerPeriod(policy.getPeriodSeconds(), downs);
            int periodStart = currentReplicas - added + deleted;
            int proposed = 0;
            if ("Pods".equals(policy.getType())) {
                proposed = periodStart - policy.getValue();
            } else if ("Percent".equals(policy.getType())) {
                proposed = (int) (periodStart * (1 - policy.getValue() / 100.0));
            }
            // for a scale down the smallest change is the highest count
            result = minChange ? Math.max(result, proposed) : Math.min(result, proposed);
        }
        return result;
    }
}
