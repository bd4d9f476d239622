package io.qkcm.controller.volume.attachdetach;

import java.util.List;
import java.util.function.BiFunction;
import java.util.function.Function;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodStatus;
import io.fabric8.kubernetes.api.model.Volume;
import io.qkcm.controller.volume.common.PodPVCIndex;

/**
 * Upstream's attachdetach/util: a pod volume's spec (the bound PV of its claim, generic ephemeral claims
 * included), DetermineVolumeAction and ProcessPodVolumes, which adds a scheduled pod's attachable volumes
 * to the desired state of the world or removes them.
 */
final class PodVolumes {

    private static final Logger LOG = Logger.getLogger(PodVolumes.class);

    private final BiFunction<String, String, PersistentVolumeClaim> pvcs;
    private final Function<String, PersistentVolume> pvs;
    private final VolumePlugins plugin;
    private final Function<String, io.fabric8.kubernetes.api.model.storage.CSINode> csiNodes;

    PodVolumes(BiFunction<String, String, PersistentVolumeClaim> pvcs, Function<String, PersistentVolume> pvs,
            VolumePlugins plugin, Function<String, io.fabric8.kubernetes.api.model.storage.CSINode> csiNodes) {
        this.csiNodes = csiNodes;
        this.pvcs = pvcs;
        this.pvs = pvs;
        this.plugin = plugin;
    }

    /**
     * CreateVolumeSpecWithNodeMigration: the in-tree spec, translated to its CSI driver's when its plugin is
     * migrated ({@link CsiMigration}); throws with upstream's message.
     */
    VolumeSpec createVolumeSpec(Volume podVolume, Pod pod) {
        String[] claimName = new String[1];
        VolumeSpec spec = createInTreeVolumeSpec(podVolume, pod, claimName);
        try {
            return CsiMigration.translateIfNeeded(spec, pod.getMetadata().getNamespace(), pod.getSpec().getNodeName(),
                    csiNodes);
        } catch (IllegalStateException e) {
            throw new IllegalStateException("error performing CSI migration checks and translation for PVC \""
                    + pod.getMetadata().getNamespace() + "\"/\"" + claimName[0] + "\": " + e.getMessage());
        }
    }

    /** createInTreeVolumeSpec; {@code claimNameOut[0]}: the claim's name ("" for a direct volume). */
    private VolumeSpec createInTreeVolumeSpec(Volume podVolume, Pod pod, String[] claimNameOut) {
        claimNameOut[0] = "";
        String claimName = "";
        boolean readOnly = false;
        if (podVolume.getPersistentVolumeClaim() != null) {
            claimName = podVolume.getPersistentVolumeClaim().getClaimName();
            readOnly = Boolean.TRUE.equals(podVolume.getPersistentVolumeClaim().getReadOnly());
        }
        boolean isEphemeral = podVolume.getEphemeral() != null;
        if (isEphemeral) {
            claimName = PodPVCIndex.ephemeralVolumeClaimName(pod, podVolume);
        }
        if (claimName == null || claimName.isEmpty()) {
            return VolumeSpec.fromVolume(podVolume);
        }
        claimNameOut[0] = claimName;
        String namespace = pod.getMetadata().getNamespace();
        PersistentVolumeClaim pvc = pvcs.apply(namespace, claimName);
        String prefix = "error processing PVC \"" + namespace + "\"/\"" + claimName + "\": ";
        if (pvc == null) {
            throw new IllegalStateException(prefix + "failed to find PVC " + namespace + "/" + claimName
                    + " in PVCInformer cache");
        }
        String volumeName = pvc.getSpec() == null ? null : pvc.getSpec().getVolumeName();
        String phase = pvc.getStatus() == null ? null : pvc.getStatus().getPhase();
        if (!"Bound".equals(phase) || volumeName == null || volumeName.isEmpty()) {
            throw new IllegalStateException(prefix + "PVC " + namespace + "/" + claimName + " has non-bound phase (\""
                    + (phase == null ? "" : phase) + "\") or empty pvc.Spec.VolumeName (\"" + (volumeName == null ? "" : volumeName) + "\")");
        }
        if (isEphemeral && !isOwnedBy(pvc, pod)) {
            throw new IllegalStateException("PVC " + namespace + "/" + claimName + " was not created for pod "
                    + namespace + "/" + pod.getMetadata().getName() + " (pod is not owner)");
        }
        PersistentVolume pv = pvs.apply(volumeName);
        if (pv == null) {
            throw new IllegalStateException(prefix + "failed to find PV \"" + volumeName + "\" in PVInformer cache");
        }
        if (pv.getSpec() == null || pv.getSpec().getClaimRef() == null) {
            throw new IllegalStateException(prefix + "found PV object \"" + volumeName
                    + "\" but it has a nil pv.Spec.ClaimRef indicating it is not yet bound to the claim");
        }
        String uid = pvc.getMetadata().getUid();
        if (!java.util.Objects.equals(pv.getSpec().getClaimRef().getUid(), uid)) {
            throw new IllegalStateException(prefix + "found PV object \"" + volumeName + "\" but its pv.Spec.ClaimRef.UID (\""
                    + pv.getSpec().getClaimRef().getUid() + "\") does not point to claim.UID (\"" + uid + "\")");
        }
        return VolumeSpec.fromPersistentVolume(pv, readOnly); // read only: no copy needed
    }

    /** component-helpers' ephemeral.VolumeIsForPod: the claim's controller is the pod. */
    private static boolean isOwnedBy(PersistentVolumeClaim pvc, Pod pod) {
        List<OwnerReference> refs = pvc.getMetadata().getOwnerReferences();
        if (refs == null) {
            return false;
        }
        for (OwnerReference ref : refs) {
            if (Boolean.TRUE.equals(ref.getController()) && pod.getMetadata().getUid().equals(ref.getUid())) {
                return true;
            }
        }
        return false;
    }

    /**
     * The collector's getVolumeInUseCount: per node, per fully qualified plugin name, the volumes of the pods
     * scheduled there whose spec some plugin of the controller supports (attachable or not: an inline CSI
     * volume counts).
     */
    java.util.Map<String, java.util.Map<String, Long>> volumesInUse(java.util.Collection<Pod> pods) {
        java.util.Map<String, java.util.Map<String, Long>> perNode = new java.util.TreeMap<>();
        for (Pod pod : pods) {
            if (pod.getSpec() == null || pod.getSpec().getVolumes() == null || pod.getSpec().getVolumes().isEmpty()) {
                continue;
            }
            String nodeName = pod.getSpec().getNodeName();
            if (nodeName == null || nodeName.isEmpty()) {
                continue;
            }
            for (Volume podVolume : pod.getSpec().getVolumes()) {
                VolumeSpec spec;
                try {
                    spec = createVolumeSpec(podVolume, pod);
                } catch (IllegalStateException e) {
                    continue;
                }
                String plugin = this.plugin.pluginNameBySpec(spec);
                if (plugin != null) {
                    perNode.computeIfAbsent(nodeName, n -> new java.util.TreeMap<>())
                            .merge(VolumePlugins.fullQualifiedPluginName(plugin, spec), 1L, Long::sum);
                }
            }
        }
        return perNode;
    }

    /** DetermineVolumeAction: a terminated pod's volumes are removed. */
    static boolean determineVolumeAction(Pod pod, boolean defaultAction) {
        if (pod == null || pod.getSpec().getVolumes() == null || pod.getSpec().getVolumes().isEmpty()) {
            return defaultAction;
        }
        return isPodTerminated(pod) ? false : defaultAction;
    }

    /** ProcessPodVolumes. */
    void processPodVolumes(Pod pod, boolean addVolumes, DesiredStateOfWorld dsw) {
        if (pod == null || pod.getSpec().getVolumes() == null || pod.getSpec().getVolumes().isEmpty()) {
            return;
        }
        String nodeName = pod.getSpec().getNodeName();
        if (nodeName == null || nodeName.isEmpty()) {
            return;
        }
        if (!dsw.nodeExists(nodeName)) {
            LOG.debugf("Skipping processing of pod %s/%s, it is scheduled to node %s which is not managed by the controller",
                    pod.getMetadata().getNamespace(), pod.getMetadata().getName(), nodeName);
            return;
        }
        String podUID = pod.getMetadata().getUid();
        for (Volume podVolume : pod.getSpec().getVolumes()) {
            VolumeSpec spec;
            try {
                spec = createVolumeSpec(podVolume, pod);
            } catch (IllegalStateException e) {
                LOG.tracef("Error processing volume %s for pod %s/%s: %s", podVolume.getName(),
                        pod.getMetadata().getNamespace(), pod.getMetadata().getName(), e.getMessage());
                continue;
            }
            if (!plugin.isAttachable(spec)) {
                continue;
            }
            if (addVolumes) {
                try {
                    dsw.addPod(podUID, pod, spec, nodeName);
                } catch (IllegalStateException e) {
                    LOG.tracef("Failed to add volume %s for pod %s/%s to desiredStateOfWorld: %s", podVolume.getName(),
                            pod.getMetadata().getNamespace(), pod.getMetadata().getName(), e.getMessage());
                }
            } else {
                String volumeName;
                try {
                    volumeName = plugin.uniqueName(spec);
                } catch (IllegalStateException e) {
                    LOG.debugf("Failed to find unique name for volume %s of pod %s/%s: %s", podVolume.getName(),
                            pod.getMetadata().getNamespace(), pod.getMetadata().getName(), e.getMessage());
                    continue;
                }
                dsw.deletePod(podUID, volumeName, nodeName);
            }
        }
    }

    /** pkg/volume/util's IsPodTerminated. */
    static boolean isPodTerminated(Pod pod) {
        PodStatus status = pod.getStatus();
        String phase = status == null ? null : status.getPhase();
        if ("Failed".equals(phase) || "Succeeded".equals(phase)) {
            return true;
        }
        return pod.getMetadata().getDeletionTimestamp() != null && (status == null
                || notRunning(status.getInitContainerStatuses()) && notRunning(status.getContainerStatuses())
                        && notRunning(status.getEphemeralContainerStatuses()));
    }

    private static boolean notRunning(List<ContainerStatus> statuses) {
        if (statuses == null) {
            return true;
        }
        for (ContainerStatus s : statuses) {
            if (s.getState() == null || s.getState().getTerminated() == null && s.getState().getWaiting() == null) {
                return false;
            }
        }
        return true;
    }
}
