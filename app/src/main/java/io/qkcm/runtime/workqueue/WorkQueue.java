package io.qkcm.runtime.workqueue;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * A rate-limited, delaying work queue with client-go's guarantees: an item is never processed by two
 * workers at once; an item added while it is processed is processed again after {@link #done};
 * adding an item that is already waiting is a no-op; a delayed add keeps only the earliest deadline.
 */
public final class WorkQueue<K> {

    /** The result of {@link #get()}: the item, or {@code null} once the queue is shut down. */
    private final ArrayDeque<K> queue = new ArrayDeque<>();
    private final Set<K> dirty = new HashSet<>();
    private final Set<K> processing = new HashSet<>();
    private final Map<K, Long> addedAt = new HashMap<>();
    private final Map<K, Long> startedAt = new HashMap<>();
    private final Map<K, Waiting> waiting = new HashMap<>();
    private final String name;
    private final RateLimiter<K> rateLimiter;
    private final ScheduledExecutorService delayer;
    private final WorkqueueMetrics.Queue metrics;
    private boolean shuttingDown;

    private record Waiting(long readyAt, ScheduledFuture<?> future) {
    }

    public WorkQueue(String name, RateLimiter<K> rateLimiter, ScheduledExecutorService delayer,
            WorkqueueMetrics metrics) {
        this.name = name;
        this.rateLimiter = rateLimiter;
        this.delayer = delayer;
        this.metrics = metrics.forQueue(name, this);
    }

    public String name() {
        return name;
    }

    public synchronized void add(K item) {
        if (shuttingDown || dirty.contains(item)) {
            return;
        }
        metrics.added();
        dirty.add(item);
        addedAt.putIfAbsent(item, System.nanoTime());
        if (processing.contains(item)) {
            return;
        }
        queue.addLast(item);
        notify();
    }

    /** Blocks until an item is available; {@code null} means the queue was shut down and drained. */
    public synchronized K get() throws InterruptedException {
        while (queue.isEmpty() && !shuttingDown) {
            wait();
        }
        if (queue.isEmpty()) {
            return null;
        }
        K item = queue.pollFirst();
        long now = System.nanoTime();
        Long added = addedAt.remove(item);
        if (added != null) {
            metrics.waited(now - added);
        }
        startedAt.put(item, now);
        processing.add(item);
        dirty.remove(item);
        return item;
    }

    /** Marks an item processed; if it was added again meanwhile it goes back in the queue. */
    public synchronized void done(K item) {
        Long started = startedAt.remove(item);
        if (started != null) {
            metrics.worked(System.nanoTime() - started);
        }
        processing.remove(item);
        if (dirty.contains(item)) {
            queue.addLast(item);
            notify();
        } else if (processing.isEmpty()) {
            notifyAll(); // wakes shutDownWithDrain
        }
    }

    public void addAfter(K item, Duration delay) {
        if (delay.isZero() || delay.isNegative()) {
            add(item);
            return;
        }
        synchronized (this) {
            if (shuttingDown) {
                return;
            }
            long readyAt = System.nanoTime() + delay.toNanos();
            Waiting existing = waiting.get(item);
            if (existing != null) {
                if (existing.readyAt() <= readyAt) {
                    return;
                }
                existing.future().cancel(false);
            }
            ScheduledFuture<?> f = delayer.schedule(() -> {
                synchronized (this) {
                    Waiting w = waiting.get(item);
                    if (w != null && w.readyAt() == readyAt) {
                        waiting.remove(item);
                    }
                }
                add(item);
            }, delay.toNanos(), TimeUnit.NANOSECONDS);
            waiting.put(item, new Waiting(readyAt, f));
        }
    }

    /** Requeues after the rate limiter's backoff for this item (failures back off exponentially). */
    public void addRateLimited(K item) {
        metrics.retried();
        addAfter(item, rateLimiter.when(item));
    }

    /** Resets the item's backoff, after a successful sync. */
    public void forget(K item) {
        rateLimiter.forget(item);
    }

    public int numRequeues(K item) {
        return rateLimiter.numRequeues(item);
    }

    public synchronized int length() {
        return queue.size();
    }

    public synchronized boolean shuttingDown() {
        return shuttingDown;
    }

    /** Seconds of work in progress and the longest-running item, for the unfinished-work gauges. */
    synchronized double[] inFlightSeconds() {
        long now = System.nanoTime();
        double total = 0;
        double longest = 0;
        for (long started : startedAt.values()) {
            double s = (now - started) / 1e9;
            total += s;
            longest = Math.max(longest, s);
        }
        return new double[] { total, longest };
    }

    public synchronized void shutDown() {
        shuttingDown = true;
        waiting.values().forEach(w -> w.future().cancel(false));
        waiting.clear();
        notifyAll();
    }

    /**
     * Shuts down and waits until the items being processed are done, at most {@code timeout}.
     * Returns false if work was still in flight when the bound passed.
     */
    public synchronized boolean shutDownWithDrain(Duration timeout) throws InterruptedException {
        shutDown();
        queue.clear();
        dirty.clear();
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!processing.isEmpty()) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return false;
            }
            TimeUnit.NANOSECONDS.timedWait(this, left);
        }
        return true;
    }
}
