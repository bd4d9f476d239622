package io.qkcm.controller.disruption;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConditionBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudgetStatus;
import io.qkcm.controller.PodStatusPatch;
import io.qkcm.controller.PodUtil;
import io.qkcm.runtime.DeepCopy;
import io.qkcm.runtime.events.EventRecorder;

/**
 * A PodDisruptionBudget's status as upstream computes and writes it: the disrupted-pods map the
 * eviction API fills and this controller prunes (buildDisruptedPodMap, with {@link #DELETION_TIMEOUT}),
 * currentHealthy (countHealthyPods), disruptionsAllowed, the DisruptionAllowed condition
 * (component-helpers' UpdateDisruptionAllowedCondition and ConditionsAreUpToDate) and the fail-safe
 * write that sets disruptionsAllowed to 0 with reason SyncFailed when the status cannot be computed.
 * Writes are a PUT of the status subresource with the cached resourceVersion, never retried here: a
 * conflict goes back to the queue.
 */
final class BudgetStatus {

    /**
     * Upstream's DeletionTimeout: how long a pod the eviction API recorded as disrupted is expected to
     * take to be seen being deleted; after that it is assumed not to be deleted and counts again.
     */
    static final Duration DELETION_TIMEOUT = Duration.ofMinutes(2);

    static final String DISRUPTION_ALLOWED = "DisruptionAllowed";
    static final String SUFFICIENT_PODS = "SufficientPods";
    static final String INSUFFICIENT_PODS = "InsufficientPods";
    static final String SYNC_FAILED = "SyncFailed";

    private static final Logger LOG = Logger.getLogger(BudgetStatus.class);

    private final DisruptionContext ctx;

    BudgetStatus(DisruptionContext ctx) {
        this.ctx = ctx;
    }

    /** buildDisruptedPodMap's results: the entries kept, and when the earliest of them expires (or null). */
    record DisruptedPods(Map<String, String> pods, Instant recheckTime) {
    }

    /**
     * Upstream's buildDisruptedPodMap: keeps the entries of pods that exist, are not being deleted and
     * have not passed the deletion timeout; an expired one gets a NotDeleted event on its pod.
     */
    DisruptedPods buildDisruptedPodMap(List<Pod> pods, PodDisruptionBudget pdb, Instant now) {
        Map<String, String> disrupted = pdb.getStatus() == null ? null : pdb.getStatus().getDisruptedPods();
        Map<String, String> result = new LinkedHashMap<>();
        Instant recheckTime = null;
        if (disrupted == null) {
            return new DisruptedPods(result, null);
        }
        for (Pod pod : pods) {
            if (pod.getMetadata().getDeletionTimestamp() != null) {
                continue;
            }
            String disruptionTime = disrupted.get(pod.getMetadata().getName());
            if (disruptionTime == null) {
                continue;
            }
            Instant at = PodUtil.parseTime(disruptionTime);
            Instant expectedDeletion = (at == null ? Instant.EPOCH : at).plus(DELETION_TIMEOUT);
            if (expectedDeletion.isBefore(now)) {
                LOG.debugf("pod was expected to be deleted but it wasn't, updating PDB: pod %s/%s deletionTime %s "
                        + "podDisruptionBudget %s/%s", pod.getMetadata().getNamespace(), pod.getMetadata().getName(),
                        disruptionTime, pdb.getMetadata().getNamespace(), pdb.getMetadata().getName());
                // upstream names the PDB by its namespace twice
                ctx.recorder().eventf(pod, EventRecorder.WARNING, "NotDeleted",
                        "Pod was expected by PDB %s/%s to be deleted but it wasn't", pdb.getMetadata().getNamespace(),
                        pdb.getMetadata().getNamespace());
            } else {
                if (recheckTime == null || expectedDeletion.isBefore(recheckTime)) {
                    recheckTime = expectedDeletion;
                }
                result.put(pod.getMetadata().getName(), disruptionTime);
            }
        }
        return new DisruptedPods(result, recheckTime);
    }

    /**
     * Upstream's countHealthyPods: ready pods that are neither being deleted nor recorded as disrupted
     * within the deletion timeout.
     */
    static int countHealthyPods(List<Pod> pods, Map<String, String> disruptedPods, Instant now) {
        int healthy = 0;
        for (Pod pod : pods) {
            if (pod.getMetadata().getDeletionTimestamp() != null) {
                continue;
            }
            String disruptionTime = disruptedPods.get(pod.getMetadata().getName());
            if (disruptionTime != null) {
                Instant at = PodUtil.parseTime(disruptionTime);
                if ((at == null ? Instant.EPOCH : at).plus(DELETION_TIMEOUT).isAfter(now)) {
                    continue;
                }
            }
            if (PodUtil.isReady(pod)) {
                healthy++;
            }
        }
        return healthy;
    }

    /**
     * Upstream's updatePdbStatus: disruptionsAllowed is currentHealthy - desiredHealthy, and 0 while no
     * pod is expected (a PDB whose pods appear before its status is safe); nothing is written when the
     * status, observedGeneration and the condition are already so.
     */
    void updatePdbStatus(PodDisruptionBudget pdb, int currentHealthy, int desiredHealthy, int expectedCount,
            Map<String, String> disruptedPods) {
        int disruptionsAllowed = currentHealthy - desiredHealthy;
        if (expectedCount <= 0 || disruptionsAllowed <= 0) {
            disruptionsAllowed = 0;
        }
        PodDisruptionBudgetStatus s = pdb.getStatus() == null ? new PodDisruptionBudgetStatus() : pdb.getStatus();
        long generation = n(pdb.getMetadata().getGeneration());
        if (n(s.getCurrentHealthy()) == currentHealthy && n(s.getDesiredHealthy()) == desiredHealthy
                && n(s.getExpectedPods()) == expectedCount && n(s.getDisruptionsAllowed()) == disruptionsAllowed
                && sameDisruptedPods(s.getDisruptedPods(), disruptedPods) && n(s.getObservedGeneration()) == generation
                && conditionsAreUpToDate(pdb)) {
            return;
        }
        PodDisruptionBudget newPdb = DeepCopy.of(pdb);
        PodDisruptionBudgetStatus status = new PodDisruptionBudgetStatus();
        status.setCurrentHealthy(currentHealthy);
        status.setDesiredHealthy(desiredHealthy);
        status.setExpectedPods(expectedCount);
        status.setDisruptionsAllowed(disruptionsAllowed);
        status.setDisruptedPods(disruptedPods.isEmpty() ? null : disruptedPods);
        status.setObservedGeneration(generation);
        status.setConditions(newPdb.getStatus() == null ? null : newPdb.getStatus().getConditions());
        newPdb.setStatus(status);
        updateDisruptionAllowedCondition(newPdb, ctx.clock().instant());
        writePdbStatus(newPdb);
    }

    /**
     * Upstream's failSafe: at least disruptionsAllowed 0 and DisruptionAllowed False/SyncFailed with the
     * error as message, so the eviction API refuses what may be unsafe. observedGeneration stays.
     */
    void failSafe(PodDisruptionBudget pdb, String message) {
        PodDisruptionBudget newPdb = DeepCopy.of(pdb);
        if (newPdb.getStatus() == null) {
            newPdb.setStatus(new PodDisruptionBudgetStatus());
        }
        PodDisruptionBudgetStatus status = newPdb.getStatus();
        status.setDisruptionsAllowed(0);
        status.setConditions(status.getConditions() == null ? new ArrayList<>() : new ArrayList<>(status.getConditions()));
        setStatusCondition(status.getConditions(), condition("False", SYNC_FAILED, message,
                n(status.getObservedGeneration())), ctx.clock().instant());
        writePdbStatus(newPdb);
    }

    /** Upstream's writePdbStatus: one UpdateStatus, its failure handled by the queue. */
    private void writePdbStatus(PodDisruptionBudget pdb) {
        ctx.client().policy().v1().podDisruptionBudget().inNamespace(pdb.getMetadata().getNamespace()).resource(pdb)
                .updateStatus();
    }

    /** component-helpers' UpdateDisruptionAllowedCondition. */
    static void updateDisruptionAllowedCondition(PodDisruptionBudget pdb, Instant now) {
        PodDisruptionBudgetStatus status = pdb.getStatus();
        if (status.getConditions() == null) {
            status.setConditions(new ArrayList<>());
        } else {
            status.setConditions(new ArrayList<>(status.getConditions()));
        }
        long observed = n(status.getObservedGeneration());
        if (n(status.getDisruptionsAllowed()) > 0) {
            setStatusCondition(status.getConditions(), condition("True", SUFFICIENT_PODS, "", observed), now);
        } else {
            setStatusCondition(status.getConditions(), condition("False", INSUFFICIENT_PODS, "", observed), now);
        }
    }

    /** component-helpers' ConditionsAreUpToDate. */
    static boolean conditionsAreUpToDate(PodDisruptionBudget pdb) {
        PodDisruptionBudgetStatus status = pdb.getStatus();
        if (status == null) {
            return false;
        }
        Condition cond = findStatusCondition(status.getConditions(), DISRUPTION_ALLOWED);
        if (cond == null) {
            return false;
        }
        if (n(status.getObservedGeneration()) != n(pdb.getMetadata().getGeneration())) {
            return false;
        }
        if (n(status.getDisruptionsAllowed()) > 0) {
            return "True".equals(cond.getStatus()) && SUFFICIENT_PODS.equals(cond.getReason());
        }
        return "False".equals(cond.getStatus()) && INSUFFICIENT_PODS.equals(cond.getReason());
    }

    private static Condition condition(String status, String reason, String message, long observedGeneration) {
        return new ConditionBuilder().withType(DISRUPTION_ALLOWED).withStatus(status).withReason(reason)
                .withMessage(message).withObservedGeneration(observedGeneration).build();
    }

    static Condition findStatusCondition(List<Condition> conditions, String type) {
        if (conditions == null) {
            return null;
        }
        for (Condition c : conditions) {
            if (type.equals(c.getType())) {
                return c;
            }
        }
        return null;
    }

    /**
     * apimachinery's meta.SetStatusCondition: adds the condition (transition time now), or changes the
     * existing one in place, its transition time moving only when its status changes.
     */
    static boolean setStatusCondition(List<Condition> conditions, Condition newCondition, Instant now) {
        Condition existing = findStatusCondition(conditions, newCondition.getType());
        if (existing == null) {
            if (newCondition.getLastTransitionTime() == null || newCondition.getLastTransitionTime().isEmpty()) {
                newCondition.setLastTransitionTime(PodStatusPatch.metaTime(now));
            }
            conditions.add(newCondition);
            return true;
        }
        boolean changed = false;
        if (!Objects.equals(existing.getStatus(), newCondition.getStatus())) {
            existing.setStatus(newCondition.getStatus());
            existing.setLastTransitionTime(newCondition.getLastTransitionTime() == null
                    || newCondition.getLastTransitionTime().isEmpty() ? PodStatusPatch.metaTime(now)
                            : newCondition.getLastTransitionTime());
            changed = true;
        }
        if (!Objects.equals(s(existing.getReason()), s(newCondition.getReason()))) {
            existing.setReason(newCondition.getReason());
            changed = true;
        }
        if (!Objects.equals(s(existing.getMessage()), s(newCondition.getMessage()))) {
            existing.setMessage(newCondition.getMessage());
            changed = true;
        }
        if (n(existing.getObservedGeneration()) != n(newCondition.getObservedGeneration())) {
            existing.setObservedGeneration(newCondition.getObservedGeneration());
            changed = true;
        }
        return changed;
    }

    /** apiequality.Semantic.DeepEqual of two disrupted-pods maps: nil equals empty, times by instant. */
    static boolean sameDisruptedPods(Map<String, String> a, Map<String, String> b) {
        Map<String, String> x = a == null ? Map.of() : a;
        Map<String, String> y = b == null ? Map.of() : b;
        if (x.size() != y.size()) {
            return false;
        }
        for (Map.Entry<String, String> e : x.entrySet()) {
            if (!y.containsKey(e.getKey())) {
                return false;
            }
            if (!Objects.equals(PodUtil.parseTime(e.getValue()), PodUtil.parseTime(y.get(e.getKey())))) {
                return false;
            }
        }
        return true;
    }

    private static String s(String v) {
        return v == null ? "" : v;
    }

    private static long n(Number v) {
        return v == null ? 0 : v.longValue();
    }
}
