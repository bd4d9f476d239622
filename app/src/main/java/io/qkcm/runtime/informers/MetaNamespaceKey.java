package io.qkcm.runtime.informers;

import io.fabric8.kubernetes.api.model.HasMetadata;

/**
 * The key of an object in a cache and a work queue: {@code namespace/name}, or {@code name} for a
 * cluster-scoped object (client-go's MetaNamespaceKeyFunc and SplitMetaNamespaceKey).
 */
public record MetaNamespaceKey(String namespace, String name) {

    /** client-go's MetaNamespaceKeyFunc. */
    public static String of(HasMetadata object) {
        String ns = object.getMetadata().getNamespace();
        String name = object.getMetadata().getName();
        return ns == null || ns.isEmpty() ? name : ns + "/" + name;
    }

    /**
     * client-go's SplitMetaNamespaceKey: {@code name} is cluster-scoped (namespace ""), {@code ns/name}
     * namespaced; more than one slash is an error. Either part may be empty, as upstream's.
     */
    public static MetaNamespaceKey split(String key) {
        int slash = key.indexOf('/');
        if (slash < 0) {
            return new MetaNamespaceKey("", key);
        }
        if (key.indexOf('/', slash + 1) >= 0) {
            throw new IllegalArgumentException("unexpected key format: \"" + key + "\"");
        }
        return new MetaNamespaceKey(key.substring(0, slash), key.substring(slash + 1));
    }

    @Override
    public String toString() {
        return namespace.isEmpty() ? name : namespace + "/" + name;
    }
}
