package io.qkcm.controller.volume.selinuxwarning;

import java.util.List;
import java.util.Objects;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.storage.CSIDriver;
import io.fabric8.kubernetes.client.informers.cache.Store;
import io.qkcm.controller.volume.common.CSITranslation;
import io.qkcm.controller.volume.common.FlexVolumePlugin;
import io.qkcm.controller.volume.common.FlexVolumePlugins;
import io.qkcm.controller.volume.common.PodPVCIndex;

/**
 * What the controller needs of upstream's volume plugins: the volume spec of a pod volume (attachdetach's
 * CreateVolumeSpec: a PVC's bound PV, or the inline volume), and for the plugins kube-controller-manager
 * probes for persistent volumes (host-path, nfs, fc, iscsi, csi) their unique volume name and whether they
 * support mounting with an SELinux context. An in-tree volume whose plugin is migrated to CSI is the CSI
 * plugin's, as its driver's volume (the driver's CSIDriver says whether it mounts with a context). A flex
 * volume is the plugin of its driver when the controller's own dynamic prober has found that driver under
 * {@code --flex-volume-plugin-dir} (its unique name asks the driver's getvolumename; a flex driver never mounts
 * with a context). Other volume types have no plugin here, as upstream.
 */
final class VolumeSpecs {

    /**
     * upstream's volume.Spec: an inline volume or a PersistentVolume ({@code readOnly}: the pod's claim source's,
     * which a flex driver's options carry).
     */
    record Spec(Volume volume, PersistentVolume persistentVolume, boolean readOnly) implements FlexVolumePlugin.Spec {
        Spec(Volume volume, PersistentVolume persistentVolume) {
            this(volume, persistentVolume, false);
        }

        @Override
        public String name() {
            return volume != null ? volume.getName() : persistentVolume.getMetadata().getName();
        }
    }

    /** A volume plugin of the controller's plugin manager. */
    interface Plugin {
        String name();

        /** The plugin's GetVolumeName; an exception where upstream's returns an error. */
        String volumeName(Spec spec);

        boolean supportsSELinuxContextMount(Spec spec);
    }

    private final Store<PersistentVolumeClaim> pvcs;
    private final Store<PersistentVolume> pvs;
    private final Store<CSIDriver> csiDrivers;
    private final boolean seLinuxMountReadWriteOncePod;
    private final FlexVolumePlugins flexPlugins;

    VolumeSpecs(Store<PersistentVolumeClaim> pvcs, Store<PersistentVolume> pvs, Store<CSIDriver> csiDrivers,
            boolean seLinuxMountReadWriteOncePod, FlexVolumePlugins flexPlugins) {
        this.pvcs = pvcs;
        this.pvs = pvs;
        this.csiDrivers = csiDrivers;
        this.seLinuxMountReadWriteOncePod = seLinuxMountReadWriteOncePod;
        this.flexPlugins = flexPlugins;
    }

    /**
     * attachdetach util's CreateVolumeSpec: the pod volume's spec, a migrated in-tree volume translated to its
     * CSI driver's (translateInTreeSpecToCSIIfNeeded).
     */
    Spec create(Volume podVolume, Pod pod) {
        String[] claimName = { "" };
        Spec spec = createInTree(podVolume, pod, claimName);
        String plugin = CSITranslation.inTreePluginName(spec.persistentVolume(), spec.volume());
        if (plugin == null || !CSITranslation.isMigrationEnabledForPlugin(plugin)) {
            return spec;
        }
        try {
            // csimigration.TranslateInTreeSpecToCSI: an inline volume becomes a PersistentVolume spec too
            return new Spec(null, spec.persistentVolume() != null
                    ? CSITranslation.translateInTreePVToCSI(spec.persistentVolume())
                    : CSITranslation.translateInTreeInlineVolumeToCSI(spec.volume(), pod.getMetadata().getNamespace()),
                    spec.readOnly());
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException("error performing CSI migration checks and translation for PVC \""
                    + pod.getMetadata().getNamespace() + "\"/\"" + claimName[0] + "\": failed to translate in-tree pv to CSI: "
                    + e.getMessage(), e);
        }
    }

    /** createInTreeVolumeSpec; {@code claimOut[0]} receives the claim's name ("" for an inline volume). */
    private Spec createInTree(Volume podVolume, Pod pod, String[] claimOut) {
        claimOut[0] = "";
        String claimName = null;
        boolean readOnly = false;
        if (podVolume.getPersistentVolumeClaim() != null) {
            claimName = podVolume.getPersistentVolumeClaim().getClaimName();
            readOnly = Boolean.TRUE.equals(podVolume.getPersistentVolumeClaim().getReadOnly());
        }
        boolean ephemeral = podVolume.getEphemeral() != null;
        if (ephemeral) {
            claimName = PodPVCIndex.ephemeralVolumeClaimName(pod, podVolume);
        }
        if (claimName == null || claimName.isEmpty()) {
            return new Spec(podVolume, null);
        }
        claimOut[0] = claimName;
        String ns = pod.getMetadata().getNamespace();
        PersistentVolumeClaim pvc = pvcs.getByKey(ns + "/" + claimName);
        if (pvc == null) {
            throw new IllegalStateException("error processing PVC \"" + ns + "\"/\"" + claimName
                    + "\": failed to find PVC " + ns + "/" + claimName + " in PVCInformer cache");
        }
        String phase = pvc.getStatus() == null ? null : pvc.getStatus().getPhase();
        String volumeName = pvc.getSpec().getVolumeName();
        if (!"Bound".equals(phase) || volumeName == null || volumeName.isEmpty()) {
            throw new IllegalStateException("error processing PVC \"" + ns + "\"/\"" + claimName + "\": PVC " + ns + "/"
                    + claimName + " has non-bound phase (\"" + (phase == null ? "" : phase)
                    + "\") or empty pvc.Spec.VolumeName (\"" + (volumeName == null ? "" : volumeName) + "\")");
        }
        if (ephemeral && !isControlledBy(pvc, pod)) {
            throw new IllegalStateException("PVC " + ns + "/" + claimName + " was not created for pod " + ns + "/"
                    + pod.getMetadata().getName() + " (pod is not owner)");
        }
        PersistentVolume pv = pvs.getByKey(volumeName);
        if (pv == null) {
            throw new IllegalStateException("error processing PVC \"" + ns + "\"/\"" + claimName + "\": failed to find PV \""
                    + volumeName + "\" in PVInformer cache");
        }
        if (pv.getSpec().getClaimRef() == null
                || !Objects.equals(pv.getSpec().getClaimRef().getUid(), pvc.getMetadata().getUid())) {
            throw new IllegalStateException("error processing PVC \"" + ns + "\"/\"" + claimName + "\": found PV object \""
                    + volumeName + "\" but it is not bound to the claim");
        }
        return new Spec(null, pv, readOnly);
    }

    private static boolean isControlledBy(PersistentVolumeClaim pvc, Pod pod) {
        return pvc.getMetadata().getOwnerReferences() != null && pvc.getMetadata().getOwnerReferences().stream()
                .anyMatch(o -> Boolean.TRUE.equals(o.getController()) && Objects.equals(o.getUid(), pod.getMetadata().getUid()));
    }

    /** The plugin manager's FindPluginBySpec, the probed flex drivers included; null when no plugin supports the spec. */
    Plugin findPlugin(Spec spec) {
        for (Plugin p : plugins) {
            if (canSupport(p, spec)) {
                return p;
            }
        }
        FlexVolumePlugin flex = flexPlugins.bySpec(spec);
        return flex == null ? null : flexPlugin(flex);
    }

    /** A probed flex driver as a plugin of this controller: GetVolumeName asks it, no SELinux context mount. */
    private static Plugin flexPlugin(FlexVolumePlugin flex) {
        return new Plugin() {
            @Override
            public String name() {
                return flex.name();
            }

            @Override
            public String volumeName(Spec spec) {
                String name;
                try {
                    name = flex.volumeName(spec);
                } catch (FlexVolumePlugin.DriverCallException e) {
                    throw new IllegalStateException("failed to GetVolumeName from volumePlugin for volumeSpec \""
                            + spec.name() + "\" err=" + e.getMessage(), e);
                }
                if (name.isEmpty()) {
                    throw new IllegalStateException("failed to GetVolumeName from volumePlugin for volumeSpec \""
                            + spec.name() + "\" err=<nil>");
                }
                return name;
            }

            @Override
            public boolean supportsSELinuxContextMount(Spec spec) {
                return FlexVolumePlugin.SUPPORTS_SELINUX_CONTEXT_MOUNT;
            }
        };
    }

    FlexVolumePlugins flexPlugins() {
        return flexPlugins;
    }

    /** volumeutil's SupportsSELinuxContextMount. */
    boolean supportsSELinuxContextMount(Spec spec) {
        Plugin plugin = findPlugin(spec);
        return plugin != null && plugin.supportsSELinuxContextMount(spec);
    }

    /** csi's GetCSIDriverName, null for a spec of another plugin. */
    static String csiDriverName(Spec spec) {
        if (spec.volume() != null && spec.volume().getCsi() != null) {
            return spec.volume().getCsi().getDriver();
        }
        if (spec.persistentVolume() != null && spec.persistentVolume().getSpec().getCsi() != null) {
            return spec.persistentVolume().getSpec().getCsi().getDriver();
        }
        return null;
    }

    private static boolean canSupport(Plugin p, Spec spec) {
        Volume v = spec.volume();
        var pv = spec.persistentVolume() == null ? null : spec.persistentVolume().getSpec();
        return switch (p.name()) {
            case HOST_PATH -> (pv != null && pv.getHostPath() != null) || (v != null && v.getHostPath() != null);
            case NFS -> (pv != null && pv.getNfs() != null) || (v != null && v.getNfs() != null);
            case FC -> (v != null && v.getFc() != null) || (pv != null && pv.getFc() != null);
            case ISCSI -> (v != null && v.getIscsi() != null) || (pv != null && pv.getIscsi() != null);
            case CSI -> (pv != null && pv.getCsi() != null) || (v != null && v.getCsi() != null);
            default -> false;
        };
    }

    static final String HOST_PATH = "kubernetes.io/host-path";
    static final String NFS = "kubernetes.io/nfs";
    static final String FC = "kubernetes.io/fc";
    static final String ISCSI = "kubernetes.io/iscsi";
    static final String CSI = "kubernetes.io/csi";

    private final List<Plugin> plugins = List.of(
            plugin(HOST_PATH, s -> s.volume() != null ? s.volume().getHostPath().getPath()
                    : s.persistentVolume().getSpec().getHostPath().getPath(), s -> false),
            plugin(NFS, s -> s.volume() != null ? s.volume().getNfs().getServer() + "/" + s.volume().getNfs().getPath()
                    : s.persistentVolume().getSpec().getNfs().getServer() + "/" + s.persistentVolume().getSpec().getNfs().getPath(),
                    s -> false),
            plugin(FC, VolumeSpecs::fcVolumeName, s -> true),
            plugin(ISCSI, VolumeSpecs::iscsiVolumeName, s -> true),
            plugin(CSI, VolumeSpecs::csiVolumeName, this::csiSupportsSELinuxContextMount));

    private static Plugin plugin(String name, java.util.function.Function<Spec, String> volumeName,
            java.util.function.Predicate<Spec> selinux) {
        return new Plugin() {
            @Override
            public String name() {
                return name;
            }

            @Override
            public String volumeName(Spec spec) {
                return volumeName.apply(spec);
            }

            @Override
            public boolean supportsSELinuxContextMount(Spec spec) {
                return selinux.test(spec);
            }
        };
    }

    /** Go's %v of a []string: {@code [a b]}. */
    private static String goList(List<String> l) {
        return "[" + String.join(" ", l) + "]";
    }

    private static String fcVolumeName(Spec s) {
        var fc = s.volume() != null ? s.volume().getFc() : s.persistentVolume().getSpec().getFc();
        if (fc.getTargetWWNs() != null && !fc.getTargetWWNs().isEmpty() && fc.getLun() != null) {
            return goList(fc.getTargetWWNs()) + ":" + fc.getLun();
        }
        if (fc.getWwids() != null && !fc.getWwids().isEmpty()) {
            return goList(fc.getWwids());
        }
        throw new IllegalStateException("fc: no targetWWNs with lun, nor wwids");
    }

    private static String iscsiVolumeName(Spec s) {
        if (s.volume() != null) {
            var i = s.volume().getIscsi();
            return i.getTargetPortal() + ":" + i.getIqn() + ":" + i.getLun();
        }
        var i = s.persistentVolume().getSpec().getIscsi();
        return i.getTargetPortal() + ":" + i.getIqn() + ":" + i.getLun();
    }

    /** csi's GetVolumeName: a PersistentVolume's driver and handle; an inline CSI volume is an error upstream. */
    private static String csiVolumeName(Spec s) {
        if (s.persistentVolume() == null) {
            throw new IllegalStateException("plugin.GetVolumeName failed to extract volume source from spec: "
                    + "unexpected api.CSIVolumeSource found in volume.Spec");
        }
        var csi = s.persistentVolume().getSpec().getCsi();
        return csi.getDriver() + "^" + csi.getVolumeHandle();
    }

    /** csi's SupportsSELinuxContextMount: the CSIDriver's seLinuxMount, false when it does not exist. */
    private boolean csiSupportsSELinuxContextMount(Spec s) {
        if (!seLinuxMountReadWriteOncePod) {
            return false;
        }
        CSIDriver driver = csiDrivers.getByKey(csiDriverName(s));
        return driver != null && driver.getSpec() != null && Boolean.TRUE.equals(driver.getSpec().getSeLinuxMount());
    }
}
