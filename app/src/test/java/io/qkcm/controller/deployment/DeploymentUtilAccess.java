package io.qkcm.controller.deployment;

import java.util.HashMap;
import java.util.Map;

import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.qkcm.controller.deployment.util.DeploymentUtil;

/** Small template helpers for tests. */
final class DeploymentUtilAccess {

    private DeploymentUtilAccess() {
    }

    static PodTemplateSpec withLabel(PodTemplateSpec t, String key, String value) {
        PodTemplateSpec copy = DeploymentUtil.deepCopy(t);
        Map<String, String> labels = new HashMap<>(copy.getMetadata().getLabels());
        labels.put(key, value);
        copy.getMetadata().setLabels(labels);
        return copy;
    }
}
