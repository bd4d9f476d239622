package io.qkcm.runtime.shadow;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;

/**
 * The differences between qkcm's and upstream's object for one action, leaving out what legitimately
 * differs between two writers of the same intent: identity and bookkeeping the API server assigns
 * (uid, resourceVersion, creationTimestamp, generation, managedFields, a generated name's suffix, the
 * suffix of the token volume the ServiceAccount admission adds to a pod), and
 * every time (fields named {@code *Time}, {@code *Timestamp}, {@code time}, keys ending {@code -time}: the two sides act at
 * different moments). Which part is compared follows the write: the whole object for a create, the
 * status for a status update, metadata's labels, annotations, finalizers, owners and everything but the
 * status for any other update, reason, type and message for an event.
 */
final class ShadowDiff {

    private static final Set<String> IGNORED_METADATA = Set.of("uid", "resourceVersion", "creationTimestamp",
            "generation", "managedFields", "selfLink", "deletionTimestamp", "deletionGracePeriodSeconds");
    private static final int MAX_LINES = 20;
    /** A generated name's random suffix (apimachinery's alphabet, 5 characters): "Created pod: web-7b4xs". */
    private static final java.util.regex.Pattern GENERATED_SUFFIX = java.util.regex.Pattern
            .compile("\\b([a-z0-9][-a-z0-9.]*-)[bcdfghjklmnpqrstvwxz2456789]{5}\\b");

    /**
     * The projected token volume the API server's ServiceAccount admission adds to every pod, named
     * {@code kube-api-access-} and a generated suffix (names.SimpleNameGenerator): the same volume in both sides' pods.
     */
    private static final java.util.regex.Pattern TOKEN_VOLUME = java.util.regex.Pattern
            .compile("kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}");

    private ShadowDiff() {
    }

    static List<String> diff(String verb, String subresource, ShadowAction qkcm, ShadowAction upstream) {
        if (qkcm.object() == null || upstream.object() == null || !qkcm.accepted()) {
            return List.of(); // nothing to compare: a conflict or NotFound answered qkcm's dry run
        }
        Map<String, Object> mine = part(verb, subresource, qkcm.object());
        Map<String, Object> theirs = part(verb, subresource, upstream.object());
        List<String> out = new ArrayList<>();
        walk("", mine, theirs, out);
        return out;
    }

    static String statusMessage(Map<String, Object> object) {
        return object == null ? "" : String.valueOf(object.getOrDefault("message", ""));
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> part(String verb, String subresource, Map<String, Object> object) {
        Map<String, Object> out = new LinkedHashMap<>();
        Map<String, Object> metadata = object.get("metadata") instanceof Map<?, ?> m ? (Map<String, Object>) m : Map.of();
        switch (verb) {
            case "create" -> {
                out.putAll(object);
                Map<String, Object> meta = new LinkedHashMap<>(metadata);
                meta.keySet().removeAll(IGNORED_METADATA);
                if (meta.get("generateName") instanceof String g && !g.isEmpty()) {
                    meta.remove("name");
                }
                out.put("metadata", meta);
            }
            case "event" -> {
                for (String k : List.of("reason", "type", "message")) {
                    out.put(k, object.get(k) instanceof String v ? GENERATED_SUFFIX.matcher(v).replaceAll("$1*") : object.get(k));
                }
            }
            default -> {
                if (subresource.equals("status")) {
                    out.put("status", object.get("status"));
                } else if (subresource.isEmpty()) {
                    // everything an update of the object itself writes: the spec, or the body of kinds that have
                    // none (Endpoints' subsets, a ConfigMap's data), and metadata's labels, annotations, owners
                    out.putAll(object);
                    out.remove("status");
                    Map<String, Object> meta = new LinkedHashMap<>();
                    for (String k : List.of("labels", "annotations", "finalizers", "ownerReferences")) {
                        meta.put(k, metadata.get(k));
                    }
                    out.put("metadata", meta);
                } else {
                    out.put("spec", object.get("spec"));
                    out.put("status", object.get("status"));
                }
            }
        }
        return out;
    }

    @SuppressWarnings("unchecked")
    private static void walk(String path, Object mine, Object theirs, List<String> out) {
        if (out.size() >= MAX_LINES) {
            return;
        }
        if (mine instanceof Map<?, ?> a && theirs instanceof Map<?, ?> b) {
            Set<String> keys = new TreeSet<>();
            ((Map<String, Object>) a).keySet().forEach(keys::add);
            ((Map<String, Object>) b).keySet().forEach(keys::add);
            for (String k : keys) {
                if (ignoredTime(k)) {
                    continue;
                }
                walk(path + "." + k, a.get(k), b.get(k), out);
            }
            return;
        }
        if (mine instanceof List<?> a && theirs instanceof List<?> b && a.size() == b.size()) {
            for (int i = 0; i < a.size(); i++) {
                walk(path + "[" + i + "]", a.get(i), b.get(i), out);
            }
            return;
        }
        if (!Objects.equals(normal(mine), normal(theirs))) {
            out.add(path + ": qkcm=" + mine + " upstream=" + theirs);
        }
    }

    /** Absent, null, empty map and empty list are one value: the two writers serialise defaults differently. */
    private static Object normal(Object v) {
        if (v instanceof Map<?, ?> m && m.isEmpty() || v instanceof List<?> l && l.isEmpty()) {
            return null;
        }
        if (v instanceof Number n) {
            return n.doubleValue();
        }
        if (v instanceof String str && TOKEN_VOLUME.matcher(str).matches()) {
            return "kube-api-access-*";
        }
        return v;
    }

    private static boolean ignoredTime(String key) {
        // lastTransitionTime, creationTimestamp, ..., and annotations such as endpoints.kubernetes.io/last-change-trigger-time
        return key.equals("time") || key.endsWith("Time") || key.endsWith("Timestamp") || key.endsWith("-time");
    }
}
