package io.qkcm.controller.resourcequota.quota;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import io.fabric8.kubernetes.api.model.ScopedResourceSelectorRequirement;

import io.qkcm.controller.util.GoQuantity;

/**
 * generic.CalculateUsageStats and quota.CalculateUsage: usage of a namespace summed over the objects
 * that match every scope of the quota.
 */
public final class UsageStats {

    private UsageStats() {
    }

    /** generic.ListFuncByNamespace. */
    @FunctionalInterface
    public interface ListFunc {
        List<?> list(String namespace) throws Exception;
    }

    /** generic.MatchesScopeFunc; an IllegalArgumentException is a selector that cannot be evaluated. */
    @FunctionalInterface
    public interface ScopeFunc {
        boolean matches(ScopedResourceSelectorRequirement selector, Object object);
    }

    /** generic.UsageFunc. */
    @FunctionalInterface
    public interface UsageFunc {
        Map<String, GoQuantity> usage(Object object);
    }

    /** generic.MatchesNoScopeFunc. */
    public static final ScopeFunc MATCHES_NO_SCOPE = (selector, object) -> false;

    /** A scope of {@code spec.scopes} as the selector it stands for (operator Exists). */
    public static ScopedResourceSelectorRequirement exists(String scope) {
        ScopedResourceSelectorRequirement r = new ScopedResourceSelectorRequirement();
        r.setScopeName(scope);
        r.setOperator("Exists");
        return r;
    }

    /**
     * generic.CalculateUsageStats: every wanted resource starts at zero; objects that match every scope
     * add their usage. A list failure is an error; a scope that cannot be evaluated ends the count
     * with what was summed so far and no error, as upstream.
     */
    public static Map<String, GoQuantity> calculate(UsageStatsOptions options, ListFunc listFunc, ScopeFunc scopeFunc,
            UsageFunc usageFunc) throws Exception {
        Map<String, GoQuantity> used = new TreeMap<>();
        for (String name : options.resources()) {
            used.put(name, GoQuantity.ZERO);
        }
        List<?> items;
        try {
            items = listFunc.list(options.namespace());
        } catch (Exception e) {
            throw new Exception("failed to list content: " + e.getMessage(), e);
        }
        for (Object item : items) {
            boolean matchesScopes = true;
            try {
                for (String scope : options.scopes() == null ? List.<String>of() : options.scopes()) {
                    if (!scopeFunc.matches(exists(scope), item)) {
                        matchesScopes = false;
                    }
                }
                if (options.scopeSelector() != null && options.scopeSelector().getMatchExpressions() != null) {
                    for (ScopedResourceSelectorRequirement selector : options.scopeSelector().getMatchExpressions()) {
                        matchesScopes = scopeFunc.matches(selector, item) && matchesScopes;
                    }
                }
            } catch (IllegalArgumentException e) {
                return used;
            }
            if (matchesScopes) {
                used = ResourceLists.add(used, usageFunc.usage(item));
            }
        }
        return used;
    }

    /** The outcome of {@link #calculateUsage}: usage of the resources that could be computed, and the errors. */
    public record Result(Map<String, GoQuantity> usage, List<Exception> errors) {
    }

    /**
     * quota.CalculateUsage: the usage of the quota's hard resources that some evaluator computes. An
     * evaluator that fails leaves its resources out of the result (and its error in the errors).
     */
    public static Result calculateUsage(String namespace, List<String> scopes, Map<String, GoQuantity> hardLimits,
            Registry registry, io.fabric8.kubernetes.api.model.ScopeSelector scopeSelector) {
        List<String> hardResources = ResourceLists.resourceNames(hardLimits);
        List<String> potentialResources = new ArrayList<>();
        List<Evaluator> evaluators = registry.list();
        for (Evaluator evaluator : evaluators) {
            potentialResources.addAll(evaluator.matchingResources(hardResources));
        }
        List<String> matchedResources = ResourceLists.intersection(hardResources, potentialResources);
        List<Exception> errors = new ArrayList<>();
        Map<String, GoQuantity> newUsage = new TreeMap<>();
        for (Evaluator evaluator : evaluators) {
            List<String> intersection = evaluator.matchingResources(matchedResources);
            if (intersection.isEmpty()) {
                continue;
            }
            try {
                Map<String, GoQuantity> used = evaluator.usageStats(
                        new UsageStatsOptions(namespace, scopes, intersection, scopeSelector));
                newUsage = ResourceLists.add(newUsage, used);
            } catch (Exception e) {
                errors.add(e);
                matchedResources = ResourceLists.difference(matchedResources, intersection);
            }
        }
        return new Result(ResourceLists.mask(newUsage, matchedResources), errors);
    }
}
