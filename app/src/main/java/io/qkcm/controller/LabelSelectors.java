package io.qkcm.controller;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.LabelSelectorRequirement;

/**
 * apimachinery's label selectors: {@link #fromLabelSelector} is metav1.LabelSelectorAsSelector
 * (a nil selector selects nothing, an empty one everything), {@link #fromSet} is
 * labels.SelectorFromSet (a map selector, as ReplicationController's).
 */
public final class LabelSelectors {

    private LabelSelectors() {
    }

    /** A parsed selector. */
    public interface Selector {
        boolean matches(Map<String, String> labels);

        /** True when the selector has no requirements (and so matches everything). */
        boolean empty();
    }

    private enum Op {
        IN, NOT_IN, EXISTS, DOES_NOT_EXIST;

        static Op of(String op) {
            return switch (op) {
                case "In" -> IN;
                case "NotIn" -> NOT_IN;
                case "Exists" -> EXISTS;
                case "DoesNotExist" -> DOES_NOT_EXIST;
                default -> throw new IllegalArgumentException("\"" + op + "\" is not a valid label selector operator");
            };
        }
    }

    /**
     * One requirement, matched once per cached object on every sync of a workload controller: the operator is
     * an enum and a single value (every matchLabels entry) is compared directly, so a match is one map lookup
     * and one string comparison (profiles of the big ReplicaSet had the string switch and set lookups hot).
     */
    private record Requirement(String key, Op op, Set<String> values, String single) {
        static Requirement in(String key, String value) {
            return new Requirement(key, Op.IN, Set.of(value), value);
        }

        boolean matches(Map<String, String> labels) {
            String value = labels == null ? null : labels.get(key);
            boolean has = value != null || (labels != null && labels.containsKey(key));
            return switch (op) {
                case IN -> has && (single != null ? single.equals(value) : value != null && values.contains(value));
                case NOT_IN -> !has || value == null || !values.contains(value);
                case EXISTS -> has;
                case DOES_NOT_EXIST -> !has;
            };
        }
    }

    private record Requirements(List<Requirement> reqs) implements Selector {
        @Override
        public boolean matches(Map<String, String> labels) {
            for (int i = 0, n = reqs.size(); i < n; i++) {
                if (!reqs.get(i).matches(labels)) {
                    return false;
                }
            }
            return true;
        }

        @Override
        public boolean empty() {
            return reqs.isEmpty();
        }
    }

    private static final Selector NOTHING = new Selector() {
        @Override
        public boolean matches(Map<String, String> labels) {
            return false;
        }

        @Override
        public boolean empty() {
            return false;
        }
    };

    public static Selector everything() {
        return new Requirements(List.of());
    }

    public static Selector nothing() {
        return NOTHING;
    }

    /** metav1.LabelSelectorAsSelector; invalid operators or values are an IllegalArgumentException. */
    public static Selector fromLabelSelector(LabelSelector ls) {
        if (ls == null) {
            return NOTHING;
        }
        List<Requirement> reqs = new ArrayList<>();
        if (ls.getMatchLabels() != null) {
            ls.getMatchLabels().forEach((k, v) -> reqs.add(Requirement.in(k, v == null ? "" : v)));
        }
        if (ls.getMatchExpressions() != null) {
            for (LabelSelectorRequirement e : ls.getMatchExpressions()) {
                String op = e.getOperator();
                List<String> values = e.getValues() == null ? List.of() : e.getValues();
                switch (op == null ? "" : op) {
                    case "In", "NotIn" -> {
                        if (values.isEmpty()) {
                            throw new IllegalArgumentException(
                                    "for 'in', 'notin' operators, values set can't be empty");
                        }
                    }
                    case "Exists", "DoesNotExist" -> {
                        if (!values.isEmpty()) {
                            throw new IllegalArgumentException(
                                    "values set must be empty for exists and does not exist");
                        }
                    }
                    default -> throw new IllegalArgumentException("\"" + op + "\" is not a valid label selector operator");
                }
                reqs.add(new Requirement(e.getKey(), Op.of(op), new HashSet<>(values), null));
            }
        }
        return new Requirements(List.copyOf(reqs));
    }

    /** labels.SelectorFromSet / AsSelectorPreValidated: every key must have exactly that value. */
    public static Selector fromSet(Map<String, String> set) {
        List<Requirement> reqs = new ArrayList<>();
        if (set != null) {
            set.forEach((k, v) -> reqs.add(Requirement.in(k, v == null ? "" : v)));
        }
        return new Requirements(List.copyOf(reqs));
    }
}
