package io.qkcm.controller.garbagecollector;

import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ThreadLocalRandom;

import org.jboss.logging.Logger;

import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import io.fabric8.kubernetes.client.KubernetesClientException;
import io.qkcm.runtime.informers.ApiDiscovery;
import io.qkcm.runtime.informers.ApiDiscovery.ApiResource;
import io.qkcm.runtime.informers.MetadataClient;
import io.qkcm.runtime.informers.ObjectMetadata;
import io.qkcm.runtime.informers.ObjectMetadata.OwnerRef;

/**
 * Upstream operations.go and patch.go: the garbage collector's API calls, all through the metadata
 * client (PartialObjectMetadata), and the patches that remove or unblock owner references.
 */
final class Operations {

    private static final Logger LOG = Logger.getLogger(Operations.class);

    private final MetadataClient client;
    private final ApiDiscovery discovery;
    private final GraphBuilder graph;

    /** For tests: sees each GET ("get") and DELETE ("delete") of an item just before it is sent. */
    volatile java.util.function.BiConsumer<String, ObjectRef> beforeRequest = (verb, item) -> {
    };

    Operations(MetadataClient client, ApiDiscovery discovery, GraphBuilder graph) {
        this.client = client;
        this.discovery = discovery;
        this.graph = graph;
    }

    static boolean isNotFound(Exception e) {
        return e instanceof KubernetesClientException k && k.getCode() == 404;
    }

    static boolean isConflict(Exception e) {
        return e instanceof KubernetesClientException k && k.getCode() == 409;
    }

    static boolean isUnsupportedMediaType(Exception e) {
        return e instanceof KubernetesClientException k && k.getCode() == 415;
    }

    ApiResource apiResource(String apiVersion, String kind) throws RestMappingException {
        return discovery.mapping(apiVersion, kind).orElseThrow(() -> new RestMappingException(kind, apiVersion));
    }

    static String resourceDefaultNamespace(boolean namespaced, String namespace) {
        return namespaced ? namespace : "";
    }

    void deleteObject(ObjectRef item, String resourceVersion, List<OwnerRef> ownersAtResourceVersion, String policy)
            throws RestMappingException {
        ApiResource resource = apiResource(item.apiVersion(), item.kind());
        String ns = resourceDefaultNamespace(resource.namespaced(), item.namespace());
        String rv = resourceVersion == null || resourceVersion.isEmpty() ? null : resourceVersion;
        try {
            beforeRequest.accept("delete", item);
            client.delete(resource.gvr(), ns, item.name(), item.uid(), rv, policy);
        } catch (KubernetesClientException e) {
            if (isConflict(e) && rv != null) {
                ObjectMetadata live;
                try {
                    live = client.get(resource.gvr(), ns, item.name(), item.apiVersion(), item.kind());
                } catch (KubernetesClientException liveErr) {
                    if (isNotFound(liveErr)) {
                        return; // the object we wanted to delete is gone
                    }
                    throw e;
                }
                if (item.uid().equals(live.uid()) && !rv.equals(live.resourceVersion())
                        && Objects.equals(live.ownerReferences(), ownersAtResourceVersion)) {
                    // changed, but not its owners: retry without the resourceVersion precondition
                    deleteObject(item, null, null, policy);
                    return;
                }
            }
            throw e;
        }
    }

    ObjectMetadata getObject(ObjectRef item) throws RestMappingException, NamespacedOwnerOfClusterScopedException {
        ApiResource resource = apiResource(item.apiVersion(), item.kind());
        String ns = resourceDefaultNamespace(resource.namespaced(), item.namespace());
        if (resource.namespaced() && ns.isEmpty()) {
            throw NamespacedOwnerOfClusterScopedException.INSTANCE;
        }
        beforeRequest.accept("get", item);
        return client.get(resource.gvr(), ns, item.name(), item.apiVersion(), item.kind());
    }

    ObjectMetadata patchObject(ObjectRef item, String patch, String contentType) throws RestMappingException {
        ApiResource resource = apiResource(item.apiVersion(), item.kind());
        return client.patch(resource.gvr(), resourceDefaultNamespace(resource.namespaced(), item.namespace()),
                item.name(), contentType, patch, item.apiVersion(), item.kind());
    }

    /** Removes {@code finalizer} from the owner, retrying conflicts with client-go's DefaultBackoff. */
    void removeFinalizer(Node owner, String finalizer) throws Exception {
        long delayMillis = 10;
        int steps = 4;
        for (int attempt = 1;; attempt++) {
            try {
                removeFinalizerOnce(owner, finalizer);
                return;
            } catch (KubernetesClientException e) {
                if (!isConflict(e)) {
                    throw e;
                }
                if (attempt >= steps) {
                    throw new IllegalStateException("updateMaxRetries(" + steps
                            + ") has reached. The garbage collector will retry later for owner " + owner.identity, e);
                }
                Thread.sleep((long) (delayMillis * (1 + ThreadLocalRandom.current().nextDouble(0.1))));
                delayMillis *= 5;
            }
        }
    }

    private void removeFinalizerOnce(Node owner, String finalizer) throws Exception {
        ObjectMetadata ownerObject;
        try {
            ownerObject = getObject(owner.identity);
        } catch (KubernetesClientException e) {
            if (isNotFound(e)) {
                return;
            }
            throw new IllegalStateException("cannot finalize owner " + owner.identity + ", because cannot get it: " + e
                    + ". The garbage collector will retry later", e);
        }
        List<String> newFinalizers = new ArrayList<>();
        boolean found = false;
        for (String f : ownerObject.finalizers()) {
            if (f.equals(finalizer)) {
                found = true;
                continue;
            }
            newFinalizers.add(f);
        }
        if (!found) {
            LOG.tracef("finalizer %s already removed from object %s", finalizer, owner.identity);
            return;
        }
        ObjectNode patch = MetadataClient.json().createObjectNode();
        ObjectNode meta = patch.putObject("metadata");
        meta.put("resourceVersion", ownerObject.resourceVersion());
        if (newFinalizers.isEmpty()) {
            meta.putNull("finalizers");
        } else {
            ArrayNode arr = meta.putArray("finalizers");
            newFinalizers.forEach(arr::add);
        }
        patchObject(owner.identity, patch.toString(), MetadataClient.MERGE_PATCH);
    }

    /** A patch computed from the cached or live object, for resources without strategic merge patch. */
    @FunctionalInterface
    interface JsonMergePatch {
        String build(Node n) throws Exception;
    }

    /** Strategic merge patch first, JSON merge patch when the resource does not support it (custom resources). */
    ObjectMetadata patch(Node item, String smp, JsonMergePatch jmp) throws Exception {
        try {
            return patchObject(item.identity, smp, MetadataClient.STRATEGIC_MERGE_PATCH);
        } catch (KubernetesClientException e) {
            if (!isUnsupportedMediaType(e)) {
                throw e;
            }
        }
        return patchObject(item.identity, jmp.build(item), MetadataClient.MERGE_PATCH);
    }

    /** controller.GenerateDeleteOwnerRefStrategicMergeBytes. */
    static String deleteOwnerRefStrategicMergePatch(String dependentUid, List<String> ownerUids) {
        ObjectNode patch = MetadataClient.json().createObjectNode();
        ObjectNode meta = patch.putObject("metadata");
        ArrayNode refs = meta.putArray("ownerReferences");
        for (String uid : ownerUids) {
            ObjectNode r = refs.addObject();
            r.put("$patch", "delete");
            r.put("uid", uid);
        }
        meta.put("uid", dependentUid);
        return patch.toString();
    }

    /** The object's metadata from the monitor's cache, or a live GET when not cached. */
    ObjectMetadata getMetadata(ObjectRef ref) throws RestMappingException {
        ApiResource resource = apiResource(ref.apiVersion(), ref.kind());
        Monitor m = graph.monitor(resource.gvr());
        String key = ref.namespace().isEmpty() ? ref.name() : ref.namespace() + "/" + ref.name();
        ObjectMetadata cached = m == null ? null : m.get(key);
        if (cached != null) {
            return cached;
        }
        return client.get(resource.gvr(), ref.namespace(), ref.name(), ref.apiVersion(), ref.kind());
    }

    String deleteOwnerRefJsonMergePatch(Node item, List<String> ownerUids) throws RestMappingException {
        ObjectMetadata current = getMetadata(item.identity);
        List<OwnerRef> kept = new ArrayList<>();
        for (OwnerRef ref : current.ownerReferences()) {
            if (!ownerUids.contains(ref.uid())) {
                kept.add(ref);
            }
        }
        return ownerRefsPatch(current.resourceVersion(), kept);
    }

    static String unblockOwnerReferencesStrategicMergePatch(Node n) {
        ObjectNode patch = MetadataClient.json().createObjectNode();
        ObjectNode meta = patch.putObject("metadata");
        List<OwnerRef> blocking = new ArrayList<>();
        for (OwnerRef owner : n.owners) {
            if (owner.blocksOwnerDeletion()) {
                blocking.add(owner.withBlockOwnerDeletion(false));
            }
        }
        meta.put("uid", n.identity.uid());
        if (!blocking.isEmpty()) {
            writeRefs(meta.putArray("ownerReferences"), blocking);
        }
        return patch.toString();
    }

    String unblockOwnerReferencesJsonMergePatch(Node n) throws RestMappingException {
        ObjectMetadata current = getMetadata(n.identity);
        List<OwnerRef> expected = new ArrayList<>();
        for (OwnerRef owner : n.owners) {
            expected.add(owner.withBlockOwnerDeletion(false));
        }
        return ownerRefsPatch(current.resourceVersion(), expected);
    }

    private static String ownerRefsPatch(String resourceVersion, List<OwnerRef> refs) {
        ObjectNode patch = MetadataClient.json().createObjectNode();
        ObjectNode meta = patch.putObject("metadata");
        meta.put("resourceVersion", resourceVersion);
        if (refs.isEmpty()) {
            meta.putNull("ownerReferences");
        } else {
            writeRefs(meta.putArray("ownerReferences"), refs);
        }
        return patch.toString();
    }

    private static void writeRefs(ArrayNode arr, List<OwnerRef> refs) {
        for (OwnerRef r : refs) {
            ObjectNode o = arr.addObject();
            o.put("apiVersion", r.apiVersion());
            o.put("kind", r.kind());
            o.put("name", r.name());
            o.put("uid", r.uid());
            if (r.controller() != null) {
                o.put("controller", r.controller());
            }
            if (r.blockOwnerDeletion() != null) {
                o.put("blockOwnerDeletion", r.blockOwnerDeletion());
            }
        }
    }
}
