package io.qkcm.controller.volume.pvcprotection;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodStatus;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.javaoperatorsdk.operator.api.reconciler.Ignore;
import io.javaoperatorsdk.operator.processing.event.source.filter.GenericFilter;
import io.qkcm.controller.ControllerRefManager;
import io.qkcm.controller.volume.common.PodPVCIndex;
import io.qkcm.controller.volume.common.Protection;
import io.qkcm.runtime.DeepCopy;
import io.qkcm.runtime.informers.MetaNamespaceKey;
import io.qkcm.runtime.informers.ResourceEventHandlerFuncs;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.KeyReconciler;
import io.qkcm.runtime.workqueue.RateLimiter;

/**
 * persistentvolumeclaim-protection-controller (upstream pkg/controller/volume/pvcprotection): keeps the
 * {@code kubernetes.io/pvc-protection} finalizer on every PVC not being deleted, and removes it from a
 * PVC being deleted once no pod uses it — asked of the pod cache first (the pod-pvc index) and, when the
 * cache knows of no such pod, of the API server with a live list of the namespace's pods, since a pod
 * may exist that the cache has not seen yet.
 *
 * <p>Upstream's two stages are kept: the main worker (this reconciler, one worker) moves PVC keys off
 * the queue into a store grouped by namespace, and namespace workers ({@link #onStart}) take one
 * namespace with all its waiting PVCs at a time, sharing one live pod list among them (upstream's
 * LazyLivePodList). A PVC that fails goes back on the queue with the controller's per-key backoff; the
 * main worker does not reset that backoff on hand-over (upstream calls Forget only after processing).
 */
@Ignore // runs in its own Operator, not quarkus-operator-sdk's default one
public final class PVCProtectionController extends KeyReconciler<PersistentVolumeClaim> {

    public static final String NAME = "persistentvolumeclaim-protection-controller";
    public static final String QUEUE = "pvcprotection";
    public static final String PVC_PROTECTION_FINALIZER = "kubernetes.io/pvc-protection";

    private final SharedIndexInformer<PersistentVolumeClaim> pvcs;
    private final SharedIndexInformer<Pod> pods;
    private final PVCProcessingStore store = new PVCProcessingStore();
    /** The queue's backoff, forgotten only when a namespace worker has processed the PVC. */
    private final RateLimiter<String> backoff;
    private final int namespaceWorkers;
    private final List<Thread> workerThreads = new ArrayList<>();

    /** {@code namespaceWorkers}: upstream runs one (its start function's {@code Run(ctx, 1)}). */
    public PVCProtectionController(ControllerContext context, int namespaceWorkers) {
        this(context, namespaceWorkers, RateLimiter.controllerDefault());
    }

    private PVCProtectionController(ControllerContext context, int namespaceWorkers, RateLimiter<String> backoff) {
        super(context, PersistentVolumeClaim.class, QUEUE, 1, forgetOnlyByNamespaceWorkers(backoff));
        this.backoff = backoff;
        this.namespaceWorkers = namespaceWorkers;
        this.pvcs = context.informers().informerFor(PersistentVolumeClaim.class);
        this.pods = context.informers().informerFor(Pod.class);
        PodPVCIndex.addIfNotPresent(pods);
        pods.addEventHandler(ResourceEventHandlerFuncs.<Pod>of(
                pod -> podAddedDeletedUpdated(null, pod, false),
                (old, cur) -> podAddedDeletedUpdated(old, cur, false),
                pod -> podAddedDeletedUpdated(null, pod, true)));
    }

    /** The main worker's frame forgets a key after handing it over; the real Forget follows processing. */
    private static RateLimiter<String> forgetOnlyByNamespaceWorkers(RateLimiter<String> backoff) {
        return new RateLimiter<>() {
            @Override
            public Duration when(String item) {
                return backoff.when(item);
            }

            @Override
            public void forget(String item) {
            }

            @Override
            public int numRequeues(String item) {
                return backoff.numRequeues(item);
            }
        };
    }

    @Override
    protected List<SharedIndexInformer<?>> informers() {
        return List.of(pvcs, pods);
    }

    /** Upstream's pvcAddedUpdated: a PVC that needs the finalizer, or may lose it, is queued. Deletes queue nothing. */
    @Override
    protected GenericFilter<? super PersistentVolumeClaim> primaryFilter() {
        return pvc -> {
            log.tracef("Got event on PVC %s", key(pvc));
            return Protection.needToAddFinalizer(pvc, PVC_PROTECTION_FINALIZER)
                    || Protection.isDeletionCandidate(pvc, PVC_PROTECTION_FINALIZER);
        };
    }

    @Override
    public synchronized void onStart() {
        log.info("Starting PVC protection controller");
        if (!workerThreads.isEmpty()) {
            return;
        }
        for (int i = 0; i < namespaceWorkers; i++) {
            Thread t = new Thread(this::runProcessNamespaceWorker, QUEUE + "-namespace-worker-" + i);
            t.setDaemon(true);
            workerThreads.add(t);
            t.start();
        }
    }

    @Override
    public synchronized void onShutdown() {
        log.info("Shutting down PVC protection controller");
        store.shutDown();
        workerThreads.forEach(Thread::interrupt);
    }

    /** Upstream's processNextWorkItem (the main worker): hand the PVC to its namespace's batch. */
    @Override
    protected void sync(String key) {
        MetaNamespaceKey k = MetaNamespaceKey.split(key);
        store.addOrUpdate(k.namespace(), key, k.name());
    }

    private void runProcessNamespaceWorker() {
        try {
            while (processPVCsByNamespace()) {
                // next namespace
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Upstream's processPVCsByNamespace: every waiting PVC of one namespace, with one lazy live pod list. */
    boolean processPVCsByNamespace() throws InterruptedException {
        PVCProcessingStore.Batch batch = store.flushNext();
        if (batch == null) {
            return false;
        }
        LazyLivePodList live = new LazyLivePodList();
        for (PVCProcessingStore.PVCData item : batch.pvcs()) {
            try {
                processPVC(batch.namespace(), item.name(), live);
                backoff.forget(item.key());
            } catch (InterruptedException e) {
                throw e;
            } catch (Exception e) {
                queue.addRateLimited(item.key());
                log.errorf("PVC %s/%s failed with: %s", item.name(), batch.namespace(), shortMessage(e));
            }
        }
        return true;
    }

    /** Upstream's LazyLivePodList: the first successful live list of the batch's namespace, reused. */
    static final class LazyLivePodList {
        List<Pod> cache;
    }

    /** Upstream's processPVC. */
    void processPVC(String namespace, String name, LazyLivePodList live) throws Exception {
        log.tracef("Processing PVC %s/%s", namespace, name);
        long start = System.nanoTime();
        try {
            PersistentVolumeClaim pvc = pvcs.getStore().getByKey(namespace + "/" + name);
            if (pvc == null) {
                log.tracef("PVC not found, ignoring: %s/%s", namespace, name);
                return;
            }
            if (Protection.isDeletionCandidate(pvc, PVC_PROTECTION_FINALIZER)) {
                // being deleted: remove the finalizer unless a pod uses the PVC
                if (!isBeingUsed(pvc, live)) {
                    removeFinalizer(pvc);
                    return;
                }
                log.debugf("Keeping PVC because it is being used: %s/%s", namespace, name);
            }
            if (Protection.needToAddFinalizer(pvc, PVC_PROTECTION_FINALIZER)) {
                // the admission plugin adds it on create; this covers PVCs made before it was enabled
                addFinalizer(pvc);
            }
        } finally {
            log.tracef("Finished processing PVC %s/%s (%dms)", namespace, name, (System.nanoTime() - start) / 1_000_000);
        }
    }

    private void addFinalizer(PersistentVolumeClaim pvc) {
        PersistentVolumeClaim clone = DeepCopy.of(pvc);
        List<String> finalizers = new ArrayList<>(clone.getMetadata().getFinalizers() == null ? List.of()
                : clone.getMetadata().getFinalizers());
        finalizers.add(PVC_PROTECTION_FINALIZER);
        clone.getMetadata().setFinalizers(finalizers);
        try {
            context.client().persistentVolumeClaims().inNamespace(clone.getMetadata().getNamespace()).resource(clone)
                    .update();
        } catch (RuntimeException e) {
            log.errorf("Error adding protection finalizer to PVC %s: %s", key(pvc), shortMessage(e));
            throw e;
        }
        log.debugf("Added protection finalizer to PVC %s", key(pvc));
    }

    private void removeFinalizer(PersistentVolumeClaim pvc) {
        PersistentVolumeClaim clone = DeepCopy.of(pvc);
        List<String> finalizers = new ArrayList<>(clone.getMetadata().getFinalizers());
        finalizers.removeIf(PVC_PROTECTION_FINALIZER::equals);
        clone.getMetadata().setFinalizers(finalizers);
        try {
            context.client().persistentVolumeClaims().inNamespace(clone.getMetadata().getNamespace()).resource(clone)
                    .update();
        } catch (RuntimeException e) {
            log.errorf("Error removing protection finalizer from PVC %s: %s", key(pvc), shortMessage(e));
            throw e;
        }
        log.debugf("Removed protection finalizer from PVC %s", key(pvc));
    }

    /** Upstream's isBeingUsed: the pod cache first; if it knows no user, a live list decides. */
    private boolean isBeingUsed(PersistentVolumeClaim pvc, LazyLivePodList live) {
        if (askInformer(pvc)) {
            return true;
        }
        return askAPIServer(pvc, live);
    }

    private boolean askInformer(PersistentVolumeClaim pvc) {
        log.tracef("Looking for Pods using PVC in the Informer's cache: %s", key(pvc));
        for (Pod pod : PodPVCIndex.podsUsing(pods, pvc.getMetadata().getNamespace(), pvc.getMetadata().getName())) {
            // the index holds ephemeral volumes' claim names too; podUsesPVC checks this claim is the pod's
            if (podUsesPVC(pod, pvc)) {
                return true;
            }
        }
        log.tracef("No Pod using PVC was found in the Informer's cache: %s", key(pvc));
        return false;
    }

    private boolean askAPIServer(PersistentVolumeClaim pvc, LazyLivePodList live) {
        log.tracef("Looking for Pods using PVC: %s", key(pvc));
        if (live.cache == null) {
            log.tracef("Live listing Pods in namespace %s", pvc.getMetadata().getNamespace());
            List<Pod> items;
            try {
                items = context.client().pods().inNamespace(pvc.getMetadata().getNamespace()).list().getItems();
            } catch (RuntimeException e) {
                throw new IllegalStateException("live list of pods failed: " + e.getMessage(), e);
            }
            live.cache = items == null ? List.of() : items;
        }
        for (Pod pod : live.cache) {
            if (podUsesPVC(pod, pvc)) {
                return true;
            }
        }
        log.debugf("PVC is unused: %s", key(pvc));
        return false;
    }

    /**
     * Upstream's podUsesPVC: only a scheduled pod counts (the kubelet sees pods once scheduled, and will
     * not start one whose PVC is being deleted). A generic ephemeral volume's claim counts only while the
     * pod owns it and is not shut down.
     */
    static boolean podUsesPVC(Pod pod, PersistentVolumeClaim pvc) {
        if (pod.getSpec() == null || pod.getSpec().getNodeName() == null || pod.getSpec().getNodeName().isEmpty()
                || pod.getSpec().getVolumes() == null) {
            return false;
        }
        String claim = pvc.getMetadata().getName();
        for (Volume volume : pod.getSpec().getVolumes()) {
            if (volume.getPersistentVolumeClaim() != null && claim.equals(volume.getPersistentVolumeClaim().getClaimName())) {
                return true;
            }
            if (!podIsShutDown(pod) && volume.getEphemeral() != null
                    && claim.equals(PodPVCIndex.ephemeralVolumeClaimName(pod, volume)) && volumeIsForPod(pod, pvc)) {
                return true;
            }
        }
        return false;
    }

    /** component-helpers' ephemeral.VolumeIsForPod: same namespace and the pod is the PVC's controller. */
    static boolean volumeIsForPod(Pod pod, PersistentVolumeClaim pvc) {
        return pod.getMetadata().getNamespace().equals(pvc.getMetadata().getNamespace())
                && ControllerRefManager.isControlledBy(pvc, pod);
    }

    /**
     * Upstream's podIsShutDown: deleted with grace period zero — the kubelet is done with it, or it was
     * force-deleted. Its ephemeral claim then no longer counts, which breaks a cycle of a pod finalizer
     * waiting for the PVC.
     */
    static boolean podIsShutDown(Pod pod) {
        Long grace = pod.getMetadata().getDeletionGracePeriodSeconds();
        return pod.getMetadata().getDeletionTimestamp() != null && grace != null && grace == 0;
    }

    /** Upstream's podAddedDeletedUpdated. */
    void podAddedDeletedUpdated(Pod old, Pod pod, boolean deleted) {
        if (pod == null) {
            return;
        }
        enqueuePVCs(pod, deleted);
        // an update may hide a delete and a create of another pod with the same name: the old one's
        // PVCs may have been waiting for it
        if (old != null && old.getMetadata().getUid() != null && !old.getMetadata().getUid().equals(pod.getMetadata().getUid())) {
            enqueuePVCs(old, true);
        }
    }

    /** Upstream's enqueuePVCs: only pods that can free a PVC (deleted, terminated or not scheduled). */
    private void enqueuePVCs(Pod pod, boolean deleted) {
        boolean scheduled = pod.getSpec() != null && pod.getSpec().getNodeName() != null
                && !pod.getSpec().getNodeName().isEmpty();
        if (!deleted && !isPodTerminated(pod) && scheduled) {
            return;
        }
        log.tracef("Enqueuing PVCs for Pod %s (uid %s)", key(pod), pod.getMetadata().getUid());
        if (pod.getSpec() == null || pod.getSpec().getVolumes() == null) {
            return;
        }
        for (Volume volume : pod.getSpec().getVolumes()) {
            if (volume.getPersistentVolumeClaim() != null) {
                queue.add(pod.getMetadata().getNamespace() + "/" + volume.getPersistentVolumeClaim().getClaimName());
            } else if (volume.getEphemeral() != null) {
                queue.add(pod.getMetadata().getNamespace() + "/" + PodPVCIndex.ephemeralVolumeClaimName(pod, volume));
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
        return pod.getMetadata().getDeletionTimestamp() != null
                && (status == null || notRunning(status.getInitContainerStatuses()) && notRunning(status.getContainerStatuses())
                        && notRunning(status.getEphemeralContainerStatuses()));
    }

    /** Every status terminated or waiting, or none. */
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
