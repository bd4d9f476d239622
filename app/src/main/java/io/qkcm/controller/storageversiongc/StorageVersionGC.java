package io.qkcm.controller.storageversiongc;

import java.time.Clock;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.javaoperatorsdk.operator.api.reconciler.Ignore;
import io.javaoperatorsdk.operator.processing.event.source.filter.OnAddFilter;
import io.javaoperatorsdk.operator.processing.event.source.filter.OnUpdateFilter;
import io.qkcm.runtime.DeepCopy;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.KeyReconciler;
import io.qkcm.runtime.workqueue.WorkQueue;

/**
 * storageversion-garbage-collector-controller (upstream pkg/controller/storageversiongc): removes from
 * every StorageVersion the entries of API servers whose identity Lease (kube-system, label
 * {@code apiserver.kubernetes.io/identity=kube-apiserver}) is gone, recomputing the common encoding version
 * and its AllEncodingVersionsEqual condition, and deletes a StorageVersion left with no entry.
 *
 * <p>Two queues, as upstream: the primary one, of StorageVersion names, fed by adds and updates of a
 * StorageVersion with an entry whose Lease is not in the cache, and a second one, of Lease names, fed by the
 * deletion of an identity Lease and drained by a worker of its own. Both syncs read the API server, not the
 * caches, as upstream's do.
 */
@Ignore // runs in its own Operator, not quarkus-operator-sdk's default one
public final class StorageVersionGC extends KeyReconciler<StorageVersion> {

    public static final String NAME = "storageversion-garbage-collector-controller";
    static final String LEASE_QUEUE = "storage_version_garbage_collector_leases";
    static final String STORAGE_VERSION_QUEUE = "storage_version_garbage_collector_storageversions";
    /** Upstream's controlplane.IdentityLeaseComponentLabelKey and apiserver.KubeAPIServer. */
    static final String IDENTITY_LEASE_COMPONENT_LABEL_KEY = "apiserver.kubernetes.io/identity";
    static final String KUBE_APISERVER = "kube-apiserver";
    static final String NAMESPACE_SYSTEM = "kube-system";

    private final SharedIndexInformer<Lease> leases;
    private final SharedIndexInformer<StorageVersion> storageVersions;
    private final WorkQueue<String> leaseQueue;
    private final Clock clock;
    private Thread leaseWorker;

    public StorageVersionGC(ControllerContext context, Clock clock) {
        super(context, StorageVersion.class, STORAGE_VERSION_QUEUE, 1);
        this.clock = clock;
        this.leases = context.informers().informerFor(Lease.class);
        this.storageVersions = context.informers().informerFor(StorageVersion.class);
        this.leaseQueue = context.newQueue(LEASE_QUEUE);
        leases.addEventHandler(new ResourceEventHandler<>() {
            @Override
            public void onAdd(Lease lease) {
            }

            @Override
            public void onUpdate(Lease oldLease, Lease newLease) {
            }

            @Override
            public void onDelete(Lease lease, boolean deletedFinalStateUnknown) {
                if (NAMESPACE_SYSTEM.equals(lease.getMetadata().getNamespace()) && isKubeAPIServerIdentity(lease)) {
                    log.debugf("Observed lease deleted: %s", lease.getMetadata().getName());
                    leaseQueue.add(lease.getMetadata().getName());
                }
            }
        });
    }

    @Override
    protected List<SharedIndexInformer<?>> informers() {
        return List.of(leases, storageVersions);
    }

    /** Upstream's onAddStorageVersion. */
    @Override
    protected OnAddFilter<? super StorageVersion> primaryAddFilter() {
        return this::hasEntryWithoutCachedLease;
    }

    /** Upstream's onUpdateStorageVersion (resyncs included). */
    @Override
    protected OnUpdateFilter<? super StorageVersion> primaryUpdateFilter() {
        return (newSv, oldSv) -> hasEntryWithoutCachedLease(newSv);
    }

    /** Upstream's enqueueStorageVersion test: an entry whose identity Lease the cache does not hold. */
    private boolean hasEntryWithoutCachedLease(StorageVersion sv) {
        if (sv.getStatus() == null) {
            return false;
        }
        for (StorageVersion.ServerStorageVersion ssv : sv.getStatus().storageVersions()) {
            Lease lease = leases.getStore().getByKey(NAMESPACE_SYSTEM + "/" + ssv.apiServerID);
            if (lease == null || !isKubeAPIServerIdentity(lease)) {
                log.debugf("Observed storage version with invalid apiserver entry: %s", sv.getMetadata().getName());
                return true;
            }
        }
        return false;
    }

    private static boolean isKubeAPIServerIdentity(Lease lease) {
        Map<String, String> labels = lease.getMetadata().getLabels();
        return labels != null && KUBE_APISERVER.equals(labels.get(IDENTITY_LEASE_COMPONENT_LABEL_KEY));
    }

    @Override
    public void onStart() {
        log.info("Starting storage version garbage collector");
        leaseWorker = new Thread(this::runLeaseWorker, NAME + "-leases");
        leaseWorker.setDaemon(true);
        leaseWorker.start();
    }

    @Override
    public void onShutdown() {
        log.info("Shutting down storage version garbage collector");
        leaseQueue.shutDown();
        if (leaseWorker != null) {
            leaseWorker.interrupt();
        }
    }

    private void runLeaseWorker() {
        try {
            context.informers().waitForSync(informers());
            while (true) {
                String name = leaseQueue.get();
                if (name == null) {
                    return;
                }
                try {
                    processDeletedLease(name);
                    leaseQueue.forget(name);
                } catch (Exception e) {
                    log.errorf("lease %s failed with: %s", name, shortMessage(e));
                    leaseQueue.addRateLimited(name);
                } finally {
                    leaseQueue.done(name);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Queues a lease name on the lease queue, as the deletion of its Lease would (tests). */
    void enqueueLease(String name) {
        leaseQueue.add(name);
    }

    /** Upstream's processDeletedLease: the entries of {@code name} leave every StorageVersion once its Lease is gone. */
    void processDeletedLease(String name) {
        if (context.client().leases().inNamespace(NAMESPACE_SYSTEM).withName(name).get() != null) {
            return; // the lease is not deleted: nothing to do
        }
        List<StorageVersion> all = context.client().resources(StorageVersion.class).list().getItems();
        List<RuntimeException> errors = new ArrayList<>();
        for (StorageVersion sv : all) {
            List<StorageVersion.ServerStorageVersion> kept = new ArrayList<>();
            boolean hasStaleRecord = false;
            for (StorageVersion.ServerStorageVersion ssv : entries(sv)) {
                if (name.equals(ssv.apiServerID)) {
                    hasStaleRecord = true;
                    continue;
                }
                kept.add(ssv);
            }
            if (!hasStaleRecord) {
                continue;
            }
            try {
                updateOrDeleteStorageVersion(sv, kept);
            } catch (RuntimeException e) {
                errors.add(e);
            }
        }
        aggregate(errors);
    }

    /** Upstream's syncStorageVersion: drops the entries whose identity Lease the API server does not have. */
    @Override
    protected void sync(String name) {
        StorageVersion sv = context.client().resources(StorageVersion.class).withName(name).get();
        if (sv == null) {
            return; // the storage version added or updated recently is gone
        }
        boolean hasInvalidID = false;
        List<StorageVersion.ServerStorageVersion> kept = new ArrayList<>();
        for (StorageVersion.ServerStorageVersion ssv : entries(sv)) {
            Lease lease;
            try {
                lease = ssv.apiServerID == null || ssv.apiServerID.isEmpty() ? null
                        : context.client().leases().inNamespace(NAMESPACE_SYSTEM).withName(ssv.apiServerID).get();
            } catch (KubernetesClientException e) {
                // upstream treats any error reading the lease as a missing one
                lease = null;
            }
            if (lease == null || !isKubeAPIServerIdentity(lease)) {
                hasInvalidID = true;
                continue;
            }
            kept.add(ssv);
        }
        if (hasInvalidID) {
            updateOrDeleteStorageVersion(sv, kept);
        }
    }

    private void updateOrDeleteStorageVersion(StorageVersion sv, List<StorageVersion.ServerStorageVersion> kept) {
        if (kept.isEmpty()) {
            context.client().resources(StorageVersion.class).withName(sv.getMetadata().getName()).delete();
            return;
        }
        StorageVersion updated = DeepCopy.of(sv);
        updated.getStatus().storageVersions = kept;
        setCommonEncodingVersion(updated, clock.instant());
        context.client().resources(StorageVersion.class).resource(updated).updateStatus();
    }

    /**
     * Upstream's storageversion.SetCommonEncodingVersion: the encoding version all entries agree on, else
     * none, and the AllEncodingVersionsEqual condition saying which; its transition time moves when its
     * status changes or the common version changes to another one.
     */
    static void setCommonEncodingVersion(StorageVersion sv, Instant now) {
        StorageVersion.Status status = sv.getStatus();
        String old = status.commonEncodingVersion;
        status.commonEncodingVersion = null;
        List<StorageVersion.ServerStorageVersion> entries = status.storageVersions();
        if (!entries.isEmpty()) {
            String first = entries.get(0).encodingVersion;
            boolean agreed = entries.stream().allMatch(e -> java.util.Objects.equals(e.encodingVersion, first));
            if (agreed) {
                status.commonEncodingVersion = first == null ? "" : first;
            }
        }
        StorageVersion.Condition condition = new StorageVersion.Condition();
        condition.type = "AllEncodingVersionsEqual";
        condition.status = "False";
        condition.observedGeneration = sv.getMetadata().getGeneration() == null ? 0L : sv.getMetadata().getGeneration();
        condition.lastTransitionTime = now.truncatedTo(ChronoUnit.SECONDS).toString();
        condition.reason = "CommonEncodingVersionUnset";
        condition.message = "Common encoding version unset";
        if (status.commonEncodingVersion != null) {
            condition.status = "True";
            condition.reason = "CommonEncodingVersionSet";
            condition.message = "Common encoding version set";
        }
        boolean forceTransition = old != null && status.commonEncodingVersion != null
                && !old.equals(status.commonEncodingVersion);
        setStatusCondition(status, condition, forceTransition);
    }

    private static void setStatusCondition(StorageVersion.Status status, StorageVersion.Condition condition,
            boolean forceTransition) {
        if (status.conditions == null) {
            status.conditions = new ArrayList<>();
        }
        for (StorageVersion.Condition existing : status.conditions) {
            if (condition.type.equals(existing.type)) {
                if (!condition.status.equals(existing.status) || forceTransition) {
                    existing.lastTransitionTime = condition.lastTransitionTime;
                }
                existing.status = condition.status;
                existing.reason = condition.reason;
                existing.message = condition.message;
                existing.observedGeneration = condition.observedGeneration;
                return;
            }
        }
        status.conditions.add(condition);
    }

    private static List<StorageVersion.ServerStorageVersion> entries(StorageVersion sv) {
        return sv.getStatus() == null ? List.of() : sv.getStatus().storageVersions();
    }

    /** utilerrors.NewAggregate: nothing, the one error, or all of them in one. */
    private static void aggregate(List<RuntimeException> errors) {
        if (errors.isEmpty()) {
            return;
        }
        if (errors.size() == 1) {
            throw errors.get(0);
        }
        IllegalStateException all = new IllegalStateException("[" + String.join(", ",
                errors.stream().map(KeyReconciler::shortMessage).toList()) + "]");
        errors.forEach(all::addSuppressed);
        throw all;
    }
}
