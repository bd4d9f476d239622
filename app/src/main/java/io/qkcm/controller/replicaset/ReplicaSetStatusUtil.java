package io.qkcm.controller.replicaset;

import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.ReplicaSet;
import io.fabric8.kubernetes.api.model.apps.ReplicaSetCondition;
import io.fabric8.kubernetes.api.model.apps.ReplicaSetStatus;
import io.qkcm.controller.ApiErrors;
import io.qkcm.controller.LabelSelectors;
import io.qkcm.controller.PodUtil;

/** Status and conditions of a ReplicaSet (upstream's replica_set_utils.go). */
final class ReplicaSetStatusUtil {

    private static final Logger LOG = Logger.getLogger(ReplicaSetStatusUtil.class);

    static final String REPLICA_FAILURE = "ReplicaFailure";
    /** Upstream's statusUpdateRetries: one GET and PUT again after a failed PUT. */
    static final int STATUS_UPDATE_RETRIES = 1;

    private ReplicaSetStatusUtil() {
    }

    static int replicas(ReplicaSet rs) {
        Integer r = rs.getSpec() == null ? null : rs.getSpec().getReplicas();
        return r == null ? 1 : r;
    }

    static int minReadySeconds(ReplicaSet rs) {
        Integer m = rs.getSpec() == null ? null : rs.getSpec().getMinReadySeconds();
        return m == null ? 0 : m;
    }

    private static int n(Integer i) {
        return i == null ? 0 : i;
    }

    private static long n(Long l) {
        return l == null ? 0 : l;
    }

    private static List<ReplicaSetCondition> conditions(ReplicaSetStatus s) {
        return s.getConditions() == null ? List.of() : s.getConditions();
    }

    /**
     * Upstream's calculateStatus: counts from the active (claimed) pods, the ReplicaFailure condition
     * added on a manageReplicas error (FailedCreate when short of pods, FailedDelete when over) and
     * removed once a sync manages without error.
     */
    static ReplicaSetStatus calculateStatus(ReplicaSet rs, List<Pod> activePods, List<Pod> terminatingPods,
            boolean terminatingEnabled, Exception manageReplicasErr, Instant now) {
        ReplicaSetStatus old = rs.getStatus() == null ? new ReplicaSetStatus() : rs.getStatus();
        ReplicaSetStatus status = new ReplicaSetStatus();
        status.setObservedGeneration(old.getObservedGeneration());
        status.setConditions(old.getConditions() == null ? null : new ArrayList<>(old.getConditions()));
        status.setTerminatingReplicas(old.getTerminatingReplicas());

        int fullyLabeled = 0;
        int ready = 0;
        int available = 0;
        LabelSelectors.Selector templateLabels = LabelSelectors.fromSet(
                rs.getSpec().getTemplate() == null || rs.getSpec().getTemplate().getMetadata() == null ? null
                        : rs.getSpec().getTemplate().getMetadata().getLabels());
        int minReady = minReadySeconds(rs);
        for (Pod pod : activePods) {
            if (templateLabels.matches(pod.getMetadata().getLabels())) {
                fullyLabeled++;
            }
            if (PodUtil.isReady(pod)) {
                ready++;
                if (PodUtil.isAvailable(pod, minReady, now)) {
                    available++;
                }
            }
        }
        Integer terminating = terminatingEnabled ? terminatingPods.size() : null;

        ReplicaSetCondition failure = getCondition(old, REPLICA_FAILURE);
        if (manageReplicasErr != null && failure == null) {
            int diff = activePods.size() - replicas(rs);
            String reason = diff < 0 ? "FailedCreate" : diff > 0 ? "FailedDelete" : "";
            setCondition(status, newCondition(REPLICA_FAILURE, "True", reason, ApiErrors.message(manageReplicasErr)));
        } else if (manageReplicasErr == null && failure != null) {
            removeCondition(status, REPLICA_FAILURE);
        }
        status.setReplicas(activePods.size());
        status.setFullyLabeledReplicas(fullyLabeled);
        status.setReadyReplicas(ready);
        status.setAvailableReplicas(available);
        status.setTerminatingReplicas(terminating);
        return status;
    }

    /** Whether writing {@code newStatus} would change nothing (upstream's steady-state check). */
    static boolean unchanged(ReplicaSet rs, ReplicaSetStatus newStatus) {
        ReplicaSetStatus s = rs.getStatus() == null ? new ReplicaSetStatus() : rs.getStatus();
        return n(s.getReplicas()) == n(newStatus.getReplicas())
                && n(s.getFullyLabeledReplicas()) == n(newStatus.getFullyLabeledReplicas())
                && n(s.getReadyReplicas()) == n(newStatus.getReadyReplicas())
                && n(s.getAvailableReplicas()) == n(newStatus.getAvailableReplicas())
                && Objects.equals(s.getTerminatingReplicas(), newStatus.getTerminatingReplicas())
                && n(rs.getMetadata().getGeneration()) == n(s.getObservedGeneration())
                && conditions(s).equals(conditions(newStatus));
    }

    /**
     * Upstream's updateReplicaSetStatus: nothing when unchanged; otherwise PUT the status with
     * observedGeneration = generation, and once more after a fresh GET if that fails.
     */
    static ReplicaSet updateReplicaSetStatus(ReplicaSetSource source, ReplicaSet rs, ReplicaSetStatus newStatus) {
        if (unchanged(rs, newStatus)) {
            return rs;
        }
        newStatus.setObservedGeneration(rs.getMetadata().getGeneration());
        RuntimeException updateErr = null;
        ReplicaSet current = rs;
        for (int i = 0;; i++) {
            ReplicaSetStatus s = current.getStatus() == null ? new ReplicaSetStatus() : current.getStatus();
            LOG.debugf("Updating status for %s: %s/%s, replicas %d->%d (need %d), fullyLabeledReplicas %d->%d, "
                    + "readyReplicas %d->%d, availableReplicas %d->%d, sequence No: %d->%d", source.kind(),
                    current.getMetadata().getNamespace(), current.getMetadata().getName(), n(s.getReplicas()),
                    n(newStatus.getReplicas()), replicas(current), n(s.getFullyLabeledReplicas()),
                    n(newStatus.getFullyLabeledReplicas()), n(s.getReadyReplicas()), n(newStatus.getReadyReplicas()),
                    n(s.getAvailableReplicas()), n(newStatus.getAvailableReplicas()), n(s.getObservedGeneration()),
                    n(newStatus.getObservedGeneration()));
            current.setStatus(newStatus);
            try {
                return source.updateStatus(current);
            } catch (RuntimeException e) {
                updateErr = e;
            }
            if (i >= STATUS_UPDATE_RETRIES) {
                break;
            }
            ReplicaSet fresh = source.getLive(current.getMetadata().getNamespace(), current.getMetadata().getName());
            if (fresh == null) {
                throw updateErr;
            }
            current = fresh;
        }
        throw updateErr;
    }

    static ReplicaSetCondition newCondition(String type, String status, String reason, String message) {
        ReplicaSetCondition c = new ReplicaSetCondition();
        c.setType(type);
        c.setStatus(status);
        c.setLastTransitionTime(Instant.now().truncatedTo(ChronoUnit.SECONDS).toString());
        c.setReason(reason);
        c.setMessage(message);
        return c;
    }

    static ReplicaSetCondition getCondition(ReplicaSetStatus status, String type) {
        for (ReplicaSetCondition c : conditions(status)) {
            if (type.equals(c.getType())) {
                return c;
            }
        }
        return null;
    }

    /** Adds or replaces the condition, unless one with the same status and reason is already there. */
    static void setCondition(ReplicaSetStatus status, ReplicaSetCondition condition) {
        ReplicaSetCondition current = getCondition(status, condition.getType());
        if (current != null && Objects.equals(current.getStatus(), condition.getStatus())
                && Objects.equals(current.getReason(), condition.getReason())) {
            return;
        }
        List<ReplicaSetCondition> conditions = filterOut(conditions(status), condition.getType());
        conditions.add(condition);
        status.setConditions(conditions);
    }

    static void removeCondition(ReplicaSetStatus status, String type) {
        List<ReplicaSetCondition> remaining = filterOut(conditions(status), type);
        status.setConditions(remaining.isEmpty() ? null : remaining);
    }

    private static List<ReplicaSetCondition> filterOut(List<ReplicaSetCondition> conditions, String type) {
        List<ReplicaSetCondition> out = new ArrayList<>();
        for (ReplicaSetCondition c : conditions) {
            if (!type.equals(c.getType())) {
                out.add(c);
            }
        }
        return out;
    }
}
