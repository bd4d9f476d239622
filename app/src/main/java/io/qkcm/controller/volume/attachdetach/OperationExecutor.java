package io.qkcm.controller.volume.attachdetach;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.function.Function;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.CSIPersistentVolumeSource;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.storage.VolumeAttachment;
import io.fabric8.kubernetes.api.model.storage.VolumeAttachmentBuilder;
import io.fabric8.kubernetes.api.model.storage.VolumeAttachmentSourceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.qkcm.controller.ApiErrors;
import io.qkcm.controller.volume.common.FlexVolumePlugin;
import io.qkcm.runtime.events.EventRecorder;

/**
 * Upstream's operationexecutor for the attach/detach controller (fc's and iscsi's attach and detach do
 * nothing) with the CSI attacher of pkg/volume/csi/csi_attacher.go: attach creates the VolumeAttachment (name {@link CsiPlugin#attachmentName})
 * and waits in the VolumeAttachment cache for {@code status.attached} (an external attacher sets it), detach
 * deletes it and waits for it to go; the pending-operation table of nestedpendingoperations (one operation
 * per volume, or per volume and node for multi-attachable volumes) with its exponential backoff
 * (500 ms doubling to 2m2s) after a failure. Operations run on the controller's API threads, as upstream's
 * goroutines.
 */
final class OperationExecutor {

    static final String ATTACH = "volume_attach";
    static final String DETACH = "volume_detach";
    static final String VERIFY = "verify_volumes_are_attached_per_node";
    /** operation_generator.go's unknownAttachableVolumePlugin: the attach metric's plugin when none attaches. */
    static final String UNKNOWN_ATTACHABLE_VOLUME_PLUGIN = "UnknownAttachableVolumePlugin";
    static final Duration INITIAL_DURATION_BEFORE_RETRY = Duration.ofMillis(500);
    static final Duration MAX_DURATION_BEFORE_RETRY = Duration.ofMinutes(2).plusSeconds(2);
    /** csi_plugin.go's csiTimeout: how long attach and detach wait for the external attacher. */
    static final Duration CSI_TIMEOUT = Duration.ofMinutes(2);

    private static final Logger LOG = Logger.getLogger(OperationExecutor.class);

    /** A pending or failed operation (nestedpendingoperations' operation). */
    private static final class Operation {
        final String volumeName;
        String nodeName; // "" matches every node
        String operationName;
        boolean pending;
        Instant lastErrorTime;
        Duration durationBeforeRetry = Duration.ZERO;

        Operation(String volumeName, String nodeName, String operationName) {
            this.volumeName = volumeName;
            this.nodeName = nodeName;
            this.operationName = operationName;
        }

        boolean matches(String volume, String node) {
            return volumeName.equals(volume) && (nodeName.isEmpty() || node.isEmpty() || nodeName.equals(node));
        }
    }

    private final KubernetesClient client;
    private final Function<String, VolumeAttachment> volumeAttachments;
    private final VolumePlugins plugin;
    private final AttachDetachMetrics metrics;
    private final EventRecorder recorder;
    private final ExecutorService apiCalls;
    private final Clock clock;
    private final Duration csiTimeout;
    private final List<Operation> operations = new ArrayList<>();

    OperationExecutor(KubernetesClient client, Function<String, VolumeAttachment> volumeAttachments, VolumePlugins plugin,
            AttachDetachMetrics metrics, EventRecorder recorder, ExecutorService apiCalls, Clock clock, Duration csiTimeout) {
        this.client = client;
        this.volumeAttachments = volumeAttachments;
        this.plugin = plugin;
        this.metrics = metrics;
        this.recorder = recorder;
        this.apiCalls = apiCalls;
        this.clock = clock;
        this.csiTimeout = csiTimeout;
    }

    // --- nestedpendingoperations

    synchronized boolean isOperationPending(String volumeName, String nodeName) {
        for (Operation op : operations) {
            if (op.matches(volumeName, nodeName) && op.pending) {
                return true;
            }
        }
        return false;
    }

    /** IsOperationSafeToRetry: nothing running and no backoff of the same operation in force. */
    synchronized boolean isOperationSafeToRetry(String volumeName, String nodeName, String operationName) {
        for (Operation op : operations) {
            if (op.matches(volumeName, nodeName)) {
                if (op.pending) {
                    return false;
                }
                if (op.operationName.equals(operationName) && op.lastErrorTime != null
                        && clock.instant().isBefore(op.lastErrorTime.plus(op.durationBeforeRetry))) {
                    return false;
                }
            }
        }
        return true;
    }

    /** Run: false when a matching operation is pending or backing off. */
    private synchronized Operation start(String volumeName, String nodeName, String operationName) {
        for (Operation op : operations) {
            if (op.matches(volumeName, nodeName)) {
                if (op.pending) {
                    return null;
                }
                if (op.lastErrorTime != null && clock.instant().isBefore(op.lastErrorTime.plus(op.durationBeforeRetry))) {
                    return null;
                }
                op.nodeName = nodeName;
                op.operationName = operationName;
                op.pending = true;
                return op;
            }
        }
        Operation op = new Operation(volumeName, nodeName, operationName);
        op.pending = true;
        operations.add(op);
        return op;
    }

    private synchronized void finished(Operation op, boolean failed) {
        op.pending = false;
        if (!failed) {
            operations.remove(op);
            return;
        }
        op.durationBeforeRetry = op.durationBeforeRetry.isZero() ? INITIAL_DURATION_BEFORE_RETRY
                : min(op.durationBeforeRetry.multipliedBy(2), MAX_DURATION_BEFORE_RETRY);
        op.lastErrorTime = clock.instant();
    }

    private static Duration min(Duration a, Duration b) {
        return a.compareTo(b) <= 0 ? a : b;
    }

    private boolean run(Operation op, Runnable body) {
        try {
            apiCalls.execute(body);
            return true;
        } catch (RejectedExecutionException e) {
            finished(op, false);
            return false;
        }
    }

    // --- attach

    /** AttachVolume: starts the attach unless one is pending or backing off (false then). */
    boolean attachVolume(DesiredStateOfWorld.VolumeToAttach volume, ActualStateOfWorld asw) {
        String node = CsiPlugin.isMultiAttachAllowed(volume.volumeSpec()) ? volume.nodeName() : "";
        Operation op = start(volume.volumeName(), node, ATTACH);
        if (op == null) {
            return false;
        }
        long requestNanos = System.nanoTime();
        String attachablePlugin = plugin.isAttachable(volume.volumeSpec())
                ? plugin.pluginNameBySpec(volume.volumeSpec())
                : UNKNOWN_ATTACHABLE_VOLUME_PLUGIN;
        return run(op, () -> {
            boolean failed = true;
            try {
                failed = !attach(volume, asw);
            } catch (RuntimeException e) {
                LOG.errorf(e, "attach of volume %s to node %s failed", volume.volumeName(), volume.nodeName());
            } finally {
                finished(op, failed);
                metrics.operationComplete(VolumePlugins.fullQualifiedPluginName(attachablePlugin, volume.volumeSpec()),
                        ATTACH, failed, volume.volumeSpec() != null && volume.volumeSpec().migrated(), requestNanos);
            }
        });
    }

    /** GenerateAttachVolumeFunc with csiAttacher.Attach. */
    private boolean attach(DesiredStateOfWorld.VolumeToAttach volume, ActualStateOfWorld asw) {
        String error;
        if (!plugin.isAttachable(volume.volumeSpec())) {
            error = "AttachVolume.FindAttachablePluginBySpec failed";
        } else {
            // fc's and iscsi's Attach do nothing and report an empty device path; a flex driver runs attach
            String attachError = null;
            String devicePath = "";
            FlexVolumePlugin flex = plugin.flexPluginBySpec(volume.volumeSpec());
            if (flex != null) {
                try {
                    devicePath = nullToEmpty(flex.attach(volume.volumeSpec(), volume.nodeName()));
                } catch (FlexVolumePlugin.DriverCallException e) {
                    attachError = e.getMessage();
                }
            } else if (CsiPlugin.PLUGIN_NAME.equals(VolumePlugins.findPluginBySpec(volume.volumeSpec()))) {
                attachError = csiAttach(volume.volumeSpec(), volume.nodeName());
            }
            if (attachError == null) {
                String msg = simpleMsg("AttachVolume.Attach succeeded", "", volume.volumeSpec());
                for (Pod pod : volume.scheduledPods()) {
                    recorder.event(pod, EventRecorder.NORMAL, "SuccessfulAttachVolume", msg);
                }
                LOG.infof("%s", detailedMsg("AttachVolume.Attach succeeded", "", volume));
                asw.markVolumeAsAttached(null, volume.volumeSpec(), volume.nodeName(), devicePath);
                return true;
            }
            asw.markVolumeAsUncertain(volume.volumeName(), volume.volumeSpec(), volume.nodeName());
            error = "AttachVolume.Attach failed";
            error = simpleMsg(error, ": " + attachError, volume.volumeSpec());
            for (Pod pod : volume.scheduledPods()) {
                recorder.event(pod, EventRecorder.WARNING, "FailedAttachVolume", error);
            }
            LOG.errorf("%s", detailedMsg("AttachVolume.Attach failed", ": " + attachError, volume));
            return false;
        }
        String msg = simpleMsg(error, "", volume.volumeSpec());
        for (Pod pod : volume.scheduledPods()) {
            recorder.event(pod, EventRecorder.WARNING, "FailedAttachVolume", msg);
        }
        return false;
    }

    /** csiAttacher.Attach: null on success, else the error's text. */
    private String csiAttach(VolumeSpec spec, String nodeName) {
        CSIPersistentVolumeSource source = spec.csi();
        String attachID = CsiPlugin.attachmentName(source.getVolumeHandle(), source.getDriver(), nodeName);
        if (volumeAttachments.apply(attachID) == null) {
            VolumeAttachment attachment = new VolumeAttachmentBuilder().withNewMetadata().withName(attachID).endMetadata()
                    .withNewSpec().withNodeName(nodeName).withAttacher(source.getDriver())
                    .withSource(attachmentSource(spec))
                    .endSpec().build();
            try {
                client.storage().v1().volumeAttachments().resource(attachment).create();
                LOG.debugf("kubernetes.io/csi: attachment [%s] for volume [%s] created successfully", attachID,
                        source.getVolumeHandle());
            } catch (RuntimeException e) {
                if (!ApiErrors.isAlreadyExists(e)) {
                    return "kubernetes.io/csi: attacher.Attach failed: " + ApiErrors.message(e);
                }
                LOG.debugf("kubernetes.io/csi: attachment [%s] for volume [%s] already exists (will not be recreated)",
                        attachID, source.getVolumeHandle());
            }
        }
        return waitFor(source.getVolumeHandle(), source.getDriver(), attachID, "Attach", () -> {
            VolumeAttachment va = volumeAttachments.apply(attachID);
            if (va == null) {
                return null; // not in the cache yet
            }
            if (va.getMetadata().getDeletionTimestamp() != null) {
                throw new IllegalStateException("volume attachment is being deleted");
            }
            if (va.getStatus() != null && Boolean.TRUE.equals(va.getStatus().getAttached())) {
                return Boolean.TRUE;
            }
            if (va.getStatus() != null && va.getStatus().getAttachError() != null) {
                throw new IllegalStateException(va.getStatus().getAttachError().getMessage());
            }
            return null;
        });
    }

    /**
     * The VolumeAttachment's source: the PV's name, or, for a pod's inline volume migrated to CSI, the
     * translated PV's spec (inlineVolumeSpec).
     */
    static io.fabric8.kubernetes.api.model.storage.VolumeAttachmentSource attachmentSource(VolumeSpec spec) {
        if (spec.inlineVolumeSpecForCSIMigration()) {
            return new VolumeAttachmentSourceBuilder().withInlineVolumeSpec(
                    io.qkcm.runtime.DeepCopy.of(spec.persistentVolume()).getSpec()).build();
        }
        return new VolumeAttachmentSourceBuilder().withPersistentVolumeName(spec.persistentVolume().getMetadata().getName())
                .build();
    }

    interface Check {
        /** TRUE when done, null to poll again; throws with the error's text. */
        Boolean verify();
    }

    /**
     * waitForVolumeAttachDetachStatusWithLister: polls the cache with a backoff from 500 ms (factor 1.05, at
     * most 7 s) until done, an error, or the timeout. Null on success, else the error's text.
     */
    private String waitFor(String volumeHandle, String driver, String attachID, String operation, Check check) {
        long deadline = System.nanoTime() + csiTimeout.toNanos();
        double backoffMillis = 500;
        while (true) {
            long sleep = Math.min((long) backoffMillis, Math.max(0, (deadline - System.nanoTime()) / 1_000_000));
            try {
                Thread.sleep(sleep);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return "interrupted";
            }
            if (System.nanoTime() >= deadline) {
                LOG.errorf("kubernetes.io/csi: %s timeout after %s [volume=%s; attachment.ID=%s]", operation, csiTimeout,
                        volumeHandle, attachID);
                return "timed out waiting for external-attacher of " + driver + " CSI driver to "
                        + operation.toLowerCase() + " volume " + volumeHandle;
            }
            try {
                if (Boolean.TRUE.equals(check.verify())) {
                    return null;
                }
            } catch (IllegalStateException e) {
                return e.getMessage();
            }
            backoffMillis = Math.min(backoffMillis * 1.05, 7000);
        }
    }

    // --- detach

    /** DetachVolume: starts the detach unless one is pending or backing off (false then). */
    boolean detachVolume(ActualStateOfWorld.Attached volume, boolean verifySafeToDetach, ActualStateOfWorld asw) {
        // the plugin from the spec, or, for a volume known only by name, from its unique name's prefix
        String pluginName;
        String flexVolumeName = null; // the flex driver's volume name: GetVolumeName, or the unique name's tail
        if (volume.volumeSpec() != null) {
            pluginName = plugin.pluginNameBySpec(volume.volumeSpec());
            if (pluginName == null || !CsiPlugin.PLUGIN_NAME.equals(pluginName) && !plugin.isAttachable(volume.volumeSpec())) {
                LOG.errorf("DetachVolume.findDetachablePluginBySpec failed for volume \"%s\" (UniqueName: \"%s\") on node \"%s\"",
                        volume.volumeSpec().name(), volume.volumeName(), volume.nodeName());
                return false;
            }
            if (plugin.flexPluginByName(pluginName) != null) {
                try {
                    flexVolumeName = plugin.flexPluginByName(pluginName).volumeName(volume.volumeSpec());
                } catch (FlexVolumePlugin.DriverCallException e) {
                    LOG.errorf("DetachVolume.GetVolumeName failed for volume \"%s\" (UniqueName: \"%s\") on node \"%s\" : %s",
                            volume.volumeSpec().name(), volume.volumeName(), volume.nodeName(), e.getMessage());
                    return false;
                }
            }
        } else {
            String[] components = volume.volumeName().split("/", 3);
            if (components.length != 3) {
                LOG.errorf("DetachVolume.SplitUniqueName failed for volume \"nil\" (UniqueName: \"%s\") on node \"%s\" : cannot split UniqueName %s",
                        volume.volumeName(), volume.nodeName(), volume.volumeName());
                return false;
            }
            pluginName = components[0] + "/" + components[1];
            if (!plugin.isAttachablePlugin(pluginName)) {
                LOG.errorf("DetachVolume.FindAttachablePluginByName failed for volume \"nil\" (UniqueName: \"%s\") on node \"%s\"",
                        volume.volumeName(), volume.nodeName());
                return false;
            }
            flexVolumeName = components[2];
        }
        FlexVolumePlugin flex = plugin.flexPluginByName(pluginName);
        String flexDetachName = flexVolumeName;
        boolean csi = CsiPlugin.PLUGIN_NAME.equals(pluginName);
        String[] driverAndHandle = !csi ? null
                : volume.volumeSpec() != null && volume.volumeSpec().csi() != null
                        ? new String[] { volume.volumeSpec().csi().getDriver(), volume.volumeSpec().csi().getVolumeHandle() }
                        : CsiPlugin.driverAndHandle(volume.volumeName());
        if (csi && driverAndHandle == null) {
            LOG.errorf("DetachVolume.GetVolumeName failed for volume \"%s\" (UniqueName: \"%s\") on node \"%s\"",
                    specName(volume.volumeSpec()), volume.volumeName(), volume.nodeName());
            return false;
        }
        String metricPlugin = VolumePlugins.fullQualifiedPluginName(pluginName, volume.volumeSpec());
        String node = CsiPlugin.isMultiAttachAllowed(volume.volumeSpec()) ? volume.nodeName() : "";
        Operation op = start(volume.volumeName(), node, DETACH);
        if (op == null) {
            return false;
        }
        long requestNanos = System.nanoTime();
        return run(op, () -> {
            boolean failed = true;
            try {
                String error = verifySafeToDetach ? verifyVolumeIsSafeToDetach(volume) : null;
                if (error == null && csi) {
                    // fc's and iscsi's Detach do nothing
                    error = csiDetach(driverAndHandle[0], driverAndHandle[1], volume.nodeName());
                } else if (error == null && flex != null) {
                    try {
                        flex.detach(flexDetachName, volume.nodeName());
                    } catch (FlexVolumePlugin.DriverCallException e) {
                        error = e.getMessage();
                    }
                }
                if (error != null) {
                    asw.markVolumeAsUncertain(volume.volumeName(), volume.volumeSpec(), volume.nodeName());
                    LOG.errorf("DetachVolume.Detach failed for volume \"%s\" (UniqueName: \"%s\") on node \"%s\" : %s",
                            specName(volume.volumeSpec()), volume.volumeName(), volume.nodeName(), error);
                } else {
                    LOG.infof("DetachVolume.Detach succeeded for volume \"%s\" (UniqueName: \"%s\") on node \"%s\" ",
                            specName(volume.volumeSpec()), volume.volumeName(), volume.nodeName());
                    asw.markVolumeAsDetached(volume.volumeName(), volume.nodeName());
                    failed = false;
                }
            } catch (RuntimeException e) {
                LOG.errorf(e, "detach of volume %s from node %s failed", volume.volumeName(), volume.nodeName());
            } finally {
                finished(op, failed);
                metrics.operationComplete(metricPlugin, DETACH, failed,
                        volume.volumeSpec() != null && volume.volumeSpec().migrated(), requestNanos);
            }
        });
    }

    /** verifyVolumeIsSafeToDetach: a live GET of the node; the volume must not be in its volumesInUse. */
    private String verifyVolumeIsSafeToDetach(ActualStateOfWorld.Attached volume) {
        Node node;
        try {
            node = client.nodes().withName(volume.nodeName()).get();
        } catch (RuntimeException e) {
            return "DetachVolume failed fetching node from API server: " + ApiErrors.message(e);
        }
        if (node == null) {
            LOG.warnf("Node not found on API server. DetachVolume will skip safe to detach check for volume %s on node %s",
                    volume.volumeName(), volume.nodeName());
            return null;
        }
        List<String> inUse = node.getStatus() == null ? null : node.getStatus().getVolumesInUse();
        if (inUse != null && inUse.contains(volume.volumeName())) {
            return "DetachVolume failed: volume is still in use by node, according to Node status";
        }
        LOG.infof("Verified volume is safe to detach for volume %s on node %s", volume.volumeName(), volume.nodeName());
        return null;
    }

    /** csiAttacher.Detach: delete the VolumeAttachment, wait until it is gone. */
    private String csiDetach(String driver, String volumeHandle, String nodeName) {
        String attachID = CsiPlugin.attachmentName(volumeHandle, driver, nodeName);
        try {
            client.storage().v1().volumeAttachments().withName(attachID).delete();
        } catch (RuntimeException e) {
            if (ApiErrors.isNotFound(e)) {
                return null;
            }
            return "kubernetes.io/csi: detacher.Detach failed to delete VolumeAttachment [" + attachID + "]: "
                    + ApiErrors.message(e);
        }
        return waitFor(volumeHandle, driver, attachID, "Detach", () -> {
            VolumeAttachment va = volumeAttachments.apply(attachID);
            if (va == null) {
                return Boolean.TRUE;
            }
            if (va.getStatus() != null && va.getStatus().getDetachError() != null) {
                throw new IllegalStateException(va.getStatus().getDetachError().getMessage());
            }
            return null;
        });
    }

    // --- verify (the reconciler's periodic sync)

    /**
     * VerifyVolumesAreAttached with csiAttacher.VolumesAreAttached: a confirmed attachment whose
     * VolumeAttachment is missing or not attached is marked detached; volumes without a spec are skipped.
     */
    void verifyVolumesAreAttached(Map<String, List<ActualStateOfWorld.Attached>> perNode, ActualStateOfWorld asw) {
        perNode.forEach((nodeName, volumes) -> {
            long requestNanos = System.nanoTime();
            Map<FlexVolumePlugin, List<ActualStateOfWorld.Attached>> flexByNode = new java.util.LinkedHashMap<>();
            for (ActualStateOfWorld.Attached volume : volumes) {
                VolumeSpec spec = volume.volumeSpec();
                String pluginName = plugin.pluginNameBySpec(spec);
                if (pluginName == null) {
                    continue;
                }
                FlexVolumePlugin flex = plugin.flexPluginByName(pluginName);
                if (flex != null) {
                    flexByNode.computeIfAbsent(flex, f -> new ArrayList<>()).add(volume);
                    continue;
                }
                if (!CsiPlugin.PLUGIN_NAME.equals(pluginName)) {
                    continue; // fc's and iscsi's VolumesAreAttached: always attached
                }
                CSIPersistentVolumeSource source = spec.csi();
                boolean attached;
                if (source == null) {
                    attached = false;
                } else if (plugin.csi().skipAttach(source.getDriver())) {
                    attached = true;
                } else {
                    String attachID = CsiPlugin.attachmentName(source.getVolumeHandle(), source.getDriver(), nodeName);
                    VolumeAttachment va = volumeAttachments.apply(attachID);
                    if (va == null) {
                        try {
                            va = client.storage().v1().volumeAttachments().withName(attachID).get();
                        } catch (RuntimeException e) {
                            va = null;
                        }
                    }
                    attached = va != null && va.getStatus() != null && Boolean.TRUE.equals(va.getStatus().getAttached());
                }
                if (!attached) {
                    asw.markVolumeAsDetached(volume.volumeName(), nodeName);
                    LOG.infof("VerifyVolumesAreAttached determined volume \"%s\" (spec.Name: \"%s\") is no longer attached to node \"%s\", therefore it was marked as detached.",
                            volume.volumeName(), spec.name(), nodeName);
                }
            }
            flexByNode.forEach((flex, attached) -> verifyFlexVolumesAreAttached(flex, attached, nodeName, asw));
            // GetFullQualifiedPluginNameForVolume("<n/a>", nil): the per-node operation has no one plugin
            metrics.operationComplete("<n/a>", VERIFY, false, false, requestNanos);
        });
    }

    /**
     * VerifyVolumesAreAttachedPerNode for one flex driver: its isattached answers; a volume it says is not
     * attached is marked detached; an error or "Not supported" concludes nothing.
     */
    private void verifyFlexVolumesAreAttached(FlexVolumePlugin flex, List<ActualStateOfWorld.Attached> attached,
            String nodeName, ActualStateOfWorld asw) {
        List<VolumeSpec> specs = attached.stream().map(ActualStateOfWorld.Attached::volumeSpec).toList();
        Map<VolumeSpec, Boolean> result;
        try {
            result = flex.volumesAreAttached(specs, nodeName);
        } catch (FlexVolumePlugin.DriverCallException e) {
            LOG.errorf("VolumesAreAttached failed for checking on node \"%s\" with: %s", nodeName, e.getMessage());
            return;
        }
        if (result == null) {
            return;
        }
        for (ActualStateOfWorld.Attached volume : attached) {
            if (Boolean.FALSE.equals(result.get(volume.volumeSpec()))) {
                asw.markVolumeAsDetached(volume.volumeName(), nodeName);
                LOG.infof("VerifyVolumesAreAttached determined volume \"%s\" (spec.Name: \"%s\") is no longer attached to node \"%s\", therefore it was marked as detached.",
                        volume.volumeName(), volume.volumeSpec().name(), nodeName);
            }
        }
    }

    private static String nullToEmpty(String s) {
        return s == null ? "" : s;
    }

    // --- messages (operationexecutor's GenerateMsg)

    static String specName(VolumeSpec spec) {
        return spec == null ? "nil" : spec.name();
    }

    /** generateVolumeMsg's simple message: {@code <prefix> for volume "<spec name>" <suffix>}. */
    static String simpleMsg(String prefix, String suffix, VolumeSpec spec) {
        return prefix + " for volume \"" + specName(spec) + "\" " + suffix;
    }

    static String detailedMsg(String prefix, String suffix, DesiredStateOfWorld.VolumeToAttach volume) {
        return prefix + " for volume \"" + specName(volume.volumeSpec()) + "\" (UniqueName: \"" + volume.volumeName()
                + "\") from node \"" + volume.nodeName() + "\" " + suffix;
    }
}
