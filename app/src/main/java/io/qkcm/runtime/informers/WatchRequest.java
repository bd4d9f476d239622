package io.qkcm.runtime.informers;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import io.fabric8.kubernetes.client.dsl.internal.AbstractWatchManager.WatchRequestState;

/**
 * One request of a protobuf watch manager, with what decides how its end is handled. client-go's reflector
 * watches again at once when a watch ends without an error (the API server's timeoutSeconds, or the server
 * dropping a watcher that fell behind mid-burst); only an error, or a "very short watch" (under a second
 * without an event), backs off. fabric8 waits its reconnect interval (1 s) after every end: for a watch the
 * server closed in the middle of a burst of creates, that is a second without events for every controller
 * of the kind ({@link ProtobufWatchEvents#ended}).
 */
final class WatchRequest {

    /** client-go's handleWatch: a watch that ended sooner than this without an event is a very short watch. */
    static final long VERY_SHORT_NANOS = TimeUnit.SECONDS.toNanos(1);

    final WatchRequestState state;
    /** As client-go, the clock starts before the request is sent. */
    final long sentNanos = System.nanoTime();
    private final AtomicLong events = new AtomicLong();
    /** An ERROR event or an error status ended this request: fabric8's back-off (and its Retry-After) applies. */
    private volatile boolean failed;
    /** The response has ended (or never came): nothing is left to cancel. */
    private volatile boolean over;

    WatchRequest(WatchRequestState state) {
        this.state = state;
    }

    void eventReceived() {
        events.incrementAndGet();
    }

    void failed() {
        failed = true;
    }

    /** {@code current}, the manager's latest request, failed if {@code state} is its. */
    static void failedIfCurrent(WatchRequest current, WatchRequestState state) {
        if (current != null && current.state == state) {
            current.failed();
        }
    }

    void over() {
        over = true;
    }

    boolean isOver() {
        return over;
    }

    /**
     * Whether this request's end is one client-go watches again after at once.
     *
     * @param t          what the transport ended the request with (null: the server's clean end)
     * @param closedHere the request was closed by this side (fabric8's Reflector closes each watch every 5-10
     *                   minutes, as client-go's timeoutSeconds has the server do it), so t is the cancel's
     * @param nowNanos   when it ended
     */
    boolean endsCleanly(Throwable t, boolean closedHere, long nowNanos) {
        if (failed || (t != null && !closedHere)) {
            return false;
        }
        return events.get() > 0 || nowNanos - sentNanos >= VERY_SHORT_NANOS;
    }
}
