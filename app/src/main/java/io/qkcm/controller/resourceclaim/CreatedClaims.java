package io.qkcm.controller.resourceclaim;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.function.LongSupplier;

import io.qkcm.controller.util.resource.ResourceClaim;

/**
 * What upstream's claim MutationCache gives findPodResourceClaim: the claims this controller created,
 * by owning pod UID, until the informer's cache has them (or an hour passed, upstream's TTL), so a
 * sync that runs before the watch delivers a new claim does not create a second one from the template.
 *
 * <p>Beyond upstream: a create whose answer was lost ({@code ApiErrors.isOutcomeUnknown}) marks the
 * pod UID uncertain. A generated name is known only to the API server, so the next sync for the pod
 * lists the namespace's claims from the API server before creating, and takes a claim it finds for
 * the pod's claim instead of creating another.
 */
final class CreatedClaims {

    private static final Duration TTL = Duration.ofHours(1);

    private record Created(ResourceClaim claim, long atNanos) {
    }

    private final Map<String, List<Created>> byPodUid = new ConcurrentHashMap<>();
    private final Set<String> uncertain = ConcurrentHashMap.newKeySet();
    private final LongSupplier nanoTime;

    CreatedClaims(LongSupplier nanoTime) {
        this.nanoTime = nanoTime;
    }

    void created(String podUid, ResourceClaim claim) {
        byPodUid.computeIfAbsent(podUid, uid -> new java.util.concurrent.CopyOnWriteArrayList<>())
                .add(new Created(claim, nanoTime.getAsLong()));
    }

    /** The claims created for the pod that {@code cached} (namespace/name → cached claim) does not have yet. */
    List<ResourceClaim> notYetCached(String podUid, Function<String, ResourceClaim> cached) {
        List<Created> created = byPodUid.get(podUid);
        if (created == null) {
            return List.of();
        }
        List<ResourceClaim> result = new ArrayList<>();
        long now = nanoTime.getAsLong();
        for (Created c : created) {
            String key = c.claim().getMetadata().getNamespace() + "/" + c.claim().getMetadata().getName();
            if (cached.apply(key) != null || now - c.atNanos() > TTL.toNanos()) {
                created.remove(c);
                continue;
            }
            result.add(c.claim());
        }
        if (created.isEmpty()) {
            byPodUid.remove(podUid, created);
        }
        return result;
    }

    void markUncertain(String podUid) {
        uncertain.add(podUid);
    }

    boolean isUncertain(String podUid) {
        return uncertain.contains(podUid);
    }

    void settled(String podUid) {
        uncertain.remove(podUid);
    }
}
