package io.qkcm.runtime.clients;

import java.io.ByteArrayInputStream;
import java.net.MalformedURLException;
import java.net.URL;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Status;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.NonNamespaceOperation;
import io.fabric8.kubernetes.client.dsl.internal.BaseOperation;
import io.fabric8.kubernetes.client.dsl.internal.OperationSupport;
import io.fabric8.kubernetes.client.http.HttpClient;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.HttpResponse;
import io.qkcm.runtime.Json;
import io.qkcm.runtime.protobuf.KubernetesProtobuf;
import io.qkcm.runtime.protobuf.ProtobufDecodingException;
import io.qkcm.runtime.protobuf.ProtobufEncodingException;
import io.qkcm.runtime.protobuf.ProtobufWire;

/**
 * Creates and updates in protobuf, as kube-controller-manager's clients write built-in types (and the GET of
 * one object, {@link #get}, for the leader elector's Lease): the body
 * encoded and the answer decoded by {@code runtime.protobuf}, sent with the client's own HTTP client (its
 * rate limiter, metrics, write fence and retry settings), so a create on a client without retries is sent
 * once, as through fabric8. Errors are fabric8's: a {@link KubernetesClientException} with the answer's
 * Status and code, an I/O error inside one ({@code ApiErrors.isOutcomeUnknown} reads both alike). JSON
 * (fabric8's own call) for kinds {@link ProtobufWire#writes} leaves to JSON, and for an object protobuf
 * cannot carry (a property the descriptors lack); patches stay JSON, as upstream's.
 */
public final class ProtobufWrites {

    /** Writes sent in protobuf, for tests. */
    public static final LongAdder SENT = new LongAdder();
    /** GETs sent in protobuf, for tests. */
    public static final LongAdder GETS = new LongAdder();

    private ProtobufWrites() {
    }

    /** {@code client.resources(type).inNamespace(obj's namespace).resource(obj).create()}. */
    public static <T extends HasMetadata> T create(KubernetesClient client, T obj) {
        return create(client, obj.getMetadata().getNamespace(), obj);
    }

    /** {@code client.resources(type).inNamespace(namespace).resource(obj).create()}. */
    public static <T extends HasMetadata> T create(KubernetesClient client, String namespace, T obj) {
        BaseOperation<T, ?, ?> op = operation(client, namespace, obj);
        byte[] body = encodable(obj);
        if (body == null) {
            return op.resource(obj).create();
        }
        return send(op, obj, "POST", url(op, ""), body);
    }

    @SuppressWarnings("unchecked")
    private static <T extends HasMetadata> T send(BaseOperation<T, ?, ?> op, T obj, String method, URL url, byte[] body) {
        return send(op, (Class<T>) obj.getClass(), method, url, body, true);
    }

    /** {@code ...resource(obj).update()}: a PUT of obj at its resourceVersion. */
    public static <T extends HasMetadata> T update(KubernetesClient client, T obj) {
        BaseOperation<T, ?, ?> op = operation(client, obj.getMetadata().getNamespace(), obj);
        byte[] body = obj.getMetadata().getResourceVersion() == null ? null : encodable(obj);
        if (body == null) {
            return op.resource(obj).update();
        }
        return send(op, obj, "PUT", url(op, "/" + obj.getMetadata().getName()), body);
    }

    /** {@code ...resource(obj).updateStatus()}: a PUT of obj's status subresource at its resourceVersion. */
    public static <T extends HasMetadata> T updateStatus(KubernetesClient client, T obj) {
        BaseOperation<T, ?, ?> op = operation(client, obj.getMetadata().getNamespace(), obj);
        byte[] body = obj.getMetadata().getResourceVersion() == null ? null : encodable(obj);
        if (body == null) {
            return op.resource(obj).updateStatus();
        }
        return send(op, obj, "PUT", url(op, "/" + obj.getMetadata().getName() + "/status"), body);
    }

    /**
     * {@code client.resources(type).inNamespace(namespace).withName(name).get()}: the object, or null when it does
     * not exist (404), read in protobuf as upstream's clients read built-in types; fabric8's JSON call for a type
     * {@link ProtobufWire#forType} leaves to JSON. The leader elector reads its Lease here: the first request of a
     * start, which in JSON spent tens of milliseconds defining the decoder's lambdas for Status and Lease.
     */
    @SuppressWarnings("unchecked")
    public static <T extends HasMetadata> T get(KubernetesClient client, Class<T> type, String namespace, String name) {
        BaseOperation<T, ?, ?> op = (BaseOperation<T, ?, ?>) (namespace == null ? client.resources(type)
                : client.resources(type).inNamespace(namespace));
        if (!ProtobufWire.forType(type)) {
            return op.withName(name).get();
        }
        return send(op, type, "GET", url(op, "/" + name), null, false);
    }

    private static byte[] encodable(HasMetadata obj) {
        if (!ProtobufWire.writes(obj.getClass())) {
            return null;
        }
        try {
            return KubernetesProtobuf.encode(obj);
        } catch (ProtobufEncodingException e) {
            return null; // this object has what protobuf cannot carry: JSON, as fabric8 sends it
        }
    }

    /** fabric8's operation for obj's type in {@code ns} (cluster-scoped when null): URLs, HTTP client, JSON path. */
    @SuppressWarnings("unchecked")
    private static <T extends HasMetadata> BaseOperation<T, ?, ?> operation(KubernetesClient client, String ns, T obj) {
        Class<T> type = (Class<T>) obj.getClass();
        NonNamespaceOperation<T, ?, ?> op = ns == null ? client.resources(type) : client.resources(type).inNamespace(ns);
        return (BaseOperation<T, ?, ?>) op;
    }

    /** The operation's collection URL with {@code path} appended ("" for the collection, "/name[/status]"). */
    private static URL url(BaseOperation<?, ?, ?> op, String path) {
        try {
            URL c = op.getNamespacedUrl();
            return path.isEmpty() ? c : new URL(c, c.getPath() + path);
        } catch (MalformedURLException e) {
            throw KubernetesClientException.launderThrowable(e);
        }
    }

    /**
     * One request with the operation's HTTP client: {@code body} (protobuf) for POST and PUT, none for GET; a GET
     * answered 404 is null, as fabric8's get. Answers of writes are decoded as the informers' objects are
     * ({@code forCache}: no managedFields); a GET's in full.
     */
    private static <T extends HasMetadata> T send(BaseOperation<T, ?, ?> op, Class<T> type, String method, URL url,
            byte[] body, boolean forCache) {
        HttpClient http = op.getOperationContext().getHttpClient();
        HttpRequest.Builder builder = http.newHttpRequestBuilder().url(url)
                .setHeader("Accept", KubernetesProtobuf.MEDIA_TYPE + ", application/json");
        if (method.equals("POST")) {
            builder.post(KubernetesProtobuf.MEDIA_TYPE, body);
        } else if (body != null) {
            builder.method(method, KubernetesProtobuf.MEDIA_TYPE, new ByteArrayInputStream(body), (long) body.length);
        } // else a GET, the builder's default
        long timeout = op.getRequestConfig().getRequestTimeout();
        if (timeout > 0) {
            builder.timeout(timeout, TimeUnit.MILLISECONDS);
        }
        HttpRequest request = builder.build();
        (body == null ? GETS : SENT).increment();
        CompletableFuture<HttpResponse<byte[]>> answer = http.sendAsync(request, byte[].class);
        HttpResponse<byte[]> response;
        try {
            // bounded by the request's own timeout, as fabric8's calls
            response = answer.get();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            answer.cancel(true);
            java.io.InterruptedIOException ie = new java.io.InterruptedIOException();
            ie.initCause(e);
            throw KubernetesClientException.launderThrowable(ie);
        } catch (ExecutionException e) {
            // as fabric8's waitForResult and its callers: an I/O error wrapped, a client exception copied
            Throwable t = e.getCause() != null ? e.getCause() : e;
            if (t instanceof java.io.IOException) {
                throw KubernetesClientException.launderThrowable(new java.io.IOException(t.getMessage(), t));
            }
            if (t instanceof KubernetesClientException k) {
                throw k.copyAsCause();
            }
            throw new KubernetesClientException(t.getMessage(), t);
        }
        String contentType = response.header("Content-Type");
        boolean protobuf = contentType != null && contentType.startsWith(KubernetesProtobuf.MEDIA_TYPE);
        if (body == null && response.code() == 404) {
            return null;
        }
        if (!response.isSuccessful()) {
            throw OperationSupport.requestFailure(request, status(response, protobuf));
        }
        if (!protobuf) {
            return Json.api().unmarshal(new ByteArrayInputStream(response.body()), type);
        }
        try {
            return forCache ? KubernetesProtobuf.decodeForCache(response.body(), type)
                    : KubernetesProtobuf.decode(response.body(), type);
        } catch (ProtobufDecodingException e) {
            // written, but its answer unreadable here: JSON from now on; a caller that needs the object reads it
            ProtobufWire.fallBack(type, e);
            throw new KubernetesClientException("the answer to a " + method + " of " + type.getSimpleName()
                    + " could not be decoded", new java.io.IOException(e));
        }
    }

    private static Status status(HttpResponse<byte[]> response, boolean protobuf) {
        byte[] body = response.body();
        try {
            if (body != null && body.length > 0) {
                Status s = protobuf ? KubernetesProtobuf.decode(body, Status.class)
                        : Json.api().unmarshal(new ByteArrayInputStream(body), Status.class);
                if (s != null && s.getCode() != null) {
                    return s;
                }
            }
        } catch (RuntimeException | ProtobufDecodingException e) {
            // not a Status: the code alone, as fabric8 does
        }
        return OperationSupport.createStatus(response.code(), response.message());
    }
}
