package io.qkcm.runtime.informers;

import java.net.MalformedURLException;
import java.net.URL;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.LongAdder;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.KubernetesResourceList;
import io.fabric8.kubernetes.api.model.ListOptions;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.RequestConfig;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.dsl.internal.AbstractWatchManager;
import io.fabric8.kubernetes.client.dsl.internal.BaseOperation;
import io.fabric8.kubernetes.client.http.HttpClient;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.informers.impl.ListerWatcher;
import io.fabric8.kubernetes.client.utils.internal.WatcherToggle;
import io.qkcm.runtime.protobuf.KubernetesProtobuf;
import io.qkcm.runtime.protobuf.ProtobufDecodingException;
import io.qkcm.runtime.protobuf.ProtobufWire;

/**
 * An informer's LIST and WATCH in protobuf, as kube-controller-manager's clients read built-in types
 * ({@code --kube-api-content-type}): the list's body and the watch's frames are decoded straight into the
 * model classes by {@code runtime.protobuf}, with the requests, URLs, rate limiter and reconnects of
 * fabric8's operation for the type. The watch is a WebSocket ({@link ProtobufWebSocketWatchManager}) as
 * fabric8's, or a streaming GET ({@link ProtobufWatchManager}) as client-go's: {@code qkcm.tuning.protobuf-watch}.
 * A kind {@link ProtobufWire} says is JSON (no decoder in this build, {@code --kube-api-content-type} JSON, a kind
 * that fell back) is listed by fabric8's own LIST and watched in JSON over the same streaming GET, so its watch
 * too is opened again at once after a clean end (fabric8's own JSON watches wait {@code watchReconnectInterval}).
 * A list the server refuses is asked again in JSON, whose answer carries fabric8's usual error.
 */
final class ProtobufListerWatcher<T extends HasMetadata, L extends KubernetesResourceList<T>> implements ListerWatcher<T, L> {

    /** Lists decoded from protobuf, for tests. */
    static final LongAdder LISTS = new LongAdder();

    private final BaseOperation<T, L, ?> operation;
    private final ListerWatcher<T, L> json;

    @SuppressWarnings("unchecked")
    ProtobufListerWatcher(ListerWatcher<T, L> operation) {
        this.operation = (BaseOperation<T, L, ?>) operation;
        this.json = operation;
    }

    /**
     * Whether {@code operation} (fabric8's operation for a type) can be read through this class: any typed operation
     * when fabric8 has the internals the watches reach; kinds without a decoder are read in JSON here.
     */
    static boolean applies(Object operation) {
        return ProtobufWatchEvents.AVAILABLE && operation instanceof BaseOperation<?, ?, ?>;
    }

    @Override
    public CompletableFuture<L> submitList(ListOptions options) {
        if (!ProtobufWire.forType(operation.getType())) {
            return json.submitList(options);
        }
        HttpClient client = operation.getOperationContext().getHttpClient();
        HttpRequest.Builder request;
        try {
            URL url = operation.appendListOptionParams(operation.getNamespacedUrl(), options);
            request = client.newHttpRequestBuilder().url(url).setHeader("Accept", ProtobufWatchManager.ACCEPT);
        } catch (MalformedURLException e) {
            throw KubernetesClientException.launderThrowable(e);
        }
        RequestConfig config = operation.getRequestConfig();
        if (config.getRequestTimeout() > 0) {
            request.timeout(config.getRequestTimeout(), java.util.concurrent.TimeUnit.MILLISECONDS);
        }
        return client.sendAsync(request.build(), byte[].class).thenCompose(response -> {
            String contentType = response.header("Content-Type");
            if (!response.isSuccessful() || contentType == null || !contentType.startsWith(KubernetesProtobuf.MEDIA_TYPE)) {
                return json.submitList(options);
            }
            try {
                L list = KubernetesProtobuf.decodeForCache(response.body(), operation.getListType());
                LISTS.increment();
                return CompletableFuture.completedFuture(list);
            } catch (ProtobufDecodingException e) {
                ProtobufWire.fallBack(operation.getType(), e);
                return json.submitList(options);
            }
        });
    }

    @Override
    public CompletableFuture<AbstractWatchManager<T>> submitWatch(ListOptions options, Watcher<T> watcher) {
        options.setWatch(true);
        if (!ProtobufWire.forType(operation.getType())) {
            // JSON lines over a streaming GET, as client-go watches
            return CompletableFuture.completedFuture(streaming(options, watcher));
        }
        // over HTTP/2 fabric8 watches with GETs only (SharedTransports): so does the protobuf watch
        if (!ProtobufWire.watchesOverWebSocket() || operation.getConfig().isOnlyHttpWatches()) {
            return CompletableFuture.completedFuture(streaming(options, watcher));
        }
        RequestConfig config = operation.getRequestConfig();
        // as BaseOperation.submitWatch: the watcher is silenced when this WebSocket is dropped for a GET
        WatcherToggle<T> toggle = new WatcherToggle<>(watcher, true);
        ProtobufWebSocketWatchManager<T, L> webSocket;
        try {
            webSocket = new ProtobufWebSocketWatchManager<>(operation.getOperationContext().getHttpClient(), operation,
                    options, toggle, config.getWatchReconnectInterval(), config.getWatchReconnectLimit(),
                    config.getRequestTimeout());
        } catch (MalformedURLException e) {
            throw KubernetesClientException.launderThrowable(e);
        }
        return webSocket.firstHandshake().handle((ws, t) -> {
            if (t == null) {
                return (AbstractWatchManager<T>) webSocket;
            }
            try {
                Throwable cause = t instanceof CompletionException && t.getCause() != null ? t.getCause() : t;
                // as fabric8: a 200 or 503 to the upgrade (a proxy without WebSockets), or no answer that is
                // the API server's, and the watch is a GET
                if (!(cause instanceof KubernetesClientException e) || e.getCode() == 200 || e.getCode() == 503) {
                    toggle.disable();
                    return streaming(options, watcher);
                }
                throw KubernetesClientException.launderThrowable(cause);
            } finally {
                webSocket.close();
            }
        });
    }

    private AbstractWatchManager<T> streaming(ListOptions options, Watcher<T> watcher) {
        RequestConfig config = operation.getRequestConfig();
        try {
            return new ProtobufWatchManager<>(operation.getOperationContext().getHttpClient(), operation, options, watcher,
                    config.getWatchReconnectInterval(), config.getWatchReconnectLimit());
        } catch (MalformedURLException e) {
            throw KubernetesClientException.launderThrowable(e);
        }
    }

    @Override
    public Long getLimit() {
        return json.getLimit();
    }

    @Override
    public int getWatchReconnectInterval() {
        return json.getWatchReconnectInterval();
    }

    @Override
    public String getApiEndpointPath() {
        return json.getApiEndpointPath();
    }
}
