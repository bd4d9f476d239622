package io.qkcm.runtime;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;

/**
 * Cached objects share equal labels, owner references and pod conditions: one immutable instance for all
 * the objects whose values are equal, as they are for the pods of one ReplicaSet (one label map, one
 * controller reference) and for pods that turned ready in the same second (one list of conditions).
 * <p>
 * Why: a ReplicaSet's sync reads the controller reference, the labels and the Ready condition of every pod
 * it owns (upstream's claim, FilterActivePods and calculateStatus), 3,000 pods per sync in the big-RS scenario.
 * Each pod's own list, map and condition objects lie apart in the heap, so the walks were bound by memory
 * loads: the controller-reference and condition loops were over a quarter of the CPU samples there
 * (bench/results/2026-11-28-ab/profile.md). Shared, they stay in the processor's caches (the workers' CPU in
 * that phase: 7.9–9.8 s against 9.5–10.3 s per repetition, bench/results/2026-11-28-ab/three-way). Go's
 * structs hold these inline, one load away.
 * <p>
 * The informers' store ({@code SharedInformers}) calls {@link #share} on every object before it indexes
 * the object or hands it to a handler. Cached objects are read-only by contract (a controller copies
 * before it changes one, and {@link DeepCopy} rebuilds every list and map), and the shared collections are
 * unmodifiable, so a change made in place by mistake throws instead of reaching other objects. The tables
 * are bounded (a slot is overwritten by the next value hashing to it) and racy by design: a value is
 * published through the final fields of its immutable collection, and a lost race only costs sharing.
 */
public final class SharedContents {

    private static final int SLOTS = 1 << 12;
    private static final int MASK = SLOTS - 1;

    private static final Map<?, ?>[] LABELS = new Map<?, ?>[SLOTS];
    private static final List<?>[] OWNER_REFERENCES = new List<?>[SLOTS];
    private static final List<?>[] POD_CONDITIONS = new List<?>[SLOTS];

    private SharedContents() {
    }

    /** Replaces {@code obj}'s labels, owner references and (of a pod) conditions by shared equal ones. */
    public static void share(HasMetadata obj) {
        ObjectMeta meta = obj.getMetadata();
        if (meta != null) {
            Map<String, String> labels = meta.getLabels();
            if (labels != null && !labels.isEmpty()) {
                meta.setLabels(labels(labels));
            }
            List<OwnerReference> refs = meta.getOwnerReferences();
            if (refs != null && !refs.isEmpty()) {
                meta.setOwnerReferences(list(OWNER_REFERENCES, refs));
            }
        }
        if (obj instanceof Pod pod && pod.getStatus() != null) {
            List<PodCondition> conditions = pod.getStatus().getConditions();
            if (conditions != null && !conditions.isEmpty()) {
                pod.getStatus().setConditions(list(POD_CONDITIONS, conditions));
            }
        }
    }

    @SuppressWarnings("unchecked")
    private static Map<String, String> labels(Map<String, String> labels) {
        int slot = spread(labels.hashCode());
        Map<String, String> shared = (Map<String, String>) LABELS[slot];
        if (shared == labels) {
            return labels;
        }
        if (shared != null && sameEntries(shared, labels)) {
            return shared;
        }
        // the order of the entries is kept: it is the order a copy serializes them in
        shared = Collections.unmodifiableMap(new LinkedHashMap<>(labels));
        LABELS[slot] = shared;
        return shared;
    }

    /** Equal with the same order of entries (Map.equals ignores order). */
    private static boolean sameEntries(Map<String, String> a, Map<String, String> b) {
        if (a.size() != b.size()) {
            return false;
        }
        var i = a.entrySet().iterator();
        for (Map.Entry<String, String> e : b.entrySet()) {
            Map.Entry<String, String> f = i.next();
            if (!e.getKey().equals(f.getKey()) || !java.util.Objects.equals(e.getValue(), f.getValue())) {
                return false;
            }
        }
        return true;
    }

    @SuppressWarnings("unchecked")
    private static <T> List<T> list(List<?>[] table, List<T> list) {
        for (T element : list) {
            if (element == null) {
                return list; // List.copyOf takes no nulls; never decoded, left as it is
            }
        }
        int slot = spread(list.hashCode());
        List<T> shared = (List<T>) table[slot];
        if (shared == list) {
            return list;
        }
        // the model classes' equals compares every field, additionalProperties included
        if (shared != null && shared.equals(list)) {
            return shared;
        }
        shared = List.copyOf(list);
        table[slot] = shared;
        return shared;
    }

    private static int spread(int h) {
        return (h ^ (h >>> 16) ^ (h >>> 8)) & MASK;
    }
}
