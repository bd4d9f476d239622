package io.qkcm.runtime.informers;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * API discovery as client-go does it since v1.30: aggregated discovery (apidiscovery.k8s.io/v2, two
 * requests: /api and /apis), giving every group, version and resource with its kind, scope and
 * verbs. Provides upstream's ServerPreferredResources and a REST mapper (kind → resource, scope) over
 * all served versions.
 */
public final class ApiDiscovery {

    private static final String ACCEPT = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
            + "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList";

    /** A served resource (no subresources). */
    public record ApiResource(GroupVersionResource gvr, String kind, boolean namespaced, Set<String> verbs) {
        public boolean supports(String... required) {
            for (String v : required) {
                if (!verbs.contains(v)) {
                    return false;
                }
            }
            return true;
        }
    }

    /** The result of one discovery: resources by group version, preferred version first, and stale groups. */
    public record Snapshot(List<ApiResource> all, Map<String, String> preferredVersionByGroup,
            Set<String> failedGroupVersions) {

        /**
         * client-go's ServerPreferredResources: per group resource, the one from the group's preferred
         * version, else from the first version that serves it.
         */
        public List<ApiResource> preferred() {
            Map<String, ApiResource> byGroupResource = new LinkedHashMap<>();
            for (ApiResource r : all) {
                String gr = r.gvr().groupResource();
                ApiResource seen = byGroupResource.get(gr);
                boolean preferredVersion = r.gvr().version().equals(preferredVersionByGroup.get(r.gvr().group()));
                if (seen == null || preferredVersion) {
                    byGroupResource.put(gr, r);
                }
            }
            return new ArrayList<>(byGroupResource.values());
        }
    }

    private final MetadataClient client;
    private volatile Map<String, ApiResource> byGroupVersionKind = Map.of();
    private volatile long mapperLoadedAt;

    public ApiDiscovery(MetadataClient client) {
        this.client = client;
    }

    /** Discovers everything the server serves now. */
    public Snapshot discover() {
        List<ApiResource> all = new ArrayList<>();
        Map<String, String> preferred = new HashMap<>();
        Set<String> failed = new java.util.HashSet<>();
        for (String path : List.of("/api", "/apis")) {
            JsonNode list = client.getJsonAccept(path, ACCEPT);
            for (JsonNode group : list.path("items")) {
                String groupName = group.path("metadata").path("name").asText("");
                boolean first = true;
                for (JsonNode version : group.path("versions")) {
                    String v = version.path("version").asText();
                    if (first) {
                        preferred.put(groupName, v);
                        first = false;
                    }
                    if ("Stale".equals(version.path("freshness").asText())) {
                        failed.add(groupName.isEmpty() ? v : groupName + "/" + v);
                        continue;
                    }
                    for (JsonNode res : version.path("resources")) {
                        String resource = res.path("resource").asText();
                        String kind = res.path("responseKind").path("kind").asText("");
                        Set<String> verbs = new java.util.HashSet<>();
                        res.path("verbs").forEach(x -> verbs.add(x.asText()));
                        all.add(new ApiResource(new GroupVersionResource(groupName, v, resource), kind,
                                "Namespaced".equals(res.path("scope").asText()), Set.copyOf(verbs)));
                    }
                }
            }
        }
        return new Snapshot(all, preferred, failed);
    }

    /** Rebuilds the REST mapper from a fresh discovery (upstream's restMapper.Reset()). */
    public void resetMapper(Snapshot snapshot) {
        Map<String, ApiResource> m = new HashMap<>();
        for (ApiResource r : snapshot.all()) {
            m.putIfAbsent(r.gvr().groupVersion() + "/" + r.kind(), r);
        }
        byGroupVersionKind = m;
        mapperLoadedAt = System.nanoTime();
    }

    /**
     * The resource serving {@code kind} at {@code apiVersion}. On a miss, discovery is refreshed at
     * most once every 5 seconds (client-go's deferred mapper refreshes once per miss when stale).
     */
    public Optional<ApiResource> mapping(String apiVersion, String kind) {
        ApiResource r = byGroupVersionKind.get(apiVersion + "/" + kind);
        if (r == null && System.nanoTime() - mapperLoadedAt > 5_000_000_000L) {
            synchronized (this) {
                if (System.nanoTime() - mapperLoadedAt > 5_000_000_000L) {
                    try {
                        resetMapper(discover());
                    } catch (RuntimeException e) {
                        mapperLoadedAt = System.nanoTime();
                    }
                }
            }
            r = byGroupVersionKind.get(apiVersion + "/" + kind);
        }
        return Optional.ofNullable(r);
    }

    /** The kind served by a resource, from the current mapper. */
    public Optional<ApiResource> byResource(GroupVersionResource gvr) {
        return byGroupVersionKind.values().stream().filter(r -> r.gvr().equals(gvr)).findFirst();
    }
}
