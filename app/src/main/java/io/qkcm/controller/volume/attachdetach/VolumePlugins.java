package io.qkcm.controller.volume.attachdetach;

import java.util.List;
import java.util.stream.Collectors;

import io.fabric8.kubernetes.api.model.FCVolumeSource;
import io.fabric8.kubernetes.api.model.ISCSIPersistentVolumeSource;
import io.fabric8.kubernetes.api.model.ISCSIVolumeSource;
import io.qkcm.controller.volume.common.FlexVolumePlugin;
import io.qkcm.controller.volume.common.FlexVolumePlugins;

/**
 * The controller's VolumePluginMgr: the plugins of cmd/kube-controller-manager's
 * {@code ProbeAttachableVolumePlugins} in v1.34 — CSI, fc and iscsi — and the FlexVolume drivers its dynamic
 * prober finds under {@code --flex-volume-plugin-dir} ({@link FlexVolumePlugins}, consulted before every
 * lookup as refreshProbedPlugins). The in-tree two have an attach and a detach that do nothing (the kubelet
 * logs in to the target); the controller still tracks their volumes and reports them in
 * node.status.volumesAttached under their unique names. The static methods know only the fixed plugins; the
 * instance ones add the probed flex drivers.
 */
final class VolumePlugins {

    static final String FC_PLUGIN_NAME = "kubernetes.io/fc";
    static final String ISCSI_PLUGIN_NAME = "kubernetes.io/iscsi";

    private final CsiPlugin csi;
    /** The probed FlexVolume drivers (none when no prober was given or its Init failed). */
    private final FlexVolumePlugins flex;

    VolumePlugins(CsiPlugin csi) {
        this(csi, FlexVolumePlugins.none());
    }

    VolumePlugins(CsiPlugin csi, FlexVolumePlugins flex) {
        this.csi = csi;
        this.flex = flex;
    }

    FlexVolumePlugins flexPlugins() {
        return flex;
    }

    /** The probed flex driver supporting the spec, or null. */
    FlexVolumePlugin flexPluginBySpec(VolumeSpec spec) {
        return flex.bySpec(spec);
    }

    /** The probed flex driver of that name, or null. */
    FlexVolumePlugin flexPluginByName(String name) {
        return flex.byName(name);
    }

    /** FindPluginBySpec with the probed plugins: the plugin's name, or null. */
    String pluginNameBySpec(VolumeSpec spec) {
        FlexVolumePlugin flex = flexPluginBySpec(spec);
        return flex != null ? flex.name() : findPluginBySpec(spec);
    }

    /** GetUniqueVolumeNameFromSpec with the probed plugins. */
    String uniqueName(VolumeSpec spec) {
        FlexVolumePlugin flex = flexPluginBySpec(spec);
        if (flex == null) {
            return uniqueVolumeName(spec);
        }
        String volumeName;
        try {
            volumeName = flex.volumeName(spec);
        } catch (FlexVolumePlugin.DriverCallException e) {
            throw new IllegalStateException("failed to GetVolumeName from volumePlugin for volumeSpec \"" + spec.name()
                    + "\" err=" + e.getMessage(), e);
        }
        if (volumeName.isEmpty()) {
            throw new IllegalStateException("failed to GetVolumeName from volumePlugin for volumeSpec \"" + spec.name()
                    + "\" err=<nil>");
        }
        return flex.name() + "/" + volumeName;
    }

    /** FindAttachablePluginByName with the probed plugins. */
    boolean isAttachablePlugin(String pluginName) {
        if (isAttachablePluginName(pluginName)) {
            return true;
        }
        FlexVolumePlugin flex = flexPluginByName(pluginName);
        return flex != null && flex.attachable();
    }

    CsiPlugin csi() {
        return csi;
    }

    /** FindPluginBySpec: the name of the one plugin supporting the spec, or null (no spec, or no plugin). */
    static String findPluginBySpec(VolumeSpec spec) {
        if (spec == null) {
            return null;
        }
        if (CsiPlugin.canSupport(spec)) {
            return CsiPlugin.PLUGIN_NAME;
        }
        if (fc(spec) != null) {
            return FC_PLUGIN_NAME;
        }
        if (spec.volume() != null && spec.volume().getIscsi() != null
                || spec.persistentVolume() != null && spec.persistentVolume().getSpec() != null
                        && spec.persistentVolume().getSpec().getIscsi() != null) {
            return ISCSI_PLUGIN_NAME;
        }
        return null;
    }

    /**
     * FindAttachablePluginBySpec != nil: fc and iscsi always attach, CSI as {@link CsiPlugin#isAttachable}, a
     * flex driver when its init said attach.
     */
    boolean isAttachable(VolumeSpec spec) {
        FlexVolumePlugin flex = flexPluginBySpec(spec);
        if (flex != null) {
            return flex.attachable();
        }
        String plugin = findPluginBySpec(spec);
        if (plugin == null) {
            return false;
        }
        return !CsiPlugin.PLUGIN_NAME.equals(plugin) || csi.isAttachable(spec);
    }

    /** Whether a plugin name is one of the attachable plugins (FindAttachablePluginByName). */
    static boolean isAttachablePluginName(String pluginName) {
        return CsiPlugin.PLUGIN_NAME.equals(pluginName) || FC_PLUGIN_NAME.equals(pluginName)
                || ISCSI_PLUGIN_NAME.equals(pluginName);
    }

    /**
     * GetUniqueVolumeNameFromSpec: {@code <plugin name>/<GetVolumeName>}; throws when no plugin supports the
     * spec or its volume name is empty (an fc source with neither target WWNs and a LUN nor WWIDs).
     */
    static String uniqueVolumeName(VolumeSpec spec) {
        String plugin = findPluginBySpec(spec);
        if (plugin == null) {
            throw new IllegalStateException("no volume plugin matched for volume \"" + (spec == null ? "nil" : spec.name()) + "\"");
        }
        if (CsiPlugin.PLUGIN_NAME.equals(plugin)) {
            if (spec.csi() == null) {
                // an inline CSI volume: csi's GetVolumeName reads only a PV's source
                throw new IllegalStateException("failed to GetVolumeName from volumePlugin for volumeSpec \""
                        + spec.name() + "\"");
            }
            return CsiPlugin.uniqueVolumeName(spec);
        }
        String volumeName = FC_PLUGIN_NAME.equals(plugin) ? fcVolumeName(fc(spec)) : iscsiVolumeName(spec);
        if (volumeName.isEmpty()) {
            throw new IllegalStateException("failed to GetVolumeName from volumePlugin for volumeSpec \"" + spec.name()
                    + "\" err=<nil>");
        }
        return plugin + "/" + volumeName;
    }

    /** volumeutil.GetFullQualifiedPluginNameForVolume: a CSI plugin's name is suffixed with its driver. */
    static String fullQualifiedPluginName(String pluginName, VolumeSpec spec) {
        if (spec != null) {
            if (spec.volume() != null && spec.volume().getCsi() != null) {
                return pluginName + ":" + spec.volume().getCsi().getDriver();
            }
            if (spec.csi() != null) {
                return pluginName + ":" + spec.csi().getDriver();
            }
        }
        return pluginName;
    }

    private static FCVolumeSource fc(VolumeSpec spec) {
        if (spec.volume() != null && spec.volume().getFc() != null) {
            return spec.volume().getFc();
        }
        if (spec.persistentVolume() != null && spec.persistentVolume().getSpec() != null) {
            return spec.persistentVolume().getSpec().getFc();
        }
        return null;
    }

    /** fc's GetVolumeName: Go's %v of the WWN list and the LUN, else of the WWIDs, else empty. */
    static String fcVolumeName(FCVolumeSource fc) {
        List<String> wwns = fc.getTargetWWNs();
        if (wwns != null && !wwns.isEmpty() && fc.getLun() != null) {
            return goList(wwns) + ":" + fc.getLun();
        }
        if (fc.getWwids() != null && !fc.getWwids().isEmpty()) {
            return goList(fc.getWwids());
        }
        return "";
    }

    /** iscsi's GetVolumeName: {@code <targetPortal>:<iqn>:<lun>}. */
    private static String iscsiVolumeName(VolumeSpec spec) {
        if (spec.volume() != null && spec.volume().getIscsi() != null) {
            ISCSIVolumeSource s = spec.volume().getIscsi();
            return iscsiVolumeName(s.getTargetPortal(), s.getIqn(), s.getLun());
        }
        ISCSIPersistentVolumeSource s = spec.persistentVolume().getSpec().getIscsi();
        return iscsiVolumeName(s.getTargetPortal(), s.getIqn(), s.getLun());
    }

    static String iscsiVolumeName(String targetPortal, String iqn, Integer lun) {
        return nullToEmpty(targetPortal) + ":" + nullToEmpty(iqn) + ":" + (lun == null ? 0 : lun);
    }

    /** fmt's %v of a []string: {@code [a b]}. */
    private static String goList(List<String> values) {
        return values.stream().map(VolumePlugins::nullToEmpty).collect(Collectors.joining(" ", "[", "]"));
    }

    private static String nullToEmpty(String s) {
        return s == null ? "" : s;
    }
}
