package io.qkcm.controller.podautoscaler;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.fabric8.kubernetes.api.model.APIResource;
import io.fabric8.kubernetes.api.model.APIResourceList;
import io.fabric8.kubernetes.api.model.Status;
import io.fabric8.kubernetes.api.model.autoscaling.v1.Scale;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.HttpResponse;
import io.qkcm.runtime.Json;

/**
 * The scale subresource of any kind that has one (upstream's RESTMapper plus scale client): the kind's
 * resource comes from discovery of the target's group version (cached; looked up again on a miss, as a
 * deferred mapper resets), and the scale is read and written as autoscaling/v1 Scale with plain
 * requests of the controller's own client.
 */
final class ScaleClient {

    /** A kind's resource: {@code resource} in {@code group}/{@code version}. */
    record Mapping(String group, String version, String resource) {
        String groupResource() {
            return group.isEmpty() ? resource : resource + "." + group;
        }

        String path(String namespace, String name) {
            String base = group.isEmpty() ? "/api/" + version : "/apis/" + group + "/" + version;
            return base + "/namespaces/" + namespace + "/" + resource + "/" + name + "/scale";
        }
    }

    private final KubernetesClient client;
    private final Map<String, APIResourceList> discovered = new ConcurrentHashMap<>();
    private final Map<String, io.fabric8.kubernetes.api.model.APIGroup> groups = new ConcurrentHashMap<>();

    ScaleClient(KubernetesClient client) {
        this.client = client;
    }

    /** schema.ParseGroupVersion: "" is the empty group version, "v" the core group's, "g/v" a group's. */
    static String[] parseGroupVersion(String apiVersion) {
        if (apiVersion == null || apiVersion.isEmpty()) {
            return new String[] {"", ""};
        }
        String[] parts = apiVersion.split("/", -1);
        if (parts.length == 1) {
            return new String[] {"", parts[0]};
        }
        if (parts.length == 2) {
            return new String[] {parts[0], parts[1]};
        }
        throw new IllegalArgumentException("unexpected GroupVersion string: " + apiVersion);
    }

    /**
     * The resource of {@code kind} in the target's group, as upstream's RESTMappings(GroupKind): the
     * versions of the group are searched (the one of the reference first, then the group's preferred,
     * then the others), since the scale subresource does not depend on the version named; the error of a
     * RESTMapper that does not know the kind otherwise. Discovery is cached and read again on a miss.
     */
    Mapping mapping(String apiVersion, String kind) {
        String[] gv = parseGroupVersion(apiVersion);
        String group = gv[0];
        for (int attempt = 0; attempt < 2; attempt++) {
            boolean fresh = attempt == 1;
            for (String version : versions(group, gv[1], fresh)) {
                APIResourceList list = resources(group, version, fresh);
                if (list != null && list.getResources() != null) {
                    for (APIResource r : list.getResources()) {
                        if (kind.equals(r.getKind()) && !r.getName().contains("/")) {
                            return new Mapping(group, version, r.getName());
                        }
                    }
                }
            }
        }
        throw new IllegalArgumentException("no matches for kind \"" + kind + "\" in group \"" + group + "\"");
    }

    /** The versions to search: the named one, the group's preferred, the group's others. */
    private java.util.List<String> versions(String group, String named, boolean fresh) {
        java.util.LinkedHashSet<String> out = new java.util.LinkedHashSet<>();
        if (!named.isEmpty()) {
            out.add(named);
        }
        if (group.isEmpty()) {
            out.add("v1");
            return new java.util.ArrayList<>(out);
        }
        io.fabric8.kubernetes.api.model.APIGroup g = fresh ? null : groups.get(group);
        if (g == null) {
            try {
                g = client.getApiGroup(group);
            } catch (KubernetesClientException e) {
                g = null;
            }
            if (g != null) {
                groups.put(group, g);
            }
        }
        if (g != null) {
            if (g.getPreferredVersion() != null) {
                out.add(g.getPreferredVersion().getVersion());
            }
            if (g.getVersions() != null) {
                g.getVersions().forEach(v -> out.add(v.getVersion()));
            }
        }
        return new java.util.ArrayList<>(out);
    }

    private APIResourceList resources(String group, String version, boolean fresh) {
        String groupVersion = group.isEmpty() ? version : group + "/" + version;
        APIResourceList list = fresh ? null : discovered.get(groupVersion);
        if (list == null) {
            try {
                list = client.getApiResources(groupVersion);
            } catch (KubernetesClientException e) {
                list = null;
            }
            if (list != null) {
                discovered.put(groupVersion, list);
            }
        }
        return list;
    }

    /** The group resource of a kind, for the custom metrics API's object paths. */
    String groupResource(String apiVersion, String kind) {
        return mapping(apiVersion, kind).groupResource();
    }

    Scale get(Mapping mapping, String namespace, String name) {
        HttpRequest request = client.getHttpClient().newHttpRequestBuilder()
                .uri(base() + mapping.path(namespace, name)).build();
        return Json.api().unmarshal(send(request, "get", mapping), Scale.class);
    }

    Scale update(Mapping mapping, String namespace, Scale scale) {
        HttpRequest request = client.getHttpClient().newHttpRequestBuilder()
                .uri(base() + mapping.path(namespace, scale.getMetadata().getName()))
                .put("application/json", Json.api().asJson(scale)).build();
        return Json.api().unmarshal(send(request, "update", mapping), Scale.class);
    }

    private String base() {
        return client.getMasterUrl().toString().replaceAll("/+$", "");
    }

    /** Sends; a failure is a KubernetesClientException carrying the API server's Status. */
    private String send(HttpRequest request, String verb, Mapping mapping) {
        HttpResponse<String> response;
        try {
            response = client.getHttpClient().sendAsync(request, String.class).get(60, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new KubernetesClientException("interrupted");
        } catch (ExecutionException e) {
            throw new KubernetesClientException(String.valueOf(e.getCause()), e.getCause());
        } catch (TimeoutException e) {
            throw new KubernetesClientException("the server was unable to return a response in the time allotted ("
                    + verb + " " + mapping.groupResource() + ")");
        }
        int code = response.code();
        String body = response.body();
        if (code >= 200 && code < 300) {
            return body;
        }
        Status status = null;
        try {
            status = Json.api().unmarshal(body, Status.class);
        } catch (RuntimeException ignored) {
            // not a Status
        }
        String message = status != null && status.getMessage() != null ? status.getMessage()
                : "the server could not find the requested resource (" + verb + " " + mapping.groupResource() + ")";
        throw new KubernetesClientException(message, code, status);
    }
}
