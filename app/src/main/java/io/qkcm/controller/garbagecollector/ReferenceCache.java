package io.qkcm.controller.garbagecollector;

import java.util.LinkedHashMap;
import java.util.Map;

/** The absentOwnerCache: a bounded LRU set of owners the API server said do not exist (upstream uid_cache.go). */
final class ReferenceCache {

    private final Map<ObjectRef, Boolean> cache;

    ReferenceCache(int maxEntries) {
        this.cache = new LinkedHashMap<>(16, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<ObjectRef, Boolean> eldest) {
                return size() > maxEntries;
            }
        };
    }

    synchronized void add(ObjectRef ref) {
        cache.put(ref, Boolean.TRUE);
    }

    synchronized boolean has(ObjectRef ref) {
        return cache.get(ref) != null;
    }
}
