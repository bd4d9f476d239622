package io.qkcm.controller;

import io.qkcm.runtime.informers.Indexes;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.informers.cache.Cache;

/**
 * Upstream's pod informer indexes (AddPodControllerIndexer, FilterPodsByOwner): pods indexed by
 * their controller ({@code namespace/kind/name/uid}, or just {@code namespace} for orphans), so a
 * controller finds its pods and the orphans it might adopt without scanning every pod.
 */
public final class PodIndexes {

    public static final String POD_CONTROLLER_INDEX = "podController";
    /** Upstream's PodNodeNameKeyIndex. */
    public static final String POD_NODE_NAME_INDEX = "spec.nodeName";

    private PodIndexes() {
    }

    public static String podControllerIndexKey(String namespace, OwnerReference ref) {
        if (ref == null) {
            return namespace;
        }
        return namespace + "/" + ref.getKind() + "/" + ref.getName() + "/" + ref.getUid();
    }

    public static String podControllerIndexKey(String namespace, String kind, String name, String uid) {
        return namespace + "/" + kind + "/" + name + "/" + uid;
    }

    /** Adds the podController index to the shared pod informer, once whoever asks first. */
    public static void addPodControllerIndexer(SharedIndexInformer<Pod> podInformer) {
        synchronized (podInformer) {
            if (podInformer.getIndexer().getIndexers().containsKey(POD_CONTROLLER_INDEX)) {
                return;
            }
            podInformer.addIndexers(Map.of(POD_CONTROLLER_INDEX, pod -> List.of(
                    podControllerIndexKey(pod.getMetadata().getNamespace(), ControllerRefManager.controllerOf(pod)))));
        }
    }

    /** Upstream's AddPodNodeNameIndexer: pods by {@code spec.nodeName}, unbound pods not indexed; once, whoever asks first. */
    public static void addPodNodeNameIndexer(SharedIndexInformer<Pod> podInformer) {
        synchronized (podInformer) {
            if (podInformer.getIndexer().getIndexers().containsKey(POD_NODE_NAME_INDEX)) {
                return;
            }
            podInformer.addIndexers(Map.of(POD_NODE_NAME_INDEX, pod -> {
                String nodeName = pod.getSpec() == null ? null : pod.getSpec().getNodeName();
                return nodeName == null || nodeName.isEmpty() ? List.of() : List.of(nodeName);
            }));
        }
    }

    /**
     * The pods controlled by the owner (by kind, name and UID) and, with {@code includeOrphans}, the
     * pods of its namespace without a controller.
     */
    public static List<Pod> filterPodsByOwner(SharedIndexInformer<Pod> podInformer, String namespace, String kind,
            String name, String uid, boolean includeOrphans) {
        if (namespace == null || namespace.isEmpty() || name == null || name.isEmpty() || uid == null || uid.isEmpty()
                || kind == null || kind.isEmpty()) {
            throw new IllegalArgumentException("owner namespace, name, uid and kind are required");
        }
        List<Pod> result = new ArrayList<>(
                Indexes.byIndex(podInformer, POD_CONTROLLER_INDEX, podControllerIndexKey(namespace, kind, name, uid)));
        if (includeOrphans) {
            result.addAll(Indexes.byIndex(podInformer, POD_CONTROLLER_INDEX, namespace));
        }
        return result;
    }

    /** Every cached pod of a namespace. */
    public static List<Pod> podsInNamespace(SharedIndexInformer<Pod> podInformer, String namespace) {
        return Indexes.byIndex(podInformer, Cache.NAMESPACE_INDEX, namespace);
    }
}
