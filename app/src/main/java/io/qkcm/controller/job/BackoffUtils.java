package io.qkcm.controller.job;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.qkcm.controller.PodUtil;

/**
 * Upstream's backoff_utils.go: the delay before failed pods of a Job are replaced. A record per Job
 * holds the failures since the last success and the time of the last one; the delay is 10 s doubled
 * per further failure, capped at {@link #MAX_POD_FAILURE_BACKOFF}, counted from that time.
 */
public final class BackoffUtils {

    /** Upstream's DefaultJobPodFailureBackOff. */
    public static final Duration DEFAULT_POD_FAILURE_BACKOFF = Duration.ofSeconds(10);
    /** Upstream's MaxJobPodFailureBackOff. */
    public static final Duration MAX_POD_FAILURE_BACKOFF = Duration.ofMinutes(10);

    private BackoffUtils() {
    }

    /** Failures after the last success of a Job, and when the last one happened (null: none). */
    public record BackoffRecord(String key, int failuresAfterLastSuccess, Instant lastFailureTime) {

        /** How long pod creation must still wait. */
        public Duration remainingTime(Clock clock, Duration defaultBackoff, Duration maxBackoff) {
            return remainingTimeForFailuresCount(clock, defaultBackoff, maxBackoff, failuresAfterLastSuccess,
                    lastFailureTime);
        }
    }

    /** Upstream's backoffStore: records by Job key. */
    public static final class BackoffStore {
        private final ConcurrentMap<String, BackoffRecord> store = new ConcurrentHashMap<>();

        public void updateBackoffRecord(BackoffRecord record) {
            store.put(record.key(), record);
        }

        public void removeBackoffRecord(String key) {
            store.remove(key);
        }

        public BackoffRecord get(String key) {
            return store.get(key);
        }

        /**
         * Upstream's newBackoffRecord: the stored record advanced by the pods that finished since the
         * last sync. A success resets the count; only failures after the last success count.
         */
        public BackoffRecord newBackoffRecord(String key, List<Pod> newSucceededPods, List<Pod> newFailedPods) {
            BackoffRecord old = store.get(key);
            int failures = old == null ? 0 : old.failuresAfterLastSuccess();
            Instant lastFailure = old == null ? null : old.lastFailureTime();
            List<Pod> succeeded = sortByFinishedTime(newSucceededPods);
            List<Pod> failed = sortByFinishedTime(newFailedPods);
            if (succeeded.isEmpty()) {
                if (failed.isEmpty()) {
                    return new BackoffRecord(key, failures, lastFailure);
                }
                return new BackoffRecord(key, failures + failed.size(), getFinishedTime(failed.get(failed.size() - 1)));
            }
            failures = 0;
            lastFailure = null;
            if (failed.isEmpty()) {
                return new BackoffRecord(key, 0, null);
            }
            Instant lastSuccessTime = getFinishedTime(succeeded.get(succeeded.size() - 1));
            for (int i = failed.size() - 1; i >= 0; i--) {
                Instant failedTime = getFinishedTime(failed.get(i));
                if (!failedTime.isAfter(lastSuccessTime)) {
                    break;
                }
                if (lastFailure == null) {
                    lastFailure = failedTime;
                }
                failures++;
            }
            return new BackoffRecord(key, failures, lastFailure);
        }
    }

    static List<Pod> sortByFinishedTime(List<Pod> pods) {
        List<Pod> sorted = new ArrayList<>(pods);
        sorted.sort(Comparator.comparing(BackoffUtils::getFinishedTime));
        return sorted;
    }

    /**
     * Upstream's getFinishedTime: the latest container finish time (sidecars included), else the
     * transition of Ready to False, else the deletion time less the grace period, else creation.
     */
    public static Instant getFinishedTime(Pod p) {
        Instant t = finishTimeFromContainers(p);
        if (t != null) {
            return t;
        }
        t = finishTimeFromPodReadyFalseCondition(p);
        if (t != null) {
            return t;
        }
        t = finishTimeFromDeletionTimestamp(p);
        if (t != null) {
            return t;
        }
        Instant created = PodUtil.creationTime(p);
        return created == null ? Instant.EPOCH : created;
    }

    static Instant finishTimeFromContainers(Pod p) {
        if (p.getStatus() == null) {
            return null;
        }
        Instant finish = latestFinishTime(null, p.getStatus().getContainerStatuses(), null);
        Set<String> sidecars = new HashSet<>();
        if (p.getSpec() != null && p.getSpec().getInitContainers() != null) {
            for (Container c : p.getSpec().getInitContainers()) {
                if ("Always".equals(c.getRestartPolicy())) {
                    sidecars.add(c.getName());
                }
            }
        }
        return latestFinishTime(finish, p.getStatus().getInitContainerStatuses(), sidecars);
    }

    private static Instant latestFinishTime(Instant prev, List<ContainerStatus> statuses, Set<String> only) {
        Instant finish = prev;
        if (statuses == null) {
            return finish;
        }
        for (ContainerStatus cs : statuses) {
            if (only != null && !only.contains(cs.getName())) {
                continue;
            }
            if (cs.getState() == null || cs.getState().getTerminated() == null) {
                return null;
            }
            Instant at = PodUtil.parseTime(cs.getState().getTerminated().getFinishedAt());
            if (at == null) {
                return null;
            }
            if (finish == null || finish.isBefore(at)) {
                finish = at;
            }
        }
        return finish;
    }

    static Instant finishTimeFromPodReadyFalseCondition(Pod p) {
        PodCondition c = PodUtil.readyCondition(p);
        if (c != null && "False".equals(c.getStatus())) {
            return PodUtil.parseTime(c.getLastTransitionTime());
        }
        return null;
    }

    static Instant finishTimeFromDeletionTimestamp(Pod p) {
        Instant deleted = PodUtil.parseTime(p.getMetadata().getDeletionTimestamp());
        if (deleted == null) {
            return null;
        }
        Long grace = p.getMetadata().getDeletionGracePeriodSeconds();
        return deleted.minusSeconds(grace == null ? 0 : grace);
    }

    /** Upstream's getRemainingTimePerIndex, for the last failed pod of an index (null: no wait). */
    public static Duration remainingTimePerIndex(Clock clock, Duration defaultBackoff, Duration maxBackoff,
            Pod lastFailedPod) {
        if (lastFailedPod == null) {
            return Duration.ZERO;
        }
        int failureCount = IndexedJobUtils.getIndexAbsoluteFailureCount(lastFailedPod) + 1;
        Instant lastFailureTime = getFinishedTime(lastFailedPod);
        return remainingTimeForFailuresCount(clock, defaultBackoff, maxBackoff, failureCount, lastFailureTime);
    }

    /** Upstream's getRemainingTimeForFailuresCount. */
    public static Duration remainingTimeForFailuresCount(Clock clock, Duration defaultBackoff, Duration maxBackoff,
            int failuresCount, Instant lastFailureTime) {
        if (failuresCount == 0 || lastFailureTime == null) {
            return Duration.ZERO;
        }
        Duration backoff = defaultBackoff;
        for (int i = 1; i < failuresCount; i++) {
            backoff = backoff.multipliedBy(2);
            if (backoff.compareTo(maxBackoff) >= 0) {
                backoff = maxBackoff;
                break;
            }
        }
        Duration elapsed = Duration.between(lastFailureTime, clock.instant());
        if (backoff.compareTo(elapsed) < 0) {
            return Duration.ZERO;
        }
        return backoff.minus(elapsed);
    }
}
