package io.qkcm.runtime.informers;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.invoke.VarHandle;
import java.net.MalformedURLException;
import java.net.URL;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.KubernetesResourceList;
import io.fabric8.kubernetes.api.model.ListOptions;
import io.fabric8.kubernetes.api.model.Status;
import io.fabric8.kubernetes.api.model.WatchEvent;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.dsl.internal.AbstractWatchManager;
import io.fabric8.kubernetes.client.dsl.internal.BaseOperation;
import io.fabric8.kubernetes.client.dsl.internal.OperationSupport;
import io.fabric8.kubernetes.client.dsl.internal.WatchHTTPManager;
import io.fabric8.kubernetes.client.http.AsyncBody;
import io.fabric8.kubernetes.client.http.HttpClient;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.HttpResponse;
import io.qkcm.runtime.protobuf.KubernetesProtobuf;
import io.qkcm.runtime.protobuf.ProtobufDecodingException;
import io.qkcm.runtime.protobuf.ProtobufWatchFrames;
import io.qkcm.runtime.protobuf.ProtobufWire;

/**
 * A watch in protobuf, as client-go's: one streaming GET with {@code Accept: application/vnd.kubernetes.protobuf,
 * application/json}, whose length-delimited frames are decoded straight into the model classes
 * ({@link KubernetesProtobuf#decodeWatchEventForCache}). Everything else is fabric8's {@link WatchHTTPManager}:
 * reconnects from the last resourceVersion, backoff, 410 Gone, the Reflector's periodic close. A server that
 * answers JSON is read as JSON lines; a frame that does not decode (a field this build does not know) makes the
 * kind JSON for good ({@link ProtobufWire#fallBack}) and the watch reconnects from the last event delivered, so
 * that event is read again in JSON.
 * <p>
 * fabric8 keeps the event delivery, the resourceVersion and the end of a request package-private in
 * {@link AbstractWatchManager}; they are reached through method handles (the classpath's packages are open), so
 * this class works in any class loader layout (a split package would not in Quarkus dev mode). The handles are
 * checked when the class initializes: a fabric8 without them makes {@link #AVAILABLE} false and the informers
 * watch in JSON. {@code ProtobufWatchTest} pins each of them.
 */
// native image: the members the method handles find are registered for reflection
@io.quarkus.runtime.annotations.RegisterForReflection(targets = { AbstractWatchManager.class,
        AbstractWatchManager.WatchRequestState.class }, methods = true, fields = true)
final class ProtobufWatchManager<T extends HasMetadata, L extends KubernetesResourceList<T>> extends WatchHTTPManager<T, L> {

    static final String ACCEPT = KubernetesProtobuf.MEDIA_TYPE + ", application/json";
    /** Frames decoded, for tests. */
    static final LongAdder FRAMES = new LongAdder();

    private static final MethodHandle EVENT_RECEIVED;
    private static final MethodHandle UPDATE_RESOURCE_VERSION;
    private static final MethodHandle WATCH_ENDED;
    private static final MethodHandle RESET_RECONNECT_ATTEMPTS;
    private static final MethodHandle IS_FORCE_CLOSED;
    private static final VarHandle STARTED;
    private static final VarHandle CLOSED;
    static final boolean AVAILABLE;

    static {
        MethodHandle eventReceived = null, updateResourceVersion = null, watchEnded = null, reset = null, forceClosed = null;
        VarHandle started = null, closed = null;
        boolean available;
        try {
            MethodHandles.Lookup m = MethodHandles.privateLookupIn(AbstractWatchManager.class, MethodHandles.lookup());
            MethodHandles.Lookup s = MethodHandles.privateLookupIn(WatchRequestState.class, MethodHandles.lookup());
            eventReceived = m.findVirtual(AbstractWatchManager.class, "eventReceived",
                    MethodType.methodType(void.class, Watcher.Action.class, HasMetadata.class));
            updateResourceVersion = m.findVirtual(AbstractWatchManager.class, "updateResourceVersion",
                    MethodType.methodType(void.class, String.class));
            watchEnded = m.findVirtual(AbstractWatchManager.class, "watchEnded",
                    MethodType.methodType(void.class, Throwable.class, WatchRequestState.class));
            reset = m.findVirtual(AbstractWatchManager.class, "resetReconnectAttempts",
                    MethodType.methodType(void.class, WatchRequestState.class));
            forceClosed = m.findVirtual(AbstractWatchManager.class, "isForceClosed", MethodType.methodType(boolean.class));
            started = s.findVarHandle(WatchRequestState.class, "started", AtomicBoolean.class);
            closed = s.findVarHandle(WatchRequestState.class, "closed", AtomicBoolean.class);
            available = true;
        } catch (ReflectiveOperationException | RuntimeException e) {
            org.jboss.logging.Logger.getLogger(ProtobufWatchManager.class)
                    .warnf("protobuf watches unavailable with this fabric8 (%s): watching in JSON", e.toString());
            available = false;
        }
        EVENT_RECEIVED = eventReceived;
        UPDATE_RESOURCE_VERSION = updateResourceVersion;
        WATCH_ENDED = watchEnded;
        RESET_RECONNECT_ATTEMPTS = reset;
        IS_FORCE_CLOSED = forceClosed;
        STARTED = started;
        CLOSED = closed;
        AVAILABLE = available;
    }

    // assigned by start(), which fabric8's constructor calls before this class's fields could be initialized:
    // no initializers here, or the constructor would overwrite what start() set
    private volatile CompletableFuture<HttpResponse<AsyncBody>> call;
    private volatile AsyncBody body;

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
        Stream stream = new Stream(type, state);
        CompletableFuture<HttpResponse<AsyncBody>> current = client.consumeBytes(builder.build(), stream::consume);
        call = current;
        current.whenComplete((response, t) -> {
            if (t != null) {
                watchEnded(t, state);
            }
            if (response != null) {
                body = response.body();
                if (!response.isSuccessful()) {
                    Status status = OperationSupport.createStatus(response.code(), response.message());
                    if (onStatus(status, state)) {
                        return; // terminal
                    }
                    watchEnded(new KubernetesClientException(status), state);
                } else {
                    String contentType = response.header("Content-Type");
                    stream.protobuf = contentType != null && contentType.startsWith(KubernetesProtobuf.MEDIA_TYPE);
                    resetReconnectAttempts(state);
                    body.consume();
                    body.done().whenComplete((v, e) -> watchEnded(e, state));
                }
            }
        });
    }

    @Override
    protected synchronized void closeCurrentRequest() {
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
        final WatchRequestState state;
        volatile boolean protobuf;
        final ProtobufWatchFrames frames = new ProtobufWatchFrames();
        final StringBuilder line = new StringBuilder();
        boolean failed;

        Stream(Class<T> type, WatchRequestState state) {
            this.type = type;
            this.state = state;
        }

        void consume(List<ByteBuffer> chunks, AsyncBody asyncBody) throws Exception {
            ((AtomicBoolean) STARTED.get(state)).set(true);
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
                    for (char c : StandardCharsets.UTF_8.decode(chunk).array()) {
                        if (c == '\n') {
                            onMessage(line.toString(), state);
                            line.setLength(0);
                        } else {
                            line.append(c);
                        }
                    }
                }
            }
            // read on (and drop) until the cancel lands: a paused body would not see it
            asyncBody.consume();
        }

        /** false once this request must not deliver more (the kind falls back to JSON). */
        private boolean onFrame(byte[] frame) throws Exception {
            try {
                return deliver(frame);
            } catch (Exception | Error e) {
                throw e;
            } catch (Throwable t) {
                throw new IllegalStateException(t);
            }
        }

        private boolean deliver(byte[] frame) throws Throwable {
            if (((AtomicBoolean) CLOSED.get(state)).get() || (boolean) IS_FORCE_CLOSED.invoke(ProtobufWatchManager.this)) {
                return true;
            }
            WatchEvent event;
            try {
                event = KubernetesProtobuf.decodeWatchEventForCache(frame);
            } catch (ProtobufDecodingException e) {
                // nothing of this frame was delivered: the reconnect, in JSON, starts from the last event that was
                ProtobufWire.fallBack(type, e);
                closeRequest();
                return false;
            }
            FRAMES.increment();
            Watcher.Action action;
            try {
                action = Watcher.Action.valueOf(event.getType());
            } catch (IllegalArgumentException e) {
                close(); // as fabric8 for an event it cannot read: the Reflector lists again
                return false;
            }
            Object object = event.getObject();
            if (action == Watcher.Action.ERROR) {
                if (object instanceof Status status) {
                    onStatus(status, state);
                } else {
                    closeRequest();
                }
                return true;
            }
            if (object instanceof HasMetadata resource) {
                UPDATE_RESOURCE_VERSION.invoke(ProtobufWatchManager.this, resource.getMetadata().getResourceVersion());
                EVENT_RECEIVED.invoke(ProtobufWatchManager.this, action, (HasMetadata) resource);
                return true;
            }
            closeRequest();
            return false;
        }
    }

    private void watchEnded(Throwable t, WatchRequestState state) {
        try {
            WATCH_ENDED.invoke(this, t, state);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new IllegalStateException(e);
        }
    }

    private void resetReconnectAttempts(WatchRequestState state) {
        try {
            RESET_RECONNECT_ATTEMPTS.invoke(this, state);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new IllegalStateException(e);
        }
    }
}
