package io.qkcm.controller;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;

/**
 * Upstream's PodControlInterface: creates pods from a template on behalf of a controller object,
 * deletes and patches pods, recording {@code SuccessfulCreate}/{@code FailedCreate}/
 * {@code SuccessfulDelete}/{@code FailedDelete} events on the controller object. Failures are thrown
 * as fabric8 {@code KubernetesClientException} (inspect with {@link ApiErrors}).
 */
public interface PodControl {

    String FAILED_CREATE_POD_REASON = "FailedCreate";
    String SUCCESSFUL_CREATE_POD_REASON = "SuccessfulCreate";
    String FAILED_DELETE_POD_REASON = "FailedDelete";
    String SUCCESSFUL_DELETE_POD_REASON = "SuccessfulDelete";

    /** Creates one pod from {@code template}, named {@code <controller>-xxxxx}; returns the created pod. */
    default Pod createPods(String namespace, PodTemplateSpec template, HasMetadata controllerObject,
            OwnerReference controllerRef) {
        return createPodsWithGenerateName(namespace, template, controllerObject, controllerRef, null);
    }

    Pod createPodsWithGenerateName(String namespace, PodTemplateSpec template, HasMetadata controllerObject,
            OwnerReference controllerRef, String generateName);

    /** Deletes a pod; a NotFound error is thrown without an event, as upstream. */
    void deletePod(String namespace, String podName, HasMetadata controllerObject);

    /** A strategic-merge patch of a pod. */
    void patchPod(String namespace, String name, String strategicMergePatch);
}
