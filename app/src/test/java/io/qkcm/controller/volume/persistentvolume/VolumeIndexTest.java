package io.qkcm.controller.volume.persistentvolume;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.LabelSelectorBuilder;
import io.fabric8.kubernetes.api.model.ObjectReference;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.Quantity;

/**
 * Upstream's index_test.go and the component-helpers matching tests: which volume a claim gets from
 * the controller's index (access-mode sets smallest first, then the smallest volume; pre-bound
 * volumes first; delayed binding; volume modes; deletion; huge quantities). Pure functions, no API
 * server: these are the decisions the table tests exercise end to end.
 */
class VolumeIndexTest {

    static PersistentVolume pv(String name, String size, String... modes) {
        return new PersistentVolumeBuilder().withNewMetadata().withName(name).withUid(name).withResourceVersion("1")
                .endMetadata().withNewSpec().withCapacity(Map.of("storage", new Quantity(size))).withAccessModes(modes)
                .withVolumeMode("Filesystem").endSpec().withNewStatus().withPhase("Available").endStatus().build();
    }

    static PersistentVolumeClaim pvc(String size, String... modes) {
        return new PersistentVolumeClaimBuilder().withNewMetadata().withName("claim01").withNamespace("myns")
                .withUid("claim01-uid").endMetadata().withNewSpec().withAccessModes(modes).withNewResources()
                .addToRequests("storage", new Quantity(size)).endResources().withVolumeMode("Filesystem").endSpec().build();
    }

    static VolumeIndex index(PersistentVolume... volumes) {
        VolumeIndex index = new VolumeIndex();
        for (PersistentVolume v : volumes) {
            index.store.update(v);
        }
        return index;
    }

    static String best(VolumeIndex index, PersistentVolumeClaim claim) throws Exception {
        PersistentVolume v = index.findBestMatchForClaim(claim, false, true);
        return v == null ? null : v.getMetadata().getName();
    }

    @Test
    void findingVolumeWithDifferentAccessModes() throws Exception {
        PersistentVolume gce = pv("gce", "10G", "ReadWriteOnce", "ReadOnlyMany");
        PersistentVolume ebs = pv("ebs", "10G", "ReadWriteOnce");
        PersistentVolume nfs = pv("nfs", "10G", "ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany");
        VolumeIndex index = index(gce, ebs, nfs);
        assertThat(best(index, pvc("1G", "ReadWriteOnce"))).isEqualTo("ebs");
        assertThat(best(index, pvc("1G", "ReadWriteOnce", "ReadOnlyMany"))).isEqualTo("gce");
        // the order of the requested modes does not matter
        assertThat(best(index, pvc("1G", "ReadWriteMany", "ReadWriteOnce", "ReadOnlyMany"))).isEqualTo("nfs");
        assertThat(best(index, pvc("1G", "ReadWriteMany"))).isEqualTo("nfs");
        // the exact match is bound: the next level of modes up
        ebs.getSpec().setClaimRef(new ObjectReference());
        assertThat(best(index, pvc("1G", "ReadWriteOnce"))).isEqualTo("gce");
        gce.getSpec().setClaimRef(new ObjectReference());
        assertThat(best(index, pvc("1G", "ReadWriteOnce"))).isEqualTo("nfs");
        gce.getSpec().setClaimRef(null);
        assertThat(best(index, pvc("1G", "ReadOnlyMany"))).isEqualTo("gce");
    }

    @Test
    void allPossibleAccessModesAreTheIndexedSetsContainingTheRequestFewestFirst() {
        VolumeIndex index = index(pv("a", "1G", "ReadWriteOnce", "ReadOnlyMany"),
                pv("b", "1G", "ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany"), pv("c", "1G", "ReadWriteOnce"),
                pv("d", "1G", "ReadOnlyMany"));
        assertThat(index.allPossibleMatchingAccessModes(List.of("ReadWriteOnce"))).containsExactly(
                List.of("ReadWriteOnce"), List.of("ReadWriteOnce", "ReadOnlyMany"),
                List.of("ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany"));
        assertThat(index.allPossibleMatchingAccessModes(List.of("ReadWriteMany")))
                .containsExactly(List.of("ReadWriteOnce", "ReadOnlyMany", "ReadWriteMany"));
    }

    @Test
    void accessModesAsStringIsUpstreamsFixedOrderWithoutDuplicates() {
        assertThat(StorageHelpers.accessModesAsString(List.of("ReadWriteMany", "ReadOnlyMany", "ReadWriteOnce",
                "ReadWriteOnce", "ReadWriteOncePod"))).isEqualTo("RWO,ROX,RWX,RWOP");
        assertThat(StorageHelpers.accessModesFromString("RWO,ROX,RWX,RWOP")).containsExactly("ReadWriteOnce",
                "ReadOnlyMany", "ReadWriteMany", "ReadWriteOncePod");
        assertThat(StorageHelpers.accessModesFromString("")).isEmpty();
    }

    @Test
    void findingPreboundVolumes() throws Exception {
        PersistentVolumeClaim claim = pvc("1Gi", "ReadWriteOnce");
        ObjectReference claimRef = StorageHelpers.claimReference(claim);
        PersistentVolume pv1 = pv("pv1", "1Gi", "ReadWriteOnce");
        PersistentVolume pv5 = pv("pv5", "5Gi", "ReadWriteOnce");
        PersistentVolume pv8 = pv("pv8", "8Gi", "ReadWriteOnce");
        PersistentVolume badSize = pv("pvBadSize", "1Mi", "ReadWriteOnce");
        PersistentVolume badMode = pv("pvBadMode", "1Gi", "ReadOnlyMany");
        VolumeIndex index = index(pv1, pv5, pv8, badSize, badMode);
        assertThat(best(index, claim)).isEqualTo("pv1");
        ObjectReference other = new ObjectReference();
        other.setName("foo");
        other.setNamespace("bar");
        pv1.getSpec().setClaimRef(other);
        assertThat(best(index, claim)).isEqualTo("pv5");
        // a volume pre-bound to the claim wins over smaller ones
        pv1.getSpec().setClaimRef(null);
        pv8.getSpec().setClaimRef(claimRef);
        assertThat(best(index, claim)).isEqualTo("pv8");
        // but not when it is too small or lacks the modes
        pv8.getSpec().setClaimRef(null);
        badSize.getSpec().setClaimRef(claimRef);
        assertThat(best(index, claim)).isEqualTo("pv1");
        badSize.getSpec().setClaimRef(null);
        badMode.getSpec().setClaimRef(claimRef);
        assertThat(best(index, claim)).isEqualTo("pv1");
    }

    @Test
    void delayedBindingMatchesOnlyPreboundVolumes() throws Exception {
        PersistentVolumeClaim claim = pvc("1Gi", "ReadWriteOnce");
        PersistentVolume free = pv("free", "1Gi", "ReadWriteOnce");
        PersistentVolume prebound = pv("prebound", "5Gi", "ReadWriteOnce");
        VolumeIndex index = index(free);
        assertThat(index.findBestMatchForClaim(claim, true, true)).isNull();
        prebound.getSpec().setClaimRef(StorageHelpers.claimReference(claim));
        index.store.update(prebound);
        assertThat(index.findBestMatchForClaim(claim, true, true).getMetadata().getName()).isEqualTo("prebound");
    }

    @Test
    void selectorsClassesPhasesAndDeletionFilterVolumes() throws Exception {
        PersistentVolume labelled = pv("labelled", "10G", "ReadWriteOnce");
        labelled.getMetadata().setLabels(Map.of("should-exist", "true"));
        PersistentVolume plain = pv("plain", "1G", "ReadWriteOnce");
        PersistentVolume silver = pv("silver", "1G", "ReadWriteOnce");
        silver.getSpec().setStorageClassName("silver");
        PersistentVolume released = pv("released", "1G", "ReadWriteOnce");
        released.getStatus().setPhase("Released");
        VolumeIndex index = index(labelled, plain, silver, released);

        PersistentVolumeClaim selecting = pvc("1G", "ReadWriteOnce");
        selecting.getSpec().setSelector(new LabelSelectorBuilder().withMatchLabels(Map.of("should-exist", "true")).build());
        assertThat(best(index, selecting)).isEqualTo("labelled");
        selecting.getSpec().setSelector(new LabelSelectorBuilder().withMatchLabels(Map.of("should-not-exist", "true"))
                .build());
        assertThat(best(index, selecting)).isNull();

        PersistentVolumeClaim silverClaim = pvc("1G", "ReadWriteOnce");
        silverClaim.getSpec().setStorageClassName("silver");
        assertThat(best(index, silverClaim)).isEqualTo("silver");
        // no class: the smallest classless Available volume (not the Released one)
        assertThat(best(index, pvc("1G", "ReadWriteOnce"))).isEqualTo("plain");

        // a volume being deleted is never matched (StorageObjectInUseProtection)
        plain.getMetadata().setDeletionTimestamp("2026-01-01T00:00:00Z");
        assertThat(best(index, pvc("1G", "ReadWriteOnce"))).isEqualTo("labelled");
    }

    @Test
    void volumeModesMustMatchAndAnUnsetModeIsFilesystem() throws Exception {
        PersistentVolume block = pv("block", "1G", "ReadWriteOnce");
        block.getSpec().setVolumeMode("Block");
        PersistentVolume unset = pv("unset", "2G", "ReadWriteOnce");
        unset.getSpec().setVolumeMode(null);
        VolumeIndex index = index(block, unset);
        PersistentVolumeClaim blockClaim = pvc("1G", "ReadWriteOnce");
        blockClaim.getSpec().setVolumeMode("Block");
        assertThat(best(index, blockClaim)).isEqualTo("block");
        PersistentVolumeClaim fsClaim = pvc("1G", "ReadWriteOnce");
        fsClaim.getSpec().setVolumeMode(null);
        assertThat(best(index, fsClaim)).isEqualTo("unset");
    }

    @Test
    void hugeQuantitiesCompareExactly() throws Exception {
        PersistentVolume veryLarge = pv("very-large", "200E", "ReadWriteOnce");
        PersistentVolume extremelyLarge = pv("extremely-large", "800E", "ReadWriteOnce");
        VolumeIndex index = index(veryLarge, extremelyLarge);
        assertThat(best(index, pvc("1E", "ReadWriteOnce"))).isEqualTo("very-large");
        assertThat(best(index, pvc("800E", "ReadWriteOnce"))).isEqualTo("extremely-large");
        assertThat(best(index, pvc("950E", "ReadWriteOnce"))).isNull();
    }

    @Test
    void volumeAttributesClassesMustMatch() throws Exception {
        PersistentVolume gold = pv("gold", "1G", "ReadWriteOnce");
        gold.getSpec().setVolumeAttributesClassName("gold");
        PersistentVolume none = pv("none", "1G", "ReadWriteOnce");
        VolumeIndex index = index(gold, none);
        PersistentVolumeClaim claim = pvc("1G", "ReadWriteOnce");
        claim.getSpec().setVolumeAttributesClassName("gold");
        assertThat(best(index, claim)).isEqualTo("gold");
        claim.getSpec().setVolumeAttributesClassName("silver");
        assertThat(best(index, claim)).isNull();
        // with the gate off a claim asking for a class is an error, and no volume with one is matched
        assertThatThrownBy(() -> index.findBestMatchForClaim(claim, false, false))
                .hasMessageContaining("feature-gate VolumeAttributesClass is disabled");
        assertThat(index.findBestMatchForClaim(pvc("1G", "ReadWriteOnce"), false, false).getMetadata().getName())
                .isEqualTo("none");
    }

    @Test
    void theStoreKeepsTheNewestVersion() {
        LatestObjects<PersistentVolume> store = new VolumeIndex().store;
        PersistentVolume v5 = pv("v", "1G", "ReadWriteOnce");
        v5.getMetadata().setResourceVersion("5");
        PersistentVolume v3 = pv("v", "2G", "ReadWriteOnce");
        v3.getMetadata().setResourceVersion("3");
        assertThat(store.update(v5)).isTrue();
        assertThat(store.update(v3)).isFalse();
        assertThat(store.get("v")).isSameAs(v5);
        PersistentVolume again = pv("v", "3G", "ReadWriteOnce");
        again.getMetadata().setResourceVersion("5");
        assertThat(store.update(again)).isTrue();
    }

    @Test
    void deleterAndMigrationDecisions() {
        PersistentVolume external = pv("external", "1G", "ReadWriteOnce");
        external.getMetadata().setAnnotations(Map.of(StorageHelpers.ANN_DYNAMICALLY_PROVISIONED, "vendor.example.com/x"));
        assertThat(PersistentVolumeBinder.findDeletablePluginError(external)).isNull();
        PersistentVolume inTree = pv("in-tree", "1G", "ReadWriteOnce");
        inTree.getMetadata().setAnnotations(Map.of(StorageHelpers.ANN_DYNAMICALLY_PROVISIONED, "kubernetes.io/host-path"));
        // the host-path plugin deletes what it provisioned; NFS only recycles; other in-tree plugins are absent
        assertThat(PersistentVolumeBinder.findDeletablePlugin(inTree)).isEqualTo("kubernetes.io/host-path");
        PersistentVolume nfsProvisioned = pv("nfs", "1G", "ReadWriteOnce");
        nfsProvisioned.getMetadata().setAnnotations(Map.of(StorageHelpers.ANN_DYNAMICALLY_PROVISIONED, "kubernetes.io/nfs"));
        assertThat(PersistentVolumeBinder.findDeletablePluginError(nfsProvisioned))
                .isEqualTo("no deletable volume plugin matched");
        PersistentVolume unknownInTree = pv("unknown", "1G", "ReadWriteOnce");
        unknownInTree.getMetadata().setAnnotations(Map.of(StorageHelpers.ANN_DYNAMICALLY_PROVISIONED, "kubernetes.io/cinder"));
        assertThat(PersistentVolumeBinder.findDeletablePluginError(unknownInTree))
                .isEqualTo("no volume plugin matched name: kubernetes.io/cinder");
        PersistentVolume hostPath = pv("host", "1G", "ReadWriteOnce");
        hostPath.getSpec().setHostPath(new io.fabric8.kubernetes.api.model.HostPathVolumeSource("/tmp/x", null));
        assertThat(PersistentVolumeBinder.findDeletablePlugin(hostPath)).isEqualTo("kubernetes.io/host-path");
        PersistentVolume nfs = pv("nfs-static", "1G", "ReadWriteOnce");
        nfs.getSpec().setNfs(new io.fabric8.kubernetes.api.model.NFSVolumeSource("/export", null, "server"));
        assertThat(PersistentVolumeBinder.findDeletablePluginError(nfs))
                .isEqualTo("error getting deleter volume plugin for volume \"nfs-static\": no deletable volume plugin matched");
        PersistentVolume csi = pv("csi", "1G", "ReadWriteOnce");
        csi.getSpec().setCsi(new io.fabric8.kubernetes.api.model.CSIPersistentVolumeSourceBuilder().withDriver("d")
                .withVolumeHandle("h").build());
        assertThat(PersistentVolumeBinder.findDeletablePluginError(csi)).isNull();
        assertThat(PersistentVolumeBinder.findDeletablePluginError(pv("plain", "1G", "ReadWriteOnce")))
                .isEqualTo("error getting deleter volume plugin for volume \"plain\": no volume plugin matched");

        // an in-tree provisioned Delete volume gets the in-tree protection finalizer, a migrated one loses it
        inTree.getSpec().setPersistentVolumeReclaimPolicy("Delete");
        assertThat(PersistentVolumeBinder.modifyDeletionFinalizers(inTree))
                .containsExactly(StorageHelpers.PV_DELETION_IN_TREE_PROTECTION_FINALIZER);
        PersistentVolume migrated = pv("migrated", "1G", "ReadWriteOnce");
        migrated.getMetadata().setAnnotations(Map.of(StorageHelpers.ANN_DYNAMICALLY_PROVISIONED, "kubernetes.io/gce-pd"));
        migrated.getMetadata().setFinalizers(List.of(StorageHelpers.PV_DELETION_IN_TREE_PROTECTION_FINALIZER));
        assertThat(PersistentVolumeBinder.modifyDeletionFinalizers(migrated)).isEmpty();
        assertThat(PersistentVolumeBinder.modifyDeletionFinalizers(external)).isNull();

        Map<String, String> annotations = new java.util.HashMap<>(Map.of(StorageHelpers.ANN_DYNAMICALLY_PROVISIONED,
                "kubernetes.io/gce-pd"));
        assertThat(PersistentVolumeBinder.updateMigrationAnnotations(annotations, false)).isTrue();
        assertThat(annotations).containsEntry(StorageHelpers.ANN_MIGRATED_TO, "pd.csi.storage.gke.io");
        annotations.put(StorageHelpers.ANN_DYNAMICALLY_PROVISIONED, "vendor.example.com/x");
        assertThat(PersistentVolumeBinder.updateMigrationAnnotations(annotations, false)).isTrue();
        assertThat(annotations).doesNotContainKey(StorageHelpers.ANN_MIGRATED_TO);
    }
}
