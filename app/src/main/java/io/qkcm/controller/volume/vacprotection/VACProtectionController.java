package io.qkcm.controller.volume.vacprotection;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.javaoperatorsdk.operator.api.reconciler.Ignore;
import io.javaoperatorsdk.operator.processing.event.source.filter.GenericFilter;
import io.qkcm.controller.volume.common.Protection;
import io.qkcm.runtime.DeepCopy;
import io.qkcm.runtime.informers.Indexes;
import io.qkcm.runtime.informers.ResourceEventHandlerFuncs;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.KeyReconciler;

/**
 * volumeattributesclass-protection-controller (upstream pkg/controller/volume/vacprotection): keeps the
 * {@code kubernetes.io/vac-protection} finalizer on every VolumeAttributesClass not being deleted, and
 * removes it from one being deleted once no PV names it (spec.volumeAttributesClassName) and no PVC
 * does (spec, status.currentVolumeAttributesClassName, or the target of status.modifyVolumeStatus),
 * as the PV and PVC caches show (indexed by those names).
 *
 * <p>Upstream's VAC handler (adds and updates that need the finalizer or may lose it) is the primary
 * filter; a PV or PVC that stops naming a class, or is deleted, queues that class.
 */
@Ignore // runs in its own Operator, not quarkus-operator-sdk's default one
public final class VACProtectionController extends KeyReconciler<VolumeAttributesClass> {

    public static final String NAME = "volumeattributesclass-protection-controller";
    public static final String QUEUE = "vacprotection";
    public static final String VAC_PROTECTION_FINALIZER = "kubernetes.io/vac-protection";
    static final String VAC_NAME_KEY_INDEX = "volumeAttributesClassName";

    private final SharedIndexInformer<VolumeAttributesClass> vacs;
    private final SharedIndexInformer<PersistentVolume> pvs;
    private final SharedIndexInformer<PersistentVolumeClaim> pvcs;

    /** {@code workers}: upstream runs one. */
    public VACProtectionController(ControllerContext context, int workers) {
        super(registered(context), VolumeAttributesClass.class, QUEUE, workers);
        this.vacs = context.informers().informerFor(VolumeAttributesClass.class);
        this.pvs = context.informers().informerFor(PersistentVolume.class);
        this.pvcs = context.informers().informerFor(PersistentVolumeClaim.class);
        synchronized (pvs) {
            if (!pvs.getIndexer().getIndexers().containsKey(VAC_NAME_KEY_INDEX)) {
                pvs.addIndexers(Map.of(VAC_NAME_KEY_INDEX, VACProtectionController::pvReferencedVACNames));
            }
        }
        synchronized (pvcs) {
            if (!pvcs.getIndexer().getIndexers().containsKey(VAC_NAME_KEY_INDEX)) {
                pvcs.addIndexers(Map.of(VAC_NAME_KEY_INDEX, VACProtectionController::pvcReferencedVACNames));
            }
        }
        pvcs.addEventHandler(ResourceEventHandlerFuncs.<PersistentVolumeClaim>of(null,
                (old, cur) -> enqueueDropped(pvcReferencedVACNames(old), pvcReferencedVACNames(cur)),
                pvc -> pvcReferencedVACNames(pvc).forEach(queue::add)));
        pvs.addEventHandler(ResourceEventHandlerFuncs.<PersistentVolume>of(null,
                (old, cur) -> enqueueDropped(pvReferencedVACNames(old), pvReferencedVACNames(cur)),
                pv -> pvReferencedVACNames(pv).forEach(queue::add)));
    }

    /**
     * qkcm's own model class is known to the one API serialization before any informer decodes one (fabric8
     * would decode an unregistered kind as a GenericKubernetesResource).
     */
    private static ControllerContext registered(ControllerContext context) {
        io.qkcm.runtime.Json.api().registerKubernetesResource(VolumeAttributesClass.class);
        return context;
    }

    /** Upstream's pvcUpdated/pvUpdated: the classes the old object named and the new one does not. */
    private void enqueueDropped(List<String> before, List<String> after) {
        Set<String> dropped = new LinkedHashSet<>(before);
        after.forEach(dropped::remove);
        dropped.forEach(queue::add);
    }

    @Override
    protected List<SharedIndexInformer<?>> informers() {
        return List.of(pvs, pvcs, vacs);
    }

    /** Upstream's vacAddedUpdated. */
    @Override
    protected GenericFilter<? super VolumeAttributesClass> primaryFilter() {
        return vac -> Protection.needToAddFinalizer(vac, VAC_PROTECTION_FINALIZER)
                || Protection.isDeletionCandidate(vac, VAC_PROTECTION_FINALIZER);
    }

    @Override
    public void onStart() {
        log.info("Starting VAC protection controller");
    }

    @Override
    public void onShutdown() {
        log.info("Shutting down VAC protection controller");
    }

    @Override
    protected void logRetry(String key, int requeues, Exception e) {
        log.errorf("VAC %s failed with : %s", key, shortMessage(e));
    }

    /** Upstream's processVAC. */
    @Override
    protected void sync(String key) {
        VolumeAttributesClass vac = vacs.getStore().getByKey(key);
        if (vac == null) {
            log.tracef("VAC not found, ignoring: %s", key);
            return;
        }
        if (Protection.isDeletionCandidate(vac, VAC_PROTECTION_FINALIZER)) {
            if (!isBeingUsed(key)) {
                updateFinalizers(vac, false);
                return;
            }
            log.tracef("Keeping VAC because it is being used: %s", key);
        }
        if (Protection.needToAddFinalizer(vac, VAC_PROTECTION_FINALIZER)) {
            updateFinalizers(vac, true);
        }
    }

    /** Upstream's isBeingUsed: a PV or a PVC names the class. */
    private boolean isBeingUsed(String vacName) {
        return !Indexes.byIndex(pvs, VAC_NAME_KEY_INDEX, vacName).isEmpty()
                || !Indexes.byIndex(pvcs, VAC_NAME_KEY_INDEX, vacName).isEmpty();
    }

    private void updateFinalizers(VolumeAttributesClass vac, boolean add) {
        VolumeAttributesClass clone = DeepCopy.of(vac);
        List<String> finalizers = new ArrayList<>(clone.getMetadata().getFinalizers() == null ? List.of()
                : clone.getMetadata().getFinalizers());
        if (add) {
            finalizers.add(VAC_PROTECTION_FINALIZER);
        } else {
            finalizers.removeIf(VAC_PROTECTION_FINALIZER::equals);
        }
        clone.getMetadata().setFinalizers(finalizers);
        String name = vac.getMetadata().getName();
        try {
            context.client().resources(VolumeAttributesClass.class).resource(clone).update();
        } catch (RuntimeException e) {
            log.debugf("Error %s protection finalizer %s VAC %s: %s", add ? "adding" : "removing", add ? "to" : "from", name,
                    shortMessage(e));
            throw e;
        }
        log.debugf("%s protection finalizer %s VAC %s", add ? "Added" : "Removed", add ? "to" : "from", name);
    }

    /** Upstream's getPVCReferencedVACNames. */
    static List<String> pvcReferencedVACNames(PersistentVolumeClaim pvc) {
        Set<String> keys = new LinkedHashSet<>();
        if (pvc.getSpec() != null) {
            addIfSet(keys, pvc.getSpec().getVolumeAttributesClassName());
        }
        if (pvc.getStatus() != null) {
            addIfSet(keys, pvc.getStatus().getCurrentVolumeAttributesClassName());
            if (pvc.getStatus().getModifyVolumeStatus() != null) {
                addIfSet(keys, pvc.getStatus().getModifyVolumeStatus().getTargetVolumeAttributesClassName());
            }
        }
        return new ArrayList<>(keys);
    }

    /** Upstream's getPVReferencedVACNames. */
    static List<String> pvReferencedVACNames(PersistentVolume pv) {
        List<String> result = new ArrayList<>();
        if (pv.getSpec() != null) {
            String name = pv.getSpec().getVolumeAttributesClassName();
            if (name != null && !name.isEmpty()) {
                result.add(name);
            }
        }
        return result;
    }

    private static void addIfSet(Set<String> keys, String name) {
        if (name != null && !name.isEmpty()) {
            keys.add(name);
        }
    }
}
