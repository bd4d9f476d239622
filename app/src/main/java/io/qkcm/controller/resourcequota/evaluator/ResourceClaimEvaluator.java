package io.qkcm.controller.resourcequota.evaluator;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import io.fabric8.kubernetes.api.model.resource.v1beta2.DeviceRequest;
import io.fabric8.kubernetes.api.model.resource.v1beta2.DeviceSubRequest;
import io.fabric8.kubernetes.api.model.resource.v1beta2.ExactDeviceRequest;
import io.qkcm.controller.resourcequota.quota.Evaluator;
import io.qkcm.controller.resourcequota.quota.GroupResource;
import io.qkcm.controller.resourcequota.quota.ObjectCountEvaluator;
import io.qkcm.controller.resourcequota.quota.UsageStats;
import io.qkcm.controller.resourcequota.quota.UsageStatsOptions;
import io.qkcm.controller.util.GoQuantity;
import io.qkcm.controller.util.resource.ResourceClaim;

/**
 * Upstream's claimEvaluator (pkg/quota/v1/evaluator/core/resource_claims.go, with DynamicResourceAllocation):
 * {@code count/resourceclaims.resource.k8s.io}, and per device class
 * {@code <class>.deviceclass.resource.k8s.io/devices}: a request's count (ExactCount) or 32 (All,
 * AllocationResultsMaxSize); of a request's firstAvailable alternatives, the largest per class.
 */
public final class ResourceClaimEvaluator implements Evaluator {

    public static final GroupResource RESOURCE_CLAIMS = new GroupResource("resource.k8s.io", "resourceclaims");
    static final String CLAIM_OBJECT_COUNT_NAME = ObjectCountEvaluator.objectCountQuotaResourceNameFor(RESOURCE_CLAIMS);
    /** v1.ResourceClaimsPerClass. */
    static final String PER_CLASS_SUFFIX = ".deviceclass.resource.k8s.io/devices";
    /** resourceapi.AllocationResultsMaxSize. */
    static final long ALLOCATION_RESULTS_MAX_SIZE = 32;

    private final UsageStats.ListFunc listFunc;

    public ResourceClaimEvaluator(UsageStats.ListFunc listFunc) {
        this.listFunc = listFunc;
    }

    /** V1ResourceByDeviceClass. */
    public static String resourceByDeviceClass(String className) {
        return className + PER_CLASS_SUFFIX;
    }

    @Override
    public GroupResource groupResource() {
        return RESOURCE_CLAIMS;
    }

    @Override
    public List<String> matchingResources(List<String> input) {
        List<String> result = new ArrayList<>();
        for (String item : input) {
            if (item.equals(CLAIM_OBJECT_COUNT_NAME) || item.endsWith(PER_CLASS_SUFFIX)) {
                result.add(item);
            }
        }
        return result;
    }

    @Override
    public Map<String, GoQuantity> usageStats(UsageStatsOptions options) throws Exception {
        return UsageStats.calculate(options, listFunc, UsageStats.MATCHES_NO_SCOPE, o -> usage((ResourceClaim) o));
    }

    public static Map<String, GoQuantity> usage(ResourceClaim claim) {
        Map<String, GoQuantity> result = new TreeMap<>();
        result.put(CLAIM_OBJECT_COUNT_NAME, GoQuantity.of(1));
        List<DeviceRequest> requests = claim.getSpec() == null || claim.getSpec().getDevices() == null
                || claim.getSpec().getDevices().getRequests() == null ? List.of() : claim.getSpec().getDevices().getRequests();
        for (DeviceRequest request : requests) {
            if (request.getFirstAvailable() != null && !request.getFirstAvailable().isEmpty()) {
                Map<String, GoQuantity> maxByClass = new LinkedHashMap<>();
                for (DeviceSubRequest sub : request.getFirstAvailable()) {
                    String name = resourceByDeviceClass(nullToEmpty(sub.getDeviceClassName()));
                    GoQuantity q = GoQuantity.of(devices(sub.getAllocationMode(), sub.getCount()));
                    // a missing entry compares as zero: an alternative of no devices adds no entry
                    if (q.compareTo(maxByClass.getOrDefault(name, GoQuantity.ZERO)) > 0) {
                        maxByClass.put(name, q);
                    }
                }
                maxByClass.forEach((name, q) -> result.merge(name, q, GoQuantity::add));
            } else if (request.getExactly() != null) {
                ExactDeviceRequest exactly = request.getExactly();
                String name = resourceByDeviceClass(nullToEmpty(exactly.getDeviceClassName()));
                result.merge(name, GoQuantity.of(devices(exactly.getAllocationMode(), exactly.getCount())), GoQuantity::add);
            }
        }
        return result;
    }

    private static long devices(String allocationMode, Long count) {
        if ("ExactCount".equals(allocationMode)) {
            return count == null ? 0 : count;
        }
        if ("All".equals(allocationMode)) {
            return ALLOCATION_RESULTS_MAX_SIZE;
        }
        return 0;
    }

    private static String nullToEmpty(String s) {
        return s == null ? "" : s;
    }
}
