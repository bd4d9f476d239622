package io.qkcm.runtime.informers;

import java.net.MalformedURLException;
import java.net.URI;
import java.net.URL;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.KubernetesResourceList;
import io.fabric8.kubernetes.api.model.ListOptions;
import io.fabric8.kubernetes.api.model.Status;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.dsl.internal.BaseOperation;
import io.fabric8.kubernetes.client.dsl.internal.OperationSupport;
import io.fabric8.kubernetes.client.dsl.internal.WatchConnectionManager;
import io.fabric8.kubernetes.client.http.HttpClient;
import io.fabric8.kubernetes.client.http.WebSocket;
import io.fabric8.kubernetes.client.http.WebSocketHandshakeException;
import io.qkcm.runtime.protobuf.ProtobufWire;

/**
 * A watch in protobuf over fabric8's own watch transport, the WebSocket: the upgrade request carries
 * {@code Accept: application/vnd.kubernetes.protobuf, application/json}, and the API server
 * (k8s.io/apiserver's WatchServer.HandleWS) then writes each event as one binary message: the protobuf
 * {@code meta.v1.WatchEvent} without the length prefix of the streaming GET, its object in its own
 * {@code k8s\0} envelope. Each message is decoded whole ({@link ProtobufWatchEvents#deliver}): no chunk
 * reassembly, no per-chunk body copy (what the profile of bench/results/2026-11-27-protobuf pointed at), but a
 * pause and a fetch per event in fabric8's Vert.x WebSocket. Opt-in ({@code qkcm.tuning.protobuf-watch=websocket}):
 * it measured no cheaper than the streaming GET.
 * <p>
 * Everything else is fabric8's {@link WatchConnectionManager}: the Origin header (the API server refuses an
 * upgrade without one), the connect timeout, the handshake's failure (the first one fails the watch's future,
 * later ones reconnect), reconnects from the last resourceVersion with backoff (at once after a clean end, as
 * client-go: {@link WatchRequest}), 410 Gone closing the watch for
 * the Reflector to relist, the Reflector's periodic close. A server that chose JSON sends text messages, read
 * as fabric8 reads them; a message that does not decode makes the kind JSON for good
 * ({@link ProtobufWire#fallBack}) and the watch reconnects in JSON from the last event delivered.
 */
final class ProtobufWebSocketWatchManager<T extends HasMetadata, L extends KubernetesResourceList<T>>
        extends WatchConnectionManager<T, L> {

    /** Binary messages received, for tests. */
    static final LongAdder MESSAGES = new LongAdder();

    // assigned by start(), which fabric8's constructor calls before this class's fields could be initialized:
    // no initializers here, or the constructor would overwrite what start() set
    private volatile CompletableFuture<WebSocket> socket;
    /**
     * The first handshake's outcome, which the caller judges (a WebSocket, or a GET instead). Not
     * {@link #getWebsocketFuture()}: by the time the caller looks, a fast server's first connection may already
     * have ended (a message that did not decode closes it) and {@code socket} be the reconnect's.
     */
    private volatile CompletableFuture<WebSocket> first;
    /** A handshake has succeeded once: from then on a failed one reconnects instead of failing the future. */
    private volatile boolean ready;
    private volatile WatchRequest request;

    ProtobufWebSocketWatchManager(HttpClient client, BaseOperation<T, L, ?> operation, ListOptions options,
            Watcher<T> watcher, int reconnectInterval, int reconnectLimit, long connectTimeoutMillis)
            throws MalformedURLException {
        super(client, operation, options, watcher, reconnectInterval, reconnectLimit, connectTimeoutMillis);
    }

    @Override
    protected void start(URL url, Map<String, String> headers, WatchRequestState state) {
        Class<T> type = baseOperation.getType();
        boolean protobuf = ProtobufWire.forType(type);
        WebSocket.Builder builder = client.newWebSocketBuilder();
        headers.forEach(builder::header);
        // the API server negotiates a watch's encoding from the upgrade request's Accept, as for a GET
        builder.setHeader("Accept", protobuf ? ProtobufWatchManager.ACCEPT : "application/json");
        // what BaseOperation hands WatchConnectionManager as its connect timeout (not kept: start() runs first)
        builder.uri(URI.create(url.toString()))
                .connectTimeout(baseOperation.getRequestConfig().getRequestTimeout(), TimeUnit.MILLISECONDS);
        WatchRequest current = new WatchRequest(state);
        request = current;
        CompletableFuture<WebSocket> started = builder.buildAsync(new Listener(type, protobuf, current)).handle((ws, t) -> {
            if (t == null) {
                ProtobufWatchEvents.started(state);
                ready = true;
                return ws;
            }
            try {
                if (t instanceof WebSocketHandshakeException handshake) {
                    // as fabric8: the handshake's answer as a Status (a 200 or 503 tells the caller to watch
                    // over a GET instead)
                    Status status = OperationSupport.createStatus(handshake.getResponse(),
                            baseOperation.getKubernetesSerialization());
                    t = OperationSupport.requestFailure(client.newHttpRequestBuilder().url(url).build(), status,
                            "Received " + handshake.getResponse().code() + " on websocket");
                }
                throw KubernetesClientException.launderThrowable(t);
            } finally {
                if (ready) {
                    ProtobufWatchEvents.watchEnded(this, t, state);
                }
            }
        });
        if (first == null) {
            first = started;
        }
        socket = started;
    }

    /** The outcome of the first handshake (see {@link #first}). */
    CompletableFuture<WebSocket> firstHandshake() {
        return first;
    }

    @Override
    public CompletableFuture<WebSocket> getWebsocketFuture() {
        return socket;
    }

    @Override
    protected void closeCurrentRequest() {
        CompletableFuture<WebSocket> current = socket;
        if (current != null) {
            current.whenComplete((ws, t) -> {
                if (ws != null) {
                    ws.sendClose(1000, null);
                }
            });
        }
    }

    /** fabric8's JSON path ends a request on an error status too: that end backs off. */
    @Override
    protected boolean onStatus(Status status, WatchRequestState state) {
        WatchRequest.failedIfCurrent(request, state);
        return super.onStatus(status, state);
    }

    private void ended(WatchRequest ended, Throwable t) {
        ProtobufWatchEvents.ended(this, ended, t, baseOperation.getOperationContext().getExecutor());
    }

    /** One WebSocket's messages: protobuf events in binary messages, or JSON ones in text messages. */
    private final class Listener implements WebSocket.Listener {
        private final Class<T> type;
        private final boolean protobuf;
        private final WatchRequest request;
        private final WatchRequestState state;

        Listener(Class<T> type, boolean protobuf, WatchRequest request) {
            this.type = type;
            this.protobuf = protobuf;
            this.request = request;
            this.state = request.state;
        }

        @Override
        public void onOpen(WebSocket webSocket) {
            ProtobufWatchEvents.resetReconnectAttempts(ProtobufWebSocketWatchManager.this, state);
        }

        @Override
        public void onError(WebSocket webSocket, Throwable error) {
            ended(request, error);
        }

        @Override
        public void onMessage(WebSocket webSocket, String text) {
            try {
                request.eventReceived();
                ProtobufWebSocketWatchManager.this.onMessage(text, state);
            } finally {
                webSocket.request();
            }
        }

        @Override
        public void onMessage(WebSocket webSocket, ByteBuffer bytes) {
            try {
                if (protobuf) {
                    MESSAGES.increment();
                    byte[] message = new byte[bytes.remaining()];
                    bytes.get(message);
                    ProtobufWatchEvents.deliver(ProtobufWebSocketWatchManager.this, request, type, message);
                } else {
                    request.eventReceived();
                    ProtobufWebSocketWatchManager.this.onMessage(StandardCharsets.UTF_8.decode(bytes).toString(), state);
                }
            } finally {
                // after a message that did not decode too: the close this request is ending with must be read
                webSocket.request();
            }
        }

        @Override
        public void onClose(WebSocket webSocket, int code, String reason) {
            try {
                webSocket.sendClose(code, reason);
            } finally {
                ended(request, null);
            }
        }
    }
}
