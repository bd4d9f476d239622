package io.qkcm.controller.endpoint;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.fabric8.kubernetes.api.model.Endpoints;

/**
 * Upstream's staleEndpointsTracker: remembers, per Endpoints, the resourceVersion this controller
 * has already replaced with a write. Seeing that version again in the informer cache means the cache
 * has not caught up yet, and writing from it would act on outdated state.
 */
final class StaleEndpointsTracker {

    private final Map<String, String> staleResourceVersion = new ConcurrentHashMap<>();

    private static String key(String namespace, String name) {
        return namespace + "/" + name;
    }

    void stale(Endpoints endpoints) {
        staleResourceVersion.put(key(endpoints.getMetadata().getNamespace(), endpoints.getMetadata().getName()),
                java.util.Objects.toString(endpoints.getMetadata().getResourceVersion(), ""));
    }

    boolean isStale(Endpoints endpoints) {
        String rv = staleResourceVersion.get(key(endpoints.getMetadata().getNamespace(), endpoints.getMetadata().getName()));
        return rv != null && rv.equals(java.util.Objects.toString(endpoints.getMetadata().getResourceVersion(), ""));
    }

    void delete(String namespace, String name) {
        staleResourceVersion.remove(key(namespace, name));
    }
}
