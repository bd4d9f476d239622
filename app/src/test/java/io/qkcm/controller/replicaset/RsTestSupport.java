package io.qkcm.controller.replicaset;

import java.util.List;
import java.util.Map;

import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.PodTemplateSpecBuilder;
import io.fabric8.kubernetes.api.model.apps.ReplicaSet;
import io.fabric8.kubernetes.api.model.apps.ReplicaSetBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.qkcm.controller.ActivePods;

/** Shared helpers of the ReplicaSet/ReplicationController tests. */
final class RsTestSupport {

    private RsTestSupport() {
    }

    static PodTemplateSpec template(Map<String, String> labels) {
        return new PodTemplateSpecBuilder().withNewMetadata().withLabels(labels).endMetadata().withNewSpec()
                .addNewContainer().withName("app").withImage("registry.k8s.io/pause:3.10").endContainer()
                .withTerminationGracePeriodSeconds(30L).endSpec().build();
    }

    static ReplicaSet replicaSet(String name, int replicas, Map<String, String> labels) {
        return new ReplicaSetBuilder().withNewMetadata().withName(name).endMetadata().withNewSpec()
                .withReplicas(replicas).withNewSelector().withMatchLabels(labels).endSelector()
                .withTemplate(template(labels)).endSpec().build();
    }

    static List<Pod> pods(KubernetesClient client, String ns) {
        return client.pods().inNamespace(ns).list().getItems();
    }

    static List<Pod> activePods(KubernetesClient client, String ns) {
        return pods(client, ns).stream().filter(ActivePods::isPodActive).toList();
    }

    static OwnerReference controllerRef(Pod pod) {
        if (pod.getMetadata().getOwnerReferences() == null) {
            return null;
        }
        return pod.getMetadata().getOwnerReferences().stream().filter(r -> Boolean.TRUE.equals(r.getController()))
                .findFirst().orElse(null);
    }

    static int n(Integer i) {
        return i == null ? 0 : i;
    }
}
