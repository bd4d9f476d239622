package io.qkcm.controller.resourcequota.quota;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import io.qkcm.controller.util.GoQuantity;

/**
 * generic.NewObjectCountEvaluator: charges one {@code count/<resource>.<group>} (and the legacy alias,
 * e.g. {@code secrets}, where there is one) per object in the namespace.
 */
public final class ObjectCountEvaluator implements Evaluator {

    private final GroupResource groupResource;
    private final UsageStats.ListFunc listFunc;
    private final List<String> resourceNames;

    public ObjectCountEvaluator(GroupResource groupResource, UsageStats.ListFunc listFunc, String alias) {
        this.groupResource = groupResource;
        this.listFunc = listFunc;
        List<String> names = new ArrayList<>();
        names.add(objectCountQuotaResourceNameFor(groupResource));
        if (alias != null && !alias.isEmpty()) {
            names.add(alias);
        }
        this.resourceNames = List.copyOf(names);
    }

    /** generic.ObjectCountQuotaResourceNameFor: {@code count/<resource>} or {@code count/<resource>.<group>}. */
    public static String objectCountQuotaResourceNameFor(GroupResource gr) {
        return gr.group().isEmpty() ? "count/" + gr.resource() : "count/" + gr.resource() + "." + gr.group();
    }

    @Override
    public GroupResource groupResource() {
        return groupResource;
    }

    @Override
    public List<String> matchingResources(List<String> input) {
        return ResourceLists.intersection(input, resourceNames);
    }

    private Map<String, GoQuantity> usage(Object object) {
        Map<String, GoQuantity> out = new TreeMap<>();
        for (String name : resourceNames) {
            out.put(name, GoQuantity.of(1));
        }
        return out;
    }

    @Override
    public Map<String, GoQuantity> usageStats(UsageStatsOptions options) throws Exception {
        return UsageStats.calculate(options, listFunc, UsageStats.MATCHES_NO_SCOPE, this::usage);
    }
}
