package io.qkcm.controller.volume.attachdetach;

import io.fabric8.kubernetes.api.model.CSIPersistentVolumeSource;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.Volume;
import io.qkcm.controller.volume.common.FlexVolumePlugin;

/**
 * pkg/volume's Spec as the attach/detach controller sees it: a pod's volume or a bound PersistentVolume
 * (a copy of the cached one). A volume known only from node.status.volumesAttached has no spec (null).
 * {@code migrated}: an in-tree volume translated to its CSI driver ({@link CsiMigration}); with
 * {@code inlineVolumeSpecForCSIMigration} it was a pod's inline volume and the PV is the translation's.
 */
record VolumeSpec(Volume volume, PersistentVolume persistentVolume, boolean readOnly, boolean migrated,
        boolean inlineVolumeSpecForCSIMigration) implements FlexVolumePlugin.Spec {

    static VolumeSpec fromVolume(Volume volume) {
        return new VolumeSpec(volume, null, false, false, false);
    }

    static VolumeSpec fromPersistentVolume(PersistentVolume pv, boolean readOnly) {
        return new VolumeSpec(null, pv, readOnly, false, false);
    }

    /** Spec.Name(): the pod volume's name or the PV's. */
    @Override
    public String name() {
        if (volume != null) {
            return volume.getName();
        }
        return persistentVolume == null ? "" : persistentVolume.getMetadata().getName();
    }

    /** The PV's CSI source, or null. */
    CSIPersistentVolumeSource csi() {
        return persistentVolume == null || persistentVolume.getSpec() == null ? null
                : persistentVolume.getSpec().getCsi();
    }
}
