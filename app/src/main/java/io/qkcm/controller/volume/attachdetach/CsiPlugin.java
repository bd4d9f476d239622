package io.qkcm.controller.volume.attachdetach;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.function.Function;

import io.fabric8.kubernetes.api.model.CSIPersistentVolumeSource;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.storage.CSIDriver;

/**
 * The controller side of upstream's CSI volume plugin (pkg/volume/csi), one of {@link VolumePlugins}: which
 * specs it attaches ({@code CanSupport} and {@code CanAttach}), the volumes' unique names and
 * the VolumeAttachment names of csi_attacher.go.
 */
final class CsiPlugin {

    static final String PLUGIN_NAME = "kubernetes.io/csi";
    /** csi_plugin.go's volNameSep: GetVolumeName is driver, this, volume handle. */
    static final String VOL_NAME_SEP = "^";

    private final Function<String, CSIDriver> csiDrivers;

    /** {@code csiDrivers}: the CSIDriver lister (null when not found). */
    CsiPlugin(Function<String, CSIDriver> csiDrivers) {
        this.csiDrivers = csiDrivers;
    }

    /** CanSupport: a PV with a CSI source or a pod volume with an inline CSI source. */
    static boolean canSupport(VolumeSpec spec) {
        return spec != null && (spec.csi() != null || spec.volume() != null && spec.volume().getCsi() != null);
    }

    /**
     * FindAttachablePluginBySpec for the one plugin: supported and {@code CanAttach}. An inline CSI volume
     * of a pod is the ephemeral lifecycle mode and never attached; a PV's is attached unless its
     * CSIDriver says {@code attachRequired: false} (no CSIDriver object: attached).
     */
    boolean isAttachable(VolumeSpec spec) {
        if (!canSupport(spec)) {
            return false;
        }
        if (spec.volume() != null && spec.volume().getCsi() != null) {
            return false;
        }
        return !skipAttach(spec.csi().getDriver());
    }

    /** Whether a CSI driver's volumes skip attachment (CSIDriver.spec.attachRequired false). */
    boolean skipAttach(String driver) {
        CSIDriver csiDriver = csiDrivers.apply(driver);
        return csiDriver != null && csiDriver.getSpec() != null
                && Boolean.FALSE.equals(csiDriver.getSpec().getAttachRequired());
    }

    /** GetUniqueVolumeNameFromSpec: {@code kubernetes.io/csi/<driver>^<volumeHandle>}. */
    static String uniqueVolumeName(VolumeSpec spec) {
        CSIPersistentVolumeSource csi = spec.csi();
        return PLUGIN_NAME + "/" + csi.getDriver() + VOL_NAME_SEP + csi.getVolumeHandle();
    }

    /**
     * SplitUniqueName then the detacher's split of GetVolumeName: {driver, volumeHandle}, or null when the
     * name is not a CSI volume's.
     */
    static String[] driverAndHandle(String uniqueVolumeName) {
        String[] components = uniqueVolumeName.split("/", 3);
        if (components.length != 3 || !PLUGIN_NAME.equals(components[0] + "/" + components[1])) {
            return null;
        }
        List<String> parts = List.of(components[2].split("\\^", -1));
        return parts.size() == 2 ? parts.toArray(String[]::new) : null;
    }

    /** csi_attacher.go's getAttachmentName: "csi-" + hex SHA-256 of handle, driver and node concatenated. */
    static String attachmentName(String volumeHandle, String driver, String nodeName) {
        try {
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            byte[] sum = sha.digest((volumeHandle + driver + nodeName).getBytes(StandardCharsets.UTF_8));
            return "csi-" + HexFormat.of().formatHex(sum);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** util.IsMultiAttachAllowed. */
    static boolean isMultiAttachAllowed(VolumeSpec spec) {
        if (spec == null) {
            return true;
        }
        if (spec.volume() != null && (spec.volume().getAzureDisk() != null || spec.volume().getCinder() != null)) {
            return false;
        }
        PersistentVolume pv = spec.persistentVolume();
        if (pv != null) {
            List<String> modes = pv.getSpec() == null ? null : pv.getSpec().getAccessModes();
            if (modes == null || modes.isEmpty()) {
                return true;
            }
            return modes.contains("ReadWriteMany") || modes.contains("ReadOnlyMany");
        }
        return true;
    }
}
