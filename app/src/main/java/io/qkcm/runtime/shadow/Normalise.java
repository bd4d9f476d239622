package io.qkcm.runtime.shadow;

import java.util.Map;

/** The name parts of an action's key, the same from a request, a dry run's answer or a watched object. */
final class Normalise {

    private Normalise() {
    }

    /** A name the API server generated: the prefix and five characters of apimachinery's alphabet. */
    private static final java.util.regex.Pattern GENERATED = java.util.regex.Pattern.compile("[bcdfghjklmnpqrstvwxz2456789]{5}");

    /**
     * {@code prefix*} for a generated name (the suffixes differ by nature), else the name: a StatefulSet's pods
     * carry a generateName too but are named by their ordinal ({@code web-0}), and pair by that name.
     */
    static String createName(Map<String, Object> object, Map<String, Object> sent) {
        Map<?, ?> meta = meta(object);
        if (meta.isEmpty()) {
            meta = meta(sent);
        }
        String name = meta.get("name") instanceof String n ? n : "";
        if (meta.get("generateName") instanceof String g && !g.isEmpty()
                && (name.isEmpty() || name.startsWith(g) && GENERATED.matcher(name.substring(g.length())).matches())) {
            return g + "*";
        }
        return String.valueOf(meta.get("name"));
    }

    /** An event by what it is about: the involved object and the reason; null if it says neither. */
    static String eventKey(Map<String, Object> event) {
        if (!(event.get("involvedObject") instanceof Map<?, ?> about) || !(event.get("reason") instanceof String reason)) {
            return null;
        }
        return about.get("kind") + "/" + about.get("name") + ":" + reason;
    }

    private static Map<?, ?> meta(Map<String, Object> object) {
        return object != null && object.get("metadata") instanceof Map<?, ?> m ? m : Map.of();
    }
}
