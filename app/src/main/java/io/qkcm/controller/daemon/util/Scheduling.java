package io.qkcm.controller.daemon.util;

import io.qkcm.controller.TaintTolerations;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Predicate;
import java.util.regex.Pattern;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeSelector;
import io.fabric8.kubernetes.api.model.NodeSelectorRequirement;
import io.fabric8.kubernetes.api.model.NodeSelectorTerm;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Taint;
import io.fabric8.kubernetes.api.model.Toleration;

/**
 * The scheduling helpers the DaemonSet controller's predicates use: component-helpers'
 * {@code nodeaffinity.GetRequiredNodeAffinity(pod).Match(node)} (nodeSelector and the required node
 * affinity, unparsable terms skipped as its LazyErrorNodeSelector does), and
 * {@code v1helper.FindMatchingUntoleratedTaint} with {@code Toleration.ToleratesTaint}.
 */
public final class Scheduling {

    private Scheduling() {
    }

    // ---- taints and tolerations --------------------------------------------------------------

    /** v1.Toleration.ToleratesTaint. */
    public static boolean toleratesTaint(Toleration t, Taint taint) {
        return TaintTolerations.toleratesTaint(t, taint);
    }

    /** v1helper.TolerationsTolerateTaint. */
    public static boolean tolerationsTolerateTaint(List<Toleration> tolerations, Taint taint) {
        if (tolerations == null) {
            return false;
        }
        for (Toleration t : tolerations) {
            if (toleratesTaint(t, taint)) {
                return true;
            }
        }
        return false;
    }

    /** v1helper.FindMatchingUntoleratedTaint: the first taint passing the filter that no toleration tolerates, or null. */
    public static Taint findMatchingUntoleratedTaint(List<Taint> taints, List<Toleration> tolerations,
            Predicate<Taint> inclusionFilter) {
        if (taints == null) {
            return null;
        }
        for (Taint taint : taints) {
            if (inclusionFilter != null && !inclusionFilter.test(taint)) {
                continue;
            }
            if (!tolerationsTolerateTaint(tolerations, taint)) {
                return taint;
            }
        }
        return null;
    }

    // ---- required node affinity --------------------------------------------------------------

    /** nodeaffinity.GetRequiredNodeAffinity(pod).Match(node), parse errors ignored as upstream's callers do. */
    public static boolean requiredNodeAffinityMatches(PodSpec spec, Node node) {
        Map<String, String> nodeLabels = node.getMetadata().getLabels() == null ? Map.of() : node.getMetadata().getLabels();
        Map<String, String> nodeSelector = spec.getNodeSelector();
        if (nodeSelector != null && !nodeSelector.isEmpty()) {
            for (Map.Entry<String, String> e : nodeSelector.entrySet()) {
                if (!nodeLabels.containsKey(e.getKey()) || !nz(e.getValue()).equals(nz(nodeLabels.get(e.getKey())))) {
                    return false;
                }
            }
        }
        if (spec.getAffinity() != null && spec.getAffinity().getNodeAffinity() != null
                && spec.getAffinity().getNodeAffinity().getRequiredDuringSchedulingIgnoredDuringExecution() != null) {
            return nodeSelectorMatches(
                    spec.getAffinity().getNodeAffinity().getRequiredDuringSchedulingIgnoredDuringExecution(), node);
        }
        return true;
    }

    /** LazyErrorNodeSelector.Match: any parsable, non-empty term that matches. */
    public static boolean nodeSelectorMatches(NodeSelector ns, Node node) {
        if (node == null || ns.getNodeSelectorTerms() == null) {
            return false;
        }
        Map<String, String> nodeLabels = node.getMetadata().getLabels() == null ? Map.of() : node.getMetadata().getLabels();
        String nodeName = nz(node.getMetadata().getName());
        for (NodeSelectorTerm term : ns.getNodeSelectorTerms()) {
            boolean noExpressions = term.getMatchExpressions() == null || term.getMatchExpressions().isEmpty();
            boolean noFields = term.getMatchFields() == null || term.getMatchFields().isEmpty();
            if (noExpressions && noFields) {
                continue; // an empty term matches nothing
            }
            try {
                if (termMatches(term, nodeLabels, nodeName)) {
                    return true;
                }
            } catch (IllegalArgumentException parseError) {
                // the term does not count, as upstream's lazy-error selector
            }
        }
        return false;
    }

    private static boolean termMatches(NodeSelectorTerm term, Map<String, String> nodeLabels, String nodeName) {
        // parse everything first: a term with any invalid requirement never matches
        List<Predicate<Map<String, String>>> labelReqs = new ArrayList<>();
        if (term.getMatchExpressions() != null) {
            for (NodeSelectorRequirement r : term.getMatchExpressions()) {
                labelReqs.add(labelRequirement(r));
            }
        }
        List<Predicate<String>> fieldReqs = new ArrayList<>();
        if (term.getMatchFields() != null) {
            for (NodeSelectorRequirement r : term.getMatchFields()) {
                fieldReqs.add(fieldRequirement(r));
            }
        }
        for (Predicate<Map<String, String>> p : labelReqs) {
            if (!p.test(nodeLabels)) {
                return false;
            }
        }
        if (!fieldReqs.isEmpty() && !nodeName.isEmpty()) {
            for (Predicate<String> p : fieldReqs) {
                if (!p.test(nodeName)) {
                    return false;
                }
            }
        }
        return true;
    }

    /** fields.OneTermEqualSelector / OneTermNotEqualSelector over the node's fields ({@code metadata.name} only). */
    private static Predicate<String> fieldRequirement(NodeSelectorRequirement r) {
        List<String> values = r.getValues() == null ? List.of() : r.getValues();
        String key = nz(r.getKey());
        String op = nz(r.getOperator());
        if (!op.equals("In") && !op.equals("NotIn")) {
            throw new IllegalArgumentException("unsupported field operator " + op);
        }
        if (values.size() != 1) {
            throw new IllegalArgumentException("must have one element");
        }
        String value = nz(values.get(0));
        boolean in = op.equals("In");
        return nodeName -> {
            String actual = DaemonSetUtil.OBJECT_NAME_FIELD.equals(key) ? nodeName : "";
            return in == actual.equals(value);
        };
    }

    private static final Pattern LABEL_VALUE = Pattern.compile("(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?");
    private static final Pattern QUALIFIED_NAME = Pattern.compile("([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]");
    private static final Pattern DNS1123_SUBDOMAIN = Pattern
            .compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");

    /** labels.NewRequirement's key validation (a qualified name). */
    static void validateLabelKey(String key) {
        String name = key;
        int slash = key.indexOf('/');
        if (slash >= 0) {
            String prefix = key.substring(0, slash);
            name = key.substring(slash + 1);
            if (prefix.isEmpty() || prefix.length() > 253 || !DNS1123_SUBDOMAIN.matcher(prefix).matches()) {
                throw new IllegalArgumentException("invalid label key prefix " + key);
            }
        }
        if (name.isEmpty() || name.length() > 63 || !QUALIFIED_NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("invalid label key " + key);
        }
    }

    static void validateLabelValue(String v) {
        if (v.length() > 63 || !LABEL_VALUE.matcher(v).matches()) {
            throw new IllegalArgumentException("invalid label value " + v);
        }
    }

    /** nodeSelectorRequirementsAsSelector for one requirement: labels.NewRequirement and its Matches. */
    private static Predicate<Map<String, String>> labelRequirement(NodeSelectorRequirement r) {
        String key = nz(r.getKey());
        List<String> values = r.getValues() == null ? List.of() : r.getValues();
        String op = nz(r.getOperator());
        validateLabelKey(key);
        switch (op) {
            case "In", "NotIn" -> {
                if (values.isEmpty()) {
                    throw new IllegalArgumentException("for 'in', 'notin' operators, values set can't be empty");
                }
            }
            case "Exists", "DoesNotExist" -> {
                if (!values.isEmpty()) {
                    throw new IllegalArgumentException("values set must be empty for exists and does not exist");
                }
            }
            case "Gt", "Lt" -> {
                if (values.size() != 1) {
                    throw new IllegalArgumentException("for 'Gt', 'Lt' operators, exactly one value is required");
                }
                try {
                    Long.parseLong(values.get(0));
                } catch (NumberFormatException e) {
                    throw new IllegalArgumentException("for 'Gt', 'Lt' operators, the value must be an integer");
                }
            }
            default -> throw new IllegalArgumentException("operator " + op + " is not supported");
        }
        for (String v : values) {
            validateLabelValue(nz(v));
        }
        Set<String> set = Set.copyOf(values);
        return switch (op) {
            case "In" -> l -> l.containsKey(key) && set.contains(nz(l.get(key)));
            case "NotIn" -> l -> !l.containsKey(key) || !set.contains(nz(l.get(key)));
            case "Exists" -> l -> l.containsKey(key);
            case "DoesNotExist" -> l -> !l.containsKey(key);
            default -> {
                long rhs = Long.parseLong(values.get(0));
                boolean gt = op.equals("Gt");
                yield l -> {
                    if (!l.containsKey(key)) {
                        return false;
                    }
                    long lhs;
                    try {
                        lhs = Long.parseLong(nz(l.get(key)));
                    } catch (NumberFormatException e) {
                        return false;
                    }
                    return gt ? lhs > rhs : lhs < rhs;
                };
            }
        };
    }

    private static String nz(String s) {
        return s == null ? "" : s;
    }
}
