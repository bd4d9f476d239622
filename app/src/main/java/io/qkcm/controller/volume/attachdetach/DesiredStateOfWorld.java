package io.qkcm.controller.volume.attachdetach;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.fabric8.kubernetes.api.model.Pod;

/**
 * Upstream's cache.DesiredStateOfWorld: the nodes the controller manages (those carrying the
 * controller-managed-attach-detach annotation), and per node the volumes that should be attached and the
 * scheduled pods (by UID) that reference them. Thread safe, as upstream's (one lock).
 */
final class DesiredStateOfWorld {

    /** A volume that should be attached to a node (upstream's VolumeToAttach), a snapshot. */
    record VolumeToAttach(String volumeName, VolumeSpec volumeSpec, String nodeName, List<Pod> scheduledPods,
            boolean multiAttachErrorReported) {
    }

    /** A pod in the desired state (upstream's PodToAdd). */
    record PodToAdd(Pod pod, String volumeName, String nodeName) {
    }

    private static final class VolumeObj {
        final VolumeSpec spec;
        boolean multiAttachErrorReported;
        final Map<String, Pod> scheduledPods = new LinkedHashMap<>();

        VolumeObj(VolumeSpec spec) {
            this.spec = spec;
        }
    }

    private final Map<String, Map<String, VolumeObj>> nodesManaged = new HashMap<>();
    private final VolumePlugins plugin;

    DesiredStateOfWorld(VolumePlugins plugin) {
        this.plugin = plugin;
    }

    synchronized void addNode(String nodeName) {
        nodesManaged.putIfAbsent(nodeName, new LinkedHashMap<>());
    }

    /** AddPod: the volume's unique name; an error when the node is not managed or the volume not attachable. */
    synchronized String addPod(String podUID, Pod pod, VolumeSpec spec, String nodeName) {
        Map<String, VolumeObj> node = nodesManaged.get(nodeName);
        if (node == null) {
            throw new IllegalStateException(
                    "no node with the name \"" + nodeName + "\" exists in the list of managed nodes");
        }
        if (!plugin.isAttachable(spec)) {
            throw new IllegalStateException("failed to get AttachablePlugin from volumeSpec for volume \""
                    + spec.name() + "\" err=plugin do not support attachment");
        }
        String volumeName = plugin.uniqueName(spec);
        node.computeIfAbsent(volumeName, v -> new VolumeObj(spec)).scheduledPods.putIfAbsent(podUID, pod);
        return volumeName;
    }

    /** DeleteNode: refused while the node still has volumes to attach. */
    synchronized void deleteNode(String nodeName) {
        Map<String, VolumeObj> node = nodesManaged.get(nodeName);
        if (node == null) {
            return;
        }
        if (!node.isEmpty()) {
            throw new IllegalStateException("failed to delete node \"" + nodeName
                    + "\" from list of nodes managed by attach/detach controller--the node still contains "
                    + node.size() + " volumes in its list of volumes to attach");
        }
        nodesManaged.remove(nodeName);
    }

    synchronized void deletePod(String podUID, String volumeName, String nodeName) {
        Map<String, VolumeObj> node = nodesManaged.get(nodeName);
        if (node == null) {
            return;
        }
        VolumeObj volume = node.get(volumeName);
        if (volume == null || volume.scheduledPods.remove(podUID) == null) {
            return;
        }
        if (volume.scheduledPods.isEmpty()) {
            node.remove(volumeName);
        }
    }

    synchronized boolean nodeExists(String nodeName) {
        return nodesManaged.containsKey(nodeName);
    }

    synchronized boolean volumeExists(String volumeName, String nodeName) {
        Map<String, VolumeObj> node = nodesManaged.get(nodeName);
        return node != null && node.containsKey(volumeName);
    }

    synchronized void setMultiAttachError(String volumeName, String nodeName) {
        Map<String, VolumeObj> node = nodesManaged.get(nodeName);
        if (node != null && node.containsKey(volumeName)) {
            node.get(volumeName).multiAttachErrorReported = true;
        }
    }

    synchronized List<VolumeToAttach> getVolumesToAttach() {
        List<VolumeToAttach> out = new ArrayList<>();
        nodesManaged.forEach((nodeName, volumes) -> volumes.forEach((volumeName, v) -> out.add(new VolumeToAttach(
                volumeName, v.spec, nodeName, List.copyOf(v.scheduledPods.values()), v.multiAttachErrorReported))));
        return out;
    }

    /** GetPodToAdd: every scheduled pod by UID (one of its volumes). */
    synchronized Map<String, PodToAdd> getPodToAdd() {
        Map<String, PodToAdd> pods = new HashMap<>();
        nodesManaged.forEach((nodeName, volumes) -> volumes.forEach((volumeName, v) -> v.scheduledPods
                .forEach((uid, pod) -> pods.put(uid, new PodToAdd(pod, volumeName, nodeName)))));
        return pods;
    }

    /** GetVolumePodsOnNodes: the pods on those nodes that use the volume. */
    synchronized List<Pod> getVolumePodsOnNodes(Set<String> nodes, String volumeName) {
        List<Pod> pods = new ArrayList<>();
        for (String nodeName : nodes) {
            Map<String, VolumeObj> node = nodesManaged.get(nodeName);
            VolumeObj volume = node == null ? null : node.get(volumeName);
            if (volume != null) {
                pods.addAll(volume.scheduledPods.values());
            }
        }
        return pods;
    }
}
