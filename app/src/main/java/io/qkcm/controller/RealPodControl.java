package io.qkcm.controller;

import java.util.ArrayList;
import java.util.LinkedHashMap;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.qkcm.runtime.clients.ClientGoCreates;
import io.qkcm.runtime.events.EventRecorder;
import io.qkcm.runtime.clients.ProtobufWrites;

/** Upstream's RealPodControl, on the controller's own API client and event recorder. */
public final class RealPodControl implements PodControl {

    private static final Logger LOG = Logger.getLogger(RealPodControl.class);

    private final KubernetesClient client;
    /** Pod creations as client-go sends them: never re-sent after an I/O error (see {@link ClientGoCreates}). */
    private final ClientGoCreates creations;
    private final EventRecorder recorder;

    public RealPodControl(KubernetesClient client, EventRecorder recorder) {
        this.client = client;
        this.creations = new ClientGoCreates(client);
        this.recorder = recorder;
    }

    private Pod create(String namespace, Pod pod) {
        return creations.create(c -> ProtobufWrites.create(c, namespace, pod));
    }

    @Override
    public Pod createPodsWithGenerateName(String namespace, PodTemplateSpec template, HasMetadata controllerObject,
            OwnerReference controllerRef, String generateName) {
        validateControllerRef(controllerRef);
        Pod pod = getPodFromTemplate(template, controllerObject, controllerRef);
        if (generateName != null && !generateName.isEmpty()) {
            pod.getMetadata().setGenerateName(generateName);
        }
        if (pod.getMetadata().getLabels() == null || pod.getMetadata().getLabels().isEmpty()) {
            throw new IllegalArgumentException("unable to create pods, no labels");
        }
        Pod created;
        try {
            created = create(namespace, pod);
        } catch (KubernetesClientException e) {
            if (!ApiErrors.hasStatusCause(e, ApiErrors.NAMESPACE_TERMINATING_CAUSE)) {
                recorder.eventf(controllerObject, EventRecorder.WARNING, FAILED_CREATE_POD_REASON, "Error creating: %s",
                        ApiErrors.message(e));
            }
            throw e;
        }
        LOG.debugf("controller %s created pod %s/%s", controllerObject.getMetadata().getName(), namespace,
                created.getMetadata().getName());
        recorder.eventf(controllerObject, EventRecorder.NORMAL, SUCCESSFUL_CREATE_POD_REASON, "Created pod: %s",
                created.getMetadata().getName());
        return created;
    }

    @Override
    public void deletePod(String namespace, String podName, HasMetadata controllerObject) {
        LOG.debugf("controller %s deleting pod %s/%s", controllerObject.getMetadata().getName(), namespace, podName);
        try {
            client.pods().inNamespace(namespace).withName(podName).delete();
        } catch (KubernetesClientException e) {
            if (ApiErrors.isNotFound(e)) {
                LOG.tracef("pod %s/%s has already been deleted", namespace, podName);
                throw e;
            }
            recorder.eventf(controllerObject, EventRecorder.WARNING, FAILED_DELETE_POD_REASON, "Error deleting: %s",
                    ApiErrors.message(e));
            // as upstream, the error names the failure ("unable to delete pods: ..."); the code is kept
            throw new KubernetesClientException("unable to delete pods: " + ApiErrors.message(e), e.getCode(), null);
        }
        recorder.eventf(controllerObject, EventRecorder.NORMAL, SUCCESSFUL_DELETE_POD_REASON, "Deleted pod: %s",
                podName);
    }

    @Override
    public void patchPod(String namespace, String name, String strategicMergePatch) {
        client.pods().inNamespace(namespace).withName(name)
                .patch(PatchContext.of(PatchType.STRATEGIC_MERGE), strategicMergePatch);
    }

    /** Upstream's validateControllerRef: controller and blockOwnerDeletion must be true. */
    static void validateControllerRef(OwnerReference ref) {
        if (ref == null) {
            throw new IllegalArgumentException("controllerRef is nil");
        }
        if (ref.getApiVersion() == null || ref.getApiVersion().isEmpty()) {
            throw new IllegalArgumentException("controllerRef has empty APIVersion");
        }
        if (ref.getKind() == null || ref.getKind().isEmpty()) {
            throw new IllegalArgumentException("controllerRef has empty Kind");
        }
        if (!Boolean.TRUE.equals(ref.getController())) {
            throw new IllegalArgumentException("controllerRef.Controller is not set to true");
        }
        if (!Boolean.TRUE.equals(ref.getBlockOwnerDeletion())) {
            throw new IllegalArgumentException("controllerRef.BlockOwnerDeletion is not set");
        }
    }

    /**
     * Upstream's GetPodFromTemplate: the template's labels, annotations, finalizers and spec; name
     * generated from {@code <parent>-}; the controllerRef as owner reference.
     */
    public static Pod getPodFromTemplate(PodTemplateSpec template, HasMetadata parent, OwnerReference controllerRef) {
        ObjectMeta tm = template.getMetadata() == null ? new ObjectMeta() : template.getMetadata();
        ObjectMeta meta = new ObjectMeta();
        meta.setLabels(tm.getLabels() == null ? new LinkedHashMap<>() : new LinkedHashMap<>(tm.getLabels()));
        meta.setAnnotations(tm.getAnnotations() == null ? new LinkedHashMap<>() : new LinkedHashMap<>(tm.getAnnotations()));
        meta.setFinalizers(tm.getFinalizers() == null ? new ArrayList<>() : new ArrayList<>(tm.getFinalizers()));
        meta.setGenerateName(podsPrefix(parent.getMetadata().getName()));
        if (controllerRef != null) {
            meta.setOwnerReferences(new ArrayList<>(java.util.List.of(controllerRef)));
        }
        Pod pod = new Pod();
        pod.setMetadata(meta);
        PodSpec spec = template.getSpec() == null ? new PodSpec() : io.qkcm.runtime.DeepCopy.of(template.getSpec());
        pod.setSpec(spec);
        return pod;
    }

    /** {@code name-} when that is a valid generateName prefix (a DNS subdomain once completed), else name. */
    static String podsPrefix(String controllerName) {
        String prefix = controllerName + "-";
        // ValidatePodName(prefix, true): the prefix with its trailing dash masked must be a DNS-1123
        // subdomain; the owner's own name already is one, so only the length can fail.
        if (prefix.length() > 253) {
            return controllerName;
        }
        return prefix;
    }
}
