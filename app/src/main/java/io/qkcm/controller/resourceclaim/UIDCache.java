package io.qkcm.controller.resourceclaim;

import java.util.LinkedHashMap;
import java.util.Map;

/** Upstream's uidCache: the last {@code max} UIDs of deleted pods (least recently used dropped first). */
final class UIDCache {

    private final LinkedHashMap<String, Boolean> uids;

    UIDCache(int max) {
        this.uids = new LinkedHashMap<>(16, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
                return size() > max;
            }
        };
    }

    synchronized void add(String uid) {
        uids.put(uid, Boolean.TRUE);
    }

    synchronized boolean has(String uid) {
        return uid != null && uids.get(uid) != null; // get: an LRU lookup counts as use
    }
}
