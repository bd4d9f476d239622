package io.qkcm.controller.deployment;

import java.util.HashMap;
import java.util.Map;

import io.fabric8.kubernetes.api.model.PodTemplateSpec;

/** Small template helpers for tests. */
final class DeploymentUtilAccess {

    private DeploymentUtilAccess() {
    }

    static PodTemplateSpec withLabel(PodTemplateSpec t, String key, String value) {
        PodTemplateSpec copy = io.qkcm.runtime.DeepCopy.of(t);
        Map<String, String> labels = new HashMap<>(copy.getMetadata().getLabels());
        labels.put(key, value);
        copy.getMetadata().setLabels(labels);
        return copy;
    }
}
