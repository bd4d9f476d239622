package io.qkcm.controller.resourcequota;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.fabric8.kubernetes.api.model.ResourceQuota;
import io.qkcm.controller.resourcequota.quota.ResourceLists;
import io.qkcm.controller.util.GoQuantity;

/**
 * Not in upstream: when each quota's status.used was last seen to rise. The API server's quota
 * admission charges a create to status.used before it stores the object, so for a moment the quota
 * counts an object no cache (nor a consistent list) holds yet. Upstream's syncResourceQuota writes the
 * lower recount back with the quota's current resourceVersion, which succeeds and undoes the charge,
 * and the next create is admitted over the limit (the window of kubernetes/kubernetes#24494). The
 * controller lowers a usage only once {@code settle} has passed since the last rise it saw; a rise
 * is judged against the newest resourceVersion seen, whoever made it (admission, or this controller's
 * own recount finding more).
 */
final class AdmissionCharges {

    private record Seen(String resourceVersion, Map<String, GoQuantity> used, Instant lastRise) {
    }

    private final Clock clock;
    private final Duration settle;
    private final Map<String, Seen> seen = new ConcurrentHashMap<>();

    AdmissionCharges(Clock clock, Duration settle) {
        this.clock = clock;
        this.settle = settle;
    }

    /** Records {@code quota} as seen now (from the informer or by a sync); older resourceVersions are ignored. */
    void observe(String key, ResourceQuota quota) {
        Map<String, GoQuantity> used = ResourceLists.of(quota.getStatus() == null ? null : quota.getStatus().getUsed());
        String rv = quota.getMetadata().getResourceVersion();
        seen.compute(key, (k, before) -> {
            if (before == null) {
                // a quota first seen may carry charges whose objects are still on their way
                return new Seen(rv, used, clock.instant());
            }
            if (!newer(rv, before.resourceVersion())) {
                return before;
            }
            boolean rose = false;
            for (Map.Entry<String, GoQuantity> e : used.entrySet()) {
                GoQuantity was = before.used().get(e.getKey());
                if (was == null || e.getValue().compareTo(was) > 0) {
                    rose = true;
                    break;
                }
            }
            return new Seen(rv, used, rose ? clock.instant() : before.lastRise());
        });
    }

    /** How long lowering a usage of this quota must still wait; zero or negative when it may. */
    Duration remaining(String key) {
        Seen s = seen.get(key);
        if (s == null) {
            return Duration.ZERO;
        }
        return settle.minus(Duration.between(s.lastRise(), clock.instant()));
    }

    void forget(String key) {
        seen.remove(key);
    }

    /** Whether resourceVersion {@code a} is later than {@code b} (etcd revisions; anything else counts as later). */
    private static boolean newer(String a, String b) {
        try {
            return Long.parseLong(a) > Long.parseLong(b);
        } catch (NumberFormatException | NullPointerException e) {
            return true;
        }
    }
}
