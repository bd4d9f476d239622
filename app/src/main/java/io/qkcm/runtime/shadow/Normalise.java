package io.qkcm.runtime.shadow;

import java.util.Map;

/** The name parts of an action's key, the same from a request, a dry run's answer or a watched object. */
final class Normalise {

    private Normalise() {
    }

    /** {@code prefix*} for a generated name (the suffixes differ by nature), else the name. */
    static String createName(Map<String, Object> object, Map<String, Object> sent) {
        Map<?, ?> meta = meta(object);
        if (meta.isEmpty()) {
            meta = meta(sent);
        }
        if (meta.get("generateName") instanceof String g && !g.isEmpty()) {
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
