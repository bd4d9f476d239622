package io.qkcm.controller.volume.attachdetach;

import java.util.List;
import java.util.Map;
import java.util.function.Function;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.storage.CSINode;
import io.qkcm.controller.volume.common.CSITranslation;

/**
 * CSI migration as the attach/detach controller does it (attachdetach/util's translateInTreeSpecToCSI*IfNeeded
 * and pkg/volume/csimigration's TranslateInTreeSpecToCSI) on the volume controllers' one translation,
 * {@link CSITranslation}: a PV or pod inline volume of a migrated in-tree plugin becomes a PV with the CSI
 * source of its driver and is attached through that driver; a plugin whose migration is not complete
 * (portworx) is translated for a pod's node only when the node's CSINode lists it as migrated.
 */
final class CsiMigration {

    static final String AWS_EBS_DRIVER = CSITranslation.AWS_EBS_DRIVER;
    static final String CINDER_DRIVER = CSITranslation.CINDER_DRIVER;
    static final String PORTWORX_DRIVER = CSITranslation.PORTWORX_DRIVER;
    static final String MIGRATED_PLUGINS_ANNOTATION = CSITranslation.MIGRATED_PLUGINS_ANNOTATION;

    private CsiMigration() {
    }

    /** GetInTreePluginNameFromSpec: null when no in-tree plugin supports the spec. */
    static String inTreePluginName(VolumeSpec spec) {
        return spec == null ? null : CSITranslation.inTreePluginName(spec.persistentVolume(), spec.volume());
    }

    /**
     * translateInTreeSpecToCSIOnNodeIfNeeded: the translated spec when the spec is migratable and migration is
     * supported on the node (complete for the plugin, or listed in the node's CSINode annotation), else the
     * spec itself; throws when the translation fails or the node's CSINode is needed and missing.
     * {@code csiNodes}: the CSINode lister (null when not found).
     */
    static VolumeSpec translateIfNeeded(VolumeSpec spec, String podNamespace, String nodeName,
            Function<String, CSINode> csiNodes) {
        String plugin = inTreePluginName(spec);
        if (plugin == null || !CSITranslation.isMigrationEnabledForPlugin(plugin)) {
            return spec;
        }
        if (!migrationSupportedOnNode(plugin, nodeName, csiNodes)) {
            return spec;
        }
        return translate(spec, podNamespace);
    }

    /** isCSIMigrationSupportedOnNode. */
    static boolean migrationSupportedOnNode(String plugin, String nodeName, Function<String, CSINode> csiNodes) {
        if (CSITranslation.isMigrationCompleteForPlugin(plugin)) {
            return true;
        }
        if (nodeName == null || nodeName.isEmpty()) {
            throw new IllegalStateException("nodeName is empty");
        }
        CSINode csiNode = csiNodes.apply(nodeName);
        if (csiNode == null) {
            throw new IllegalStateException("csinode.storage.k8s.io \"" + nodeName + "\" not found");
        }
        Map<String, String> annotations = csiNode.getMetadata().getAnnotations();
        if (annotations == null) {
            return false;
        }
        return List.of(annotations.getOrDefault(MIGRATED_PLUGINS_ANNOTATION, "").split(",", -1)).contains(plugin);
    }

    /** csimigration.TranslateInTreeSpecToCSI. */
    static VolumeSpec translate(VolumeSpec spec, String podNamespace) {
        PersistentVolume csiPV;
        boolean inline = false;
        try {
            if (spec.persistentVolume() != null) {
                csiPV = CSITranslation.translateInTreePVToCSI(spec.persistentVolume());
            } else if (spec.volume() != null) {
                csiPV = CSITranslation.translateInTreeInlineVolumeToCSI(spec.volume(), podNamespace);
                inline = true;
            } else {
                throw new IllegalArgumentException("not a valid volume spec");
            }
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException("failed to translate in-tree pv to CSI: " + e.getMessage());
        }
        return new VolumeSpec(null, csiPV, spec.readOnly(), true, inline);
    }
}
