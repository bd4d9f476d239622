package io.qkcm.controller;

import java.util.Map;
import java.util.Objects;
import java.util.function.Consumer;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;

/**
 * Upstream's event handlers for the dependents of a workload controller (the pod handlers of the
 * ReplicaSet and StatefulSet controllers, the CronJob controller's Job handlers, …): resolve the
 * dependent's controllerRef to its owner in the cache and queue the owner; an update whose
 * controllerRef changed queues the old owner too; a dependent seen first already being deleted counts
 * as deleted; a resync (same resourceVersion) is ignored. What a controller adds (expectations,
 * orphans matched by selector, a delayed availability check) goes in the hooks.
 *
 * @param <D> the dependent type
 * @param <O> the owner type
 */
public class OwnerEnqueueingHandler<D extends HasMetadata, O extends HasMetadata> implements ResourceEventHandler<D> {

    /** Upstream's resolveControllerRef: the cached owner {@code ref} names in {@code namespace}, or null. */
    @FunctionalInterface
    public interface Resolver<O> {
        O resolve(String namespace, OwnerReference ref);
    }

    private final Resolver<O> owners;
    private final Consumer<O> enqueue;

    public OwnerEnqueueingHandler(Resolver<O> owners, Consumer<O> enqueue) {
        this.owners = owners;
        this.enqueue = enqueue;
    }

    @Override
    public void onAdd(D dependent) {
        if (dependent.getMetadata().getDeletionTimestamp() != null) {
            // seen for the first time already being deleted (e.g. after a restart): not a creation
            onDelete(dependent, false);
            return;
        }
        OwnerReference ref = ControllerRefManager.controllerOf(dependent);
        if (ref != null) {
            O owner = owners.resolve(dependent.getMetadata().getNamespace(), ref);
            if (owner != null) {
                added(dependent, owner);
            }
            return;
        }
        orphanAdded(dependent);
    }

    @Override
    public void onUpdate(D old, D cur) {
        if (Objects.equals(cur.getMetadata().getResourceVersion(), old.getMetadata().getResourceVersion())) {
            return; // periodic resync
        }
        OwnerReference curRef = ControllerRefManager.controllerOf(cur);
        OwnerReference oldRef = ControllerRefManager.controllerOf(old);
        boolean refChanged = !Objects.equals(curRef, oldRef);
        if (refChanged && oldRef != null) {
            // the old owner must learn it lost the dependent
            O oldOwner = owners.resolve(old.getMetadata().getNamespace(), oldRef);
            if (oldOwner != null) {
                enqueue.accept(oldOwner);
            }
        }
        if (curRef != null) {
            O owner = owners.resolve(cur.getMetadata().getNamespace(), curRef);
            if (owner != null) {
                updated(old, cur, owner);
            }
            return;
        }
        if (refChanged || !Objects.equals(labels(cur), labels(old))) {
            orphanUpdated(old, cur);
        }
    }

    @Override
    public void onDelete(D dependent, boolean deletedFinalStateUnknown) {
        OwnerReference ref = ControllerRefManager.controllerOf(dependent);
        if (ref == null) {
            return;
        }
        O owner = owners.resolve(dependent.getMetadata().getNamespace(), ref);
        if (owner != null) {
            deleted(dependent, owner);
        }
    }

    /** A dependent of {@code owner} was created: queues the owner. */
    protected void added(D dependent, O owner) {
        enqueue.accept(owner);
    }

    /** A dependent of {@code owner} changed: queues the owner. */
    protected void updated(D old, D cur, O owner) {
        enqueue.accept(owner);
    }

    /** A dependent of {@code owner} was deleted: queues the owner. */
    protected void deleted(D dependent, O owner) {
        enqueue.accept(owner);
    }

    /** An orphan was created (upstream queues the owners whose selector matches it); nothing by default. */
    protected void orphanAdded(D dependent) {
    }

    /** An orphan's labels or controllerRef changed (it may be adopted now); nothing by default. */
    protected void orphanUpdated(D old, D cur) {
    }

    private static Map<String, String> labels(HasMetadata o) {
        Map<String, String> l = o.getMetadata().getLabels();
        return l == null ? Map.of() : l;
    }
}
