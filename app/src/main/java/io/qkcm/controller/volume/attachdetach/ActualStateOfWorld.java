package io.qkcm.controller.volume.attachdetach;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import io.fabric8.kubernetes.api.model.AttachedVolume;

/**
 * Upstream's cache.ActualStateOfWorld: which volumes are attached (confirmed) or maybe attached
 * (uncertain) to which nodes, when a detach was first wanted, the volumes each node reports in use, and
 * what each node's status.volumesAttached should say. Thread safe (one lock); time from the injected clock.
 */
final class ActualStateOfWorld {

    enum AttachState {
        ATTACHED, UNCERTAIN, DETACHED
    }

    /** A (volume, node) attachment as the reconciler sees it (upstream's AttachedVolume), a snapshot. */
    record Attached(String volumeName, VolumeSpec volumeSpec, String nodeName, String devicePath,
            boolean mountedByNode, Instant detachRequestedTime) {
    }

    private static final class NodeAttachedTo {
        boolean attachedConfirmed;
        Instant detachRequestedTime; // null: not requested
    }

    private static final class VolumeObj {
        VolumeSpec spec;
        String devicePath;
        final Map<String, NodeAttachedTo> nodesAttachedTo = new LinkedHashMap<>();
    }

    private static final class NodeToUpdate {
        boolean statusUpdateNeeded = true;
        final Set<String> volumesToReportAsAttached = new TreeSet<>();
    }

    private final Map<String, VolumeObj> attachedVolumes = new HashMap<>();
    private final Map<String, NodeToUpdate> nodesToUpdateStatusFor = new HashMap<>();
    private final Map<String, Set<String>> inUseVolumes = new HashMap<>();
    private final Clock clock;

    /** GetUniqueVolumeNameFromSpec: the name of a volume marked by its spec only. */
    private final java.util.function.Function<VolumeSpec, String> uniqueNameOf;

    ActualStateOfWorld(Clock clock) {
        this(clock, VolumePlugins::uniqueVolumeName);
    }

    ActualStateOfWorld(Clock clock, java.util.function.Function<VolumeSpec, String> uniqueName) {
        this.clock = clock;
        this.uniqueNameOf = uniqueName;
    }

    /** MarkVolumeAsAttached: {@code volumeName} may be null when the spec names it. */
    String markVolumeAsAttached(String volumeName, VolumeSpec spec, String nodeName, String devicePath) {
        return addVolumeNode(volumeName, spec, nodeName, devicePath, true);
    }

    /** MarkVolumeAsUncertain: maybe attached (an attach failed or is unknown); not reported in node status. */
    String markVolumeAsUncertain(String volumeName, VolumeSpec spec, String nodeName) {
        return addVolumeNode(volumeName, spec, nodeName, "", false);
    }

    /** MarkVolumeAsDetached (DeleteVolumeNode). */
    synchronized void markVolumeAsDetached(String volumeName, String nodeName) {
        VolumeObj volume = attachedVolumes.get(volumeName);
        if (volume == null) {
            return;
        }
        volume.nodesAttachedTo.remove(nodeName);
        if (volume.nodesAttachedTo.isEmpty()) {
            attachedVolumes.remove(volumeName);
        }
        removeVolumeFromReportAsAttached(volumeName, nodeName);
    }

    private synchronized String addVolumeNode(String uniqueName, VolumeSpec spec, String nodeName, String devicePath,
            boolean isAttached) {
        String volumeName = uniqueName;
        if (volumeName == null || volumeName.isEmpty()) {
            if (spec == null) {
                throw new IllegalArgumentException("volumeSpec cannot be nil if volumeName is empty");
            }
            volumeName = uniqueNameOf.apply(spec);
        }
        VolumeObj volume = attachedVolumes.get(volumeName);
        if (volume == null) {
            volume = new VolumeObj();
            attachedVolumes.put(volumeName, volume);
        }
        volume.devicePath = devicePath;
        volume.spec = spec;
        NodeAttachedTo node = volume.nodesAttachedTo.get(nodeName);
        if (node == null) {
            node = new NodeAttachedTo();
            volume.nodesAttachedTo.put(nodeName, node);
            // a newly attached volume counts as mounted until the node's next volumesInUse
            inUseVolumes.computeIfAbsent(nodeName, n -> new HashSet<>()).add(volumeName);
        }
        node.attachedConfirmed = isAttached;
        if (isAttached) {
            addVolumeToReportAsAttachedLocked(volumeName, nodeName);
        }
        return volumeName;
    }

    /** SetVolumesMountedByNode: the node's status.volumesInUse. */
    synchronized void setVolumesMountedByNode(List<String> volumeNames, String nodeName) {
        inUseVolumes.put(nodeName, new HashSet<>(volumeNames == null ? List.of() : volumeNames));
    }

    synchronized void resetDetachRequestTime(String volumeName, String nodeName) {
        NodeAttachedTo node = node(volumeName, nodeName);
        if (node != null) {
            node.detachRequestedTime = null;
        }
    }

    /** SetDetachRequestTime: the time since the first detach request (set now if none). */
    synchronized Duration setDetachRequestTime(String volumeName, String nodeName) {
        NodeAttachedTo node = node(volumeName, nodeName);
        if (node == null) {
            throw new IllegalStateException("failed to set detach request time with error: volume " + volumeName
                    + " is no longer attached to the node \"" + nodeName + "\"");
        }
        Instant now = clock.instant();
        if (node.detachRequestedTime == null) {
            node.detachRequestedTime = now;
        }
        return Duration.between(node.detachRequestedTime, now);
    }

    private NodeAttachedTo node(String volumeName, String nodeName) {
        VolumeObj volume = attachedVolumes.get(volumeName);
        return volume == null ? null : volume.nodesAttachedTo.get(nodeName);
    }

    /** RemoveVolumeFromReportAsAttached: false when it was not reported. */
    synchronized boolean removeVolumeFromReportAsAttached(String volumeName, String nodeName) {
        NodeToUpdate node = nodesToUpdateStatusFor.get(nodeName);
        if (node != null && node.volumesToReportAsAttached.remove(volumeName)) {
            node.statusUpdateNeeded = true;
            return true;
        }
        return false;
    }

    synchronized void addVolumeToReportAsAttached(String volumeName, String nodeName) {
        addVolumeToReportAsAttachedLocked(volumeName, nodeName);
    }

    private void addVolumeToReportAsAttachedLocked(String volumeName, String nodeName) {
        if (node(volumeName, nodeName) == null) {
            return;
        }
        NodeToUpdate node = nodesToUpdateStatusFor.computeIfAbsent(nodeName, n -> new NodeToUpdate());
        if (node.volumesToReportAsAttached.add(volumeName)) {
            node.statusUpdateNeeded = true;
        }
    }

    /** SetNodeStatusUpdateNeeded (only for a node already tracked, as upstream). */
    synchronized void setNodeStatusUpdateNeeded(String nodeName) {
        NodeToUpdate node = nodesToUpdateStatusFor.get(nodeName);
        if (node != null) {
            node.statusUpdateNeeded = true;
        }
    }

    synchronized AttachState getAttachState(String volumeName, String nodeName) {
        NodeAttachedTo node = node(volumeName, nodeName);
        if (node == null) {
            return AttachState.DETACHED;
        }
        return node.attachedConfirmed ? AttachState.ATTACHED : AttachState.UNCERTAIN;
    }

    synchronized List<Attached> getAttachedVolumes() {
        List<Attached> out = new ArrayList<>();
        attachedVolumes.forEach((volumeName, v) -> v.nodesAttachedTo.forEach((nodeName, n) -> out.add(attached(volumeName, v, nodeName, n))));
        return out;
    }

    synchronized List<Attached> getAttachedVolumesForNode(String nodeName) {
        List<Attached> out = new ArrayList<>();
        attachedVolumes.forEach((volumeName, v) -> {
            NodeAttachedTo n = v.nodesAttachedTo.get(nodeName);
            if (n != null) {
                out.add(attached(volumeName, v, nodeName, n));
            }
        });
        return out;
    }

    /** GetAttachedVolumesPerNode: confirmed attachments only. */
    synchronized Map<String, List<Attached>> getAttachedVolumesPerNode() {
        Map<String, List<Attached>> out = new HashMap<>();
        attachedVolumes.forEach((volumeName, v) -> v.nodesAttachedTo.forEach((nodeName, n) -> {
            if (n.attachedConfirmed) {
                out.computeIfAbsent(nodeName, k -> new ArrayList<>()).add(attached(volumeName, v, nodeName, n));
            }
        }));
        return out;
    }

    /** GetNodesForAttachedVolume: nodes with a confirmed attachment. */
    synchronized Set<String> getNodesForAttachedVolume(String volumeName) {
        Set<String> nodes = new TreeSet<>();
        VolumeObj volume = attachedVolumes.get(volumeName);
        if (volume != null) {
            volume.nodesAttachedTo.forEach((nodeName, n) -> {
                if (n.attachedConfirmed) {
                    nodes.add(nodeName);
                }
            });
        }
        return nodes;
    }

    /** GetVolumesToReportAttached: every node whose status needs writing, and clears the mark. */
    synchronized Map<String, List<AttachedVolume>> getVolumesToReportAttached() {
        Map<String, List<AttachedVolume>> out = new HashMap<>();
        nodesToUpdateStatusFor.forEach((nodeName, node) -> {
            if (node.statusUpdateNeeded) {
                out.put(nodeName, toReport(node));
            }
            node.statusUpdateNeeded = false;
        });
        return out;
    }

    /** GetVolumesToReportAttachedForNode: null when the node needs no write. */
    synchronized List<AttachedVolume> getVolumesToReportAttachedForNode(String nodeName) {
        NodeToUpdate node = nodesToUpdateStatusFor.get(nodeName);
        if (node == null || !node.statusUpdateNeeded) {
            return null;
        }
        node.statusUpdateNeeded = false;
        return toReport(node);
    }

    private List<AttachedVolume> toReport(NodeToUpdate node) {
        List<AttachedVolume> out = new ArrayList<>();
        for (String volumeName : node.volumesToReportAsAttached) {
            VolumeObj volume = attachedVolumes.get(volumeName);
            out.add(new AttachedVolume(volume == null ? "" : volume.devicePath, volumeName));
        }
        out.sort(Comparator.comparing(AttachedVolume::getName));
        return out;
    }

    private Attached attached(String volumeName, VolumeObj v, String nodeName, NodeAttachedTo n) {
        Set<String> inUse = inUseVolumes.get(nodeName);
        return new Attached(volumeName, v.spec, nodeName, v.devicePath, inUse != null && inUse.contains(volumeName),
                n.detachRequestedTime);
    }
}
