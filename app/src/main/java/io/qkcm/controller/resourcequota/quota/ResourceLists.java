package io.qkcm.controller.resourcequota.quota;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import io.qkcm.controller.util.GoQuantity;

/**
 * The helpers of k8s.io/apiserver/pkg/quota/v1 (resources.go) over resource lists: maps from resource
 * name to {@link GoQuantity}. Results are new sorted maps; inputs are never changed.
 */
public final class ResourceLists {

    private ResourceLists() {
    }

    /** A fabric8 resource list (spec.hard, a container's requests) as quantities; null is empty. */
    public static Map<String, GoQuantity> of(Map<String, io.fabric8.kubernetes.api.model.Quantity> list) {
        Map<String, GoQuantity> out = new TreeMap<>();
        if (list != null) {
            list.forEach((k, v) -> out.put(k, GoQuantity.of(v)));
        }
        return out;
    }

    /** The list to write into an object, each quantity in Go's canonical form. */
    public static Map<String, io.fabric8.kubernetes.api.model.Quantity> toFabric8(Map<String, GoQuantity> list) {
        Map<String, io.fabric8.kubernetes.api.model.Quantity> out = new TreeMap<>();
        list.forEach((k, v) -> out.put(k, v.toFabric8()));
        return out;
    }

    /** Equals: the same names, each with the same value. */
    public static boolean equals(Map<String, GoQuantity> a, Map<String, GoQuantity> b) {
        if (a.size() != b.size()) {
            return false;
        }
        for (Map.Entry<String, GoQuantity> e : a.entrySet()) {
            GoQuantity other = b.get(e.getKey());
            if (other == null || e.getValue().compareTo(other) != 0) {
                return false;
            }
        }
        return true;
    }

    /** Add: a + b for each name of either. */
    public static Map<String, GoQuantity> add(Map<String, GoQuantity> a, Map<String, GoQuantity> b) {
        Map<String, GoQuantity> result = new TreeMap<>();
        a.forEach((k, v) -> {
            GoQuantity other = b.get(k);
            result.put(k, other == null ? v : v.add(other));
        });
        b.forEach(result::putIfAbsent);
        return result;
    }

    /** Mask: only the entries named in {@code names}. */
    public static Map<String, GoQuantity> mask(Map<String, GoQuantity> resources, Collection<String> names) {
        Set<String> keep = Set.copyOf(names);
        Map<String, GoQuantity> result = new TreeMap<>();
        resources.forEach((k, v) -> {
            if (keep.contains(k)) {
                result.put(k, v);
            }
        });
        return result;
    }

    public static List<String> resourceNames(Map<String, ?> resources) {
        return new ArrayList<>(resources.keySet());
    }

    public static boolean containsPrefix(List<String> prefixes, String item) {
        for (String p : prefixes) {
            if (item.startsWith(p)) {
                return true;
            }
        }
        return false;
    }

    /** Intersection: the names of {@code a} that are in {@code b}, deduplicated and sorted. */
    public static List<String> intersection(Collection<String> a, Collection<String> b) {
        Set<String> inB = Set.copyOf(b);
        TreeSet<String> result = new TreeSet<>();
        for (String item : a) {
            if (inB.contains(item)) {
                result.add(item);
            }
        }
        return new ArrayList<>(result);
    }

    /** Difference: the names of {@code a} not in {@code b}, deduplicated and sorted. */
    public static List<String> difference(Collection<String> a, Collection<String> b) {
        Set<String> inB = Set.copyOf(b);
        TreeSet<String> result = new TreeSet<>();
        for (String item : a) {
            if (!inB.contains(item)) {
                result.add(item);
            }
        }
        return new ArrayList<>(result);
    }
}
