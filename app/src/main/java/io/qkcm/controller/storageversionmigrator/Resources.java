package io.qkcm.controller.storageversionmigrator;

import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import io.fabric8.kubernetes.api.model.storagemigration.v1alpha1.StorageVersionMigration;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.qkcm.runtime.Json;
import io.qkcm.runtime.informers.ApiDiscovery;
import io.qkcm.runtime.informers.GroupVersionResource;
import io.qkcm.runtime.informers.MetadataClient;
import io.qkcm.runtime.informers.ObjectMetadata;

/**
 * What both loops ask the API server: discovery (upstream's REST mapper and discovery client), metadata
 * lists (the metadata client), the migration's status (UpdateStatus) and the no-op server-side apply of one
 * object (the dynamic client), all through the controller's own client.
 */
class Resources {

    /** Upstream's DefaultIgnoredResources of the garbage collector: it has no monitor of these. */
    private static final java.util.Set<String> GC_IGNORED = java.util.Set.of("/events", "events.k8s.io/events");
    private static final int PAGE_SIZE = 500;

    private final KubernetesClient client;
    private final MetadataClient metadata;
    private final ApiDiscovery discovery;
    private final String fieldManager;

    Resources(KubernetesClient client, String fieldManager) {
        this.client = client;
        this.metadata = new MetadataClient(client);
        this.discovery = new ApiDiscovery(metadata);
        this.fieldManager = fieldManager;
    }

    /** The resource of exactly {@code gvr} that discovery serves now, or null (upstream's mapper.ResourcesFor). */
    ApiDiscovery.ApiResource served(GroupVersionResource gvr) {
        for (ApiDiscovery.ApiResource r : discovery.discover().all()) {
            if (r.gvr().equals(gvr)) {
                return r;
            }
        }
        return null;
    }

    /**
     * True when the garbage collector keeps a monitor of {@code gvr}'s group and resource (upstream's
     * GraphBuilder.GetMonitor finds one): a preferred resource that can be deleted, listed and watched and
     * that the garbage collector does not ignore.
     */
    boolean monitoredByGarbageCollector(GroupVersionResource gvr) {
        if (GC_IGNORED.contains(gvr.group() + "/" + gvr.resource())) {
            return false;
        }
        for (ApiDiscovery.ApiResource r : discovery.discover().preferred()) {
            if (r.gvr().group().equals(gvr.group()) && r.gvr().resource().equals(gvr.resource())
                    && r.supports("delete", "list", "watch")) {
                return true;
            }
        }
        return false;
    }

    /** The resourceVersion of a one-object list of {@code gvr} (in {@code namespace} when not null). */
    String latestResourceVersion(GroupVersionResource gvr, String namespace) {
        try {
            JsonNode list = metadata.list(gvr, namespace, "limit=1");
            return list.path("metadata").path("resourceVersion").asText("");
        } catch (RuntimeException e) {
            throw new IllegalStateException("error getting latest resourceVersion for " + gvr + ": " + e.getMessage(), e);
        }
    }

    /**
     * Every object of {@code gvr} as of a resourceVersion not older than {@code resourceVersion}, metadata
     * only, page by page: what upstream's garbage-collector monitor holds once its last synced
     * resourceVersion has reached the migration's.
     */
    List<ObjectMetadata> listNotOlderThan(GroupVersionResource gvr, String resourceVersion, String apiVersion, String kind) {
        List<ObjectMetadata> objects = new ArrayList<>();
        String cont = null;
        do {
            String query = "limit=" + PAGE_SIZE + (cont == null
                    ? "&resourceVersion=" + MetadataClient.encode(resourceVersion) + "&resourceVersionMatch=NotOlderThan"
                    : "&continue=" + MetadataClient.encode(cont));
            JsonNode page = metadata.list(gvr, null, query);
            for (JsonNode item : page.path("items")) {
                objects.add(ObjectMetadata.fromJson(item, apiVersion, kind));
            }
            cont = page.path("metadata").path("continue").asText("");
            if (cont.isEmpty()) {
                cont = null;
            }
        } while (cont != null);
        return objects;
    }

    /** UpdateStatus with the migration's resourceVersion; returns the stored migration. */
    StorageVersionMigration updateStatus(StorageVersionMigration svm) {
        return client.resources(StorageVersionMigration.class).resource(svm).updateStatus();
    }

    /**
     * Upstream's migration write: a server-side apply of only apiVersion, kind, uid and resourceVersion,
     * owning no field, so the object is read and written back in the current storage version. The
     * resourceVersion makes it a conflict when the object has been written since (and so migrated already).
     */
    void applyNoOp(ApiDiscovery.ApiResource resource, ObjectMetadata object) {
        GroupVersionResource gvr = resource.gvr();
        String apiVersion = gvr.groupVersion();
        ObjectNode body = Json.mapper().createObjectNode();
        body.put("kind", resource.kind());
        body.put("apiVersion", apiVersion);
        ObjectNode meta = body.putObject("metadata");
        if (object.uid() != null && !object.uid().isEmpty()) {
            meta.put("uid", object.uid());
        }
        if (object.resourceVersion() != null && !object.resourceVersion().isEmpty()) {
            meta.put("resourceVersion", object.resourceVersion());
        }
        ResourceDefinitionContext rdc = new ResourceDefinitionContext.Builder().withGroup(gvr.group())
                .withVersion(gvr.version()).withPlural(gvr.resource()).withKind(resource.kind())
                .withNamespaced(resource.namespaced()).build();
        var resources = client.genericKubernetesResources(rdc);
        var target = object.namespace() == null || object.namespace().isEmpty()
                ? resources.withName(object.name())
                : resources.inNamespace(object.namespace()).withName(object.name());
        target.patch(new PatchContext.Builder().withPatchType(PatchType.SERVER_SIDE_APPLY).withFieldManager(fieldManager)
                .build(), body.toString());
    }
}
