package io.qkcm.controller.resourcequota.evaluator;

import java.time.Clock;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

import io.qkcm.controller.resourcequota.quota.Evaluator;
import io.qkcm.controller.resourcequota.quota.GroupResource;
import io.qkcm.controller.resourcequota.quota.ObjectCountEvaluator;
import io.qkcm.controller.resourcequota.quota.UsageStats;

/**
 * core.NewEvaluators: the evaluators with logic of their own (pods, services, claims), and the object
 * counts that keep a legacy name beside {@code count/<resource>} (configmaps, resourcequotas,
 * replicationcontrollers, secrets).
 */
public final class CoreEvaluators {

    /** legacyObjectCountAliases. */
    public static final Map<GroupResource, String> LEGACY_OBJECT_COUNT_ALIASES;

    static {
        Map<GroupResource, String> m = new LinkedHashMap<>();
        m.put(new GroupResource("", "configmaps"), "configmaps");
        m.put(new GroupResource("", "resourcequotas"), "resourcequotas");
        m.put(new GroupResource("", "replicationcontrollers"), "replicationcontrollers");
        m.put(new GroupResource("", "secrets"), "secrets");
        LEGACY_OBJECT_COUNT_ALIASES = java.util.Collections.unmodifiableMap(m);
    }

    private CoreEvaluators() {
    }

    /** {@code listers} gives the namespace lister of a core group resource (the shared informer's cache). */
    public static List<Evaluator> newEvaluators(Function<GroupResource, UsageStats.ListFunc> listers, Clock clock,
            QuotaFeatures features) {
        return newEvaluators(listers, clock, features, false);
    }

    /** With {@code dynamicResourceAllocation} (the feature gate), the ResourceClaim evaluator too. */
    public static List<Evaluator> newEvaluators(Function<GroupResource, UsageStats.ListFunc> listers, Clock clock,
            QuotaFeatures features, boolean dynamicResourceAllocation) {
        List<Evaluator> result = new ArrayList<>();
        result.add(new PodEvaluator(listers.apply(PodEvaluator.PODS), clock, features));
        result.add(new ServiceEvaluator(listers.apply(ServiceEvaluator.SERVICES)));
        result.add(new PersistentVolumeClaimEvaluator(listers.apply(PersistentVolumeClaimEvaluator.PVCS), features));
        if (dynamicResourceAllocation) {
            result.add(new ResourceClaimEvaluator(listers.apply(ResourceClaimEvaluator.RESOURCE_CLAIMS)));
        }
        LEGACY_OBJECT_COUNT_ALIASES.forEach((gr, alias) -> result.add(new ObjectCountEvaluator(gr, listers.apply(gr), alias)));
        return result;
    }
}
