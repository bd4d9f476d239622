package io.qkcm.controller.disruption;

import java.time.Duration;
import java.time.Instant;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.PodConditionBuilder;
import io.fabric8.kubernetes.api.model.PodStatus;
import io.qkcm.controller.PodStatusPatch;
import io.qkcm.controller.PodUtil;
import io.qkcm.runtime.DeepCopy;
import io.qkcm.runtime.informers.MetaNamespaceKey;

/**
 * Upstream's stale DisruptionTarget clean-up (nonTerminatingPodHasStaleDisruptionCondition and
 * syncStalePodDisruption): a pod that was marked as a disruption target (condition DisruptionTarget
 * True, by the eviction API or a taint manager) but is still not being deleted after the timeout
 * (upstream's stalePodDisruptionTimeout, 2 min) gets the condition set to False. Conditions the kubelet
 * added (reason TerminationByKubelet) and pods in a terminal phase are never stale.
 */
final class StalePodDisruption {

    /** Upstream's stalePodDisruptionTimeout. */
    static final Duration STALE_POD_DISRUPTION_TIMEOUT = Duration.ofMinutes(2);

    static final String DISRUPTION_TARGET = "DisruptionTarget";
    static final String TERMINATION_BY_KUBELET = "TerminationByKubelet";

    private static final Logger LOG = Logger.getLogger(StalePodDisruption.class);

    private final DisruptionContext ctx;
    private final Duration timeout;
    private final boolean observedGenerationTracking;

    StalePodDisruption(DisruptionContext ctx, Duration timeout, boolean observedGenerationTracking) {
        this.ctx = ctx;
        this.timeout = timeout;
        this.observedGenerationTracking = observedGenerationTracking;
    }

    /**
     * Upstream's nonTerminatingPodHasStaleDisruptionCondition: null when the pod has no condition that
     * can go stale; otherwise how long until it is stale (zero: now).
     */
    Duration staleIn(Pod pod) {
        if (pod.getMetadata().getDeletionTimestamp() != null) {
            return null;
        }
        PodCondition cond = PodUtil.condition(pod, DISRUPTION_TARGET);
        if (cond == null || !"True".equals(cond.getStatus()) || TERMINATION_BY_KUBELET.equals(cond.getReason())
                || PodUtil.isTerminal(pod)) {
            return null;
        }
        Instant since = PodUtil.parseTime(cond.getLastTransitionTime());
        Duration passed = Duration.between(since == null ? Instant.EPOCH : since, ctx.clock().instant());
        Duration waitFor = timeout.minus(passed);
        return waitFor.isNegative() ? Duration.ZERO : waitFor;
    }

    /**
     * Upstream's syncStalePodDisruption. Returns how long to wait before looking again when the
     * condition is not stale yet, null when done; a failed write throws and is retried with backoff.
     */
    Duration sync(String key) {
        MetaNamespaceKey k = MetaNamespaceKey.split(key);
        Pod pod = ctx.pods().getStore().getByKey(key);
        if (pod == null) {
            LOG.debugf("Skipping clearing DisruptionTarget condition because pod was deleted: pod %s", key);
            return null;
        }
        Duration cleanAfter = staleIn(pod);
        if (cleanAfter == null) {
            return null;
        }
        if (!cleanAfter.isZero()) {
            return cleanAfter;
        }
        Pod newPod = DeepCopy.of(pod);
        PodStatus status = PodStatusPatch.copy(pod.getStatus());
        newPod.setStatus(status);
        PodCondition condition = new PodConditionBuilder().withType(DISRUPTION_TARGET)
                .withObservedGeneration(conditionObservedGeneration(pod)).withStatus("False").build();
        if (!PodStatusPatch.updatePodCondition(status, condition, ctx.clock().instant())) {
            return null;
        }
        ctx.client().pods().inNamespace(k.namespace()).resource(newPod).updateStatus();
        LOG.debugf("Reset stale DisruptionTarget condition to False: pod %s", key);
        return null;
    }

    /** Upstream's CalculatePodConditionObservedGeneration. */
    private Long conditionObservedGeneration(Pod pod) {
        long generation = pod.getMetadata().getGeneration() == null ? 0L : pod.getMetadata().getGeneration();
        if (observedGenerationTracking) {
            return generation;
        }
        if (pod.getStatus() != null && pod.getStatus().getConditions() != null) {
            for (PodCondition c : pod.getStatus().getConditions()) {
                if (DISRUPTION_TARGET.equals(c.getType()) && c.getObservedGeneration() != null
                        && c.getObservedGeneration() != 0) {
                    return generation;
                }
            }
        }
        return 0L;
    }
}
