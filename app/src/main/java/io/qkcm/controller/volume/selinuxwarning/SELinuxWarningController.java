package io.qkcm.controller.volume.selinuxwarning;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EphemeralContainer;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.SELinuxOptions;
import io.fabric8.kubernetes.api.model.SecurityContext;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.api.model.storage.CSIDriver;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.javaoperatorsdk.operator.api.reconciler.Ignore;
import io.javaoperatorsdk.operator.processing.event.source.filter.OnUpdateFilter;
import io.qkcm.controller.volume.common.FlexVolumePlugins;
import io.qkcm.controller.volume.common.PodPVCIndex;
import io.qkcm.controller.volume.selinuxwarning.VolumeCache.Conflict;
import io.qkcm.controller.volume.selinuxwarning.VolumeCache.PodKey;
import io.qkcm.runtime.events.EventRecorder;
import io.qkcm.runtime.informers.ResourceEventHandlerFuncs;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.KeyReconciler;

/**
 * selinux-warning-controller (upstream pkg/controller/volume/selinuxwarning): keeps, for every volume, the
 * SELinux mount label and SELinuxChangePolicy each running pod would use for it, and emits
 * {@code SELinuxLabelConflict} / {@code SELinuxChangePolicyConflict} events on both pods when two pods would
 * mount the same volume differently (they could not run on one node together), {@code MultipleSELinuxLabels}
 * when one pod mounts a volume with two labels, and the {@code selinux_warning_controller_selinux_volume_conflict}
 * gauge. Queue {@code selinux_warning} (pods), one worker; event source {@code selinux_warning}.
 */
@Ignore // runs in its own Operator, not quarkus-operator-sdk's default one
public final class SELinuxWarningController extends KeyReconciler<Pod> {

    public static final String NAME = "selinux-warning-controller";
    static final String QUEUE = "selinux_warning";
    static final String EVENT_COMPONENT = "selinux_warning";

    private final SharedIndexInformer<Pod> pods;
    private final SharedIndexInformer<PersistentVolumeClaim> pvcs;
    private final SharedIndexInformer<PersistentVolume> pvs;
    private final SharedIndexInformer<CSIDriver> csiDrivers;
    private final VolumeSpecs volumeSpecs;
    private final VolumeCache labelCache = new VolumeCache();
    private final SELinuxWarningMetrics metrics;
    private final EventRecorder recorder;
    private final boolean seLinuxMountReadWriteOncePod;

    /**
     * {@code flexVolumePluginDir}: --flex-volume-plugin-dir, where the controller's own dynamic prober looks for
     * FlexVolume drivers (null: none probed).
     */
    SELinuxWarningController(ControllerContext context, boolean seLinuxMountReadWriteOncePod,
            java.nio.file.Path flexVolumePluginDir) {
        super(context, Pod.class, QUEUE, 1);
        this.pods = context.informers().informerFor(Pod.class);
        this.pvcs = context.informers().informerFor(PersistentVolumeClaim.class);
        this.pvs = context.informers().informerFor(PersistentVolume.class);
        this.csiDrivers = context.informers().informerFor(CSIDriver.class);
        this.seLinuxMountReadWriteOncePod = seLinuxMountReadWriteOncePod;
        this.volumeSpecs = new VolumeSpecs(pvcs.getStore(), pvs.getStore(), csiDrivers.getStore(), seLinuxMountReadWriteOncePod,
                FlexVolumePlugins.probing(flexVolumePluginDir));
        this.metrics = new SELinuxWarningMetrics(context.metrics());
        this.recorder = context.recorderFor(EVENT_COMPONENT);
        PodPVCIndex.addIfNotPresent(pods);
        pvcs.addEventHandler(ResourceEventHandlerFuncs.<PersistentVolumeClaim>of(this::addPVC, this::updatePVC, pvc -> {
        }));
        pvs.addEventHandler(ResourceEventHandlerFuncs.<PersistentVolume>of(this::addPV, this::updatePV, pv -> {
        }));
        csiDrivers.addEventHandler(ResourceEventHandlerFuncs.<CSIDriver>of(
                d -> enqueueAllPodsForCSIDriver(d.getMetadata().getName()),
                (o, n) -> {
                    if (seLinuxMount(o) != seLinuxMount(n)) {
                        enqueueAllPodsForCSIDriver(n.getMetadata().getName());
                    }
                },
                d -> {
                    if (seLinuxMount(d)) {
                        enqueueAllPodsForCSIDriver(d.getMetadata().getName());
                    }
                }));
    }

    @Override
    protected List<SharedIndexInformer<?>> informers() {
        return List.of(pods, pvcs, pvs, csiDrivers);
    }

    /** Upstream's updatePod: only a pod that has just finished (Succeeded or Failed) is queued again. */
    @Override
    protected OnUpdateFilter<? super Pod> primaryUpdateFilter() {
        // JOSDK hands the new object first
        return (newPod, oldPod) -> {
            String oldPhase = phase(oldPod);
            String newPhase = phase(newPod);
            return !Objects.equals(oldPhase, newPhase) && ("Failed".equals(newPhase) || "Succeeded".equals(newPhase));
        };
    }

    private static String phase(Pod pod) {
        return pod.getStatus() == null ? null : pod.getStatus().getPhase();
    }

    private static boolean seLinuxMount(CSIDriver d) {
        return d.getSpec() != null && Boolean.TRUE.equals(d.getSpec().getSeLinuxMount());
    }

    private void addPVC(PersistentVolumeClaim pvc) {
        if (pvc.getSpec().getVolumeName() == null || pvc.getSpec().getVolumeName().isEmpty()) {
            return;
        }
        enqueueAllPodsForPVC(pvc.getMetadata().getNamespace(), pvc.getMetadata().getName());
    }

    private void updatePVC(PersistentVolumeClaim oldPVC, PersistentVolumeClaim newPVC) {
        if (!Objects.equals(oldPVC.getSpec().getVolumeName(), newPVC.getSpec().getVolumeName())) {
            enqueueAllPodsForPVC(newPVC.getMetadata().getNamespace(), newPVC.getMetadata().getName());
        }
    }

    private void addPV(PersistentVolume pv) {
        var claimRef = pv.getSpec().getClaimRef();
        if (claimRef == null || claimRef.getUid() == null || claimRef.getUid().isEmpty()) {
            return;
        }
        enqueueAllPodsForPVC(claimRef.getNamespace(), claimRef.getName());
    }

    private void updatePV(PersistentVolume oldPV, PersistentVolume newPV) {
        var newClaimRef = newPV.getSpec().getClaimRef();
        if (newClaimRef == null || newClaimRef.getUid() == null || newClaimRef.getUid().isEmpty()) {
            return;
        }
        var oldClaimRef = oldPV.getSpec().getClaimRef();
        if (oldClaimRef == null || !Objects.equals(oldClaimRef.getUid(), newClaimRef.getUid())) {
            enqueueAllPodsForPVC(newClaimRef.getNamespace(), newClaimRef.getName());
        }
    }

    private void enqueueAllPodsForPVC(String namespace, String name) {
        for (Pod pod : PodPVCIndex.podsUsing(pods, namespace, name)) {
            queue.add(key(pod));
        }
    }

    private void enqueueAllPodsForCSIDriver(String driverName) {
        for (PodKey pod : labelCache.podsForCSIDriver(driverName)) {
            queue.add(pod.toString());
        }
    }

    @Override
    public void onShutdown() {
        volumeSpecs.flexPlugins().close();
    }

    /** The pods sharing volumes, for tests. */
    VolumeCache labelCache() {
        return labelCache;
    }

    @Override
    protected void sync(String key) {
        var split = io.qkcm.runtime.informers.MetaNamespaceKey.split(key);
        PodKey podKey = new PodKey(split.namespace(), split.name());
        Pod pod = pods.getStore().getByKey(key);
        if (pod == null || "Failed".equals(phase(pod)) || "Succeeded".equals(phase(pod))) {
            log.debugf("Deleting pod: key %s", key);
            labelCache.deletePod(podKey);
            metrics.update(labelCache.conflicts());
            return;
        }
        try {
            syncPod(pod, podKey);
        } finally {
            metrics.update(labelCache.conflicts());
        }
    }

    private void syncPod(Pod pod, PodKey podKey) {
        log.debugf("Syncing pod: pod %s", podKey);
        List<String> errors = new ArrayList<>();
        Map<String, VolumeSpecs.Spec> specs = new HashMap<>();
        for (Volume v : pod.getSpec().getVolumes() == null ? List.<Volume>of() : pod.getSpec().getVolumes()) {
            try {
                specs.put(v.getName(), volumeSpecs.create(v, pod));
            } catch (RuntimeException e) {
                errors.add(e.getMessage());
            }
        }
        Map<String, List<SELinuxOptions>> seLinuxLabels = new LinkedHashMap<>();
        Set<String> mounts = new LinkedHashSet<>();
        collectMounts(pod, mounts, seLinuxLabels);
        for (String mount : mounts) {
            VolumeSpecs.Spec spec = specs.get(mount);
            if (spec == null) {
                log.debugf("skipping not found volume: pod %s volume %s", podKey, mount);
                continue;
            }
            MountLabel mountInfo;
            try {
                mountInfo = mountSELinuxLabel(spec, seLinuxLabels.getOrDefault(mount, List.of()), pod);
            } catch (MultipleSELinuxLabelsException e) {
                recorder.eventf(pod, EventRecorder.WARNING, "MultipleSELinuxLabels",
                        "Volume %s is mounted twice with different SELinux labels inside this pod", goQuote(mount));
                errors.add(e.getMessage());
                continue;
            }
            try {
                syncVolume(pod, podKey, spec, mountInfo.mountLabel(), mountInfo.pluginSupportsSELinuxContextMount());
            } catch (RuntimeException e) {
                errors.add(e.getMessage());
            }
        }
        if (!errors.isEmpty()) {
            throw new IllegalStateException(errors.size() == 1 ? errors.get(0) : "[" + String.join(", ", errors) + "]");
        }
    }

    /** volumeutil's GetPodVolumeNames with SELinux options: every container's mounts and effective options. */
    static void collectMounts(Pod pod, Set<String> mounts, Map<String, List<SELinuxOptions>> seLinuxLabels) {
        List<Container> containers = new ArrayList<>();
        if (pod.getSpec().getInitContainers() != null) {
            containers.addAll(pod.getSpec().getInitContainers());
        }
        if (pod.getSpec().getContainers() != null) {
            containers.addAll(pod.getSpec().getContainers());
        }
        List<Object[]> all = new ArrayList<>();
        for (Container c : containers) {
            all.add(new Object[] { c.getSecurityContext(), c.getVolumeMounts() });
        }
        if (pod.getSpec().getEphemeralContainers() != null) {
            for (EphemeralContainer c : pod.getSpec().getEphemeralContainers()) {
                all.add(new Object[] { c.getSecurityContext(), c.getVolumeMounts() });
            }
        }
        SELinuxOptions podOptions = pod.getSpec().getSecurityContext() == null ? null
                : pod.getSpec().getSecurityContext().getSeLinuxOptions();
        for (Object[] c : all) {
            SecurityContext sc = (SecurityContext) c[0];
            @SuppressWarnings("unchecked")
            List<VolumeMount> volumeMounts = (List<VolumeMount>) c[1];
            // securitycontext.DetermineEffectiveSecurityContext: the container's options, else the pod's
            SELinuxOptions options = sc != null && sc.getSeLinuxOptions() != null ? sc.getSeLinuxOptions() : podOptions;
            if (volumeMounts == null) {
                continue;
            }
            for (VolumeMount m : volumeMounts) {
                mounts.add(m.getName());
                if (options != null) {
                    seLinuxLabels.computeIfAbsent(m.getName(), k -> new ArrayList<>()).add(options);
                }
            }
        }
    }

    record MountLabel(String mountLabel, boolean pluginSupportsSELinuxContextMount) {
    }

    static final class MultipleSELinuxLabelsException extends RuntimeException {
        MultipleSELinuxLabelsException(Set<String> labels) {
            super("multiple SELinux labels found: " + String.join(",", labels));
        }
    }

    /** volumeutil's GetMountSELinuxLabel with the controller's translator. */
    MountLabel mountSELinuxLabel(VolumeSpecs.Spec spec, List<SELinuxOptions> containerLabels, Pod pod) {
        if (!seLinuxMountReadWriteOncePod) {
            return new MountLabel("", false);
        }
        boolean supports = volumeSpecs.supportsSELinuxContextMount(spec);
        Set<String> labels = new LinkedHashSet<>();
        for (SELinuxOptions o : containerLabels) {
            labels.add(SELinuxTranslator.toFileLabel(o));
        }
        if (labels.size() > 1) {
            throw new MultipleSELinuxLabelsException(labels);
        }
        if (labels.isEmpty()) {
            return new MountLabel("", supports);
        }
        String label = labels.iterator().next();
        var psc = pod.getSpec().getSecurityContext();
        if (psc != null && "Recursive".equals(psc.getSeLinuxChangePolicy())) {
            label = "";
        }
        if (!supports) {
            label = "";
        }
        return new MountLabel(label, supports);
    }

    private void syncVolume(Pod pod, PodKey podKey, VolumeSpecs.Spec spec, String seLinuxLabel,
            boolean pluginSupportsSELinuxContextMount) {
        VolumeSpecs.Plugin plugin = volumeSpecs.findPlugin(spec);
        if (plugin == null) {
            log.debugf("Skipping volume of unknown plugin: volume %s", spec.name());
            return;
        }
        String uniqueVolumeName;
        try {
            uniqueVolumeName = plugin.name() + "/" + plugin.volumeName(spec);
        } catch (RuntimeException e) {
            throw new IllegalStateException("failed to get unique volume name for volume \"" + spec.name() + "\": "
                    + e.getMessage(), e);
        }
        String changePolicy = "MountOption";
        var psc = pod.getSpec().getSecurityContext();
        if (psc != null && psc.getSeLinuxChangePolicy() != null) {
            changePolicy = psc.getSeLinuxChangePolicy();
        }
        if (!pluginSupportsSELinuxContextMount && !"Recursive".equals(changePolicy)) {
            changePolicy = "Recursive";
        }
        if (seLinuxLabel.isEmpty() && !"Recursive".equals(changePolicy)) {
            changePolicy = "Recursive";
        }
        String csiDriver = VolumeSpecs.csiDriverName(spec);
        List<Conflict> conflicts = labelCache.addVolume(uniqueVolumeName, podKey, seLinuxLabel, changePolicy,
                csiDriver == null ? "" : csiDriver);
        reportConflictEvents(conflicts);
    }

    private void reportConflictEvents(List<Conflict> conflicts) {
        for (Conflict conflict : conflicts) {
            Pod pod = pods.getStore().getByKey(conflict.pod().toString());
            if (pod == null) {
                log.debugf("failed to get first pod for event: pod %s", conflict.pod());
                return;
            }
            recorder.event(pod, EventRecorder.NORMAL, conflict.eventReason(), conflict.eventMessage());
        }
    }

    /** Go's %q of a plain string. */
    private static String goQuote(String s) {
        return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }
}
