package io.qkcm.controller.volume.persistentvolume;

import static io.qkcm.controller.volume.persistentvolume.StorageHelpers.*;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeSet;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimStatus;
import io.fabric8.kubernetes.api.model.PersistentVolumeStatus;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.qkcm.controller.ApiErrors;
import io.qkcm.controller.volume.common.CSITranslation;
import io.qkcm.controller.volume.common.PodPVCIndex;
import io.qkcm.runtime.DeepCopy;
import io.qkcm.runtime.events.EventRecorder;

/**
 * Upstream's PersistentVolumeController (pv_controller.go and the store half of
 * pv_controller_base.go): syncClaim and syncVolume, binding, provisioning hand-off and reclaim.
 *
 * <p>Every write's answer goes into the controller's own stores ({@link #volumes}, {@link #claims});
 * a sync never acts on an older version than the stored one. Errors go back to the worker, which logs
 * them: upstream retries a failed sync only at the next event or periodic resync, never in a loop.
 *
 * <p>The in-tree plugins are upstream's binder's: host-path (recycle, delete, provision) and NFS
 * (recycle), see {@link InTreePlugins}. Every provisioner not migrated to CSI and not prefixed
 * {@code kubernetes.io/} is external (upstream's path for it is taken whole); another in-tree
 * {@code kubernetes.io/} provisioner, deleter or recycler is reported as upstream reports a plugin it
 * cannot find.
 */
final class PersistentVolumeBinder {

    static final String EVENT_SOURCE = "persistentvolume-controller";

    // pkg/controller/volume/events
    static final String FAILED_BINDING = "FailedBinding";
    static final String VOLUME_MISMATCH = "VolumeMismatch";
    static final String VOLUME_FAILED_RECYCLE = "VolumeFailedRecycle";
    static final String VOLUME_RECYCLED = "VolumeRecycled";
    static final String RECYCLER_POD = "RecyclerPod";
    static final String PROVISIONING_SUCCEEDED = "ProvisioningSucceeded";
    static final String PROVISIONING_CLEANUP_FAILED = "ProvisioningCleanupFailed";
    static final String VOLUME_DELETE = "VolumeDelete";
    static final String VOLUME_FAILED_DELETE = "VolumeFailedDelete";
    static final String EXTERNAL_PROVISIONING = "ExternalProvisioning";
    static final String PROVISIONING_FAILED = "ProvisioningFailed";
    static final String WAIT_FOR_FIRST_CONSUMER = "WaitForFirstConsumer";
    static final String WAIT_FOR_POD_SCHEDULED = "WaitForPodScheduled";

    /** Upstream's two work queues, as the binder queues into them. */
    interface Queues {
        void addClaim(String key);

        void addVolume(String name);
    }

    private static final Logger LOG = Logger.getLogger(PersistentVolumeBinder.class);

    final VolumeIndex volumes = new VolumeIndex();
    final LatestObjects<PersistentVolumeClaim> claims = new LatestObjects<>(StorageHelpers::claimKey, "claim");

    private final KubernetesClient client;
    private final EventRecorder recorder;
    private final SharedIndexInformer<PersistentVolume> volumeInformer;
    private final SharedIndexInformer<PersistentVolumeClaim> claimInformer;
    private final SharedIndexInformer<StorageClass> classInformer;
    private final SharedIndexInformer<Pod> podInformer;
    private final SharedIndexInformer<Node> nodeInformer;
    private final Operations operations;
    private final InTreePlugins plugins;
    private final PortworxDeleter portworx;
    private final RecyclerClient recyclerClient;
    final BinderMetrics metrics;
    /** createProvisionedPVRetryCount and createProvisionedPVInterval. */
    int createProvisionedPVRetryCount = 5;
    long createProvisionedPVIntervalMillis = 10_000;
    private final boolean enableDynamicProvisioning;
    private final boolean vacEnabled;
    private volatile Queues queues;
    private boolean initialized;

    PersistentVolumeBinder(KubernetesClient client, EventRecorder recorder,
            SharedIndexInformer<PersistentVolume> volumeInformer, SharedIndexInformer<PersistentVolumeClaim> claimInformer,
            SharedIndexInformer<StorageClass> classInformer, SharedIndexInformer<Pod> podInformer,
            SharedIndexInformer<Node> nodeInformer, Operations operations, InTreePlugins plugins, BinderMetrics metrics,
            boolean enableDynamicProvisioning, boolean vacEnabled) {
        this.client = client;
        this.recorder = recorder;
        this.volumeInformer = volumeInformer;
        this.claimInformer = claimInformer;
        this.classInformer = classInformer;
        this.podInformer = podInformer;
        this.nodeInformer = nodeInformer;
        this.operations = operations;
        this.plugins = plugins;
        this.portworx = new PortworxDeleter(client, plugins.portworxLocalPort);
        this.metrics = metrics;
        this.recyclerClient = new RecyclerClient(client, podInformer);
        this.enableDynamicProvisioning = enableDynamicProvisioning;
        this.vacEnabled = vacEnabled;
        PodPVCIndex.addIfNotPresent(podInformer);
    }

    void setQueues(Queues queues) {
        this.queues = queues;
    }

    // ---- pv_controller_base.go: caches and the workers' bodies ----

    /** initializeCaches, once the shared caches have synced and before the first sync. */
    synchronized void ensureInitialized() {
        if (initialized) {
            return;
        }
        for (PersistentVolume v : volumeInformer.getStore().list()) {
            storeVolumeUpdate(v);
        }
        for (PersistentVolumeClaim c : claimInformer.getStore().list()) {
            storeClaimUpdate(c);
        }
        initialized = true;
    }

    /** Forgets the stores: the next leader term starts again from the shared caches. */
    synchronized void reset() {
        initialized = false;
        volumes.store.clear();
        claims.clear();
        metrics.storesChanged();
    }

    // the stores change before they are marked changed: a recount that cleared the mark before reading them
    // either sees the change or is followed by another (BinderMetrics.refresh)
    boolean storeVolumeUpdate(PersistentVolume volume) {
        boolean updated = volumes.store.update(volume);
        metrics.storesChanged();
        return updated;
    }

    boolean storeClaimUpdate(PersistentVolumeClaim claim) {
        boolean updated = claims.update(claim);
        metrics.storesChanged();
        return updated;
    }

    /** The pv_collector rows, recounted from the stores if they changed. */
    void refreshMetrics() {
        metrics.refresh(volumes.store::list, claims::list);
    }

    /** The volume worker's body for one key. */
    void volumeWorker(String name) throws Exception {
        ensureInitialized();
        PersistentVolume volume = volumeInformer.getStore().getByKey(name);
        if (volume != null) {
            updateVolume(volume);
            return;
        }
        PersistentVolume stored = volumes.store.get(name);
        if (stored == null) {
            LOG.tracef("deletion of volume %s was already processed", name);
            return;
        }
        deleteVolume(stored);
    }

    /** The claim worker's body for one key. */
    void claimWorker(String key) throws Exception {
        ensureInitialized();
        PersistentVolumeClaim claim = claimInformer.getStore().getByKey(key);
        if (claim != null) {
            updateClaim(claim);
            return;
        }
        PersistentVolumeClaim stored = claims.get(key);
        if (stored == null) {
            LOG.tracef("deletion of claim %s was already processed", key);
            return;
        }
        deleteClaim(stored);
    }

    private void updateVolume(PersistentVolume volume) throws Exception {
        if (!storeVolumeUpdate(volume)) {
            return;
        }
        syncVolume(volume);
    }

    private void deleteVolume(PersistentVolume volume) {
        volumes.store.delete(volume);
        metrics.storesChanged();
        LOG.debugf("volume %s deleted", volume.getMetadata().getName());
        // the end of a deletion: its end-to-end latency, if one was started
        metrics.recordOperation(volume.getMetadata().getName(), false);
        if (volume.getSpec().getClaimRef() == null) {
            return;
        }
        // sync the claim at once: it may be bound to the deleted volume
        queues.addClaim(claimRefKey(volume.getSpec().getClaimRef()));
    }

    private void updateClaim(PersistentVolumeClaim claim) throws Exception {
        if (!storeClaimUpdate(claim)) {
            return;
        }
        syncClaim(claim);
    }

    private void deleteClaim(PersistentVolumeClaim claim) {
        claims.delete(claim);
        metrics.storesChanged();
        LOG.debugf("claim %s deleted", claimKey(claim));
        // an unfinished provisioning's start is forgotten
        metrics.forgetOperation(claimKey(claim));
        String volumeName = volumeName(claim);
        if (volumeName.isEmpty()) {
            return;
        }
        // sync the volume at once: its reclaim policy applies now, not at the next resync
        queues.addVolume(volumeName);
    }

    /** resync: every claim and volume of the shared caches, queued. */
    void resync() {
        for (PersistentVolumeClaim c : claimInformer.getStore().list()) {
            queues.addClaim(claimKey(c));
        }
        for (PersistentVolume v : volumeInformer.getStore().list()) {
            queues.addVolume(v.getMetadata().getName());
        }
    }

    // ---- syncClaim ----

    void syncClaim(PersistentVolumeClaim claim) throws Exception {
        LOG.tracef("Synchronizing PersistentVolumeClaim %s", claimKey(claim));
        claim = updateClaimMigrationAnnotations(claim);
        if (!hasAnnotation(claim, ANN_BIND_COMPLETED)) {
            syncUnboundClaim(claim);
        } else {
            syncBoundClaim(claim);
        }
    }

    /** checkVolumeSatisfyClaim; null when it does. */
    String checkVolumeSatisfyClaim(PersistentVolume volume, PersistentVolumeClaim claim) {
        if (volume.getMetadata().getDeletionTimestamp() != null) {
            return "the volume is marked for deletion \"" + volume.getMetadata().getName() + "\"";
        }
        // Go's Quantity.Value(): rounded up to an integer
        java.math.BigDecimal requested = amount(requestedStorage(claim)).setScale(0, java.math.RoundingMode.CEILING);
        java.math.BigDecimal size = amount(capacity(volume)).setScale(0, java.math.RoundingMode.CEILING);
        if (size.compareTo(requested) < 0) {
            return "requested PV is too small";
        }
        if (!volumeClass(volume).equals(claimClass(claim))) {
            return "storageClassName does not match";
        }
        String requestedVAC = nonNull(claim.getSpec().getVolumeAttributesClassName());
        String volumeVAC = nonNull(volume.getSpec().getVolumeAttributesClassName());
        if (vacEnabled) {
            if (!requestedVAC.equals(volumeVAC)) {
                return "volumeAttributesClassName does not match";
            }
        } else if (!requestedVAC.isEmpty() || !volumeVAC.isEmpty()) {
            return "volumeAttributesClassName is not supported when the feature-gate VolumeAttributesClass is disabled";
        }
        if (checkVolumeModeMismatches(claim, volume)) {
            return "incompatible volumeMode";
        }
        if (!checkAccessModes(claim, volume)) {
            return "incompatible accessMode";
        }
        return null;
    }

    private void emitEventForUnboundDelayBindingClaim(PersistentVolumeClaim claim) {
        String reason = WAIT_FOR_FIRST_CONSUMER;
        String message = "waiting for first consumer to be created before binding";
        List<String> podNames = findNonScheduledPodsByPVC(claim);
        if (!podNames.isEmpty()) {
            reason = WAIT_FOR_POD_SCHEDULED;
            message = podNames.size() > 1 ? "waiting for pods " + String.join(",", podNames) + " to be scheduled"
                    : "waiting for pod " + podNames.get(0) + " to be scheduled";
        }
        recorder.event(claim, EventRecorder.NORMAL, reason, message);
    }

    /** IsDelayBindingMode, against the class cache. */
    private boolean isDelayBindingMode(PersistentVolumeClaim claim) throws Exception {
        String className = claimClass(claim);
        if (className.isEmpty()) {
            return false;
        }
        StorageClass storageClass = classInformer.getStore().getByKey(className);
        if (storageClass == null) {
            return false;
        }
        if (storageClass.getVolumeBindingMode() == null) {
            throw new IllegalStateException("VolumeBindingMode not set for StorageClass \"" + className + "\"");
        }
        return "WaitForFirstConsumer".equals(storageClass.getVolumeBindingMode());
    }

    private void syncUnboundClaim(PersistentVolumeClaim claim) throws Exception {
        if (volumeName(claim).isEmpty()) {
            boolean delayBinding = isDelayBindingMode(claim);
            PersistentVolume volume;
            try {
                volume = volumes.findBestMatchForClaim(claim, delayBinding, vacEnabled);
            } catch (BindingException e) {
                throw new IllegalStateException("error finding PV for claim \"" + claimKey(claim) + "\": " + e.getMessage(), e);
            }
            if (volume == null) {
                LOG.tracef("Synchronizing unbound PersistentVolumeClaim %s, no volume found", claimKey(claim));
                boolean assigned;
                try {
                    assigned = assignDefaultStorageClass(claim);
                } catch (RuntimeException e) {
                    metrics.retroactiveStorageClass(false);
                    throw e;
                }
                if (assigned) {
                    // the update comes back as an event and syncs the claim again
                    metrics.retroactiveStorageClass(true);
                    return;
                }
                if (delayBinding && !isDelayBindingProvisioning(claim)) {
                    emitEventForUnboundDelayBindingClaim(claim);
                } else if (!claimClass(claim).isEmpty()) {
                    provisionClaim(claim);
                    return;
                } else {
                    recorder.event(claim, EventRecorder.NORMAL, FAILED_BINDING,
                            "no persistent volumes available for this claim and no storage class is set");
                }
                updateClaimStatus(claim, "Pending", null);
                return;
            }
            LOG.tracef("Synchronizing unbound PersistentVolumeClaim %s, volume %s found", claimKey(claim),
                    volume.getMetadata().getName());
            try {
                bind(volume, claim);
            } catch (RuntimeException e) {
                // counted as a provisioning error; the start stays until a binding succeeds
                metrics.recordOperation(claimKey(claim), true);
                throw e;
            }
            // the end of a provisioning (and binding): its end-to-end latency
            metrics.recordOperation(claimKey(claim), false);
            return;
        }
        String requested = volumeName(claim);
        PersistentVolume volume = volumes.store.get(requested);
        if (volume == null) {
            LOG.tracef("Synchronizing unbound PersistentVolumeClaim %s, volume %s requested and not found", claimKey(claim),
                    requested);
            updateClaimStatus(claim, "Pending", null);
            return;
        }
        if (volume.getSpec().getClaimRef() == null) {
            String mismatch = checkVolumeSatisfyClaim(volume, claim);
            if (mismatch != null) {
                recorder.event(claim, EventRecorder.WARNING, VOLUME_MISMATCH,
                        "Cannot bind to requested volume \"" + volume.getMetadata().getName() + "\": " + mismatch);
                updateClaimStatus(claim, "Pending", null);
            } else {
                bind(volume, claim);
            }
            return;
        }
        if (isVolumeBoundToClaim(volume, claim)) {
            bind(volume, claim);
            return;
        }
        String message = "volume \"" + volume.getMetadata().getName() + "\" already bound to a different claim.";
        recorder.event(claim, EventRecorder.WARNING, FAILED_BINDING, message);
        if (!hasAnnotation(claim, ANN_BOUND_BY_CONTROLLER)) {
            // the user pre-bound the claim to a volume that is bound elsewhere: wait until it is free
            updateClaimStatus(claim, "Pending", null);
            return;
        }
        throw new IllegalStateException("invalid binding of claim \"" + claimKey(claim) + "\" to volume \"" + requested
                + "\": volume already claimed by \"" + claimRefKey(volume.getSpec().getClaimRef()) + "\"");
    }

    private void syncBoundClaim(PersistentVolumeClaim claim) throws Exception {
        if (volumeName(claim).isEmpty()) {
            updateClaimStatusWithEvent(claim, "Lost", null, EventRecorder.WARNING, "ClaimLost",
                    "Bound claim has lost reference to PersistentVolume. Data on the volume is lost!");
            return;
        }
        PersistentVolume volume = volumes.store.get(volumeName(claim));
        if (volume == null) {
            updateClaimStatusWithEvent(claim, "Lost", null, EventRecorder.WARNING, "ClaimLost",
                    "Bound claim has lost its PersistentVolume. Data on the volume is lost!");
            return;
        }
        if (volume.getSpec().getClaimRef() == null) {
            // the volume lost its claimRef (a user's edit?): bind it again
            bind(volume, claim);
        } else if (refUid(volume.getSpec().getClaimRef()).equals(uid(claim))) {
            // finish a binding an earlier sync left half done
            bind(volume, claim);
        } else {
            updateClaimStatusWithEvent(claim, "Lost", null, EventRecorder.WARNING, "ClaimMisbound",
                    "Two claims are bound to the same volume, this one is bound incorrectly");
        }
    }

    // ---- syncVolume ----

    void syncVolume(PersistentVolume volume) throws Exception {
        LOG.tracef("Synchronizing PersistentVolume %s", volume.getMetadata().getName());
        volume = updateVolumeMigrationAnnotationsAndFinalizers(volume);
        var ref = volume.getSpec().getClaimRef();
        if (ref == null) {
            updateVolumePhase(volume, "Available", "");
            return;
        }
        if (refUid(ref).isEmpty()) {
            // pre-bound by the user, waiting for its claim
            updateVolumePhase(volume, "Available", "");
            return;
        }
        String claimName = claimRefKey(ref);
        PersistentVolumeClaim claim = claims.get(claimName);
        if (claim == null && !"Released".equals(volumePhase(volume)) && !"Failed".equals(volumePhase(volume))) {
            // a claim created just now may be in the informer but not yet in the controller's store,
            // or not even in the informer: ask the API server before releasing a volume
            claim = claimInformer.getStore().getByKey(claimName);
            if (claim == null) {
                claim = getClaimLive(ref.getNamespace(), ref.getName());
            }
        }
        if (claim != null && !uid(claim).equals(refUid(ref))) {
            // the cached claim may be an older one of the same name
            claim = getClaimLive(ref.getNamespace(), ref.getName());
            if (claim != null && !uid(claim).equals(refUid(ref))) {
                // the claim the volume was bound to has been deleted and a new one of its name created
                claim = null;
            }
        }
        if (claim == null) {
            if (!"Released".equals(volumePhase(volume)) && !"Failed".equals(volumePhase(volume))) {
                LOG.debugf("Volume %s is released and reclaim policy \"%s\" will be executed", volume.getMetadata().getName(),
                        reclaimPolicy(volume));
                volume = updateVolumePhase(volume, "Released", "");
            }
            reclaimVolume(volume);
            return;
        }
        if (volumeName(claim).isEmpty()) {
            if (checkVolumeModeMismatches(claim, volume)) {
                recorder.event(volume, EventRecorder.WARNING, VOLUME_MISMATCH,
                        "Cannot bind PersistentVolume to requested PersistentVolumeClaim \"" + claim.getMetadata().getName()
                                + "\" due to incompatible volumeMode.");
                recorder.event(claim, EventRecorder.WARNING, VOLUME_MISMATCH,
                        "Cannot bind PersistentVolume \"" + volume.getMetadata().getName()
                                + "\" to requested PersistentVolumeClaim due to incompatible volumeMode.");
                return;
            }
            // the volume is bound and the claim not yet (or unbound by the user): syncClaim fixes it
            queues.addClaim(claimKey(claim));
            return;
        }
        if (volumeName(claim).equals(volume.getMetadata().getName())) {
            updateVolumePhase(volume, "Bound", "");
            return;
        }
        // the claim is bound to another volume
        if (hasAnnotation(volume, ANN_DYNAMICALLY_PROVISIONED) && "Delete".equals(reclaimPolicy(volume))) {
            // a provisioned volume its claim does not use: delete it
            if (!"Released".equals(volumePhase(volume)) && !"Failed".equals(volumePhase(volume))) {
                volume = updateVolumePhase(volume, "Released", "");
            }
            reclaimVolume(volume);
            return;
        }
        unbindVolume(volume);
    }

    private PersistentVolumeClaim getClaimLive(String namespace, String name) {
        return client.persistentVolumeClaims().inNamespace(namespace).withName(name).get();
    }

    // ---- writes ----

    PersistentVolumeClaim updateClaimStatus(PersistentVolumeClaim claim, String phase, PersistentVolume volume) {
        boolean dirty = false;
        PersistentVolumeClaim clone = DeepCopy.of(claim);
        if (clone.getStatus() == null) {
            clone.setStatus(new PersistentVolumeClaimStatus());
        }
        PersistentVolumeClaimStatus status = clone.getStatus();
        String oldPhase = claimPhase(claim);
        if (!oldPhase.equals(phase)) {
            status.setPhase(phase);
            dirty = true;
        }
        if (volume == null) {
            if (!list(status.getAccessModes()).isEmpty()) {
                status.setAccessModes(null);
                dirty = true;
            }
            if (status.getCapacity() != null && !status.getCapacity().isEmpty()) {
                status.setCapacity(null);
                dirty = true;
            }
            if (status.getCurrentVolumeAttributesClassName() != null) {
                status.setCurrentVolumeAttributesClassName(null);
                dirty = true;
            }
        } else {
            if (!list(status.getAccessModes()).equals(list(volume.getSpec().getAccessModes()))) {
                status.setAccessModes(new ArrayList<>(list(volume.getSpec().getAccessModes())));
                dirty = true;
            }
            if (!oldPhase.equals(phase)) {
                Quantity volumeCap = capacity(volume);
                if (volumeCap == null) {
                    throw new IllegalStateException("PersistentVolume \"" + volume.getMetadata().getName()
                            + "\" is without a storage capacity");
                }
                Quantity claimCap = status.getCapacity() == null ? null : status.getCapacity().get("storage");
                String preResize = annotations(volume).get(ANN_PRE_RESIZE_CAPACITY);
                if (preResize != null) {
                    Quantity pre;
                    try {
                        pre = new Quantity(preResize);
                        amount(pre);
                    } catch (RuntimeException e) {
                        LOG.infof("Parsing pre-resize-capacity from PV %s failed: %s", volume.getMetadata().getName(),
                                e.getMessage());
                        pre = volumeCap;
                    }
                    Map<String, Quantity> cap = status.getCapacity() == null ? new java.util.LinkedHashMap<>()
                            : new java.util.LinkedHashMap<>(status.getCapacity());
                    cap.put("storage", pre);
                    status.setCapacity(cap);
                    dirty = true;
                } else if (claimCap == null || amount(volumeCap).compareTo(amount(claimCap)) != 0) {
                    status.setCapacity(new java.util.LinkedHashMap<>(volume.getSpec().getCapacity()));
                    dirty = true;
                }
            }
            if (vacEnabled && "Pending".equals(oldPhase) && "Bound".equals(phase)
                    && !Objects.equals(status.getCurrentVolumeAttributesClassName(),
                            volume.getSpec().getVolumeAttributesClassName())) {
                status.setCurrentVolumeAttributesClassName(volume.getSpec().getVolumeAttributesClassName());
                dirty = true;
            }
        }
        if (!dirty) {
            return claim;
        }
        PersistentVolumeClaim updated = client.persistentVolumeClaims().inNamespace(claim.getMetadata().getNamespace())
                .resource(clone).updateStatus();
        LOG.debugf("claim %s entered phase %s", claimKey(claim), phase);
        storeClaimUpdate(updated);
        return updated;
    }

    PersistentVolumeClaim updateClaimStatusWithEvent(PersistentVolumeClaim claim, String phase, PersistentVolume volume,
            String type, String reason, String message) {
        if (claimPhase(claim).equals(phase)) {
            return claim;
        }
        PersistentVolumeClaim updated = updateClaimStatus(claim, phase, volume);
        recorder.event(updated, type, reason, message);
        return updated;
    }

    PersistentVolume updateVolumePhase(PersistentVolume volume, String phase, String message) {
        if (volumePhase(volume).equals(phase)) {
            return volume;
        }
        PersistentVolume clone = DeepCopy.of(volume);
        if (clone.getStatus() == null) {
            clone.setStatus(new PersistentVolumeStatus());
        }
        clone.getStatus().setPhase(phase);
        clone.getStatus().setMessage(message == null || message.isEmpty() ? null : message);
        PersistentVolume updated = client.persistentVolumes().resource(clone).updateStatus();
        LOG.debugf("volume %s entered phase %s", volume.getMetadata().getName(), phase);
        storeVolumeUpdate(updated);
        return updated;
    }

    PersistentVolume updateVolumePhaseWithEvent(PersistentVolume volume, String phase, String type, String reason,
            String message) {
        if (volumePhase(volume).equals(phase)) {
            return volume;
        }
        PersistentVolume updated = updateVolumePhase(volume, phase, message);
        recorder.event(updated, type, reason, message);
        return updated;
    }

    /** assignDefaultStorageClass: a claim without a class gets the default one, if any, retroactively. */
    private boolean assignDefaultStorageClass(PersistentVolumeClaim claim) {
        if (claimHasClass(claim)) {
            return false;
        }
        StorageClass defaultClass = defaultClass(classInformer.getStore().list());
        if (defaultClass == null) {
            return false;
        }
        PersistentVolumeClaim clone = DeepCopy.of(claim);
        clone.getSpec().setStorageClassName(defaultClass.getMetadata().getName());
        try {
            client.persistentVolumeClaims().inNamespace(claim.getMetadata().getNamespace()).resource(clone).update();
        } catch (RuntimeException e) {
            throw new IllegalStateException("can't update PersistentVolumeClaim[\"" + claimKey(claim) + "\"]: "
                    + ApiErrors.message(e), e);
        }
        LOG.debugf("claim %s got the default StorageClass %s", claimKey(claim), defaultClass.getMetadata().getName());
        return true;
    }

    private PersistentVolume bindVolumeToClaim(PersistentVolume volume, PersistentVolumeClaim claim) {
        PersistentVolume clone = StorageHelpers.bindVolumeToClaim(volume, claim);
        if (clone == null) {
            return volume;
        }
        PersistentVolume updated = client.persistentVolumes().resource(clone).update();
        LOG.debugf("volume %s bound to claim %s", volume.getMetadata().getName(), claimKey(claim));
        storeVolumeUpdate(updated);
        return updated;
    }

    private PersistentVolumeClaim bindClaimToVolume(PersistentVolumeClaim claim, PersistentVolume volume) {
        boolean dirty = false;
        PersistentVolumeClaim clone = DeepCopy.of(claim);
        if (!volume.getMetadata().getName().equals(volumeName(claim))) {
            dirty = true;
            clone.getSpec().setVolumeName(volume.getMetadata().getName());
            if (!hasAnnotation(clone, ANN_BOUND_BY_CONTROLLER)) {
                setAnnotation(clone, ANN_BOUND_BY_CONTROLLER, "yes");
            }
        }
        if (!hasAnnotation(clone, ANN_BIND_COMPLETED)) {
            setAnnotation(clone, ANN_BIND_COMPLETED, "yes");
            dirty = true;
        }
        if (!dirty) {
            return claim;
        }
        PersistentVolumeClaim updated = client.persistentVolumeClaims().inNamespace(claim.getMetadata().getNamespace())
                .resource(clone).update();
        LOG.debugf("claim %s bound to volume %s", claimKey(claim), volume.getMetadata().getName());
        storeClaimUpdate(updated);
        return updated;
    }

    /**
     * bind: volume first (claimRef, then phase Bound), then the claim (volumeName and annotations,
     * then status). A failure part way leaves what the next sync of either object finishes.
     */
    void bind(PersistentVolume volume, PersistentVolumeClaim claim) {
        LOG.debugf("binding volume %s to claim %s", volume.getMetadata().getName(), claimKey(claim));
        volume = bindVolumeToClaim(volume, claim);
        volume = updateVolumePhase(volume, "Bound", "");
        claim = bindClaimToVolume(claim, volume);
        updateClaimStatus(claim, "Bound", volume);
    }

    /** unbindVolume: a controller's binding is removed; a user's pre-binding keeps the claim's name. */
    void unbindVolume(PersistentVolume volume) {
        PersistentVolume clone = DeepCopy.of(volume);
        if (hasAnnotation(volume, ANN_BOUND_BY_CONTROLLER)) {
            clone.getSpec().setClaimRef(null);
            clone.getMetadata().getAnnotations().remove(ANN_BOUND_BY_CONTROLLER);
            if (clone.getMetadata().getAnnotations().isEmpty()) {
                clone.getMetadata().setAnnotations(null);
            }
        } else {
            clone.getSpec().getClaimRef().setUid(null);
        }
        PersistentVolume updated = client.persistentVolumes().resource(clone).update();
        storeVolumeUpdate(updated);
        LOG.debugf("volume %s unbound", volume.getMetadata().getName());
        updateVolumePhase(updated, "Available", "");
    }

    // ---- reclaim ----

    void reclaimVolume(PersistentVolume volume) {
        String migrated = annotations(volume).get(ANN_MIGRATED_TO);
        if (migrated != null && !migrated.isEmpty()) {
            // the CSI driver's external provisioner reclaims it
            return;
        }
        String name = volume.getMetadata().getName();
        switch (reclaimPolicy(volume)) {
        case "Retain":
            LOG.tracef("reclaimVolume[%s]: policy is Retain, nothing to do", name);
            break;
        case "Recycle":
            operations.run("recycle-" + name + "[" + uid(volume) + "]", () -> {
                recycleVolumeOperation(volume);
                return null;
            });
            break;
        case "Delete":
            // the deletion's start, kept until the volume object is gone (deleteVolume)
            metrics.operationStarted(name, provisionerNameFromVolume(volume), "delete");
            operations.run("delete-" + name + "[" + uid(volume) + "]", () -> {
                try {
                    deleteVolumeOperation(volume);
                } catch (Exception e) {
                    metrics.recordOperation(name, true);
                    throw e;
                }
                return null;
            });
            break;
        default:
            updateVolumePhaseWithEvent(volume, "Failed", EventRecorder.WARNING, "VolumeUnknownReclaimPolicy",
                    "Volume has unrecognized PersistentVolumeReclaimPolicy");
        }
    }

    /**
     * recycleVolumeOperation: a released volume that no running pod uses is scrubbed by its plugin's
     * recycler pod and made Available again; without a recycler plugin, or when the pod fails, it is Failed
     * (and tried again at each sync).
     */
    void recycleVolumeOperation(PersistentVolume volume) throws InterruptedException {
        PersistentVolume newVolume;
        try {
            newVolume = client.persistentVolumes().withName(volume.getMetadata().getName()).get();
        } catch (RuntimeException e) {
            LOG.debugf("error reading persistent volume %s: %s", volume.getMetadata().getName(), e.getMessage());
            return;
        }
        if (newVolume == null || !isVolumeReleased(newVolume)) {
            return;
        }
        List<String> pods = podsUsingVolume(newVolume);
        boolean claimCached = claims.get(claimRefKey(volume.getSpec().getClaimRef())) != null;
        if (!pods.isEmpty() && !claimCached) {
            recorder.event(volume, EventRecorder.NORMAL, VOLUME_FAILED_RECYCLE,
                    "Volume is used by pods: " + String.join(",", pods));
            return;
        }
        // the newest copy: no conflict on the writes below
        PersistentVolume current = newVolume;
        String plugin = InTreePlugins.recyclablePluginBySpec(current);
        if (plugin == null) {
            try {
                updateVolumePhaseWithEvent(current, "Failed", EventRecorder.WARNING, VOLUME_FAILED_RECYCLE,
                        "No recycler plugin found for the volume!");
            } catch (RuntimeException e) {
                LOG.debugf("recycleVolumeOperation: failed to mark volume %s as failed: %s", volume.getMetadata().getName(),
                        ApiErrors.message(e));
            }
            return;
        }
        try {
            Pod pod = plugins.recyclerPod(plugin, current);
            recyclerClient.recycle(pod, (type, message) -> recorder.event(current, type, RECYCLER_POD,
                    "Recycler pod: " + message));
        } catch (RuntimeException e) {
            try {
                updateVolumePhaseWithEvent(current, "Failed", EventRecorder.WARNING, VOLUME_FAILED_RECYCLE,
                        "Recycle failed: " + e.getMessage());
            } catch (RuntimeException updateErr) {
                LOG.debugf("recycleVolumeOperation: failed to mark volume %s as failed: %s", volume.getMetadata().getName(),
                        ApiErrors.message(updateErr));
            }
            return;
        }
        LOG.infof("Volume %s recycled", volume.getMetadata().getName());
        recorder.event(current, EventRecorder.NORMAL, VOLUME_RECYCLED, "Volume recycled");
        try {
            // the volume may have changed while its pod ran (the phase written by the recycle before?)
            unbindVolume(current);
        } catch (RuntimeException e) {
            LOG.debugf("recycleVolumeOperation: failed to make recycled volume %s 'Available', it will be recycled again: %s",
                    volume.getMetadata().getName(), ApiErrors.message(e));
        }
    }

    /**
     * deleteVolumeOperation: a volume whose deleter is external (a provisioner's, a CSI driver's) is
     * left to it; an in-tree one (host-path) deletes the storage, then the volume object; a failure marks
     * the volume Failed with upstream's event.
     */
    void deleteVolumeOperation(PersistentVolume volume) throws Exception {
        PersistentVolume newVolume;
        try {
            newVolume = client.persistentVolumes().withName(volume.getMetadata().getName()).get();
        } catch (RuntimeException e) {
            LOG.debugf("error reading persistent volume %s: %s", volume.getMetadata().getName(), e.getMessage());
            return;
        }
        if (newVolume == null || !isVolumeReleased(newVolume)) {
            return;
        }
        boolean deleted;
        try {
            deleted = doDeleteVolume(volume);
        } catch (Exception e) {
            updateVolumePhaseWithEvent(volume, "Failed", EventRecorder.WARNING, VOLUME_FAILED_DELETE, e.getMessage());
            throw e;
        }
        if (!deleted) {
            // external deleter: the provisioner named in pv.kubernetes.io/provisioned-by deletes it
            LOG.debugf("deleteVolumeOperation [%s]: external deleter", volume.getMetadata().getName());
            return;
        }
        try {
            client.persistentVolumes().withName(volume.getMetadata().getName()).delete();
        } catch (RuntimeException e) {
            // the next sync deletes it again
            LOG.debugf("Failed to delete volume %s from database: %s", volume.getMetadata().getName(), ApiErrors.message(e));
        }
    }

    /**
     * doDeleteVolume: whether an in-tree deleter deleted the storage (false: an external deleter's volume);
     * throws the plugin lookup's or the deleter's error.
     */
    boolean doDeleteVolume(PersistentVolume volume) throws Exception {
        String plugin = findDeletablePlugin(volume);
        if (plugin == null) {
            return false;
        }
        long start = metrics.nanoTime();
        try {
            if (PortworxDeleter.PLUGIN_NAME.equals(plugin)) {
                portworx.delete(volume);
            } else {
                InTreePlugins.deleteHostPath(volume);
            }
        } catch (Exception e) {
            metrics.storageOperation(plugin, "volume_delete", true, (metrics.nanoTime() - start) / 1e9);
            throw e;
        }
        metrics.storageOperation(plugin, "volume_delete", false, (metrics.nanoTime() - start) / 1e9);
        LOG.infof("Volume %s deleted", volume.getMetadata().getName());
        removeDeletionProtectionFinalizer(volume);
        return true;
    }

    /** removeDeletionProtectionFinalizer: the storage is gone, so is the in-tree protection finalizer. */
    private void removeDeletionProtectionFinalizer(PersistentVolume volume) {
        PersistentVolume newVolume = client.persistentVolumes().withName(volume.getMetadata().getName()).get();
        if (newVolume == null) {
            throw new IllegalStateException("persistentvolumes \"" + volume.getMetadata().getName() + "\" not found");
        }
        List<String> finalizers = list(newVolume.getMetadata().getFinalizers());
        if (!finalizers.contains(PV_DELETION_IN_TREE_PROTECTION_FINALIZER)) {
            return;
        }
        PersistentVolume clone = DeepCopy.of(newVolume);
        List<String> kept = new ArrayList<>(finalizers);
        kept.removeIf(PV_DELETION_IN_TREE_PROTECTION_FINALIZER::equals);
        clone.getMetadata().setFinalizers(kept);
        PersistentVolume updated;
        try {
            updated = client.persistentVolumes().resource(clone).update();
        } catch (RuntimeException e) {
            throw new IllegalStateException("persistent volume controller can't update finalizer: " + ApiErrors.message(e), e);
        }
        storeVolumeUpdate(updated);
        LOG.debugf("PV in-tree protection finalizer removed from volume %s", volume.getMetadata().getName());
    }

    /**
     * findDeletablePlugin: the in-tree deleter's name, null when the deleter is external; throws
     * upstream's error when an in-tree deleter is needed and none exists.
     */
    static String findDeletablePlugin(PersistentVolume volume) {
        String provisioner = annotations(volume).get(ANN_DYNAMICALLY_PROVISIONED);
        if (provisioner != null && !provisioner.isEmpty()) {
            if (InTreePlugins.isDeletable(provisioner)) {
                return provisioner;
            }
            if (!provisioner.startsWith("kubernetes.io/")) {
                return null;
            }
            throw new IllegalStateException(InTreePlugins.NFS.equals(provisioner) ? "no deletable volume plugin matched"
                    : "no volume plugin matched name: " + provisioner);
        }
        if (hasAnnotation(volume, ANN_MIGRATED_TO)) {
            return null;
        }
        if (volume.getSpec().getCsi() != null) {
            return null;
        }
        String plugin = InTreePlugins.deletablePluginBySpec(volume);
        if (plugin == null) {
            throw new IllegalStateException("error getting deleter volume plugin for volume \""
                    + volume.getMetadata().getName() + "\": " + (InTreePlugins.pluginBySpec(volume) == null
                            ? "no volume plugin matched" : "no deletable volume plugin matched"));
        }
        return plugin;
    }

    /** findDeletablePlugin's error, or null when a deleter (in-tree or external) exists. */
    static String findDeletablePluginError(PersistentVolume volume) {
        try {
            findDeletablePlugin(volume);
            return null;
        } catch (IllegalStateException e) {
            return e.getMessage();
        }
    }

    /** getProvisionerNameFromVolume: the deleter's name for the metrics. */
    String provisionerNameFromVolume(PersistentVolume volume) {
        String plugin;
        try {
            plugin = findDeletablePlugin(volume);
        } catch (IllegalStateException e) {
            return BinderMetrics.NOT_AVAILABLE;
        }
        if (plugin != null) {
            return plugin;
        }
        // an external provisioner: the class's provisioner, not the annotation (which may be anything)
        StorageClass storageClass = classInformer.getStore().getByKey(volumeClass(volume));
        if (storageClass == null) {
            return BinderMetrics.NOT_AVAILABLE;
        }
        String provisioner = nonNull(storageClass.getProvisioner());
        if (CSITranslation.isMigrationEnabledForPlugin(provisioner)) {
            return CSITranslation.csiNameFromInTreeName(provisioner);
        }
        return provisioner;
    }

    /** isVolumeReleased: the claim the volume is bound to is gone, or bound to another volume. */
    boolean isVolumeReleased(PersistentVolume volume) {
        var ref = volume.getSpec().getClaimRef();
        if (ref == null || refUid(ref).isEmpty()) {
            return false;
        }
        PersistentVolumeClaim claim = claims.get(claimRefKey(ref));
        if (claim != null && uid(claim).equals(refUid(ref))) {
            return !volumeName(claim).isEmpty() && !volumeName(claim).equals(volume.getMetadata().getName());
        }
        return true;
    }

    private List<Pod> podsByPVCKey(String namespace, String name) {
        return PodPVCIndex.podsUsing(podInformer, namespace, name);
    }

    /** isVolumeUsed: the running pods that use the volume's claim, sorted. */
    List<String> podsUsingVolume(PersistentVolume volume) {
        var ref = volume.getSpec().getClaimRef();
        if (ref == null) {
            return List.of();
        }
        TreeSet<String> names = new TreeSet<>();
        for (Pod pod : podsByPVCKey(ref.getNamespace(), ref.getName())) {
            if (!isPodTerminated(pod)) {
                names.add(pod.getMetadata().getNamespace() + "/" + pod.getMetadata().getName());
            }
        }
        return new ArrayList<>(names);
    }

    /** findNonScheduledPodsByPVC. */
    List<String> findNonScheduledPodsByPVC(PersistentVolumeClaim claim) {
        List<String> names = new ArrayList<>();
        for (Pod pod : podsByPVCKey(claim.getMetadata().getNamespace(), claim.getMetadata().getName())) {
            if (isPodTerminated(pod)) {
                continue;
            }
            if (pod.getSpec() == null || pod.getSpec().getNodeName() == null || pod.getSpec().getNodeName().isEmpty()) {
                names.add(pod.getMetadata().getName());
            }
        }
        return names;
    }

    // ---- provisioning ----

    /** provisionClaim: hands the claim to its class's provisioner (an in-tree plugin's or an external one). */
    void provisionClaim(PersistentVolumeClaim claim) {
        if (!enableDynamicProvisioning) {
            return;
        }
        String className = claimClass(claim);
        StorageClass storageClass = classInformer.getStore().getByKey(className);
        if (storageClass == null) {
            recorder.event(claim, EventRecorder.WARNING, PROVISIONING_FAILED,
                    "storageclass.storage.k8s.io \"" + className + "\" not found");
            return;
        }
        // findProvisionablePlugin: null for an external provisioner
        String provisioner = nonNull(storageClass.getProvisioner());
        String plugin = null;
        if (!CSITranslation.isMigrationEnabledForPlugin(provisioner)) {
            if (InTreePlugins.isProvisionable(provisioner)) {
                plugin = provisioner;
            } else if (provisioner.startsWith("kubernetes.io/")) {
                recorder.event(claim, EventRecorder.WARNING, PROVISIONING_FAILED,
                        InTreePlugins.NFS.equals(provisioner) ? "no provisionable volume plugin matched"
                                : "no volume plugin matched name: " + provisioner);
                return;
            }
        }
        String inTree = plugin;
        operations.run("provision-" + claimKey(claim) + "[" + uid(claim) + "]", () -> {
            String key = claimKey(claim);
            // the provisioning's start, kept until the claim is bound (syncUnboundClaim) or deleted
            metrics.operationStarted(key, provisionerName(inTree, storageClass), "provision");
            try {
                if (inTree == null) {
                    provisionClaimOperationExternal(claim, storageClass);
                } else {
                    provisionClaimOperation(claim, inTree, storageClass);
                }
            } catch (Exception e) {
                metrics.recordOperation(key, true);
                throw e;
            }
            return null;
        });
    }

    /** getProvisionerName: the in-tree plugin, the CSI driver of a migrated one, or the class's provisioner. */
    static String provisionerName(String plugin, StorageClass storageClass) {
        if (plugin != null) {
            return plugin;
        }
        String provisioner = nonNull(storageClass.getProvisioner());
        if (CSITranslation.isMigrationEnabledForPlugin(provisioner)) {
            return CSITranslation.csiNameFromInTreeName(provisioner);
        }
        return provisioner;
    }

    /**
     * provisionClaimOperation: an in-tree plugin (host-path) makes the storage, and the controller the
     * volume, bound to the claim from the start; a volume object that cannot be saved has its storage
     * deleted again.
     */
    void provisionClaimOperation(PersistentVolumeClaim claim, String plugin, StorageClass storageClass) throws Exception {
        if (claim.getSpec().getDataSource() != null) {
            String message = "plugin \"" + plugin + "\" is not a CSI plugin. Only CSI plugin can provision a claim with a"
                    + " datasource";
            recorder.event(claim, EventRecorder.WARNING, PROVISIONING_FAILED, message);
            throw new IllegalStateException(message);
        }
        claim = setClaimProvisioner(claim, storageClass.getProvisioner());
        String pvName = "pvc-" + uid(claim);
        PersistentVolume existing = client.persistentVolumes().withName(pvName).get();
        if (existing != null) {
            LOG.debugf("provisionClaimOperation: volume %s of claim %s already exists, skipping", pvName, claimKey(claim));
            return;
        }
        var claimRef = claimReference(claim);
        List<String> mountOptions = list(storageClass.getMountOptions());
        if (!mountOptions.isEmpty()) {
            // host-path supports no mount options; the volume would fail validation anyway
            recorder.event(claim, EventRecorder.WARNING, PROVISIONING_FAILED,
                    "Mount options are not supported by the provisioner but StorageClass \""
                            + storageClass.getMetadata().getName() + "\" has mount options [" + String.join(" ", mountOptions)
                            + "]");
            throw new IllegalStateException("provisioner \"" + plugin + "\" doesn't support mount options");
        }
        if (!plugins.hostPathProvisioningEnabled) {
            String error = "provisioning in volume plugin \"" + plugin + "\" is disabled";
            recorder.event(claim, EventRecorder.WARNING, PROVISIONING_FAILED, "Failed to create provisioner: " + error);
            throw new IllegalStateException(error);
        }
        String nodeName = annotations(claim).get(ANN_SELECTED_NODE);
        if (nodeName != null && nodeInformer.getStore().getByKey(nodeName) == null) {
            String error = "node \"" + nodeName + "\" not found";
            recorder.event(claim, EventRecorder.WARNING, PROVISIONING_FAILED, "Failed to get target node: " + error);
            throw new IllegalStateException(error);
        }
        String policy = storageClass.getReclaimPolicy() == null ? "Delete" : storageClass.getReclaimPolicy();
        PersistentVolume volume;
        long start = metrics.nanoTime();
        try {
            volume = plugins.provisionHostPath(pvName, claim, policy);
        } catch (Exception e) {
            metrics.storageOperation(plugin, "volume_provision", true, (metrics.nanoTime() - start) / 1e9);
            rescheduleProvisioning(claim);
            recorder.event(claim, EventRecorder.WARNING, PROVISIONING_FAILED, "Failed to provision volume with StorageClass \""
                    + storageClass.getMetadata().getName() + "\": " + e.getMessage());
            throw e;
        }
        metrics.storageOperation(plugin, "volume_provision", false, (metrics.nanoTime() - start) / 1e9);
        volume.getSpec().setClaimRef(claimRef);
        volume.getSpec().setStorageClassName(claimClass(claim));
        setAnnotation(volume, ANN_BOUND_BY_CONTROLLER, "yes");
        setAnnotation(volume, ANN_DYNAMICALLY_PROVISIONED, plugin);
        if ("Delete".equals(policy)) {
            volume.getMetadata().setFinalizers(new ArrayList<>(List.of(PV_DELETION_IN_TREE_PROTECTION_FINALIZER)));
        }
        // the API server drops a new volume's status: Bound is written by the volume's first sync
        RuntimeException saveErr = null;
        for (int i = 0; i < createProvisionedPVRetryCount; i++) {
            try {
                PersistentVolume created = client.persistentVolumes().resource(volume).create();
                storeVolumeUpdate(created);
                saveErr = null;
                break;
            } catch (RuntimeException e) {
                if (ApiErrors.isAlreadyExists(e)) {
                    LOG.debugf("Volume %s for claim %s already exists, reusing", pvName, claimKey(claim));
                    saveErr = null;
                    break;
                }
                saveErr = e;
                LOG.debugf("Failed to save volume %s for claim %s: %s", pvName, claimKey(claim), ApiErrors.message(e));
                Thread.sleep(createProvisionedPVIntervalMillis);
            }
        }
        if (saveErr == null) {
            LOG.infof("Volume %s provisioned for claim %s", pvName, claimKey(claim));
            recorder.event(claim, EventRecorder.NORMAL, PROVISIONING_SUCCEEDED,
                    "Successfully provisioned volume " + pvName + " using " + plugin);
            return;
        }
        // a storage asset without a volume object: delete it again
        recorder.event(claim, EventRecorder.WARNING, PROVISIONING_FAILED, "Error creating provisioned PV object for claim "
                + claimKey(claim) + ": " + ApiErrors.message(saveErr) + ". Deleting the volume.");
        Exception deleteErr = null;
        for (int i = 0; i < createProvisionedPVRetryCount; i++) {
            try {
                InTreePlugins.deleteHostPath(volume);
                deleteErr = null;
                break;
            } catch (Exception e) {
                deleteErr = e;
                Thread.sleep(createProvisionedPVIntervalMillis);
            }
        }
        if (deleteErr != null) {
            recorder.event(claim, EventRecorder.WARNING, PROVISIONING_CLEANUP_FAILED, "Error cleaning provisioned volume for"
                    + " claim " + claimKey(claim) + ": " + deleteErr.getMessage() + ". Please delete manually.");
        }
    }

    /** rescheduleProvisioning: the scheduler picks a node again (its annotation is removed). */
    private void rescheduleProvisioning(PersistentVolumeClaim claim) {
        if (!annotations(claim).containsKey(ANN_SELECTED_NODE)) {
            return;
        }
        PersistentVolumeClaim clone = DeepCopy.of(claim);
        clone.getMetadata().getAnnotations().remove(ANN_SELECTED_NODE);
        try {
            PersistentVolumeClaim updated = client.persistentVolumeClaims().inNamespace(claim.getMetadata().getNamespace())
                    .resource(clone).update();
            storeClaimUpdate(updated);
        } catch (RuntimeException e) {
            LOG.debugf("Failed to delete annotation %s of claim %s: %s", ANN_SELECTED_NODE, claimKey(claim),
                    ApiErrors.message(e));
        }
    }

    /** provisionClaimOperationExternal: annotate the claim for its provisioner and say so. */
    void provisionClaimOperationExternal(PersistentVolumeClaim claim, StorageClass storageClass) {
        String provisionerName = storageClass.getProvisioner();
        if (CSITranslation.isMigrationEnabledForPlugin(provisionerName)) {
            provisionerName = CSITranslation.csiNameFromInTreeName(provisionerName);
        }
        PersistentVolumeClaim newClaim;
        try {
            newClaim = setClaimProvisioner(claim, provisionerName);
        } catch (RuntimeException e) {
            recorder.event(claim, EventRecorder.WARNING, PROVISIONING_FAILED, "Error saving claim: " + ApiErrors.message(e));
            throw e;
        }
        recorder.event(newClaim, EventRecorder.NORMAL, EXTERNAL_PROVISIONING,
                "Waiting for a volume to be created either by the external provisioner '" + provisionerName
                        + "' or manually by the system administrator. If volume creation is delayed, please verify that"
                        + " the provisioner is running and correctly registered.");
    }

    /** setClaimProvisioner: both the GA and the beta annotation name the provisioner. */
    PersistentVolumeClaim setClaimProvisioner(PersistentVolumeClaim claim, String provisionerName) {
        if (provisionerName.equals(annotations(claim).get(ANN_STORAGE_PROVISIONER))) {
            return claim;
        }
        PersistentVolumeClaim clone = DeepCopy.of(claim);
        setAnnotation(clone, ANN_BETA_STORAGE_PROVISIONER, provisionerName);
        setAnnotation(clone, ANN_STORAGE_PROVISIONER, provisionerName);
        updateMigrationAnnotations(clone.getMetadata().getAnnotations(), true);
        PersistentVolumeClaim updated = client.persistentVolumeClaims().inNamespace(claim.getMetadata().getNamespace())
                .resource(clone).update();
        storeClaimUpdate(updated);
        return updated;
    }

    // ---- migration annotations and finalizers (pv_controller_base.go) ----

    private PersistentVolumeClaim updateClaimMigrationAnnotations(PersistentVolumeClaim claim) {
        if (claim.getMetadata().getAnnotations() == null) {
            return claim;
        }
        Map<String, String> annotations = new java.util.LinkedHashMap<>(claim.getMetadata().getAnnotations());
        if (!updateMigrationAnnotations(annotations, true)) {
            return claim;
        }
        PersistentVolumeClaim clone = DeepCopy.of(claim);
        clone.getMetadata().setAnnotations(annotations);
        PersistentVolumeClaim updated;
        try {
            updated = client.persistentVolumeClaims().inNamespace(claim.getMetadata().getNamespace()).resource(clone)
                    .update();
        } catch (RuntimeException e) {
            throw new IllegalStateException("persistent Volume Controller can't anneal migration annotations: "
                    + ApiErrors.message(e), e);
        }
        storeClaimUpdate(updated);
        return updated;
    }

    private PersistentVolume updateVolumeMigrationAnnotationsAndFinalizers(PersistentVolume volume) {
        Map<String, String> annotations = volume.getMetadata().getAnnotations() == null ? null
                : new java.util.LinkedHashMap<>(volume.getMetadata().getAnnotations());
        boolean annModified = annotations != null && updateMigrationAnnotations(annotations, false);
        List<String> finalizers = modifyDeletionFinalizers(volume);
        if (!annModified && finalizers == null) {
            return volume;
        }
        PersistentVolume clone = DeepCopy.of(volume);
        if (annModified) {
            clone.getMetadata().setAnnotations(annotations);
        }
        if (finalizers != null) {
            clone.getMetadata().setFinalizers(finalizers);
        }
        PersistentVolume updated;
        try {
            updated = client.persistentVolumes().resource(clone).update();
        } catch (RuntimeException e) {
            throw new IllegalStateException("persistent Volume Controller can't anneal migration annotations or finalizer: "
                    + ApiErrors.message(e), e);
        }
        storeVolumeUpdate(updated);
        return updated;
    }

    /**
     * modifyDeletionFinalizers (HonorPVReclaimPolicy is GA): the new finalizers of an in-tree
     * provisioned volume, or null when they stay as they are.
     */
    static List<String> modifyDeletionFinalizers(PersistentVolume volume) {
        String provisioner = annotations(volume).get(ANN_DYNAMICALLY_PROVISIONED);
        if (provisioner == null) {
            return null;
        }
        List<String> out = new ArrayList<>(list(volume.getMetadata().getFinalizers()));
        boolean modified = false;
        if (CSITranslation.isMigrationEnabledForPlugin(provisioner)) {
            modified = out.removeIf(PV_DELETION_IN_TREE_PROTECTION_FINALIZER::equals);
            return modified ? out : null;
        }
        if (!provisioner.startsWith("kubernetes.io/")) {
            return null;
        }
        String policy = reclaimPolicy(volume);
        if ("Delete".equals(policy) && !out.contains(PV_DELETION_IN_TREE_PROTECTION_FINALIZER)) {
            out.add(PV_DELETION_IN_TREE_PROTECTION_FINALIZER);
            modified = true;
        } else if (("Retain".equals(policy) || "Recycle".equals(policy))
                && out.contains(PV_DELETION_IN_TREE_PROTECTION_FINALIZER)) {
            out.removeIf(PV_DELETION_IN_TREE_PROTECTION_FINALIZER::equals);
            modified = true;
        }
        if (out.contains(PV_DELETION_PROTECTION_FINALIZER)) {
            out.removeIf(PV_DELETION_PROTECTION_FINALIZER::equals);
            modified = true;
        }
        return modified ? out : null;
    }

    /**
     * updateMigrationAnnotations: {@code pv.kubernetes.io/migrated-to} names the CSI driver of a
     * migrated in-tree provisioner, and is removed otherwise. Returns whether {@code ann} changed.
     */
    static boolean updateMigrationAnnotations(Map<String, String> ann, boolean claim) {
        if (ann == null) {
            return false;
        }
        String provisioner = ann.get(claim ? ANN_STORAGE_PROVISIONER : ANN_DYNAMICALLY_PROVISIONED);
        if (provisioner == null) {
            if (!claim) {
                return false;
            }
            provisioner = ann.get(ANN_BETA_STORAGE_PROVISIONER);
            if (provisioner == null) {
                return false;
            }
        }
        String migratedTo = nonNull(ann.get(ANN_MIGRATED_TO));
        if (CSITranslation.isMigrationEnabledForPlugin(provisioner)) {
            String csiName = CSITranslation.csiNameFromInTreeName(provisioner);
            if (!migratedTo.equals(csiName)) {
                ann.put(ANN_MIGRATED_TO, csiName);
                return true;
            }
        } else if (!migratedTo.isEmpty()) {
            ann.remove(ANN_MIGRATED_TO);
            return true;
        }
        return false;
    }
}
