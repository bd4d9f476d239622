package io.qkcm.controller.garbagecollector;

import io.qkcm.runtime.informers.ObjectMetadata;
import io.qkcm.runtime.informers.ObjectMetadata.OwnerRef;

/**
 * Upstream's objectReference: an owner reference's coordinates (apiVersion, kind, name, uid) plus the
 * namespace, which owner references do not carry. Value equality, as Go's struct comparison.
 */
record ObjectRef(String apiVersion, String kind, String name, String uid, String namespace) {

    ObjectRef {
        namespace = namespace == null ? "" : namespace;
    }

    static ObjectRef of(OwnerRef ref, String namespace) {
        return new ObjectRef(ref.apiVersion(), ref.kind(), ref.name(), ref.uid(), namespace);
    }

    static ObjectRef of(ObjectMetadata m) {
        return new ObjectRef(m.apiVersion(), m.kind(), m.name(), m.uid(), m.namespace());
    }

    ObjectRef withNamespace(String ns) {
        return new ObjectRef(apiVersion, kind, name, uid, ns);
    }

    /** ownerReferenceMatchesCoordinates against this identity's reference part. */
    boolean matchesCoordinates(OwnerRef ref) {
        return uid.equals(ref.uid()) && name.equals(ref.name()) && kind.equals(ref.kind())
                && apiVersion.equals(ref.apiVersion());
    }

    @Override
    public String toString() {
        return "[" + apiVersion + "/" + kind + ", namespace: " + namespace + ", name: " + name + ", uid: " + uid + "]";
    }
}
