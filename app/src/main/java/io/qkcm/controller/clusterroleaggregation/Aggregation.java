package io.qkcm.controller.clusterroleaggregation;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Pattern;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.LabelSelectorRequirement;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.qkcm.controller.LabelSelectors;
import io.qkcm.runtime.Json;

/**
 * The aggregation of upstream's syncClusterRole, apart from the cache and the client: for each
 * selector of the aggregationRule in order, the ClusterRoles it selects sorted by name (the role
 * itself skipped), their rules appended unless an equal rule is there already; equality is
 * {@code equality.Semantic.DeepEqual}'s (list by list, in order, an absent list equal to an empty
 * one). hack/golden/clusterroleaggregation's vectors pin it, upstream's test table included.
 */
final class Aggregation {

    private Aggregation() {
    }

    /** The rules {@code role} aggregates from {@code all}; an invalid selector is an IllegalArgumentException. */
    static List<PolicyRule> aggregatedRules(ClusterRole role, Collection<ClusterRole> all) {
        List<PolicyRule> rules = new ArrayList<>();
        List<LabelSelector> selectors = role.getAggregationRule().getClusterRoleSelectors();
        for (LabelSelector selector : selectors == null ? List.<LabelSelector>of() : selectors) {
            // a null entry is Go's zero LabelSelector: no requirements, every role
            LabelSelectors.Selector s = asSelector(selector == null ? new LabelSelector() : selector);
            List<ClusterRole> selected = new ArrayList<>();
            for (ClusterRole r : all) {
                if (s.matches(labels(r))) {
                    selected.add(r);
                }
            }
            selected.sort(Comparator.comparing(r -> r.getMetadata().getName()));
            for (ClusterRole r : selected) {
                if (r.getMetadata().getName().equals(role.getMetadata().getName())) {
                    continue;
                }
                for (PolicyRule rule : r.getRules() == null ? List.<PolicyRule>of() : r.getRules()) {
                    if (rules.stream().noneMatch(existing -> semanticallyEqual(existing, rule))) {
                        rules.add(rule);
                    }
                }
            }
        }
        return rules;
    }

    private static Map<String, String> labels(ClusterRole r) {
        Map<String, String> labels = r.getMetadata().getLabels();
        return labels == null ? Map.of() : labels;
    }

    /**
     * metav1.LabelSelectorAsSelector, with the key and value checks of labels.NewRequirement that the
     * kit's parser leaves to the API server (which validates aggregationRule selectors on write).
     */
    static LabelSelectors.Selector asSelector(LabelSelector selector) {
        if (selector.getMatchLabels() != null) {
            selector.getMatchLabels().forEach((k, v) -> {
                checkKey(k);
                checkValue(v == null ? "" : v);
            });
        }
        if (selector.getMatchExpressions() != null) {
            for (LabelSelectorRequirement e : selector.getMatchExpressions()) {
                checkKey(e.getKey() == null ? "" : e.getKey());
                if (e.getValues() != null) {
                    e.getValues().forEach(v -> checkValue(v == null ? "" : v));
                }
            }
        }
        return LabelSelectors.fromLabelSelector(selector);
    }

    private static final Pattern NAME = Pattern.compile("([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]");
    private static final Pattern DNS1123_SUBDOMAIN = Pattern
            .compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");

    /** validation.IsQualifiedName: an optional DNS-subdomain prefix and a name of at most 63 characters. */
    private static void checkKey(String key) {
        String[] parts = key.split("/", -1);
        String name;
        if (parts.length == 1) {
            name = parts[0];
        } else if (parts.length == 2) {
            String prefix = parts[0];
            if (prefix.isEmpty() || prefix.length() > 253 || !DNS1123_SUBDOMAIN.matcher(prefix).matches()) {
                throw new IllegalArgumentException("key: Invalid value: \"" + key + "\": prefix part must be a "
                        + "lowercase RFC 1123 subdomain");
            }
            name = parts[1];
        } else {
            throw new IllegalArgumentException("key: Invalid value: \"" + key + "\": a qualified name must consist of "
                    + "alphanumeric characters, '-', '_' or '.', with an optional DNS subdomain prefix and '/'");
        }
        if (name.isEmpty() || name.length() > 63 || !NAME.matcher(name).matches()) {
            throw new IllegalArgumentException("key: Invalid value: \"" + key + "\": name part must consist of "
                    + "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character");
        }
    }

    /** validation.IsValidLabelValue: empty, or a name of at most 63 characters. */
    private static void checkValue(String value) {
        if (!value.isEmpty() && (value.length() > 63 || !NAME.matcher(value).matches())) {
            throw new IllegalArgumentException("values: Invalid value: \"" + value + "\": a valid label must be an "
                    + "empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end "
                    + "with an alphanumeric character");
        }
    }

    /** equality.Semantic.DeepEqual of two rule lists. */
    static boolean semanticallyEqual(List<PolicyRule> a, List<PolicyRule> b) {
        List<PolicyRule> x = a == null ? List.of() : a;
        List<PolicyRule> y = b == null ? List.of() : b;
        if (x.size() != y.size()) {
            return false;
        }
        for (int i = 0; i < x.size(); i++) {
            if (!semanticallyEqual(x.get(i), y.get(i))) {
                return false;
            }
        }
        return true;
    }

    /** equality.Semantic.DeepEqual of two PolicyRules: each list equal in order, absent equal to empty. */
    static boolean semanticallyEqual(PolicyRule a, PolicyRule b) {
        return sameList(a.getVerbs(), b.getVerbs()) && sameList(a.getApiGroups(), b.getApiGroups())
                && sameList(a.getResources(), b.getResources())
                && sameList(a.getResourceNames(), b.getResourceNames())
                && sameList(a.getNonResourceURLs(), b.getNonResourceURLs());
    }

    private static boolean sameList(List<String> a, List<String> b) {
        List<String> x = a == null ? List.of() : a;
        List<String> y = b == null ? List.of() : b;
        return Objects.equals(x, y);
    }

    /**
     * The body of upstream's apply: {@code rbacv1ac.ClusterRole(name).WithRules(...)} as client-go
     * writes it — kind, apiVersion, the name, and the rules, each with its non-empty lists only (the
     * apply configuration's omitempty); no rules at all when there are none, so the apply gives up the
     * field manager's rules.
     */
    static String applyBody(String name, List<PolicyRule> rules) {
        ObjectNode body = Json.mapper().createObjectNode();
        body.put("kind", "ClusterRole");
        body.put("apiVersion", "rbac.authorization.k8s.io/v1");
        body.putObject("metadata").put("name", name);
        if (!rules.isEmpty()) {
            ArrayNode array = body.putArray("rules");
            for (PolicyRule rule : rules) {
                ObjectNode r = array.addObject();
                putList(r, "verbs", rule.getVerbs());
                putList(r, "apiGroups", rule.getApiGroups());
                putList(r, "resources", rule.getResources());
                putList(r, "resourceNames", rule.getResourceNames());
                putList(r, "nonResourceURLs", rule.getNonResourceURLs());
            }
        }
        try {
            return Json.mapper().writeValueAsString(body);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void putList(ObjectNode node, String field, List<String> values) {
        if (values != null && !values.isEmpty()) {
            ArrayNode a = node.putArray(field);
            values.forEach(a::add);
        }
    }
}
