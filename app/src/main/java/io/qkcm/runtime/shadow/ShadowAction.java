package io.qkcm.runtime.shadow;

import java.time.Instant;
import java.util.Map;

/**
 * One write, normalised so that qkcm's intended write and upstream's observed one compare: the verb
 * ({@code create}, {@code update} — patches are updates —, {@code delete}, {@code event}), the resource
 * ({@code group/resource}, core group empty), the subresource, namespace and name ({@code prefix*} for a
 * generated name; for an event, the involved object and reason), the response code of qkcm's dry run
 * (0 for upstream's) and the object as the API server left it (the dry run's answer, or the watched
 * object), null when there is none.
 */
public record ShadowAction(Side side, String controller, String verb, String resource, String subresource,
        String namespace, String name, int code, Map<String, Object> object, Instant time) {

    public enum Side {
        QKCM, UPSTREAM
    }

    /** What the two sides' actions are paired by. */
    public String key() {
        return verb + " " + resource + (subresource.isEmpty() ? "" : "/" + subresource) + " "
                + (namespace.isEmpty() ? "" : namespace + "/") + name;
    }

    /** Whether qkcm's dry run was accepted (2xx). */
    public boolean accepted() {
        return code >= 200 && code < 300;
    }
}
