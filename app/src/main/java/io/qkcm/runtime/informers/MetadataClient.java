package io.qkcm.runtime.informers;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

import io.fabric8.kubernetes.api.model.Status;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.http.HttpClient;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.HttpResponse;

/**
 * client-go's metadata client: reads, deletes and patches any resource by GroupVersionResource,
 * asking the API server for PartialObjectMetadata so only metadata crosses the wire. Requests go
 * through the fabric8 HTTP client of the given API client, so its authentication, QPS bucket and
 * request metrics apply. Errors are {@link KubernetesClientException}s carrying the HTTP code.
 */
public final class MetadataClient {

    /** As client-go's metadata client: PartialObjectMetadata, or the full object from servers that cannot convert. */
    public static final String ACCEPT_OBJECT = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json";
    public static final String ACCEPT_LIST = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json";
    public static final String STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json";
    public static final String MERGE_PATCH = "application/merge-patch+json";

    static final ObjectMapper JSON = io.qkcm.runtime.Json.mapper();
    private static final long REQUEST_TIMEOUT_SECONDS = 60;

    private final KubernetesClient client;
    private final String base;

    public MetadataClient(KubernetesClient client) {
        this.client = client;
        String master = client.getMasterUrl().toString();
        this.base = master.endsWith("/") ? master.substring(0, master.length() - 1) : master;
    }

    public HttpClient http() {
        return client.getHttpClient();
    }

    public static ObjectMapper json() {
        return JSON;
    }

    /** Absolute URL of {@code path} (starting with /) plus an optional query (without '?'). */
    public String url(String path, String query) {
        return base + path + (query == null || query.isEmpty() ? "" : "?" + query);
    }

    public static String encode(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8);
    }

    /** GET one object's metadata; {@code kind} and {@code apiVersion} are stamped on the result. */
    public ObjectMetadata get(GroupVersionResource gvr, String namespace, String name, String apiVersion, String kind) {
        JsonNode body = send(http().newHttpRequestBuilder().uri(url(gvr.path(namespace) + "/" + encode(name), null))
                .header("Accept", ACCEPT_OBJECT));
        return ObjectMetadata.fromJson(body, apiVersion, kind);
    }

    /** GET one page of a list (raw JSON, PartialObjectMetadataList when the server can). */
    public JsonNode list(GroupVersionResource gvr, String namespace, String query) {
        return send(http().newHttpRequestBuilder().uri(url(gvr.path(namespace), query)).header("Accept", ACCEPT_LIST));
    }

    /**
     * DELETE with preconditions (uid, and resourceVersion when not null) and a propagation policy
     * (Background, Foreground, Orphan; null for the server's default).
     */
    public void delete(GroupVersionResource gvr, String namespace, String name, String uid, String resourceVersion,
            String propagationPolicy) {
        ObjectNode options = JSON.createObjectNode();
        options.put("kind", "DeleteOptions");
        options.put("apiVersion", "v1");
        if (uid != null || resourceVersion != null) {
            ObjectNode pre = options.putObject("preconditions");
            if (uid != null) {
                pre.put("uid", uid);
            }
            if (resourceVersion != null) {
                pre.put("resourceVersion", resourceVersion);
            }
        }
        if (propagationPolicy != null) {
            options.put("propagationPolicy", propagationPolicy);
        }
        send(http().newHttpRequestBuilder().uri(url(gvr.path(namespace) + "/" + encode(name), null))
                .header("Accept", ACCEPT_OBJECT).delete("application/json", options.toString()));
    }

    /** PATCH with {@code contentType} (strategic merge or merge patch); returns the patched metadata. */
    public ObjectMetadata patch(GroupVersionResource gvr, String namespace, String name, String contentType, String patch,
            String apiVersion, String kind) {
        JsonNode body = send(http().newHttpRequestBuilder().uri(url(gvr.path(namespace) + "/" + encode(name), null))
                .header("Accept", ACCEPT_OBJECT).patch(contentType, patch));
        return ObjectMetadata.fromJson(body, apiVersion, kind);
    }

    /** GET of a discovery document or any other JSON path. */
    public JsonNode getJson(String path) {
        return getJsonAccept(path, "application/json");
    }

    public JsonNode getJsonAccept(String path, String accept) {
        return send(http().newHttpRequestBuilder().uri(url(path, null)).header("Accept", accept));
    }

    private JsonNode send(HttpRequest.Builder request) {
        request.timeout(REQUEST_TIMEOUT_SECONDS, TimeUnit.SECONDS);
        HttpRequest built = request.build();
        CompletableFuture<HttpResponse<byte[]>> future = http().sendAsync(built, byte[].class);
        HttpResponse<byte[]> response;
        try {
            response = future.get(REQUEST_TIMEOUT_SECONDS + 5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            future.cancel(true);
            Thread.currentThread().interrupt();
            throw new KubernetesClientException("interrupted: " + built.method() + " " + built.uri(), e);
        } catch (ExecutionException e) {
            throw new KubernetesClientException(built.method() + " " + built.uri() + ": " + e.getCause(), e.getCause());
        } catch (TimeoutException e) {
            future.cancel(true);
            throw new KubernetesClientException("timeout: " + built.method() + " " + built.uri(), e);
        }
        byte[] body = response.body() == null ? new byte[0] : response.body();
        if (!response.isSuccessful()) {
            throw error(response.code(), body, built);
        }
        try {
            return body.length == 0 ? JSON.createObjectNode() : JSON.readTree(body);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static KubernetesClientException error(int code, byte[] body, HttpRequest request) {
        String message = null;
        String reason = null;
        try {
            JsonNode status = JSON.readTree(body);
            message = status.path("message").asText(null);
            reason = status.path("reason").asText(null);
        } catch (IOException | RuntimeException e) {
            // not a Status
        }
        if (message == null) {
            message = new String(body, StandardCharsets.UTF_8);
        }
        Status status = new StatusBuilder().withCode(code).withMessage(message).withReason(reason).build();
        return new KubernetesClientException(request.method() + " " + request.uri() + " failed (" + code + "): " + message,
                code, status);
    }
}
