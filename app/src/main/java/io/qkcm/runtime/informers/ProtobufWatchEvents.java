package io.qkcm.runtime.informers;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.invoke.VarHandle;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Status;
import io.fabric8.kubernetes.api.model.WatchEvent;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.dsl.internal.AbstractWatchManager;
import io.fabric8.kubernetes.client.dsl.internal.AbstractWatchManager.WatchRequestState;
import io.qkcm.runtime.protobuf.KubernetesProtobuf;
import io.qkcm.runtime.protobuf.ProtobufDecodingException;
import io.qkcm.runtime.protobuf.ProtobufWire;

/**
 * What both protobuf watches ({@link ProtobufWatchManager}, the streaming GET, and
 * {@link ProtobufWebSocketWatchManager}, the WebSocket) do with one protobuf {@code meta.v1.WatchEvent}: decode
 * it and hand it to fabric8's watch manager as fabric8's own JSON path does with a JSON event (resourceVersion,
 * delivery, ERROR statuses and 410 Gone), or, when it does not decode, make the kind JSON and end the request
 * so that the reconnect reads the event again in JSON.
 * <p>
 * fabric8 keeps the event delivery, the resourceVersion, the status handling and the end of a request
 * package-private or protected in {@link AbstractWatchManager}; they are reached through method handles (the
 * classpath's packages are open), so this works in any class loader layout (a class in fabric8's package would
 * not in Quarkus dev mode, where the application and its libraries have different loaders). The handles are
 * looked up when the class initializes: a fabric8 without them makes {@link #AVAILABLE} false and the informers
 * watch in JSON. {@code ProtobufWatchTest} pins each of them.
 */
// native image: the members the method handles find are registered for reflection
@io.quarkus.runtime.annotations.RegisterForReflection(targets = { AbstractWatchManager.class,
        AbstractWatchManager.WatchRequestState.class }, methods = true, fields = true)
final class ProtobufWatchEvents {

    /** Protobuf watch events decoded and delivered, over either transport, for tests. */
    static final LongAdder DECODED = new LongAdder();
    /** Watches opened again at once after a clean end, for tests. */
    static final LongAdder REWATCHES = new LongAdder();

    private static final MethodHandle EVENT_RECEIVED;
    private static final MethodHandle UPDATE_RESOURCE_VERSION;
    private static final MethodHandle WATCH_ENDED;
    private static final MethodHandle RESET_RECONNECT_ATTEMPTS;
    private static final MethodHandle IS_FORCE_CLOSED;
    private static final MethodHandle ON_STATUS;
    private static final MethodHandle CANNOT_RECONNECT;
    private static final MethodHandle RECONNECT;
    private static final VarHandle LATEST_REQUEST_STATE;
    private static final VarHandle STARTED;
    private static final VarHandle CLOSED;
    private static final VarHandle ENDED;
    private static final VarHandle RECONNECTED;
    static final boolean AVAILABLE;

    static {
        MethodHandle eventReceived = null, updateResourceVersion = null, watchEnded = null, reset = null, forceClosed = null,
                onStatus = null, cannotReconnect = null, reconnect = null;
        VarHandle latest = null, started = null, closed = null, ended = null, reconnected = null;
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
            onStatus = m.findVirtual(AbstractWatchManager.class, "onStatus",
                    MethodType.methodType(boolean.class, Status.class, WatchRequestState.class));
            cannotReconnect = m.findVirtual(AbstractWatchManager.class, "cannotReconnect", MethodType.methodType(boolean.class));
            reconnect = m.findVirtual(AbstractWatchManager.class, "reconnect", MethodType.methodType(void.class));
            latest = m.findVarHandle(AbstractWatchManager.class, "latestRequestState", WatchRequestState.class);
            started = s.findVarHandle(WatchRequestState.class, "started", AtomicBoolean.class);
            closed = s.findVarHandle(WatchRequestState.class, "closed", AtomicBoolean.class);
            ended = s.findVarHandle(WatchRequestState.class, "ended", CompletableFuture.class);
            reconnected = s.findVarHandle(WatchRequestState.class, "reconnected", AtomicBoolean.class);
            available = true;
        } catch (ReflectiveOperationException | RuntimeException e) {
            org.jboss.logging.Logger.getLogger(ProtobufWatchEvents.class)
                    .warnf("protobuf watches unavailable with this fabric8 (%s): watching in JSON", e.toString());
            available = false;
        }
        EVENT_RECEIVED = eventReceived;
        UPDATE_RESOURCE_VERSION = updateResourceVersion;
        WATCH_ENDED = watchEnded;
        RESET_RECONNECT_ATTEMPTS = reset;
        IS_FORCE_CLOSED = forceClosed;
        ON_STATUS = onStatus;
        CANNOT_RECONNECT = cannotReconnect;
        RECONNECT = reconnect;
        LATEST_REQUEST_STATE = latest;
        STARTED = started;
        CLOSED = closed;
        ENDED = ended;
        RECONNECTED = reconnected;
        AVAILABLE = available;
    }

    private ProtobufWatchEvents() {
    }

    /**
     * Decodes one event of {@code manager}'s current request and delivers it. False once this request must not
     * deliver more: the event did not decode (the kind is JSON from now on and the request is ending, so the
     * reconnect, in JSON, starts from the last event delivered), or fabric8 would have ended it too.
     */
    static boolean deliver(AbstractWatchManager<?> manager, WatchRequest request, Class<?> type, byte[] message) {
        WatchRequestState state = request.state;
        try {
            if (closed(state) || (boolean) IS_FORCE_CLOSED.invoke(manager)) {
                return true; // as fabric8: what arrives after the request was closed is dropped
            }
            WatchEvent event;
            try {
                event = KubernetesProtobuf.decodeWatchEventForCache(message);
            } catch (ProtobufDecodingException | RuntimeException e) {
                // nothing of this event was delivered: the reconnect, in JSON, starts from the last event that was
                // (a decoder's bug too: read again in protobuf it would fail again)
                ProtobufWire.fallBack(type, e);
                manager.closeRequest();
                return false;
            }
            DECODED.increment();
            request.eventReceived();
            Watcher.Action action;
            try {
                action = Watcher.Action.valueOf(event.getType());
            } catch (IllegalArgumentException e) {
                manager.close(); // as fabric8 for an event it cannot read: the Reflector lists again
                return false;
            }
            Object object = event.getObject();
            if (action == Watcher.Action.ERROR) {
                request.failed();
                if (object instanceof Status status) {
                    ON_STATUS.invoke(manager, status, state); // 410 Gone ends the watch: the Reflector relists
                } else {
                    manager.closeRequest();
                }
                return true;
            }
            if (object instanceof HasMetadata resource) {
                UPDATE_RESOURCE_VERSION.invoke(manager, resource.getMetadata().getResourceVersion());
                EVENT_RECEIVED.invoke(manager, action, resource);
                return true;
            }
            request.failed();
            manager.closeRequest();
            return false;
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new IllegalStateException(t);
        }
    }

    /**
     * The end of {@code request}, {@code manager}'s current request or an earlier one. A clean end
     * ({@link WatchRequest#endsCleanly}) watches again at once from the last resourceVersion, as client-go's
     * reflector; anything else is fabric8's {@code watchEnded}: its reconnect interval, doubling, Retry-After,
     * the reconnect limit. The immediate path is fabric8's scheduleReconnect without the delay: the request
     * counts as ended, only the current request reconnects and only once, a force-closed manager does not, a
     * watcher that cannot reconnect (the streaming list before its bookmark) is closed by fabric8's path.
     */
    static void ended(AbstractWatchManager<?> manager, WatchRequest request, Throwable t, Executor executor) {
        WatchRequestState state = request.state;
        try {
            if (!request.endsCleanly(t, closed(state), System.nanoTime())) {
                WATCH_ENDED.invoke(manager, t, state);
                return;
            }
            ((CompletableFuture<?>) ENDED.get(state)).complete(null);
            // scheduleReconnect's order: a force-closed manager returns before its watcher is asked whether it
            // reconnects (asked while the informer stops, under the manager's lock, it deadlocked a test)
            if (state != LATEST_REQUEST_STATE.getVolatile(manager) || (boolean) IS_FORCE_CLOSED.invoke(manager)) {
                return;
            }
            if ((boolean) CANNOT_RECONNECT.invoke(manager)) {
                WATCH_ENDED.invoke(manager, t, state); // fabric8 closes it: "Exhausted reconnects"
                return;
            }
            if (!((AtomicBoolean) RECONNECTED.get(state)).compareAndSet(false, true)) {
                return;
            }
            REWATCHES.increment();
            executor.execute(() -> {
                try {
                    RECONNECT.invoke(manager);
                } catch (RuntimeException | Error e) {
                    throw e;
                } catch (Throwable e) {
                    throw new IllegalStateException(e);
                }
            });
        } catch (RejectedExecutionException e) {
            // the client is closing
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new IllegalStateException(e);
        }
    }

    static void started(WatchRequestState state) {
        ((AtomicBoolean) STARTED.get(state)).set(true);
    }

    static boolean closed(WatchRequestState state) {
        return ((AtomicBoolean) CLOSED.get(state)).get();
    }

    static void watchEnded(AbstractWatchManager<?> manager, Throwable t, WatchRequestState state) {
        try {
            WATCH_ENDED.invoke(manager, t, state);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new IllegalStateException(e);
        }
    }

    static void resetReconnectAttempts(AbstractWatchManager<?> manager, WatchRequestState state) {
        try {
            RESET_RECONNECT_ATTEMPTS.invoke(manager, state);
        } catch (RuntimeException | Error e) {
            throw e;
        } catch (Throwable e) {
            throw new IllegalStateException(e);
        }
    }
}
