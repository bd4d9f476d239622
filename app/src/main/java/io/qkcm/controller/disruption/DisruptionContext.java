package io.qkcm.controller.disruption;

import java.time.Clock;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.ReplicationController;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.ReplicaSet;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.qkcm.runtime.events.EventRecorder;

/**
 * What the disruption controller's concerns share, handed down by {@link DisruptionController}: its
 * client, the shared caches it reads (upstream's listers), its event recorder (source component
 * {@code controllermanager}, as upstream's) and its clock.
 */
record DisruptionContext(
        KubernetesClient client,
        SharedIndexInformer<PodDisruptionBudget> pdbs,
        SharedIndexInformer<Pod> pods,
        SharedIndexInformer<ReplicationController> replicationControllers,
        SharedIndexInformer<ReplicaSet> replicaSets,
        SharedIndexInformer<Deployment> deployments,
        SharedIndexInformer<StatefulSet> statefulSets,
        EventRecorder recorder,
        Clock clock) {

    /** A lister's Get: the cached object {@code namespace/name}, or null. */
    static <T> T get(SharedIndexInformer<T> informer, String namespace, String name) {
        return informer.getStore().getByKey(namespace + "/" + name);
    }
}
