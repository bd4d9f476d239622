package io.qkcm.controller.daemon;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * client-go's {@code flowcontrol.Backoff} without jitter, as upstream builds it for the DaemonSet
 * controller ({@code NewBackOff(1s, 15m)}): a per-id delay starting at the initial duration and
 * doubling on each {@link #next} up to the maximum; an entry untouched for twice the maximum counts
 * as expired and starts over. Times are monotonic nanoseconds from the given clock.
 */
final class FailedPodsBackoff {

    private static final class Entry {
        long backoffNanos;
        long lastUpdate;
    }

    private final Map<String, Entry> perItemBackoff = new HashMap<>();
    private final long defaultDuration;
    private final long maxDuration;
    private final LongSupplier clock;

    FailedPodsBackoff(Duration initial, Duration max, LongSupplier nanoClock) {
        this.defaultDuration = initial.toNanos();
        this.maxDuration = max.toNanos();
        this.clock = nanoClock;
    }

    long now() {
        return clock.getAsLong();
    }

    synchronized Duration get(String id) {
        Entry e = perItemBackoff.get(id);
        return e == null ? Duration.ZERO : Duration.ofNanos(e.backoffNanos);
    }

    synchronized void next(String id, long eventTime) {
        Entry e = perItemBackoff.get(id);
        if (e == null || hasExpired(eventTime, e.lastUpdate)) {
            e = new Entry();
            e.backoffNanos = defaultDuration;
            perItemBackoff.put(id, e);
        } else {
            e.backoffNanos = Math.min(e.backoffNanos * 2, maxDuration);
        }
        e.lastUpdate = clock.getAsLong();
    }

    synchronized boolean isInBackOffSinceUpdate(String id, long eventTime) {
        Entry e = perItemBackoff.get(id);
        if (e == null || hasExpired(eventTime, e.lastUpdate)) {
            return false;
        }
        return eventTime - e.lastUpdate < e.backoffNanos;
    }

    /** Drops expired entries (upstream runs it every BackoffGCInterval). */
    synchronized void gc() {
        long now = clock.getAsLong();
        perItemBackoff.values().removeIf(e -> hasExpired(now, e.lastUpdate));
    }

    synchronized int size() {
        return perItemBackoff.size();
    }

    private boolean hasExpired(long eventTime, long lastUpdate) {
        return eventTime - lastUpdate > maxDuration * 2;
    }
}
