package io.qkcm.controller;

import io.qkcm.runtime.informers.Indexes;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.Function;
import java.util.function.Supplier;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.informers.cache.Cache;

/**
 * The two cache lookups every workload controller's event handlers make for a dependent (a pod, a
 * ReplicaSet, a ControllerRevision, a Job): the owner its controllerRef names ({@code resolveControllerRef}),
 * and, for an orphan, the owners whose selector matches its labels (the listers' {@code GetPodReplicaSets},
 * {@code GetPodDaemonSets}, {@code GetHistoryDaemonSets}, {@code GetPodJobs}, the deployment controller's
 * {@code getDeploymentsForReplicaSet}). Upstream repeats them per controller; the logic is the same.
 */
public final class ControllerRefs {

    private ControllerRefs() {
    }

    /**
     * Upstream's {@code resolveControllerRef}: the owner {@code ref} names, when the reference is of
     * {@code kind} and the owner with that name (looked up by {@code byName}) has the reference's UID;
     * else null (a reference to another kind, or to an owner deleted and re-created under that name).
     */
    public static <T extends HasMetadata> T resolveControllerRef(String kind, OwnerReference ref, Function<String, T> byName) {
        if (!kind.equals(ref.getKind())) {
            return null;
        }
        T owner = byName.apply(ref.getName());
        if (owner == null || !Objects.equals(owner.getMetadata().getUid(), ref.getUid())) {
            return null;
        }
        return owner;
    }

    /** {@link #resolveControllerRef(String, OwnerReference, Function)} over an informer's cache, in {@code namespace}. */
    public static <T extends HasMetadata> T resolveControllerRef(String kind, SharedIndexInformer<T> owners, String namespace,
            OwnerReference ref) {
        return resolveControllerRef(kind, ref, name -> owners.getStore().getByKey(namespace + "/" + name));
    }

    /**
     * The owners among {@code candidates} whose selector parses and matches {@code labels}; none when
     * {@code labels} is empty. With {@code skipEmptySelectors} an empty selector selects nothing (as the
     * ReplicaSet, DaemonSet and Deployment listers); without, it selects everything (as the Job lister).
     * The candidates are listed only when there are labels to match.
     */
    public static <T> List<T> selecting(Supplier<? extends Collection<T>> candidates, Map<String, String> labels,
            Function<T, LabelSelector> selectorOf, boolean skipEmptySelectors) {
        if (labels == null || labels.isEmpty()) {
            return new ArrayList<>();
        }
        List<T> result = new ArrayList<>();
        for (T owner : candidates.get()) {
            LabelSelectors.Selector selector;
            try {
                selector = LabelSelectors.fromLabelSelector(selectorOf.apply(owner));
            } catch (IllegalArgumentException e) {
                // an invalid selector selects nothing
                continue;
            }
            if ((skipEmptySelectors && selector.empty()) || !selector.matches(labels)) {
                continue;
            }
            result.add(owner);
        }
        return result;
    }

    /** {@link #selecting(Supplier, Map, Function, boolean)} over the owners an informer caches in {@code namespace}. */
    public static <T> List<T> selecting(SharedIndexInformer<T> owners, String namespace, Map<String, String> labels,
            Function<T, LabelSelector> selectorOf, boolean skipEmptySelectors) {
        return selecting(() -> Indexes.byIndex(owners, Cache.NAMESPACE_INDEX, namespace), labels, selectorOf,
                skipEmptySelectors);
    }
}
