package io.qkcm.runtime;

import io.fabric8.kubernetes.api.model.ObjectMeta;

/**
 * Sees an object's managedFields as it is decoded for the informers' caches, before they are dropped
 * ({@link CachedObjects}). Shadow mode installs one to tell which writes upstream's
 * kube-controller-manager made (its field manager's entries); otherwise none is installed and the
 * field is skipped in the stream as before.
 */
@FunctionalInterface
public interface ManagedFieldsTap {

    /** Called with the metadata decoded so far (name, uid, resourceVersion precede managedFields in the API's JSON). */
    void observe(ObjectMeta metadata);

    /** Installs {@code tap} for every later decoding of a cached object; null removes it. */
    static void install(ManagedFieldsTap tap) {
        CachedObjects.tap = tap;
    }

    /** The tap installed, or null (the protobuf decoding for caches asks too). */
    static ManagedFieldsTap installed() {
        return CachedObjects.tap;
    }
}
