package io.qkcm.controller;

import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;

import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.Pod;

/**
 * Not in upstream: whether the informer cache has caught up with the API server for the pods one
 * controller owns, judged against a list read from the API server (a consistent read, so it holds
 * every write that was acknowledged, or lost in transit, before it). Used after a write whose outcome
 * is unknown ({@link ApiErrors#isOutcomeUnknown}): once the cache holds every owned pod the list
 * holds, and shows every deletion the list shows, the controller's counts from the cache include
 * that write, whatever became of it.
 */
public final class CacheCatchUp {

    private CacheCatchUp() {
    }

    /**
     * @param ownerUid   the controller's UID; only pods it controls are compared
     * @param live       the pods the API server listed (any pods; the controlled ones are picked)
     * @param listRv     the list's resourceVersion
     * @param cached     looks a pod up in the cache by {@code namespace/name}
     * @param cachedPods the cache's pods that may be controlled by the owner
     */
    public static boolean caughtUp(String ownerUid, List<Pod> live, String listRv, Function<String, Pod> cached,
            Collection<Pod> cachedPods) {
        Set<String> liveUids = new HashSet<>();
        for (Pod p : live) {
            if (!controlledBy(p, ownerUid)) {
                continue;
            }
            liveUids.add(p.getMetadata().getUid());
            Pod c = cached.apply(p.getMetadata().getNamespace() + "/" + p.getMetadata().getName());
            if (c == null || !Objects.equals(c.getMetadata().getUid(), p.getMetadata().getUid())) {
                return false; // created, not yet seen
            }
            if (p.getMetadata().getDeletionTimestamp() != null && c.getMetadata().getDeletionTimestamp() == null
                    && !newer(c.getMetadata().getResourceVersion(), p.getMetadata().getResourceVersion())) {
                return false; // deletion started, not yet seen
            }
        }
        for (Pod c : cachedPods) {
            if (!controlledBy(c, ownerUid) || liveUids.contains(c.getMetadata().getUid())
                    || c.getMetadata().getDeletionTimestamp() != null) {
                continue;
            }
            if (!newer(c.getMetadata().getResourceVersion(), listRv)) {
                return false; // gone before the list was read, still cached
            }
        }
        return true;
    }

    private static boolean controlledBy(Pod pod, String uid) {
        OwnerReference ref = ControllerRefManager.controllerOf(pod);
        return ref != null && Objects.equals(ref.getUid(), uid);
    }

    /**
     * Whether resourceVersion {@code a} is later than {@code b}. The API server's are etcd revisions
     * (decimal integers, as its own watch cache compares them); anything else counts as not later,
     * so the check waits rather than guesses.
     */
    static boolean newer(String a, String b) {
        try {
            return Long.parseLong(a) > Long.parseLong(b);
        } catch (NumberFormatException | NullPointerException e) {
            return false;
        }
    }
}
