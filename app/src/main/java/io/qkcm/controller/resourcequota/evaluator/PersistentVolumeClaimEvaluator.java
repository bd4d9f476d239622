package io.qkcm.controller.resourcequota.evaluator;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.ScopedResourceSelectorRequirement;
import io.qkcm.controller.resourcequota.quota.Evaluator;
import io.qkcm.controller.resourcequota.quota.GroupResource;
import io.qkcm.controller.resourcequota.quota.ObjectCountEvaluator;
import io.qkcm.controller.util.GoQuantity;
import io.qkcm.controller.resourcequota.quota.ScopeSelectors;
import io.qkcm.controller.resourcequota.quota.UsageStats;
import io.qkcm.controller.resourcequota.quota.UsageStatsOptions;

/**
 * Upstream's pvcEvaluator (persistent_volume_claims.go): {@code persistentvolumeclaims},
 * {@code count/persistentvolumeclaims}, {@code requests.storage}, and both per storage class as
 * {@code <class>.storageclass.storage.k8s.io/<resource>}; the storage charged is the request rounded
 * up to whole bytes, or the allocated size when larger (RecoverVolumeExpansionFailure); the
 * VolumeAttributesClass scope where that gate is on.
 */
public final class PersistentVolumeClaimEvaluator implements Evaluator {

    public static final GroupResource PVCS = new GroupResource("", "persistentvolumeclaims");
    static final String PVC_OBJECT_COUNT_NAME = ObjectCountEvaluator.objectCountQuotaResourceNameFor(PVCS);
    static final List<String> PVC_RESOURCES = List.of("persistentvolumeclaims", "requests.storage");
    static final String STORAGE_CLASS_SUFFIX = ".storageclass.storage.k8s.io/";

    private final UsageStats.ListFunc listFunc;
    private final QuotaFeatures features;

    public PersistentVolumeClaimEvaluator(UsageStats.ListFunc listFunc, QuotaFeatures features) {
        this.listFunc = listFunc;
        this.features = features;
    }

    @Override
    public GroupResource groupResource() {
        return PVCS;
    }

    @Override
    public List<String> matchingResources(List<String> items) {
        List<String> result = new ArrayList<>();
        for (String item : items) {
            if (item.equals(PVC_OBJECT_COUNT_NAME) || PVC_RESOURCES.contains(item)) {
                result.add(item);
                continue;
            }
            for (String resource : PVC_RESOURCES) {
                if (item.endsWith(STORAGE_CLASS_SUFFIX + resource)) {
                    result.add(item);
                    break;
                }
            }
        }
        return result;
    }

    @Override
    public Map<String, GoQuantity> usageStats(UsageStatsOptions options) throws Exception {
        UsageStats.ScopeFunc scopes = features.volumeAttributesClass() ? PersistentVolumeClaimEvaluator::pvcMatchesScope
                : UsageStats.MATCHES_NO_SCOPE;
        return UsageStats.calculate(options, listFunc, scopes, o -> usage((PersistentVolumeClaim) o));
    }

    public Map<String, GoQuantity> usage(PersistentVolumeClaim pvc) {
        Map<String, GoQuantity> result = new TreeMap<>();
        result.put("persistentvolumeclaims", GoQuantity.of(1));
        result.put(PVC_OBJECT_COUNT_NAME, GoQuantity.of(1));
        String storageClass = persistentVolumeClaimClass(pvc);
        if (!storageClass.isEmpty()) {
            result.put(storageClass + STORAGE_CLASS_SUFFIX + "persistentvolumeclaims", GoQuantity.of(1));
        }
        GoQuantity requested = storageUsage(pvc);
        if (requested != null) {
            result.put("requests.storage", requested);
            if (!storageClass.isEmpty()) {
                result.put(storageClass + STORAGE_CLASS_SUFFIX + "requests.storage", requested);
            }
        }
        return result;
    }

    /** storagehelpers.GetPersistentVolumeClaimClass: the beta annotation first, then spec.storageClassName. */
    static String persistentVolumeClaimClass(PersistentVolumeClaim pvc) {
        Map<String, String> annotations = pvc.getMetadata().getAnnotations();
        if (annotations != null && annotations.containsKey("volume.beta.kubernetes.io/storage-class")) {
            return annotations.get("volume.beta.kubernetes.io/storage-class");
        }
        String name = pvc.getSpec() == null ? null : pvc.getSpec().getStorageClassName();
        return name == null ? "" : name;
    }

    private static GoQuantity roundUp(GoQuantity q) {
        // storage is charged in whole bytes, as resourcequota validation requires
        // (upstream: RoundUp(0) on a copy, used only when it was not exact)
        GoQuantity rounded = q.roundUp(0);
        return rounded.compareTo(q) == 0 ? q : rounded;
    }

    GoQuantity storageUsage(PersistentVolumeClaim pvc) {
        GoQuantity result = null;
        var resources = pvc.getSpec() == null ? null : pvc.getSpec().getResources();
        if (resources != null && resources.getRequests() != null && resources.getRequests().get("storage") != null) {
            result = roundUp(GoQuantity.of(resources.getRequests().get("storage")));
        }
        if (features.recoverVolumeExpansionFailure() && result != null) {
            var allocated = pvc.getStatus() == null ? null : pvc.getStatus().getAllocatedResources();
            if (allocated == null || allocated.isEmpty()) {
                return result;
            }
            if (allocated.get("storage") != null) {
                GoQuantity a = GoQuantity.of(allocated.get("storage"));
                if (a.compareTo(result) > 0) {
                    result = roundUp(a);
                }
            }
        }
        return result;
    }

    /**
     * RequiresQuotaReplenish. With RecoverVolumeExpansionFailure on, upstream compares the addresses
     * of two freshly made quantities, which always differ: every update of a claim replenishes.
     */
    public static boolean requiresQuotaReplenish(PersistentVolumeClaim pvc, PersistentVolumeClaim oldPvc,
            QuotaFeatures features) {
        if (features.recoverVolumeExpansionFailure()) {
            return true;
        }
        if (features.volumeAttributesClass()) {
            return !volumeAttributesClassNames(oldPvc).equals(volumeAttributesClassNames(pvc));
        }
        return false;
    }

    static boolean pvcMatchesScope(ScopedResourceSelectorRequirement selector, Object object) {
        PersistentVolumeClaim pvc = (PersistentVolumeClaim) object;
        if (!"VolumeAttributesClass".equals(selector.getScopeName())) {
            return false;
        }
        Set<String> names = volumeAttributesClassNames(pvc);
        if ("Exists".equals(selector.getOperator())) {
            return !names.isEmpty();
        }
        if (names.isEmpty()) {
            return ScopeSelectors.matches(selector, Map.of());
        }
        for (String name : names) {
            if (ScopeSelectors.matches(selector, Map.of("VolumeAttributesClass", name))) {
                return true;
            }
        }
        return false;
    }

    static Set<String> volumeAttributesClassNames(PersistentVolumeClaim pvc) {
        Set<String> names = new TreeSet<>();
        if (pvc.getSpec() != null && pvc.getSpec().getVolumeAttributesClassName() != null
                && !pvc.getSpec().getVolumeAttributesClassName().isEmpty()) {
            names.add(pvc.getSpec().getVolumeAttributesClassName());
        }
        var status = pvc.getStatus();
        if (status != null) {
            if (status.getCurrentVolumeAttributesClassName() != null && !status.getCurrentVolumeAttributesClassName().isEmpty()) {
                names.add(status.getCurrentVolumeAttributesClassName());
            }
            if (status.getModifyVolumeStatus() != null && status.getModifyVolumeStatus().getTargetVolumeAttributesClassName() != null
                    && !status.getModifyVolumeStatus().getTargetVolumeAttributesClassName().isEmpty()) {
                names.add(status.getModifyVolumeStatus().getTargetVolumeAttributesClassName());
            }
        }
        return names;
    }
}
