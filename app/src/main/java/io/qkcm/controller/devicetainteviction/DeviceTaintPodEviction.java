package io.qkcm.controller.devicetainteviction;

import java.time.Clock;
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
import io.qkcm.controller.ApiErrors;
import io.qkcm.controller.PodStatusPatch;
import io.qkcm.controller.devicetainteviction.TimedWorkerQueue.PodRef;
import io.qkcm.controller.devicetainteviction.metrics.DeviceTaintEvictionMetrics;
import io.qkcm.runtime.events.EventRecorder;
import io.qkcm.runtime.informers.GroupVersionResource;
import io.qkcm.runtime.informers.MetadataClient;

/**
 * What a fired eviction does (upstream's deletePodHandler and addConditionAndDeletePod): up to
 * {@value #RETRIES} attempts, 10 ms apart, of: read the pod fresh; if it is another pod of the same name, stop
 * (nothing to do); emit {@code DeviceTaintManagerEviction} "Marking for deletion" (once); add the
 * {@code DisruptionTarget} condition (reason {@code DeletionByDeviceTaintManager}) unless there; delete it with
 * its UID as precondition. A pod already gone is no error and counts no deletion.
 */
final class DeviceTaintPodEviction {

    private static final Logger LOG = Logger.getLogger(DeviceTaintPodEviction.class);
    private static final GroupVersionResource PODS = new GroupVersionResource("", "v1", "pods");

    static final int RETRIES = 5;
    static final String DISRUPTION_TARGET = "DisruptionTarget";
    static final String REASON = "DeletionByDeviceTaintManager";
    static final String MESSAGE = "Device Taint manager: deleting due to NoExecute taint";
    static final String EVENT_REASON = "DeviceTaintManagerEviction";

    private final KubernetesClient client;
    private final MetadataClient metadata;
    private final EventRecorder recorder;
    private final DeviceTaintEvictionMetrics metrics;
    private final Clock clock;

    DeviceTaintPodEviction(KubernetesClient client, EventRecorder recorder, DeviceTaintEvictionMetrics metrics, Clock clock) {
        this.client = client;
        this.metadata = new MetadataClient(client);
        this.recorder = recorder;
        this.metrics = metrics;
        this.clock = clock;
    }

    /** Upstream's deletePodHandler: the timed worker's work. */
    void evict(PodRef pod, Instant fireAt) throws InterruptedException {
        LOG.infof("Deleting pod: pod %s", pod.key());
        boolean[] eventEmitted = { false };
        RuntimeException error = null;
        for (int i = 0; i < RETRIES; i++) {
            try {
                addConditionAndDeletePod(pod, eventEmitted);
                metrics.podDeleted(Duration.between(fireAt, clock.instant()).toNanos() / 1e9);
                return;
            } catch (RuntimeException e) {
                if (ApiErrors.isNotFound(e)) {
                    // the work is done, but not by us: no metric
                    return;
                }
                error = e;
            }
            Thread.sleep(10);
        }
        throw error;
    }

    private void addConditionAndDeletePod(PodRef ref, boolean[] eventEmitted) {
        Pod pod = client.pods().inNamespace(ref.namespace()).withName(ref.name()).get();
        if (pod == null || !ref.uid().equals(pod.getMetadata().getUid())) {
            // gone, or replaced by another pod of the same name: stop retrying
            throw new KubernetesClientException("pods \"" + ref.name() + "\" not found", 404, null);
        }
        if (!eventEmitted[0]) {
            emitPodDeletionEvent(ref);
            eventEmitted[0] = true;
        }
        PodStatus newStatus = PodStatusPatch.copy(pod.getStatus());
        PodCondition condition = new PodConditionBuilder().withType(DISRUPTION_TARGET).withStatus("True")
                .withReason(REASON).withMessage(MESSAGE).build();
        if (PodStatusPatch.updatePodCondition(newStatus, condition, clock.instant())) {
            String patch = PodStatusPatch.prepare(pod.getMetadata().getUid(), pod.getStatus(), newStatus);
            if (patch != null) {
                client.pods().inNamespace(ref.namespace()).withName(ref.name()).subresource("status")
                        .patch(PatchContext.of(PatchType.STRATEGIC_MERGE), patch);
            }
        }
        // the UID precondition: a pod that replaced this one meanwhile is not deleted
        metadata.delete(PODS, ref.namespace(), ref.name(), ref.uid(), null, null);
    }

    void emitPodDeletionEvent(PodRef ref) {
        recorder.event(reference(ref), EventRecorder.NORMAL, EVENT_REASON, "Marking for deletion");
    }

    void emitCancelPodDeletionEvent(PodRef ref) {
        recorder.event(reference(ref), EventRecorder.NORMAL, EVENT_REASON, "Cancelling deletion");
    }

    /** Upstream's event reference: v1 Pod, namespace, name and UID. */
    private static Pod reference(PodRef ref) {
        Pod pod = new Pod();
        pod.setMetadata(new ObjectMetaBuilder().withNamespace(ref.namespace()).withName(ref.name()).withUid(ref.uid()).build());
        return pod;
    }
}
