package io.qkcm.controller.podautoscaler;

import java.util.TreeMap;

import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.LabelSelectorRequirement;

/** Go's {@code %+v} of API values that upstream's messages print. */
final class GoFormat {

    private GoFormat() {
    }

    /** The generated String() of *metav1.LabelSelector ("nil" for none). */
    static String labelSelector(LabelSelector ls) {
        if (ls == null) {
            return "nil";
        }
        StringBuilder exprs = new StringBuilder("[]LabelSelectorRequirement{");
        if (ls.getMatchExpressions() != null) {
            for (LabelSelectorRequirement r : ls.getMatchExpressions()) {
                exprs.append("LabelSelectorRequirement{Key:").append(r.getKey()).append(",Operator:").append(r.getOperator())
                        .append(",Values:[").append(r.getValues() == null ? "" : String.join(" ", r.getValues()))
                        .append("],},");
            }
        }
        exprs.append('}');
        StringBuilder labels = new StringBuilder("map[string]string{");
        if (ls.getMatchLabels() != null) {
            new TreeMap<>(ls.getMatchLabels()).forEach((k, v) -> labels.append(k).append(": ").append(v).append(','));
        }
        labels.append('}');
        return "&LabelSelector{MatchLabels:" + labels + ",MatchExpressions:" + exprs + ",}";
    }
}
