package io.qkcm.controller.job;

import java.util.List;

import io.fabric8.kubernetes.api.model.batch.v1.SuccessPolicy;
import io.fabric8.kubernetes.api.model.batch.v1.SuccessPolicyRule;

/** Upstream's success_policy.go: whether the succeeded indexes of an Indexed Job meet a rule. */
public final class SuccessPolicies {

    private SuccessPolicies() {
    }

    /**
     * Upstream's matchSuccessPolicy: the message ("Matched rules at index N") of the first rule the
     * succeeded indexes meet, or null.
     */
    public static String match(SuccessPolicy policy, int completions, OrderedIntervals succeededIndexes) {
        if (policy == null || succeededIndexes.isEmpty()) {
            return null;
        }
        List<SuccessPolicyRule> rules = policy.getRules() == null ? List.of() : policy.getRules();
        for (int index = 0; index < rules.size(); index++) {
            SuccessPolicyRule rule = rules.get(index);
            if (rule.getSucceededIndexes() != null) {
                OrderedIntervals required = OrderedIntervals.parse(rule.getSucceededIndexes(), completions);
                if (required.isEmpty()) {
                    continue;
                }
                if (matchSucceededIndexesRule(required, succeededIndexes, rule.getSucceededCount())) {
                    return "Matched rules at index " + index;
                }
            } else if (rule.getSucceededCount() != null && succeededIndexes.total() >= rule.getSucceededCount()) {
                return "Matched rules at index " + index;
            }
        }
        return null;
    }

    static boolean matchSucceededIndexesRule(OrderedIntervals ruleIndexes, OrderedIntervals succeededIndexes,
            Integer succeededCount) {
        List<OrderedIntervals.Interval> r = ruleIndexes.intervals();
        List<OrderedIntervals.Interval> s = succeededIndexes.intervals();
        int contains = 0;
        int sp = 0;
        int rp = 0;
        while (rp < r.size() && sp < s.size()) {
            int overlap = Math.min(r.get(rp).last(), s.get(sp).last()) - Math.max(r.get(rp).first(), s.get(sp).first()) + 1;
            if (overlap > 0) {
                contains += overlap;
            }
            if (s.get(sp).last() < r.get(rp).last()) {
                sp++;
            } else if (s.get(sp).last() > r.get(rp).last()) {
                rp++;
            } else {
                sp++;
                rp++;
            }
        }
        return contains == ruleIndexes.total() || (succeededCount != null && contains >= succeededCount);
    }
}
