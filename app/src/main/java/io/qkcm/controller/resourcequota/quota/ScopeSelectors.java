package io.qkcm.controller.resourcequota.quota;

import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

import io.fabric8.kubernetes.api.model.ScopedResourceSelectorRequirement;

/**
 * helper.ScopedResourceSelectorRequirementsAsSelector and the label requirement it builds: a scope
 * selector evaluated against a label set made from the object ({@code {PriorityClass: <name>}}).
 */
public final class ScopeSelectors {

    private static final Pattern LABEL_VALUE = Pattern.compile("^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$");

    private ScopeSelectors() {
    }

    /**
     * True when {@code labels} satisfies the requirement; IllegalArgumentException for an operator or
     * values labels.NewRequirement refuses.
     */
    public static boolean matches(ScopedResourceSelectorRequirement ssr, Map<String, String> labels) {
        String op = ssr.getOperator() == null ? "" : ssr.getOperator();
        List<String> values = ssr.getValues() == null ? List.of() : ssr.getValues();
        String key = ssr.getScopeName();
        switch (op) {
            case "In", "NotIn" -> {
                if (values.isEmpty()) {
                    throw new IllegalArgumentException("values: Invalid value: []: for 'in', 'notin' operators, values set can't be empty");
                }
            }
            case "Exists", "DoesNotExist" -> {
                if (!values.isEmpty()) {
                    throw new IllegalArgumentException("values: Invalid value: " + values
                            + ": values set must be empty for exists and does not exist");
                }
            }
            default -> throw new IllegalArgumentException("\"" + op + "\" is not a valid scope selector operator");
        }
        for (String v : values) {
            if (v.length() > 63 || !LABEL_VALUE.matcher(v).matches()) {
                throw new IllegalArgumentException("values[]: Invalid value: \"" + v + "\": not a valid label value");
            }
        }
        boolean has = labels.containsKey(key);
        return switch (op) {
            case "In" -> has && values.contains(labels.get(key));
            case "NotIn" -> !has || !values.contains(labels.get(key));
            case "Exists" -> has;
            default -> !has;
        };
    }
}
