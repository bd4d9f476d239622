package io.qkcm.controller.volume.ephemeral;

import java.util.List;

import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimTemplate;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.javaoperatorsdk.operator.api.reconciler.Ignore;
import io.javaoperatorsdk.operator.processing.event.source.filter.GenericFilter;
import io.javaoperatorsdk.operator.processing.event.source.filter.OnUpdateFilter;
import io.qkcm.controller.ApiErrors;
import io.qkcm.controller.ControllerRefManager;
import io.qkcm.controller.volume.common.PodPVCIndex;
import io.qkcm.controller.volume.ephemeral.metrics.EphemeralVolumeMetrics;
import io.qkcm.runtime.DeepCopy;
import io.qkcm.runtime.events.EventRecorder;
import io.qkcm.runtime.informers.ResourceEventHandlerFuncs;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.KeyReconciler;

/**
 * ephemeral-volume-controller (upstream pkg/controller/volume/ephemeral): for each generic ephemeral
 * volume of a pod, the PVC {@code <pod>-<volume>} made from the volume's claim template, controlled by
 * the pod (so the garbage collector deletes it with the pod). A PVC of that name the pod does not
 * control is left alone and reported on the pod (FailedBinding), and the pod is retried with backoff.
 *
 * <p>Upstream queues a pod on its add only (not on updates or resyncs), when it is not being deleted and
 * has an ephemeral volume — the primary filters — and queues the pods using a PVC when that PVC is
 * deleted, so a deleted claim is made again.
 */
@Ignore // runs in its own Operator, not quarkus-operator-sdk's default one
public final class EphemeralController extends KeyReconciler<Pod> {

    public static final String NAME = "ephemeral-volume-controller";
    public static final String QUEUE = "ephemeral_volume";
    /** Upstream's event source component. */
    public static final String EVENT_SOURCE = "ephemeral_volume";
    /** pkg/controller/volume/events.FailedBinding. */
    public static final String FAILED_BINDING = "FailedBinding";

    private final SharedIndexInformer<Pod> pods;
    private final SharedIndexInformer<PersistentVolumeClaim> pvcs;
    private final EventRecorder recorder;
    private final EphemeralVolumeMetrics metrics;

    /** {@code workers}: --concurrent-ephemeralvolume-syncs. */
    public EphemeralController(ControllerContext context, int workers) {
        super(context, Pod.class, QUEUE, workers);
        this.pods = context.informers().informerFor(Pod.class);
        this.pvcs = context.informers().informerFor(PersistentVolumeClaim.class);
        this.recorder = context.recorderFor(EVENT_SOURCE);
        this.metrics = new EphemeralVolumeMetrics(context.metrics());
        PodPVCIndex.addIfNotPresent(pods);
        pvcs.addEventHandler(ResourceEventHandlerFuncs.<PersistentVolumeClaim>of(null, null, this::onPVCDelete));
    }

    @Override
    protected List<SharedIndexInformer<?>> informers() {
        return List.of(pods, pvcs);
    }

    /** Upstream's enqueuePod: a pod not being deleted with at least one ephemeral volume. */
    static boolean wantsClaims(Pod pod) {
        if (pod.getMetadata().getDeletionTimestamp() != null || pod.getSpec() == null || pod.getSpec().getVolumes() == null) {
            return false;
        }
        return pod.getSpec().getVolumes().stream().anyMatch(v -> v.getEphemeral() != null);
    }

    @Override
    protected GenericFilter<? super Pod> primaryFilter() {
        return EphemeralController::wantsClaims;
    }

    /** Upstream has no update handler for pods. */
    @Override
    protected OnUpdateFilter<? super Pod> primaryUpdateFilter() {
        return (old, cur) -> false;
    }

    /** Upstream's onPVCDelete: the pods using the deleted claim get it back. */
    private void onPVCDelete(PersistentVolumeClaim pvc) {
        for (Pod pod : PodPVCIndex.podsUsing(pods, pvc.getMetadata().getNamespace(), pvc.getMetadata().getName())) {
            if (wantsClaims(pod)) {
                queue.add(key(pod));
            }
        }
    }

    @Override
    public void onStart() {
        log.info("Starting ephemeral volume controller");
    }

    @Override
    public void onShutdown() {
        log.info("Shutting down ephemeral volume controller");
    }

    @Override
    protected void logRetry(String key, int requeues, Exception e) {
        log.errorf("%s failed with: %s", key, shortMessage(e));
    }

    /** Upstream's syncHandler. */
    @Override
    protected void sync(String key) throws Exception {
        Pod pod = pods.getStore().getByKey(key);
        if (pod == null) {
            log.tracef("Ephemeral: nothing to do for pod, it is gone: %s", key);
            return;
        }
        if (pod.getMetadata().getDeletionTimestamp() != null) {
            log.tracef("Ephemeral: nothing to do for pod, it is marked for deletion: %s", key);
            return;
        }
        for (Volume volume : pod.getSpec().getVolumes() == null ? List.<Volume>of() : pod.getSpec().getVolumes()) {
            try {
                handleVolume(pod, volume);
            } catch (VolumeException e) {
                recorder.event(pod, EventRecorder.WARNING, FAILED_BINDING,
                        "ephemeral volume " + volume.getName() + ": " + e.getMessage());
                throw new VolumeException("pod " + key + ", ephemeral volume " + volume.getName() + ": " + e.getMessage());
            }
        }
    }

    static final class VolumeException extends Exception {
        VolumeException(String message) {
            super(message);
        }
    }

    /** Upstream's handleVolume: create the volume's claim unless it exists; a claim not made for the pod is an error. */
    private void handleVolume(Pod pod, Volume volume) throws VolumeException {
        log.tracef("Ephemeral: checking volume %s", volume.getName());
        if (volume.getEphemeral() == null) {
            return;
        }
        String namespace = pod.getMetadata().getNamespace();
        String pvcName = PodPVCIndex.ephemeralVolumeClaimName(pod, volume);
        PersistentVolumeClaim existing = pvcs.getStore().getByKey(namespace + "/" + pvcName);
        if (existing != null) {
            if (!namespace.equals(existing.getMetadata().getNamespace()) || !ControllerRefManager.isControlledBy(existing, pod)) {
                // component-helpers' ephemeral.VolumeIsForPod
                throw new VolumeException(String.format("PVC %s/%s was not created for pod %s/%s (pod is not owner)",
                        existing.getMetadata().getNamespace(), pvcName, namespace, pod.getMetadata().getName()));
            }
            log.tracef("Ephemeral: PVC already created: volume %s, PVC %s/%s", volume.getName(), namespace, pvcName);
            return;
        }
        PersistentVolumeClaimTemplate template = volume.getEphemeral().getVolumeClaimTemplate();
        ObjectMeta meta = new ObjectMeta();
        meta.setName(pvcName);
        meta.setOwnerReferences(List.of(new OwnerReferenceBuilder().withApiVersion("v1").withKind("Pod")
                .withName(pod.getMetadata().getName()).withUid(pod.getMetadata().getUid()).withController(true)
                .withBlockOwnerDeletion(true).build()));
        ObjectMeta templateMeta = template == null ? null : template.getMetadata();
        if (templateMeta != null) {
            meta.setAnnotations(templateMeta.getAnnotations());
            meta.setLabels(templateMeta.getLabels());
        }
        PersistentVolumeClaim pvc = new PersistentVolumeClaim();
        pvc.setApiVersion("v1");
        pvc.setKind("PersistentVolumeClaim");
        pvc.setMetadata(meta);
        pvc.setSpec(template == null || template.getSpec() == null ? null : DeepCopy.of(template.getSpec()));
        metrics.createAttempted();
        try {
            context.client().persistentVolumeClaims().inNamespace(namespace).resource(pvc).create();
        } catch (RuntimeException e) {
            metrics.createFailed();
            throw new VolumeException("create PVC " + pvcName + ": " + ApiErrors.message(e));
        }
    }

    /** The controller's metrics (tests). */
    EphemeralVolumeMetrics metrics() {
        return metrics;
    }
}
