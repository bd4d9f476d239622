package io.qkcm.controller.volume.attachdetach;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.function.Function;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeCondition;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Taint;
import io.qkcm.runtime.events.EventRecorder;

/**
 * Upstream's reconciler (pkg/controller/volume/attachdetach/reconciler): every loop period, detaches what is
 * attached but no longer desired — once the node no longer reports it in volumesInUse, or, on a node that is
 * not Ready, after maxWaitForUnmountDuration (force detach, unless disabled), or at once on a node with the
 * out-of-service taint — attaches what is desired and not attached (a Multi-Attach error event for a
 * single-attach volume attached elsewhere), writes node statuses, and every syncDuration verifies the
 * confirmed attachments against the VolumeAttachments.
 */
final class Reconciler {

    static final String TAINT_NODE_OUT_OF_SERVICE = "node.kubernetes.io/out-of-service";
    private static final Logger LOG = Logger.getLogger(Reconciler.class);

    private final Duration maxWaitForUnmountDuration;
    private final Duration syncDuration;
    private final boolean disableReconciliationSync;
    private final boolean disableForceDetachOnTimeout;
    private final DesiredStateOfWorld dsw;
    private final ActualStateOfWorld asw;
    private final OperationExecutor attacherDetacher;
    private final NodeStatusUpdater nodeStatusUpdater;
    private final Function<String, Node> nodes;
    private final EventRecorder recorder;
    private final AttachDetachMetrics metrics;
    private final Clock clock;
    private Instant timeOfLastSync;

    Reconciler(Duration maxWaitForUnmountDuration, Duration syncDuration, boolean disableReconciliationSync,
            boolean disableForceDetachOnTimeout, DesiredStateOfWorld dsw, ActualStateOfWorld asw,
            OperationExecutor attacherDetacher, NodeStatusUpdater nodeStatusUpdater, Function<String, Node> nodes,
            EventRecorder recorder, AttachDetachMetrics metrics, Clock clock) {
        this.maxWaitForUnmountDuration = maxWaitForUnmountDuration;
        this.syncDuration = syncDuration;
        this.disableReconciliationSync = disableReconciliationSync;
        this.disableForceDetachOnTimeout = disableForceDetachOnTimeout;
        this.dsw = dsw;
        this.asw = asw;
        this.attacherDetacher = attacherDetacher;
        this.nodeStatusUpdater = nodeStatusUpdater;
        this.nodes = nodes;
        this.recorder = recorder;
        this.metrics = metrics;
        this.clock = clock;
        this.timeOfLastSync = clock.instant();
    }

    /** One pass of the loop (reconciliationLoopFunc). */
    void loop() {
        reconcile();
        if (disableReconciliationSync || syncDuration.compareTo(Duration.ofSeconds(1)) < 0) {
            return;
        }
        if (Duration.between(timeOfLastSync, clock.instant()).compareTo(syncDuration) > 0) {
            try {
                attacherDetacher.verifyVolumesAreAttached(asw.getAttachedVolumesPerNode(), asw);
            } finally {
                timeOfLastSync = clock.instant();
            }
        }
    }

    void reconcile() {
        for (ActualStateOfWorld.Attached attached : asw.getAttachedVolumes()) {
            if (dsw.volumeExists(attached.volumeName(), attached.nodeName())) {
                continue;
            }
            String opNode = CsiPlugin.isMultiAttachAllowed(attached.volumeSpec()) ? attached.nodeName() : "";
            if (!attacherDetacher.isOperationSafeToRetry(attached.volumeName(), opNode, OperationExecutor.DETACH)) {
                continue;
            }
            if (asw.getAttachState(attached.volumeName(), attached.nodeName()) == ActualStateOfWorld.AttachState.DETACHED) {
                continue;
            }
            Duration elapsed;
            try {
                elapsed = asw.setDetachRequestTime(attached.volumeName(), attached.nodeName());
            } catch (IllegalStateException e) {
                LOG.errorf("Cannot trigger detach because it fails to set detach request time with error: %s", e.getMessage());
                continue;
            }
            boolean maxWaitExpired = elapsed.compareTo(maxWaitForUnmountDuration) > 0;
            Node node = nodes.apply(attached.nodeName());
            boolean isHealthy = node != null && isNodeReady(node);
            boolean forceDetachTimeoutExpired = maxWaitExpired && !disableForceDetachOnTimeout;
            boolean forceDetach = !isHealthy && forceDetachTimeoutExpired;
            boolean hasOutOfServiceTaint = node != null && hasTaint(node, TAINT_NODE_OUT_OF_SERVICE);

            if (attached.mountedByNode() && !forceDetach && !hasOutOfServiceTaint) {
                LOG.tracef("Cannot detach volume %s because it is still mounted on node %s", attached.volumeName(), attached.nodeName());
                continue;
            }
            asw.removeVolumeFromReportAsAttached(attached.volumeName(), attached.nodeName());
            if (!nodeStatusUpdater.updateNodeStatusForNode(attached.nodeName())) {
                LOG.errorf("UpdateNodeStatusForNode failed while attempting to report volume %s as attached to node %s",
                        attached.volumeName(), attached.nodeName());
                asw.addVolumeToReportAsAttached(attached.volumeName(), attached.nodeName());
                continue;
            }
            boolean verifySafeToDetach = !(forceDetachTimeoutExpired || hasOutOfServiceTaint);
            if (attacherDetacher.detachVolume(attached, verifySafeToDetach, asw)) {
                if (verifySafeToDetach) {
                    LOG.infof("attacherDetacher.DetachVolume started: volume %s node %s", attached.volumeName(), attached.nodeName());
                } else if (forceDetachTimeoutExpired) {
                    metrics.recordForcedDetach(AttachDetachMetrics.FORCE_DETACH_REASON_TIMEOUT);
                    LOG.infof("attacherDetacher.DetachVolume started: this volume is not safe to detach, but maxWaitForUnmountDuration %s expired, force detaching: volume %s node %s",
                            maxWaitForUnmountDuration, attached.volumeName(), attached.nodeName());
                } else {
                    metrics.recordForcedDetach(AttachDetachMetrics.FORCE_DETACH_REASON_OUT_OF_SERVICE);
                    LOG.infof("attacherDetacher.DetachVolume started: node has out-of-service taint, force detaching: volume %s node %s",
                            attached.volumeName(), attached.nodeName());
                }
            } else {
                asw.addVolumeToReportAsAttached(attached.volumeName(), attached.nodeName());
            }
        }
        attachDesiredVolumes();
        nodeStatusUpdater.updateNodeStatuses();
    }

    private void attachDesiredVolumes() {
        for (DesiredStateOfWorld.VolumeToAttach volume : dsw.getVolumesToAttach()) {
            boolean multiAttach = CsiPlugin.isMultiAttachAllowed(volume.volumeSpec());
            if (attacherDetacher.isOperationPending(volume.volumeName(), multiAttach ? volume.nodeName() : "")) {
                continue;
            }
            if (asw.getAttachState(volume.volumeName(), volume.nodeName()) == ActualStateOfWorld.AttachState.ATTACHED) {
                asw.resetDetachRequestTime(volume.volumeName(), volume.nodeName());
                continue;
            }
            if (!multiAttach) {
                Set<String> attachedTo = asw.getNodesForAttachedVolume(volume.volumeName());
                if (!attachedTo.isEmpty()) {
                    if (!volume.multiAttachErrorReported()) {
                        reportMultiAttachError(volume, attachedTo);
                        dsw.setMultiAttachError(volume.volumeName(), volume.nodeName());
                    }
                    continue;
                }
            }
            if (attacherDetacher.attachVolume(volume, asw)) {
                LOG.infof("attacherDetacher.AttachVolume started: volumeName %s nodeName %s", volume.volumeName(), volume.nodeName());
            }
        }
    }

    /** reportMultiAttachError: a FailedAttachVolume event on each scheduled pod. */
    void reportMultiAttachError(DesiredStateOfWorld.VolumeToAttach volume, Set<String> nodes) {
        Set<String> otherNodes = new java.util.TreeSet<>(nodes);
        otherNodes.remove(volume.nodeName());
        List<Pod> pods = dsw.getVolumePodsOnNodes(otherNodes, volume.volumeName());
        if (pods.isEmpty()) {
            String msg = OperationExecutor.simpleMsg("Multi-Attach error",
                    "Volume is already exclusively attached to one node and can't be attached to another", volume.volumeSpec());
            for (Pod pod : volume.scheduledPods()) {
                recorder.event(pod, EventRecorder.WARNING, "FailedAttachVolume", msg);
            }
            LOG.infof("Multi-Attach error: volume is already exclusively attached and can't be attached to another node: attachedTo %s volume %s",
                    otherNodes, volume.volumeName());
            return;
        }
        for (Pod scheduled : volume.scheduledPods()) {
            List<String> localPodNames = new ArrayList<>();
            int otherPods = 0;
            for (Pod pod : pods) {
                if (pod.getMetadata().getNamespace().equals(scheduled.getMetadata().getNamespace())) {
                    localPodNames.add(pod.getMetadata().getName());
                } else {
                    otherPods++;
                }
            }
            String msg;
            if (!localPodNames.isEmpty()) {
                msg = "Volume is already used by pod(s) " + String.join(", ", localPodNames);
                if (otherPods > 0) {
                    msg = msg + " and " + otherPods + " pod(s) in different namespaces";
                }
            } else {
                msg = "Volume is already used by " + otherPods + " pod(s) in different namespaces";
            }
            recorder.event(scheduled, EventRecorder.WARNING, "FailedAttachVolume",
                    OperationExecutor.simpleMsg("Multi-Attach error", msg, volume.volumeSpec()));
        }
        LOG.infof("Multi-Attach error: volume is already used by pods %s attachedTo %s volume %s", pods.size(), otherNodes,
                volume.volumeName());
    }

    /** nodeutil.IsNodeReady. */
    static boolean isNodeReady(Node node) {
        if (node.getStatus() == null || node.getStatus().getConditions() == null) {
            return false;
        }
        for (NodeCondition c : node.getStatus().getConditions()) {
            if ("Ready".equals(c.getType())) {
                return "True".equals(c.getStatus());
            }
        }
        return false;
    }

    static boolean hasTaint(Node node, String key) {
        if (node.getSpec() == null || node.getSpec().getTaints() == null) {
            return false;
        }
        for (Taint t : node.getSpec().getTaints()) {
            if (key.equals(t.getKey())) {
                return true;
            }
        }
        return false;
    }
}
