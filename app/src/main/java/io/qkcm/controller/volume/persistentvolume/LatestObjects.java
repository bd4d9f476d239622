package io.qkcm.controller.volume.persistentvolume;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

import io.fabric8.kubernetes.api.model.HasMetadata;

/**
 * The controller's own store of the newest version it has seen of each object (upstream's
 * {@code ctrl.volumes.store} and {@code ctrl.claims}, fed by {@code storeObjectUpdate}): the answers
 * of its own writes land here before the shared informer delivers them, so a sync never acts on an
 * older version than one it has written. Objects are never modified in place.
 */
final class LatestObjects<T extends HasMetadata> {

    private final ConcurrentHashMap<String, T> objects = new ConcurrentHashMap<>();
    private final Function<T, String> keyFunc;
    private final String className;

    LatestObjects(Function<T, String> keyFunc, String className) {
        this.keyFunc = keyFunc;
        this.className = className;
    }

    T get(String key) {
        return objects.get(key);
    }

    List<T> list() {
        return new ArrayList<>(objects.values());
    }

    void delete(T object) {
        objects.remove(keyFunc.apply(object));
    }

    /**
     * Upstream's storeObjectUpdate: stores {@code object} unless the stored version is newer; returns
     * whether it was stored. An unparsable resourceVersion is an error, as upstream's.
     */
    synchronized boolean update(T object) {
        String key = keyFunc.apply(object);
        T old = objects.get(key);
        if (old == null) {
            objects.put(key, object);
            return true;
        }
        long rv = parse(object, key);
        long oldRv = parse(old, key);
        if (oldRv > rv) {
            return false;
        }
        objects.put(key, object);
        return true;
    }

    private long parse(T object, String key) {
        String rv = object.getMetadata().getResourceVersion();
        try {
            return Long.parseLong(rv);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("error parsing ResourceVersion \"" + rv + "\" of " + className + " \"" + key
                    + "\": " + e.getMessage());
        }
    }

    void clear() {
        objects.clear();
    }
}
