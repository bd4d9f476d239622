package io.qkcm.controller.resourcequota.evaluator;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.ScopedResourceSelectorRequirementBuilder;

/** persistent_volume_claims_test.go's usage, matching-resources and matching-scopes tables. */
class PersistentVolumeClaimEvaluatorTest {

    private final PersistentVolumeClaimEvaluator evaluator = new PersistentVolumeClaimEvaluator(ns -> List.of(),
            QuotaFeatures.defaults());

    private static PersistentVolumeClaim claim(String storage, String storageClass, String allocated) {
        PersistentVolumeClaimBuilder b = new PersistentVolumeClaimBuilder().withNewMetadata().withName("foo")
                .withNamespace("ns").endMetadata().withNewSpec().withAccessModes("ReadWriteOnce")
                .withStorageClassName(storageClass).withNewResources().addToRequests("storage", new Quantity(storage))
                .endResources().endSpec();
        if (allocated != null) {
            b.withNewStatus().addToAllocatedResources("storage", new Quantity(allocated)).endStatus();
        }
        return b.build();
    }

    private Map<String, String> usage(PersistentVolumeClaim pvc) {
        Map<String, String> out = new TreeMap<>();
        evaluator.usage(pvc).forEach((k, v) -> out.put(k, v.toString()));
        return out;
    }

    @Test
    void usageTable() {
        assertThat(usage(claim("10Gi", null, null))).isEqualTo(Map.of("requests.storage", "10Gi",
                "persistentvolumeclaims", "1", "count/persistentvolumeclaims", "1"));
        assertThat(usage(claim("10Gi", "gold", null))).isEqualTo(Map.of("requests.storage", "10Gi",
                "persistentvolumeclaims", "1", "count/persistentvolumeclaims", "1",
                "gold.storageclass.storage.k8s.io/requests.storage", "10Gi",
                "gold.storageclass.storage.k8s.io/persistentvolumeclaims", "1"));
        // 1001m is charged as 2 whole bytes
        assertThat(usage(claim("1001m", null, null))).containsEntry("requests.storage", "2");
        assertThat(usage(claim("1001m", "gold", null))).containsEntry("requests.storage", "2")
                .containsEntry("gold.storageclass.storage.k8s.io/requests.storage", "2");
        // the larger of request and allocation
        assertThat(usage(claim("5G", null, "10G"))).containsEntry("requests.storage", "10G");
        assertThat(usage(claim("10G", null, "5G"))).containsEntry("requests.storage", "10G");
    }

    @Test
    void matchingResources() {
        assertThat(evaluator.matchingResources(List.of("count/persistentvolumeclaims", "persistentvolumeclaims",
                "requests.storage", "gold.storageclass.storage.k8s.io/requests.storage",
                "gold.storageclass.storage.k8s.io/persistentvolumeclaims", "storage", "cpu", "pods",
                "gold.storageclass.storage.k8s.io/storage")))
                .containsExactly("count/persistentvolumeclaims", "persistentvolumeclaims", "requests.storage",
                        "gold.storageclass.storage.k8s.io/requests.storage",
                        "gold.storageclass.storage.k8s.io/persistentvolumeclaims");
    }

    @Test
    void volumeAttributesClassScope() {
        PersistentVolumeClaim withClass = claim("1Gi", null, null);
        withClass.getSpec().setVolumeAttributesClassName("vac1");
        PersistentVolumeClaim without = claim("1Gi", null, null);
        var exists = new ScopedResourceSelectorRequirementBuilder().withScopeName("VolumeAttributesClass")
                .withOperator("Exists").build();
        var in = new ScopedResourceSelectorRequirementBuilder().withScopeName("VolumeAttributesClass")
                .withOperator("In").withValues("vac1").build();
        var notIn = new ScopedResourceSelectorRequirementBuilder().withScopeName("VolumeAttributesClass")
                .withOperator("NotIn").withValues("vac1").build();
        assertThat(PersistentVolumeClaimEvaluator.pvcMatchesScope(exists, withClass)).isTrue();
        assertThat(PersistentVolumeClaimEvaluator.pvcMatchesScope(exists, without)).isFalse();
        assertThat(PersistentVolumeClaimEvaluator.pvcMatchesScope(in, withClass)).isTrue();
        assertThat(PersistentVolumeClaimEvaluator.pvcMatchesScope(in, without)).isFalse();
        assertThat(PersistentVolumeClaimEvaluator.pvcMatchesScope(notIn, without)).isTrue();
        assertThat(PersistentVolumeClaimEvaluator.pvcMatchesScope(notIn, withClass)).isFalse();
    }
}
