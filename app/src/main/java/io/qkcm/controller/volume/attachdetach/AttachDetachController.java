package io.qkcm.controller.volume.attachdetach;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import io.fabric8.kubernetes.api.model.AttachedVolume;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.storage.CSIDriver;
import io.fabric8.kubernetes.api.model.storage.VolumeAttachment;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.javaoperatorsdk.operator.api.reconciler.Ignore;
import io.qkcm.controller.volume.common.FlexVolumePlugin;
import io.qkcm.controller.volume.common.FlexVolumePlugins;
import io.qkcm.controller.volume.common.PodPVCIndex;
import io.qkcm.runtime.events.EventRecorder;
import io.qkcm.runtime.informers.MetaNamespaceKey;
import io.qkcm.runtime.informers.ResourceEventHandlerFuncs;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.KeyReconciler;

/**
 * persistentvolume-attach-detach-controller (upstream pkg/controller/volume/attachdetach) with the plugins of
 * upstream's ProbeAttachableVolumePlugins ({@link VolumePlugins}): for every scheduled pod on a node carrying
 * {@code volumes.kubernetes.io/controller-managed-attach-detach}, the PVs of its bound claims with a CSI source
 * whose driver requires attachment (no CSIDriver object, or attachRequired not false) are attached to the
 * node — a VolumeAttachment an external attacher acts on — and fc and iscsi volumes (PVs or inline) are
 * attached by an attach that does nothing; aws-ebs, azure-disk, azure-file, cinder, gce-pd, vsphere and
 * portworx volumes are migrated to their CSI driver ({@link CsiMigration}); the volumes of FlexVolume drivers
 * found under {@code --flex-volume-plugin-dir} whose init says they attach are attached and detached by the
 * driver's attach and detach calls ({@link FlexVolumePlugin}); all are reported in node.status.volumesAttached once attached; when no pod needs them any more they are
 * detached after the node stops reporting them in status.volumesInUse (or the 6 minute maximum wait on a
 * node that is not Ready, or at once with the out-of-service taint).
 *
 * <p>Upstream's pieces keep their shape: the desired and actual states of the world, the pod and node
 * handlers that fill them, the reconciler loop (every 100 ms) and the populator loop (every minute) on
 * threads of their own started by {@link #onStart} after both states are populated from the caches, and
 * upstream's {@code pvcs} queue — this reconciler — which re-adds the pods of a claim that became bound.
 */
@Ignore // runs in its own Operator, not quarkus-operator-sdk's default one
public final class AttachDetachController extends KeyReconciler<PersistentVolumeClaim> {

    public static final String NAME = "persistentvolume-attach-detach-controller";
    public static final String QUEUE = "pvcs";
    /** The events' source component (upstream's recorder). */
    public static final String COMPONENT = "attachdetach-controller";
    /** volumeutil.ControllerManagedAttachAnnotation. */
    public static final String CONTROLLER_MANAGED_ATTACH_ANNOTATION = "volumes.kubernetes.io/controller-managed-attach-detach";

    /** Upstream's TimerConfig (tests shorten it) and csi_plugin.go's csiTimeout. */
    public record TimerConfig(Duration reconcilerLoopPeriod, Duration reconcilerMaxWaitForUnmountDuration,
            Duration desiredStateOfWorldPopulatorLoopSleepPeriod,
            Duration desiredStateOfWorldPopulatorListPodsRetryDuration, Duration csiTimeout) {

        public static final TimerConfig DEFAULT = new TimerConfig(Duration.ofMillis(100), Duration.ofMinutes(6),
                Duration.ofMinutes(1), Duration.ofMinutes(3), OperationExecutor.CSI_TIMEOUT);
    }

    private final SharedIndexInformer<PersistentVolumeClaim> pvcs;
    private final SharedIndexInformer<PersistentVolume> pvs;
    private final SharedIndexInformer<Pod> pods;
    private final SharedIndexInformer<Node> nodes;
    private final SharedIndexInformer<CSIDriver> csiDrivers;
    private final SharedIndexInformer<VolumeAttachment> volumeAttachments;
    private final SharedIndexInformer<io.fabric8.kubernetes.api.model.storage.CSINode> csiNodes;
    private final TimerConfig timers;
    private final DesiredStateOfWorld dsw;
    private final ActualStateOfWorld asw;
    private final PodVolumes podVolumes;
    private final Reconciler reconciler;
    private final DesiredStateOfWorldPopulator populator;
    private final ExecutorService apiCalls;
    private ScheduledExecutorService loops;
    private final AtomicLong reconcilerPasses = new AtomicLong();
    private final VolumePlugins plugins;
    private final AttachDetachMetrics metrics;
    private long lastMetricsUpdateNanos;
    private boolean metricsUpdated;

    /**
     * {@code reconcilerSyncDuration}, {@code disableReconciliationSync}, {@code disableForceDetachOnTimeout}:
     * the flags --attach-detach-reconcile-sync-period, --disable-attach-detach-reconcile-sync,
     * --disable-force-detach-on-timeout.
     */
    public AttachDetachController(ControllerContext context, TimerConfig timers, Duration reconcilerSyncDuration,
            boolean disableReconciliationSync, boolean disableForceDetachOnTimeout, Clock clock) {
        this(context, timers, reconcilerSyncDuration, disableReconciliationSync, disableForceDetachOnTimeout, clock, null);
    }

    /**
     * {@code flexVolumePluginDir}: --flex-volume-plugin-dir, the directory the dynamic prober watches (null:
     * no prober, as upstream's dummy prober).
     */
    public AttachDetachController(ControllerContext context, TimerConfig timers, Duration reconcilerSyncDuration,
            boolean disableReconciliationSync, boolean disableForceDetachOnTimeout, Clock clock,
            java.nio.file.Path flexVolumePluginDir) {
        super(context, PersistentVolumeClaim.class, QUEUE, 1);
        this.timers = timers;
        this.pvcs = context.informers().informerFor(PersistentVolumeClaim.class);
        this.pvs = context.informers().informerFor(PersistentVolume.class);
        this.pods = context.informers().informerFor(Pod.class);
        this.nodes = context.informers().informerFor(Node.class);
        this.csiDrivers = context.informers().informerFor(CSIDriver.class);
        this.volumeAttachments = context.informers().informerFor(VolumeAttachment.class);
        this.csiNodes = context.informers().informerFor(io.fabric8.kubernetes.api.model.storage.CSINode.class);
        PodPVCIndex.addIfNotPresent(pods);

        VolumePlugins plugin = new VolumePlugins(new CsiPlugin(name -> csiDrivers.getStore().getByKey(name)),
                FlexVolumePlugins.probing(flexVolumePluginDir));
        this.plugins = plugin;
        this.metrics = new AttachDetachMetrics(context.metrics());
        this.dsw = new DesiredStateOfWorld(plugin);
        this.asw = new ActualStateOfWorld(clock, plugin::uniqueName);
        this.podVolumes = new PodVolumes((ns, name) -> pvcs.getStore().getByKey(ns + "/" + name),
                name -> pvs.getStore().getByKey(name), plugin, name -> csiNodes.getStore().getByKey(name));
        this.apiCalls = context.newApiCallPool("attachdetach", 16);
        EventRecorder recorder = context.recorderFor(COMPONENT);
        OperationExecutor executor = new OperationExecutor(context.client(),
                name -> volumeAttachments.getStore().getByKey(name), plugin, metrics, recorder, apiCalls, clock,
                timers.csiTimeout());
        NodeStatusUpdater statusUpdater = new NodeStatusUpdater(context.client(), name -> nodes.getStore().getByKey(name), asw);
        this.reconciler = new Reconciler(timers.reconcilerMaxWaitForUnmountDuration(), reconcilerSyncDuration,
                disableReconciliationSync, disableForceDetachOnTimeout, dsw, asw, executor, statusUpdater,
                name -> nodes.getStore().getByKey(name), recorder, metrics, clock);
        this.populator = new DesiredStateOfWorldPopulator(timers.desiredStateOfWorldPopulatorListPodsRetryDuration(),
                (ns, name) -> pods.getStore().getByKey(ns + "/" + name), () -> pods.getStore().list(), dsw, podVolumes,
                plugin, clock);

        pods.addEventHandler(ResourceEventHandlerFuncs.<Pod>of(this::podAdd, (old, cur) -> podAdd(cur), this::podDelete));
        nodes.addEventHandler(ResourceEventHandlerFuncs.<Node>of(this::nodeAdd, (old, cur) -> nodeUpdate(cur),
                this::nodeDelete));
    }

    @Override
    protected List<SharedIndexInformer<?>> informers() {
        return List.of(pods, nodes, pvcs, pvs, csiDrivers, volumeAttachments, csiNodes);
    }

    @Override
    public synchronized void onStart() {
        log.info("Starting attach detach controller");
        if (loops != null) {
            return;
        }
        populateActualStateOfWorld();
        populateDesiredStateOfWorld();
        AtomicInteger n = new AtomicInteger();
        loops = Executors.newScheduledThreadPool(2, r -> {
            Thread t = new Thread(r, "attachdetach-loop-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        // wait.Until: each pass a period after the previous one ended
        loops.scheduleWithFixedDelay(guarded(() -> {
            reconciler.loop();
            updateMetrics();
            reconcilerPasses.incrementAndGet();
        }), 0, timers.reconcilerLoopPeriod().toNanos(),
                TimeUnit.NANOSECONDS);
        loops.scheduleWithFixedDelay(guarded(populator::loop), 0,
                timers.desiredStateOfWorldPopulatorLoopSleepPeriod().toNanos(), TimeUnit.NANOSECONDS);
    }

    /**
     * The metrics collector's pass, at most once a second (upstream computes at each scrape): the total
     * volumes of both states and the attachable volumes in use by node.
     */
    private void updateMetrics() {
        // a scrape's freshness, not controller time: the monotonic clock
        long now = System.nanoTime();
        if (metricsUpdated && now - lastMetricsUpdateNanos < TimeUnit.SECONDS.toNanos(1)) {
            return;
        }
        metricsUpdated = true;
        lastMetricsUpdateNanos = now;
        metrics.update(dsw, asw, podVolumes.volumesInUse(pods.getStore().list()), plugins);
    }

    private Runnable guarded(Runnable pass) {
        return () -> {
            try {
                pass.run();
            } catch (RuntimeException e) {
                log.errorf(e, "attach detach controller loop failed");
            }
        };
    }

    @Override
    public synchronized void onShutdown() {
        log.info("Shutting down attach detach controller");
        if (loops != null) {
            loops.shutdownNow();
        }
        apiCalls.shutdownNow();
        plugins.flexPlugins().close();
    }

    /** populateActualStateOfWorld: node.status.volumesAttached and volumesInUse, then the VolumeAttachments. */
    private void populateActualStateOfWorld() {
        for (Node node : nodes.getStore().list()) {
            String nodeName = node.getMetadata().getName();
            List<AttachedVolume> attached = node.getStatus() == null ? null : node.getStatus().getVolumesAttached();
            if (attached != null) {
                for (AttachedVolume v : attached) {
                    // no spec: a volume no pod uses is detached by name; a used one gets its spec below
                    asw.markVolumeAsAttached(v.getName(), null, nodeName, v.getDevicePath());
                }
            }
            asw.setVolumesMountedByNode(node.getStatus() == null ? null : node.getStatus().getVolumesInUse(), nodeName);
            addNodeToDswp(node);
        }
        processVolumeAttachments();
    }

    /**
     * processVolumeAttachments: a VolumeAttachment of a PV whose volume the actual state does not know is
     * an uncertain attachment (attached again if desired, else detached).
     */
    private void processVolumeAttachments() {
        for (VolumeAttachment va : volumeAttachments.getStore().list()) {
            String nodeName = va.getSpec().getNodeName();
            String pvName = va.getSpec().getSource() == null ? null : va.getSpec().getSource().getPersistentVolumeName();
            if (pvName == null) {
                log.infof("Skipping the va as its pvName is nil: node %s vaName %s", nodeName, va.getMetadata().getName());
                continue;
            }
            PersistentVolume pv = pvs.getStore().getByKey(pvName);
            if (pv == null) {
                log.errorf("Unable to lookup pv object %s", pvName);
                continue;
            }
            VolumeSpec spec = VolumeSpec.fromPersistentVolume(pv, false);
            if (CsiMigration.inTreePluginName(spec) != null) {
                try {
                    spec = CsiMigration.translate(spec, "");
                } catch (IllegalStateException e) {
                    log.errorf("Failed to translate intree volumeSpec to CSI volumeSpec for volume: node %s vaName %s PV %s: %s",
                            nodeName, va.getMetadata().getName(), pvName, e.getMessage());
                    continue;
                }
            }
            if (!plugins.isAttachable(spec)) {
                log.infof("Skipping processing the volume on node %s, no attacher interface found: PV %s", nodeName, pvName);
                continue;
            }
            String volumeName;
            try {
                volumeName = plugins.uniqueName(spec);
            } catch (IllegalStateException e) {
                log.errorf("Failed to find unique name for volume: node %s vaName %s PV %s: %s", nodeName,
                        va.getMetadata().getName(), pvName, e.getMessage());
                continue;
            }
            if (asw.getAttachState(volumeName, nodeName) == ActualStateOfWorld.AttachState.DETACHED) {
                log.debugf("Marking volume attachment as uncertain as volume is not attached: node %s volumeName %s",
                        nodeName, volumeName);
                asw.markVolumeAsUncertain(volumeName, spec, nodeName);
            }
        }
    }

    /** populateDesiredStateOfWorld: every pod, and the specs of volumes the actual state knows only by name. */
    private void populateDesiredStateOfWorld() {
        for (Pod pod : pods.getStore().list()) {
            podAdd(pod);
            String nodeName = pod.getSpec().getNodeName();
            if (pod.getSpec().getVolumes() == null) {
                continue;
            }
            for (Volume podVolume : pod.getSpec().getVolumes()) {
                VolumeSpec spec;
                try {
                    spec = podVolumes.createVolumeSpec(podVolume, pod);
                } catch (IllegalStateException e) {
                    log.errorf("Error creating spec for volume %s of pod %s: %s", podVolume.getName(), key(pod), e.getMessage());
                    continue;
                }
                if (!plugins.isAttachable(spec)) {
                    continue;
                }
                String volumeName;
                try {
                    volumeName = plugins.uniqueName(spec);
                } catch (IllegalStateException e) {
                    log.errorf("Failed to find unique name for volume %s of pod %s: %s", podVolume.getName(), key(pod),
                            e.getMessage());
                    continue;
                }
                if (asw.getAttachState(volumeName, nodeName) == ActualStateOfWorld.AttachState.ATTACHED) {
                    String devicePath = devicePath(volumeName, nodeName);
                    if (devicePath == null) {
                        log.errorf("Failed to find device path: Volume %s not found on node %s", volumeName, nodeName);
                        continue;
                    }
                    asw.markVolumeAsAttached(volumeName, spec, nodeName, devicePath);
                }
            }
        }
    }

    private String devicePath(String volumeName, String nodeName) {
        Node node = nodes.getStore().getByKey(nodeName);
        if (node == null || node.getStatus() == null || node.getStatus().getVolumesAttached() == null) {
            return null;
        }
        for (AttachedVolume v : node.getStatus().getVolumesAttached()) {
            if (volumeName.equals(v.getName())) {
                return v.getDevicePath() == null ? "" : v.getDevicePath();
            }
        }
        return null;
    }

    // --- handlers

    /** podAdd and podUpdate. */
    private void podAdd(Pod pod) {
        if (pod == null || pod.getSpec() == null || pod.getSpec().getNodeName() == null
                || pod.getSpec().getNodeName().isEmpty()) {
            return;
        }
        podVolumes.processPodVolumes(pod, PodVolumes.determineVolumeAction(pod, true), dsw);
    }

    private void podDelete(Pod pod) {
        if (pod != null && pod.getSpec() != null) {
            podVolumes.processPodVolumes(pod, false, dsw);
        }
    }

    private void nodeAdd(Node node) {
        nodeUpdate(node);
        // kubernetes/kubernetes#37586: a node add may have wiped status.volumesAttached; write it again
        asw.setNodeStatusUpdateNeeded(node.getMetadata().getName());
    }

    private void nodeUpdate(Node node) {
        addNodeToDswp(node);
        asw.setVolumesMountedByNode(node.getStatus() == null ? null : node.getStatus().getVolumesInUse(),
                node.getMetadata().getName());
    }

    private void nodeDelete(Node node) {
        String nodeName = node.getMetadata().getName();
        try {
            dsw.deleteNode(nodeName);
        } catch (IllegalStateException e) {
            log.infof("Error removing node %s from desired-state-of-world: %s", nodeName, e.getMessage());
        }
        asw.setVolumesMountedByNode(node.getStatus() == null ? null : node.getStatus().getVolumesInUse(), nodeName);
    }

    private void addNodeToDswp(Node node) {
        if (node.getMetadata().getAnnotations() != null
                && node.getMetadata().getAnnotations().containsKey(CONTROLLER_MANAGED_ATTACH_ANNOTATION)) {
            dsw.addNode(node.getMetadata().getName());
        }
    }

    /** syncPVCByKey: the active scheduled pods of a claim that is now bound are processed again. */
    @Override
    protected void sync(String key) {
        PersistentVolumeClaim pvc = pvcs.getStore().getByKey(key);
        if (pvc == null) {
            return;
        }
        String phase = pvc.getStatus() == null ? null : pvc.getStatus().getPhase();
        String volumeName = pvc.getSpec() == null ? null : pvc.getSpec().getVolumeName();
        if (!"Bound".equals(phase) || volumeName == null || volumeName.isEmpty()) {
            return;
        }
        MetaNamespaceKey k = MetaNamespaceKey.split(key);
        for (Pod pod : PodPVCIndex.podsUsing(pods, k.namespace(), k.name())) {
            if (pod.getSpec().getNodeName() == null || pod.getSpec().getNodeName().isEmpty()
                    || PodVolumes.isPodTerminated(pod)) {
                continue;
            }
            podVolumes.processPodVolumes(pod, PodVolumes.determineVolumeAction(pod, true), dsw);
        }
    }

    // --- for tests

    DesiredStateOfWorld desiredStateOfWorld() {
        return dsw;
    }

    ActualStateOfWorld actualStateOfWorld() {
        return asw;
    }

    VolumePlugins volumePlugins() {
        return plugins;
    }

    /** Reconciler passes completed: a test's signal that the reconciler has looked again. */
    long reconcilerPasses() {
        return reconcilerPasses.get();
    }
}
