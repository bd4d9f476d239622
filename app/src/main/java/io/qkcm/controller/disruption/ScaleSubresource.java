package io.qkcm.controller.disruption;

import java.util.List;
import java.util.Optional;
import java.util.Set;

import com.fasterxml.jackson.databind.JsonNode;

import io.fabric8.kubernetes.api.model.OwnerReference;
import io.qkcm.controller.ApiErrors;
import io.qkcm.runtime.informers.ApiDiscovery;
import io.qkcm.runtime.informers.ApiDiscovery.ApiResource;
import io.qkcm.runtime.informers.MetadataClient;

/**
 * Upstream's last pod-controller finder, {@code getScaleController}, and what it is built from in
 * startDisruptionController: a REST mapper over discovery (kind to resource at the owner reference's
 * version), the scale client (the scale subresource of the group resource's preferred version, any of
 * the Scale kinds client-go's scale converter reads) and, on a NotFound, {@code implementsScale}: the
 * group version's resource list (discovery's ServerResourcesForGroupVersion) says whether the resource
 * has a scale subresource at all, or the object is simply missing.
 */
final class ScaleSubresource {

    /** client-go's ScaleConverter.ScaleVersions, the served ones (the internal versions never are). */
    static final Set<String> SCALE_GROUP_VERSIONS = Set.of("autoscaling/v1", "extensions/v1beta1", "apps/v1beta1",
            "apps/v1beta2");

    /** How often a miss may refresh the mapper (client-go's deferred mapper resets once per miss). */
    private static final long REFRESH_NANOS = 5_000_000_000L;

    private final MetadataClient api;
    private final ApiDiscovery discovery;
    private volatile ApiDiscovery.Snapshot snapshot;
    private volatile long loadedAt;

    ScaleSubresource(MetadataClient api) {
        this.api = api;
        this.discovery = new ApiDiscovery(api);
    }

    /** schema.GroupVersion of an apiVersion string: "v1" is the core group. */
    record GroupVersion(String group, String version) {
        static GroupVersion parse(String apiVersion) throws DisruptionException {
            String s = apiVersion == null ? "" : apiVersion;
            if (s.isEmpty() || s.equals("/")) {
                return new GroupVersion("", "");
            }
            int slash = s.indexOf('/');
            if (slash < 0) {
                return new GroupVersion("", s);
            }
            if (s.indexOf('/', slash + 1) >= 0) {
                throw new DisruptionException("unexpected GroupVersion string: " + s);
            }
            return new GroupVersion(s.substring(0, slash), s.substring(slash + 1));
        }

        @Override
        public String toString() {
            return group.isEmpty() ? version : group + "/" + version;
        }
    }

    /**
     * Upstream's getScaleController: the controller's UID and {@code spec.replicas} as its scale
     * subresource has them; null when the object is missing or is another object (UID); an error when
     * the kind is unknown or has no scale subresource.
     */
    ExpectedPods.ControllerAndScale getScaleController(OwnerReference ref, String namespace) throws DisruptionException {
        GroupVersion gv = GroupVersion.parse(ref.getApiVersion());
        ApiResource mapping = restMapping(gv, ref.getKind());
        String groupResource = mapping.gvr().groupResource();
        ApiResource preferred = preferredResource(mapping.gvr().group(), mapping.gvr().resource());
        if (preferred == null) {
            throw new DisruptionException("unable to get client for " + groupResource
                    + ": unable to get full preferred group-version-resource for " + groupResource);
        }
        JsonNode scale;
        try {
            scale = api.getJson(preferred.gvr().path(namespace) + "/" + MetadataClient.encode(ref.getName()) + "/scale");
        } catch (io.fabric8.kubernetes.client.KubernetesClientException e) {
            if (ApiErrors.isNotFound(e)) {
                // NotFound is both "no such object" and "no scale subresource": discovery tells which
                if (!implementsScale(mapping)) {
                    throw new DisruptionException(groupResource + " does not implement the scale subresource");
                }
                return null;
            }
            throw e;
        }
        String apiVersion = scale.path("apiVersion").asText("");
        String kind = scale.path("kind").asText("");
        if (!"Scale".equals(kind) || !SCALE_GROUP_VERSIONS.contains(apiVersion)) {
            throw new DisruptionException("no kind \"" + kind + "\" is registered for version \"" + apiVersion
                    + "\" in scheme \"k8s.io/client-go/scale/scheme\"");
        }
        String uid = scale.path("metadata").path("uid").asText("");
        if (!uid.equals(ref.getUid())) {
            return null;
        }
        return new ExpectedPods.ControllerAndScale(uid, scale.path("spec").path("replicas").asInt(0));
    }

    /** Upstream's implementsScale: the resource's group version lists {@code <resource>/scale} of a Scale kind. */
    boolean implementsScale(ApiResource mapping) {
        String gv = mapping.gvr().groupVersion();
        JsonNode list = api.getJson(mapping.gvr().group().isEmpty() ? "/api/" + gv : "/apis/" + gv);
        String scaleName = mapping.gvr().resource() + "/scale";
        for (JsonNode r : list.path("resources")) {
            if (!scaleName.equals(r.path("name").asText())) {
                continue;
            }
            String group = r.path("group").asText("");
            String version = r.path("version").asText("");
            if ("Scale".equals(r.path("kind").asText()) && SCALE_GROUP_VERSIONS.contains(group + "/" + version)) {
                return true;
            }
        }
        return false;
    }

    /** RESTMapper.RESTMapping(groupKind, version); meta.NoKindMatchError's message when nothing serves it. */
    ApiResource restMapping(GroupVersion gv, String kind) throws DisruptionException {
        Optional<ApiResource> found = find(gv, kind, snapshot(false));
        if (found.isEmpty()) {
            found = find(gv, kind, snapshot(true));
        }
        if (found.isEmpty()) {
            if (gv.version().isEmpty()) {
                throw new DisruptionException("no matches for kind \"" + kind + "\" in group \"" + gv.group() + "\"");
            }
            throw new DisruptionException("no matches for kind \"" + kind + "\" in version \"" + gv + "\"");
        }
        return found.get();
    }

    private static Optional<ApiResource> find(GroupVersion gv, String kind, ApiDiscovery.Snapshot s) {
        if (s == null) {
            return Optional.empty();
        }
        List<ApiResource> candidates = gv.version().isEmpty() ? s.preferred() : s.all();
        return candidates.stream()
                .filter(r -> r.gvr().group().equals(gv.group()) && kind.equals(r.kind())
                        && (gv.version().isEmpty() || r.gvr().version().equals(gv.version())))
                .findFirst();
    }

    /** The scale client's ResourceFor(group resource): the group resource at its preferred version. */
    private ApiResource preferredResource(String group, String resource) {
        ApiDiscovery.Snapshot s = snapshot(false);
        for (ApiResource r : s.preferred()) {
            if (r.gvr().group().equals(group) && r.gvr().resource().equals(resource)) {
                return r;
            }
        }
        return null;
    }

    /** The discovery the mapper holds; {@code refresh} rediscovers, at most once every 5 s. */
    private ApiDiscovery.Snapshot snapshot(boolean refresh) {
        ApiDiscovery.Snapshot s = snapshot;
        if (s == null || (refresh && System.nanoTime() - loadedAt > REFRESH_NANOS)) {
            synchronized (this) {
                if (snapshot == null || (refresh && System.nanoTime() - loadedAt > REFRESH_NANOS)) {
                    snapshot = discovery.discover();
                    loadedAt = System.nanoTime();
                }
                s = snapshot;
            }
        }
        return s;
    }
}
