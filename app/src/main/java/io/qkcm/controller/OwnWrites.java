package io.qkcm.controller;

import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.qkcm.runtime.informers.MetaNamespaceKey;
import io.qkcm.runtime.informers.ResourceEventHandlerFuncs;

/**
 * Not in upstream: the objects a controller wrote that its cache has not shown yet. A sync that starts
 * from the cache right after the controller's own write to the same object (another object's event queued
 * it) writes from the version before that write, and the API server answers 409 Conflict; the write is
 * retried once the watch has delivered the newer version. Upstream's controllers do the same, but under
 * load qkcm's watches deliver later than client-go's, and its Deployment and ReplicaSet status updates
 * conflicted ~1.7× as often as upstream's (bench/results/2026-11-26-copies), nearly all of them right
 * after the controller's own write (bench/conflicts.py).
 *
 * <p>After a successful write the answer (the version the API server stored) is kept with the versions
 * it supersedes: the one the write replaced and, along a chain of own writes, those before it. A sync
 * reads {@link #latest}: while the cache still holds a superseded version, the answer is the newer object
 * (the one the cache is about to hold); as soon as the cache holds any other version, the cache is
 * read again and the answer forgotten. Versions are only compared for equality, as the API's
 * resourceVersions allow. So a sync never starts from an object older than the cache's, and the objects
 * written are those upstream writes once its cache has caught up.
 *
 * <p>Used for the Deployment and ReplicaSet/ReplicationController controllers' status writes, and for the
 * Deployment controller's ReplicaSet updates (scale, replicas annotations, revision annotations): it reads every
 * cached ReplicaSet of the namespace through {@link #latest} before claiming, so adoption and orphaning judge the
 * object the sync goes on with, and a ReplicaSet the cache no longer holds stays out of the sync whatever was
 * written to it. Creates are not kept: there is no replaced version, and an object the cache never shows would
 * be kept until the bound evicts it.
 */
public final class OwnWrites<T extends HasMetadata> {

    /** A bound for keys whose cache never catches up (the object deleted meanwhile, say). */
    private static final int MAX_ENTRIES = 1024;

    private record Written<T>(Set<String> superseded, T answer) {
    }

    private final boolean enabled;
    private final Map<String, Written<T>> byKey = new LinkedHashMap<>(64, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Written<T>> eldest) {
            return size() > MAX_ENTRIES;
        }
    };

    /**
     * @param enabled false in shadow mode (the answers of dry runs were never stored): {@link #latest} is then
     *                always the cache
     */
    public OwnWrites(boolean enabled) {
        this.enabled = enabled;
    }

    /**
     * The handler that forgets an answer once the cache holds a version it does not supersede: register it on
     * the informer the controller reads.
     */
    public ResourceEventHandler<T> forgetOnCacheUpdate() {
        return ResourceEventHandlerFuncs.of(this::observed, (oldObj, newObj) -> observed(newObj), obj -> {
            synchronized (byKey) {
                byKey.remove(MetaNamespaceKey.of(obj));
            }
        });
    }

    private void observed(T obj) {
        String key = MetaNamespaceKey.of(obj);
        synchronized (byKey) {
            Written<T> w = byKey.get(key);
            if (w != null && !w.superseded().contains(obj.getMetadata().getResourceVersion())) {
                byKey.remove(key);
            }
        }
    }

    /**
     * Records a successful write: {@code sentVersion} is the resourceVersion the written object carried (the
     * version the write replaced), {@code answer} the API server's answer. The answer is kept as it is: callers
     * copy what {@link #latest} returns before changing it, as they copy cached objects.
     */
    public void wrote(String sentVersion, T answer) {
        if (!enabled || answer == null || answer.getMetadata() == null || sentVersion == null
                || answer.getMetadata().getResourceVersion() == null
                || sentVersion.equals(answer.getMetadata().getResourceVersion())) {
            return; // a write that stored nothing new (a no-op update, a dry run)
        }
        answer.getMetadata().setManagedFields(null); // as the shared caches hold objects
        String key = MetaNamespaceKey.of(answer);
        synchronized (byKey) {
            Set<String> superseded = new HashSet<>();
            superseded.add(sentVersion);
            Written<T> before = byKey.get(key);
            if (before != null && sentVersion.equals(before.answer().getMetadata().getResourceVersion())) {
                superseded.addAll(before.superseded()); // a chain of own writes the cache has not shown yet
            }
            byKey.put(key, new Written<>(Set.copyOf(superseded), answer));
        }
    }

    /**
     * The newest known version of the object cached as {@code cached} under {@code key}: the answer to this
     * controller's last write while the cache still holds a version it superseded, else {@code cached} (null:
     * the object is gone, and so is its answer).
     */
    public T latest(String key, T cached) {
        synchronized (byKey) {
            Written<T> w = byKey.get(key);
            if (w == null) {
                return cached;
            }
            if (cached != null && w.superseded().contains(cached.getMetadata().getResourceVersion())) {
                return w.answer();
            }
            byKey.remove(key);
            return cached;
        }
    }

    /** Answers kept (tests). */
    int size() {
        synchronized (byKey) {
            return byKey.size();
        }
    }
}
