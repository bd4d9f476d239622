package io.qkcm.controller.volume.persistentvolume;

import java.util.Map;

/**
 * csi-translation-lib's in-tree to CSI names and csimigration.PluginManager's
 * IsMigrationEnabledForPlugin for v1.34: migration is GA (Portworx's gate locked on), so every
 * migratable in-tree provisioner is handed to its CSI driver.
 */
final class CSIMigration {

    private static final Map<String, String> CSI_NAMES = Map.of(
            "kubernetes.io/aws-ebs", "ebs.csi.aws.com",
            "kubernetes.io/gce-pd", "pd.csi.storage.gke.io",
            "kubernetes.io/azure-file", "file.csi.azure.com",
            "kubernetes.io/azure-disk", "disk.csi.azure.com",
            "kubernetes.io/cinder", "cinder.csi.openstack.org",
            "kubernetes.io/vsphere-volume", "csi.vsphere.vmware.com",
            "kubernetes.io/portworx-volume", "pxd.portworx.com");

    private CSIMigration() {
    }

    static boolean isMigrationEnabledForPlugin(String pluginName) {
        return CSI_NAMES.containsKey(pluginName);
    }

    /** GetCSINameFromInTreeName; null for a plugin that is not migratable. */
    static String csiNameFromInTreeName(String pluginName) {
        return CSI_NAMES.get(pluginName);
    }
}
