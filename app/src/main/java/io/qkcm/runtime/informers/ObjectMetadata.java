package io.qkcm.runtime.informers;

import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.OwnerReference;

/**
 * The metadata of one API object as the metadata-only caches keep it: type, coordinates, owner
 * references, finalizers, deletion timestamp and resource version; nothing else (no labels,
 * annotations, managedFields, spec or status). {@code apiVersion} and {@code kind} are the shared
 * strings of the informer's resource, so a cached object costs only its own fields.
 */
public final class ObjectMetadata {

    /** One metadata.ownerReferences entry; record equality is upstream's reflect.DeepEqual. */
    public record OwnerRef(String apiVersion, String kind, String name, String uid, Boolean controller,
            Boolean blockOwnerDeletion) {

        public boolean blocksOwnerDeletion() {
            return Boolean.TRUE.equals(blockOwnerDeletion);
        }

        public OwnerRef withBlockOwnerDeletion(Boolean block) {
            return new OwnerRef(apiVersion, kind, name, uid, controller, block);
        }
    }

    private static final String[] NO_STRINGS = new String[0];
    private static final OwnerRef[] NO_REFS = new OwnerRef[0];

    private final String apiVersion;
    private final String kind;
    private final String namespace;
    private final String name;
    private final String uid;
    private final String resourceVersion;
    private final String deletionTimestamp;
    private final String[] finalizers;
    private final OwnerRef[] ownerReferences;

    public ObjectMetadata(String apiVersion, String kind, String namespace, String name, String uid,
            String resourceVersion, String deletionTimestamp, List<String> finalizers, List<OwnerRef> ownerReferences) {
        this.apiVersion = apiVersion;
        this.kind = kind;
        this.namespace = namespace == null ? "" : namespace;
        this.name = name;
        this.uid = uid;
        this.resourceVersion = resourceVersion;
        this.deletionTimestamp = deletionTimestamp;
        this.finalizers = finalizers == null || finalizers.isEmpty() ? NO_STRINGS : finalizers.toArray(NO_STRINGS);
        this.ownerReferences = ownerReferences == null || ownerReferences.isEmpty() ? NO_REFS
                : ownerReferences.toArray(NO_REFS);
    }

    /**
     * Reads the {@code metadata} of a JSON object (a PartialObjectMetadata or a full object); the type
     * is given by the caller, since PartialObjectMetadata names meta.k8s.io/v1 as its own.
     */
    public static ObjectMetadata fromJson(JsonNode object, String apiVersion, String kind) {
        JsonNode m = object.path("metadata");
        List<String> finalizers = null;
        JsonNode f = m.path("finalizers");
        if (f.isArray() && f.size() > 0) {
            finalizers = new ArrayList<>(f.size());
            for (JsonNode s : f) {
                finalizers.add(s.asText());
            }
        }
        List<OwnerRef> refs = null;
        JsonNode o = m.path("ownerReferences");
        if (o.isArray() && o.size() > 0) {
            refs = new ArrayList<>(o.size());
            for (JsonNode r : o) {
                refs.add(new OwnerRef(text(r, "apiVersion"), text(r, "kind"), text(r, "name"), text(r, "uid"),
                        bool(r, "controller"), bool(r, "blockOwnerDeletion")));
            }
        }
        return new ObjectMetadata(apiVersion, kind, text(m, "namespace"), text(m, "name"), text(m, "uid"),
                text(m, "resourceVersion"), text(m, "deletionTimestamp"), finalizers, refs);
    }

    /**
     * The metadata of a typed object (a shared informer's cached one); the type is given by the caller,
     * as in {@link #fromJson}. Reads the fields only: the object itself is not kept.
     */
    public static ObjectMetadata of(HasMetadata object, String apiVersion, String kind) {
        ObjectMeta m = object.getMetadata();
        List<OwnerRef> refs = null;
        List<OwnerReference> o = m.getOwnerReferences();
        if (o != null && !o.isEmpty()) {
            refs = new ArrayList<>(o.size());
            for (OwnerReference r : o) {
                refs.add(new OwnerRef(r.getApiVersion(), r.getKind(), r.getName(), r.getUid(), r.getController(),
                        r.getBlockOwnerDeletion()));
            }
        }
        return new ObjectMetadata(apiVersion, kind, m.getNamespace(), m.getName(), m.getUid(), m.getResourceVersion(),
                m.getDeletionTimestamp(), m.getFinalizers(), refs);
    }

    private static String text(JsonNode n, String field) {
        JsonNode v = n.get(field);
        return v == null || v.isNull() ? null : v.asText();
    }

    private static Boolean bool(JsonNode n, String field) {
        JsonNode v = n.get(field);
        return v == null || v.isNull() ? null : v.asBoolean();
    }

    public String apiVersion() {
        return apiVersion;
    }

    public String kind() {
        return kind;
    }

    /** Empty for cluster-scoped objects. */
    public String namespace() {
        return namespace;
    }

    public String name() {
        return name;
    }

    public String uid() {
        return uid;
    }

    public String resourceVersion() {
        return resourceVersion;
    }

    /** Null unless the object is being deleted. */
    public String deletionTimestamp() {
        return deletionTimestamp;
    }

    public boolean beingDeleted() {
        return deletionTimestamp != null;
    }

    public List<String> finalizers() {
        return List.of(finalizers);
    }

    public boolean hasFinalizer(String finalizer) {
        for (String f : finalizers) {
            if (f.equals(finalizer)) {
                return true;
            }
        }
        return false;
    }

    public List<OwnerRef> ownerReferences() {
        return List.of(ownerReferences);
    }

    /** The cache key, as client-go's MetaNamespaceKeyFunc: {@code namespace/name} or {@code name}. */
    public String key() {
        return namespace.isEmpty() ? name : namespace + "/" + name;
    }

    @Override
    public String toString() {
        return apiVersion + "/" + kind + " " + key() + " (uid " + uid + ", rv " + resourceVersion + ")";
    }
}
