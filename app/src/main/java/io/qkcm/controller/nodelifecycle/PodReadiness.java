package io.qkcm.controller.nodelifecycle;

import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.PodConditionBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.qkcm.controller.ApiErrors;
import io.qkcm.controller.PodStatusPatch;
import io.qkcm.runtime.DeepCopy;
import io.qkcm.runtime.events.EventRecorder;

/**
 * Upstream's MarkPodsNotReady (pkg/controller/util/node): the Ready condition of each pod bound to an
 * unhealthy node set to False with a status update (so the endpoints controllers drop the pod), and a
 * {@code NodeNotReady} warning event on the pod.
 */
final class PodReadiness {

    private static final Logger LOG = Logger.getLogger(PodReadiness.class);

    private final KubernetesClient client;
    private final EventRecorder recorder;
    private final Clock clock;

    PodReadiness(KubernetesClient client, EventRecorder recorder, Clock clock) {
        this.client = client;
        this.recorder = recorder;
        this.clock = clock;
    }

    /** Marks the pods on {@code nodeName} not ready; throws the failed writes' errors together. */
    void markPodsNotReady(List<Pod> pods, String nodeName) {
        LOG.debugf("Update ready status of pods on node %s", nodeName);
        List<String> errors = new ArrayList<>();
        for (Pod cached : pods) {
            // defensive, as upstream: only pods still bound to this node
            if (!Objects.equals(cached.getSpec().getNodeName(), nodeName)) {
                continue;
            }
            Pod pod = DeepCopy.of(cached);
            PodCondition ready = pod.getStatus() == null || pod.getStatus().getConditions() == null ? null
                    : pod.getStatus().getConditions().stream().filter(c -> "Ready".equals(c.getType())).findFirst()
                            .orElse(null);
            if (ready == null) {
                continue;
            }
            PodCondition cond = new PodConditionBuilder(ready).withStatus("False").build();
            if (!PodStatusPatch.updatePodCondition(pod.getStatus(), cond, clock.instant())) {
                continue;
            }
            LOG.debugf("Updating ready status of pod %s/%s to false", pod.getMetadata().getNamespace(),
                    pod.getMetadata().getName());
            try {
                client.pods().inNamespace(pod.getMetadata().getNamespace()).resource(pod).updateStatus();
            } catch (KubernetesClientException e) {
                if (ApiErrors.isNotFound(e)) {
                    // the pod is gone: nothing left to do with it
                    continue;
                }
                LOG.infof("Failed to update status for pod %s/%s: %s", pod.getMetadata().getNamespace(),
                        pod.getMetadata().getName(), ApiErrors.message(e));
                errors.add(ApiErrors.message(e));
            }
            // after the update, so that the pod still exists
            recorder.event(pod, EventRecorder.WARNING, "NodeNotReady", "Node is not ready");
        }
        if (!errors.isEmpty()) {
            throw new IllegalStateException(String.join("; ", errors));
        }
    }
}
