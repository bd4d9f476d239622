package io.qkcm.controller.resourcequota.quota;

import java.util.List;
import java.util.Map;

import io.qkcm.controller.util.GoQuantity;

/**
 * What the quota controller asks of an evaluator (k8s.io/apiserver/pkg/quota/v1 Evaluator): which
 * quota resource names it computes, and the usage of a namespace. The admission half of upstream's
 * interface (Constraints, Handles, Matches for one object) is the API server's, not a controller's.
 */
public interface Evaluator {

    /** The group resource whose objects this evaluator measures. */
    GroupResource groupResource();

    /** The names of {@code input} this evaluator computes. */
    List<String> matchingResources(List<String> input);

    /** The aggregate usage of {@code options.namespace()} for {@code options.resources()}. */
    Map<String, GoQuantity> usageStats(UsageStatsOptions options) throws Exception;
}
