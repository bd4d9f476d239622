package io.qkcm.controller.volume.pvprotection;

import java.util.ArrayList;
import java.util.List;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.javaoperatorsdk.operator.api.reconciler.Ignore;
import io.javaoperatorsdk.operator.processing.event.source.filter.GenericFilter;
import io.qkcm.controller.volume.common.Protection;
import io.qkcm.runtime.DeepCopy;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.KeyReconciler;

/**
 * persistentvolume-protection-controller (upstream pkg/controller/volume/pvprotection): keeps the
 * {@code kubernetes.io/pv-protection} finalizer on every PV not being deleted, and removes it from a PV
 * being deleted unless the PV is Bound.
 *
 * <p>Upstream's handler queues an added or updated PV that needs the finalizer or may lose it, and
 * nothing on delete: that is the primary filter, and JOSDK's own events of the PV do the queueing.
 */
@Ignore // runs in its own Operator, not quarkus-operator-sdk's default one
public final class PVProtectionController extends KeyReconciler<PersistentVolume> {

    public static final String NAME = "persistentvolume-protection-controller";
    public static final String QUEUE = "pvprotection";
    public static final String PV_PROTECTION_FINALIZER = "kubernetes.io/pv-protection";

    private final SharedIndexInformer<PersistentVolume> pvs;

    /** {@code workers}: upstream runs one. */
    public PVProtectionController(ControllerContext context, int workers) {
        super(context, PersistentVolume.class, QUEUE, workers);
        this.pvs = context.informers().informerFor(PersistentVolume.class);
    }

    @Override
    protected List<SharedIndexInformer<?>> informers() {
        return List.of(pvs);
    }

    /** Upstream's pvAddedUpdated. */
    @Override
    protected GenericFilter<? super PersistentVolume> primaryFilter() {
        return pv -> {
            log.tracef("Got event on PV %s", pv.getMetadata().getName());
            return Protection.needToAddFinalizer(pv, PV_PROTECTION_FINALIZER)
                    || Protection.isDeletionCandidate(pv, PV_PROTECTION_FINALIZER);
        };
    }

    @Override
    public void onStart() {
        log.info("Starting PV protection controller");
    }

    @Override
    public void onShutdown() {
        log.info("Shutting down PV protection controller");
    }

    @Override
    protected void logRetry(String key, int requeues, Exception e) {
        log.errorf("PV %s failed with : %s", key, shortMessage(e));
    }

    /** Upstream's processPV. */
    @Override
    protected void sync(String key) {
        log.tracef("Processing PV %s", key);
        long start = System.nanoTime();
        try {
            PersistentVolume pv = pvs.getStore().getByKey(key);
            if (pv == null) {
                log.tracef("PV not found, ignoring: %s", key);
                return;
            }
            if (Protection.isDeletionCandidate(pv, PV_PROTECTION_FINALIZER)) {
                if (!isBeingUsed(pv)) {
                    removeFinalizer(pv);
                    return;
                }
                log.tracef("Keeping PV because it is being used: %s", key);
            }
            if (Protection.needToAddFinalizer(pv, PV_PROTECTION_FINALIZER)) {
                addFinalizer(pv);
            }
        } finally {
            log.tracef("Finished processing PV %s (%dms)", key, (System.nanoTime() - start) / 1_000_000);
        }
    }

    /** Upstream's isBeingUsed: a Bound PV is in use. */
    static boolean isBeingUsed(PersistentVolume pv) {
        return pv.getStatus() != null && "Bound".equals(pv.getStatus().getPhase());
    }

    private void addFinalizer(PersistentVolume pv) {
        PersistentVolume clone = DeepCopy.of(pv);
        List<String> finalizers = new ArrayList<>(clone.getMetadata().getFinalizers() == null ? List.of()
                : clone.getMetadata().getFinalizers());
        finalizers.add(PV_PROTECTION_FINALIZER);
        clone.getMetadata().setFinalizers(finalizers);
        try {
            context.client().persistentVolumes().resource(clone).update();
        } catch (RuntimeException e) {
            log.debugf("Error adding protection finalizer to PV %s: %s", pv.getMetadata().getName(), shortMessage(e));
            throw e;
        }
        log.debugf("Added protection finalizer to PV %s", pv.getMetadata().getName());
    }

    private void removeFinalizer(PersistentVolume pv) {
        PersistentVolume clone = DeepCopy.of(pv);
        List<String> finalizers = new ArrayList<>(clone.getMetadata().getFinalizers());
        finalizers.removeIf(PV_PROTECTION_FINALIZER::equals);
        clone.getMetadata().setFinalizers(finalizers);
        try {
            context.client().persistentVolumes().resource(clone).update();
        } catch (RuntimeException e) {
            log.debugf("Error removing protection finalizer from PV %s: %s", pv.getMetadata().getName(), shortMessage(e));
            throw e;
        }
        log.debugf("Removed protection finalizer from PV %s", pv.getMetadata().getName());
    }
}
