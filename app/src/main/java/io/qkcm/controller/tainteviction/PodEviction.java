package io.qkcm.controller.tainteviction;

import java.time.Duration;
import java.time.Instant;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.PodConditionBuilder;
import io.fabric8.kubernetes.api.model.PodStatus;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.qkcm.controller.PodStatusPatch;
import io.qkcm.controller.tainteviction.metrics.TaintEvictionMetrics;
import io.qkcm.runtime.events.EventRecorder;

/**
 * What a fired eviction does (upstream's deletePodHandler and addConditionAndDeletePod): the
 * {@code TaintManagerEviction} event "Marking for deletion", then up to {@value #RETRIES} attempts, 10 ms
 * apart, of: read the pod fresh, patch its {@code DisruptionTarget} condition (reason
 * {@code DeletionByTaintManager}) onto the status when it is not there yet (the UID as precondition), and
 * delete it. Each attempt is safe to repeat: the patch carries the UID and changes nothing the second
 * time, and a second delete of a pod being deleted deletes nothing more.
 */
final class PodEviction {

    private static final Logger LOG = Logger.getLogger(PodEviction.class);

    static final int RETRIES = 5;
    static final String DISRUPTION_TARGET = "DisruptionTarget";
    static final String REASON = "DeletionByTaintManager";
    static final String MESSAGE = "Taint manager: deleting due to NoExecute taint";
    static final String EVENT_REASON = "TaintManagerEviction";

    private final KubernetesClient client;
    private final EventRecorder recorder;
    private final TaintEvictionMetrics metrics;
    private final TimedWorkerQueue.Clock clock;
    private final String controllerName;
    private final boolean observedGenerationTracking;

    PodEviction(KubernetesClient client, EventRecorder recorder, TaintEvictionMetrics metrics,
            TimedWorkerQueue.Clock clock, String controllerName, boolean observedGenerationTracking) {
        this.client = client;
        this.recorder = recorder;
        this.metrics = metrics;
        this.clock = clock;
        this.controllerName = controllerName;
        this.observedGenerationTracking = observedGenerationTracking;
    }

    /** Upstream's deletePodHandler: the timed worker's work. */
    void evict(String namespace, String name, Instant fireAt) throws InterruptedException {
        LOG.infof("Deleting pod: controller %s pod %s/%s", controllerName, namespace, name);
        emitPodDeletionEvent(namespace, name);
        RuntimeException error = null;
        for (int i = 0; i < RETRIES; i++) {
            try {
                addConditionAndDeletePod(namespace, name);
                Duration latency = Duration.between(fireAt, clock.now());
                metrics.podDeleted(latency.toNanos() / 1e9);
                return;
            } catch (RuntimeException e) {
                error = e;
            }
            Thread.sleep(10);
        }
        throw error;
    }

    /** Upstream's addConditionAndDeletePod. */
    void addConditionAndDeletePod(String namespace, String name) {
        Pod pod = client.pods().inNamespace(namespace).withName(name).get();
        if (pod == null) {
            throw notFound(name);
        }
        PodStatus newStatus = PodStatusPatch.copy(pod.getStatus());
        PodCondition condition = new PodConditionBuilder().withType(DISRUPTION_TARGET)
                .withObservedGeneration(conditionObservedGeneration(pod))
                .withStatus("True").withReason(REASON).withMessage(MESSAGE).build();
        if (PodStatusPatch.updatePodCondition(newStatus, condition, clock.now())) {
            String patch = PodStatusPatch.prepare(pod.getMetadata().getUid(), pod.getStatus(), newStatus);
            if (patch != null) {
                client.pods().inNamespace(namespace).withName(name).subresource("status")
                        .patch(PatchContext.of(PatchType.STRATEGIC_MERGE), patch);
            }
        }
        // fabric8 answers an absent pod with an empty list; upstream's Delete answers NotFound
        if (client.pods().inNamespace(namespace).withName(name).delete().isEmpty()) {
            throw notFound(name);
        }
    }

    /** Upstream's CalculatePodConditionObservedGeneration for DisruptionTarget. */
    private long conditionObservedGeneration(Pod pod) {
        long generation = pod.getMetadata().getGeneration() == null ? 0L : pod.getMetadata().getGeneration();
        // &pod.Status is never nil upstream: an absent status is an empty one
        if (observedGenerationTracking) {
            return generation;
        }
        if (pod.getStatus().getConditions() != null) {
            for (PodCondition c : pod.getStatus().getConditions()) {
                if (DISRUPTION_TARGET.equals(c.getType()) && c.getObservedGeneration() != null
                        && c.getObservedGeneration() != 0) {
                    return generation;
                }
            }
        }
        return 0L;
    }

    /** Upstream's emitPodDeletionEvent. */
    void emitPodDeletionEvent(String namespace, String name) {
        recorder.eventf(reference(namespace, name), EventRecorder.NORMAL, EVENT_REASON, "Marking for deletion Pod %s/%s",
                namespace, name);
    }

    /** Upstream's emitCancelPodDeletionEvent. */
    void emitCancelPodDeletionEvent(String namespace, String name) {
        recorder.eventf(reference(namespace, name), EventRecorder.NORMAL, EVENT_REASON, "Cancelling deletion of Pod %s/%s",
                namespace, name);
    }

    /** Upstream's event reference: apiVersion, kind, namespace and name only (no UID). */
    private static Pod reference(String namespace, String name) {
        Pod ref = new Pod();
        ref.setMetadata(new ObjectMetaBuilder().withNamespace(namespace).withName(name).build());
        return ref;
    }

    private static KubernetesClientException notFound(String name) {
        return new KubernetesClientException("pods \"" + name + "\" not found", 404, null);
    }
}
