package io.qkcm.runtime.informers;

import java.net.MalformedURLException;
import java.net.URL;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.LongAdder;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.KubernetesResourceList;
import io.fabric8.kubernetes.api.model.ListOptions;
import io.fabric8.kubernetes.api.model.Status;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.dsl.internal.BaseOperation;
import io.fabric8.kubernetes.client.dsl.internal.OperationSupport;
import io.fabric8.kubernetes.client.dsl.internal.WatchHTTPManager;
import io.fabric8.kubernetes.client.http.AsyncBody;
import io.fabric8.kubernetes.client.http.HttpClient;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.HttpResponse;
import io.qkcm.runtime.protobuf.KubernetesProtobuf;
import io.qkcm.runtime.protobuf.ProtobufWatchFrames;
import io.qkcm.runtime.protobuf.ProtobufWire;

/**
 * A watch in protobuf over client-go's transport: one streaming GET with {@code Accept:
 * application/vnd.kubernetes.protobuf, application/json}, whose length-delimited frames are decoded straight into
 * the model classes ({@link ProtobufWatchEvents#deliver}). Everything else is fabric8's {@link WatchHTTPManager}:
 * reconnects from the last resourceVersion, backoff, 410 Gone, the Reflector's periodic close; except that a
 * watch that ends cleanly is opened again at once, as client-go's reflector does ({@link WatchRequest}). A server that
 * answers JSON is read as JSON lines; a frame that does not decode (a field this build does not know) makes the
 * kind JSON for good ({@link ProtobufWire#fallBack}) and the watch reconnects from the last event delivered, so
 * that event is read again in JSON. The default ({@code qkcm.tuning.protobuf-watch=stream}; the alternative is
 * {@link ProtobufWebSocketWatchManager}), and the protobuf watch over HTTP/2 in any case.
 */
final class ProtobufWatchManager<T extends HasMetadata, L extends KubernetesResourceList<T>> extends WatchHTTPManager<T, L> {

    static final String ACCEPT = KubernetesProtobuf.MEDIA_TYPE + ", application/json";
    /** Frames read from streaming GETs, for tests. */
    static final LongAdder FRAMES = new LongAdder();
    /** JSON lines read from streaming GETs, for tests. */
    static final LongAdder JSON_LINES = new LongAdder();

    // assigned by start(), which fabric8's constructor calls before this class's fields could be initialized:
    // no initializers here, or the constructor would overwrite what start() set
    private volatile CompletableFuture<HttpResponse<AsyncBody>> call;
    private volatile AsyncBody body;
    private volatile WatchRequest request;

    ProtobufWatchManager(HttpClient client, BaseOperation<T, L, ?> operation, ListOptions options, Watcher<T> watcher,
            int reconnectInterval, int reconnectLimit) throws MalformedURLException {
        super(client, operation, options, watcher, reconnectInterval, reconnectLimit);
    }

    @Override
    protected synchronized void start(URL url, Map<String, String> headers, WatchRequestState state) {
        Class<T> type = baseOperation.getType();
        boolean protobuf = ProtobufWire.forType(type);
        HttpRequest.Builder builder = client.newHttpRequestBuilder().url(url).forStreaming();
        headers.forEach(builder::header);
        builder.setHeader("Accept", protobuf ? ACCEPT : "application/json");
        WatchRequest current = new WatchRequest(state);
        request = current;
        Stream stream = new Stream(type, current);
        CompletableFuture<HttpResponse<AsyncBody>> sent = client.consumeBytes(builder.build(), stream::consume);
        call = sent;
        sent.whenComplete((response, t) -> {
            if (t != null) {
                current.over();
                ended(current, t);
            }
            if (response != null) {
                body = response.body();
                if (!response.isSuccessful()) {
                    current.failed();
                    Status status = OperationSupport.createStatus(response.code(), response.message());
                    if (onStatus(status, state)) {
                        return; // terminal
                    }
                    ProtobufWatchEvents.watchEnded(this, new KubernetesClientException(status), state);
                } else {
                    String contentType = response.header("Content-Type");
                    stream.protobuf = contentType != null && contentType.startsWith(KubernetesProtobuf.MEDIA_TYPE);
                    resetReconnectAttempts(state);
                    body.consume();
                    body.done().whenComplete((v, e) -> {
                        current.over();
                        ended(current, e);
                    });
                }
            }
        });
    }

    /** fabric8's JSON path ends a request on an error status too: that end backs off. */
    @Override
    protected boolean onStatus(Status status, WatchRequestState state) {
        WatchRequest.failedIfCurrent(request, state);
        return super.onStatus(status, state);
    }

    @Override
    protected synchronized void closeCurrentRequest() {
        WatchRequest current = request;
        if (current != null && current.isOver()) {
            // nothing to cancel: a reset of a response that has ended closes its connection, which the watch opened
            // again at once may be about to reuse ("Connection was closed")
            return;
        }
        CompletableFuture<HttpResponse<AsyncBody>> c = call;
        if (c != null) {
            c.cancel(true);
        }
        AsyncBody b = body;
        if (b != null) {
            b.cancel();
        }
    }

    /** One request's bytes: protobuf frames, or JSON lines when the server chose JSON. */
    private final class Stream {
        final Class<T> type;
        final WatchRequest request;
        volatile boolean protobuf;
        final ProtobufWatchFrames frames = new ProtobufWatchFrames();
        /** The JSON line read so far, as bytes: a chunk may end inside a character. */
        final java.io.ByteArrayOutputStream line = new java.io.ByteArrayOutputStream();
        boolean failed;

        Stream(Class<T> type, WatchRequest request) {
            this.type = type;
            this.request = request;
        }

        void consume(List<ByteBuffer> chunks, AsyncBody asyncBody) throws Exception {
            ProtobufWatchEvents.started(request.state);
            for (ByteBuffer chunk : chunks) {
                if (failed) {
                    break;
                }
                if (protobuf) {
                    for (byte[] frame : frames.feed(chunk)) {
                        if (!onFrame(frame)) {
                            failed = true;
                            break;
                        }
                    }
                } else {
                    // split on the byte: UTF-8 never has '\n' inside a character, and a chunk may end inside one
                    while (chunk.hasRemaining()) {
                        int start = chunk.position();
                        int end = start;
                        while (end < chunk.limit() && chunk.get(end) != '\n') {
                            end++;
                        }
                        byte[] part = new byte[end - start];
                        chunk.get(part);
                        line.write(part, 0, part.length);
                        if (chunk.hasRemaining()) {
                            chunk.get(); // the newline
                            request.eventReceived();
                            JSON_LINES.increment();
                            onMessage(line.toString(StandardCharsets.UTF_8), request.state);
                            line.reset();
                        }
                    }
                }
            }
            // read on (and drop) until the cancel lands: a paused body would not see it
            asyncBody.consume();
        }

        /** false once this request must not deliver more (the kind falls back to JSON). */
        private boolean onFrame(byte[] frame) {
            boolean more = ProtobufWatchEvents.deliver(ProtobufWatchManager.this, request, type, frame);
            FRAMES.increment();
            return more;
        }
    }

    private void ended(WatchRequest ended, Throwable t) {
        ProtobufWatchEvents.ended(this, ended, t, baseOperation.getOperationContext().getExecutor());
    }

    private void resetReconnectAttempts(WatchRequestState state) {
        ProtobufWatchEvents.resetReconnectAttempts(this, state);
    }
}
