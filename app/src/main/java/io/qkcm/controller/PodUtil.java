package io.qkcm.controller;

import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.List;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;

/** The pod helpers upstream controllers use (pkg/api/v1/pod): readiness, availability, phases. */
public final class PodUtil {

    private PodUtil() {
    }

    public static String phase(Pod pod) {
        return pod.getStatus() == null ? null : pod.getStatus().getPhase();
    }

    public static boolean isTerminal(Pod pod) {
        String phase = phase(pod);
        return "Succeeded".equals(phase) || "Failed".equals(phase);
    }

    public static boolean isDeleting(Pod pod) {
        return pod.getMetadata().getDeletionTimestamp() != null;
    }

    public static PodCondition condition(Pod pod, String type) {
        if (pod.getStatus() == null) {
            return null;
        }
        List<PodCondition> conditions = pod.getStatus().getConditions();
        if (conditions == null) {
            return null;
        }
        // indexed: called for every cached pod on every sync, and C1 (bin/qkcm's JIT) allocates each iterator
        for (int i = 0, n = conditions.size(); i < n; i++) {
            PodCondition c = conditions.get(i);
            if (type.equals(c.getType())) {
                return c;
            }
        }
        return null;
    }

    public static PodCondition readyCondition(Pod pod) {
        return condition(pod, "Ready");
    }

    public static boolean isReady(Pod pod) {
        PodCondition c = readyCondition(pod);
        return c != null && "True".equals(c.getStatus());
    }

    /** When the pod became Ready, or null (Go's zero time) when it is not ready. */
    public static Instant readyTime(Pod pod) {
        if (isReady(pod)) {
            return parseTime(readyCondition(pod).getLastTransitionTime());
        }
        return null;
    }

    /** Ready for at least {@code minReadySeconds} at {@code now}. */
    public static boolean isAvailable(Pod pod, int minReadySeconds, Instant now) {
        if (!isReady(pod)) {
            return false;
        }
        if (minReadySeconds == 0) {
            return true;
        }
        Instant since = parseTime(readyCondition(pod).getLastTransitionTime());
        return since != null && !since.plusSeconds(minReadySeconds).isAfter(now);
    }

    /** A metav1.Time in RFC 3339; null for absent (Go's zero time). */
    public static Instant parseTime(String rfc3339) {
        if (rfc3339 == null || rfc3339.isEmpty()) {
            return null;
        }
        try {
            return Instant.parse(rfc3339);
        } catch (RuntimeException e) {
            return OffsetDateTime.parse(rfc3339).toInstant();
        }
    }

    public static Instant creationTime(Pod pod) {
        return parseTime(pod.getMetadata().getCreationTimestamp());
    }

    /** Upstream's nextPodAvailabilityCheck: how long until a ready pod becomes available, or null. */
    public static Duration nextAvailabilityCheck(Pod pod, int minReadySeconds, Instant now) {
        if (!isReady(pod) || minReadySeconds <= 0) {
            return null;
        }
        Instant since = parseTime(readyCondition(pod).getLastTransitionTime());
        if (since == null) {
            return null;
        }
        Duration next = Duration.between(now, since.plusSeconds(minReadySeconds));
        return next.isNegative() || next.isZero() ? null : next;
    }

    /**
     * Upstream's FindMinNextPodAvailabilityCheck: the soonest time one of {@code pods} becomes
     * available, judged against the time the owner's status was computed, re-evaluated now; zero if
     * that moment has already passed, null if no pod is waiting for minReadySeconds.
     */
    public static Duration findMinNextPodAvailabilityCheck(List<Pod> pods, int minReadySeconds,
            Instant lastOwnerStatusEvaluation, Instant now) {
        Duration min = null;
        Pod checkPod = null;
        for (Pod p : pods) {
            Duration next = nextAvailabilityCheck(p, minReadySeconds, lastOwnerStatusEvaluation);
            if (next != null && (min == null || next.compareTo(min) < 0)) {
                min = next;
                checkPod = p;
            }
        }
        if (min == null || checkPod == null) {
            return null;
        }
        Duration updated = nextAvailabilityCheck(checkPod, minReadySeconds, now);
        return updated != null ? updated : Duration.ZERO;
    }
}
