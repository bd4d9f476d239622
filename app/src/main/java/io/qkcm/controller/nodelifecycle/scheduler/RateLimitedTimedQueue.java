package io.qkcm.controller.nodelifecycle.scheduler;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.PriorityQueue;
import java.util.Set;

/**
 * Upstream's scheduler.RateLimitedTimedQueue (pkg/controller/nodelifecycle/scheduler): node names ordered
 * by the time they are due, each present once until explicitly removed, processed by {@link #tryEach} no
 * faster than its rate limiter allows. node-lifecycle-controller keeps one per zone to add NoExecute
 * taints at --node-eviction-rate.
 */
public final class RateLimitedTimedQueue {

    /** How many times a node health write is tried (scheduler.NodeHealthUpdateRetry). */
    public static final int NODE_HEALTH_UPDATE_RETRY = 5;
    /** How often the tainting queues are tried (scheduler.NodeEvictionPeriod). */
    public static final Duration NODE_EVICTION_PERIOD = Duration.ofMillis(100);
    /** The burst of every eviction rate limiter (scheduler.EvictionRateLimiterBurst). */
    public static final int EVICTION_RATE_LIMITER_BURST = 1;

    /** A value to be processed at a designated time (scheduler.TimedValue). */
    public record TimedValue(String value, Object uid, Instant addedAt, Instant processAt) {
        TimedValue withProcessAt(Instant at) {
            return new TimedValue(value, uid, addedAt, at);
        }
    }

    /** What to do with a due value: done, or retry no sooner than {@code retryAfter} (scheduler.ActionFunc). */
    public record Outcome(boolean done, Duration retryAfter) {
        public static final Outcome DONE = new Outcome(true, Duration.ZERO);

        public static Outcome retryAfter(Duration wait) {
            return new Outcome(false, wait);
        }
    }

    @FunctionalInterface
    public interface Action {
        Outcome apply(TimedValue value);
    }

    private final UniqueQueue queue = new UniqueQueue();
    private final Object limiterLock = new Object();
    private final Clock clock;
    private RateLimiter limiter;

    public RateLimitedTimedQueue(RateLimiter limiter, Clock clock) {
        this.limiter = limiter;
        this.clock = clock;
    }

    /**
     * Upstream's Try: processes due values in order while the limiter gives tokens. A value whose action
     * is not done is put back at now + its wait (+1 ns); a done value leaves the queue but stays in the set,
     * so it is not added again until {@link #remove}d.
     */
    public void tryEach(Action action) {
        Optional<TimedValue> head = queue.head();
        synchronized (limiterLock) {
            while (head.isPresent()) {
                if (!limiter.tryAccept()) {
                    break;
                }
                TimedValue val = head.get();
                Instant now = clock.instant();
                if (now.isBefore(val.processAt())) {
                    break;
                }
                Outcome outcome = action.apply(val);
                if (!outcome.done()) {
                    queue.replace(val.withProcessAt(now.plus(outcome.retryAfter()).plusNanos(1)));
                } else {
                    queue.removeFromQueue(val.value());
                }
                head = queue.head();
            }
        }
    }

    /** Adds the value, due now, unless it is already there (or was processed and not removed since). */
    public boolean add(String value, Object uid) {
        Instant now = clock.instant();
        return queue.add(new TimedValue(value, uid, now, now));
    }

    /** Removes the value, so that it is not processed and may be added again. */
    public boolean remove(String value) {
        return queue.remove(value);
    }

    public void clear() {
        queue.clear();
    }

    /** Swaps the limiter for one of {@code newQps} unless the rate is the same (0 or less: never). */
    public void swapLimiter(float newQps) {
        synchronized (limiterLock) {
            if (limiter.qps() == newQps) {
                return;
            }
            RateLimiter newLimiter;
            if (newQps <= 0) {
                newLimiter = RateLimiter.never();
            } else {
                newLimiter = RateLimiter.tokenBucket(newQps, EVICTION_RATE_LIMITER_BURST);
                // with a burst of 1, a limiter that is being waited on hands its wait to the new one
                if (!limiter.tryAccept()) {
                    newLimiter.tryAccept();
                }
            }
            limiter.stop();
            limiter = newLimiter;
        }
    }

    /** The current limiter's rate. */
    public float qps() {
        synchronized (limiterLock) {
            return limiter.qps();
        }
    }

    /** The queued values in processing order (tests). */
    public List<String> queued() {
        return queue.ordered();
    }

    /** The values that would not be added again (tests). */
    public Set<String> members() {
        return queue.members();
    }

    /**
     * scheduler.UniqueQueue: a priority queue by processAt, each value added once until removed. Values
     * due at the same instant keep their insertion order.
     */
    static final class UniqueQueue {
        private record Entry(TimedValue value, long seq) {
        }

        private final PriorityQueue<Entry> heap = new PriorityQueue<>(
                Comparator.comparing((Entry e) -> e.value().processAt()).thenComparingLong(Entry::seq));
        private final Set<String> set = new HashSet<>();
        private long nextSeq;

        synchronized boolean add(TimedValue value) {
            if (set.contains(value.value())) {
                return false;
            }
            heap.add(new Entry(value, nextSeq++));
            set.add(value.value());
            return true;
        }

        synchronized boolean replace(TimedValue value) {
            if (heap.removeIf(e -> e.value().value().equals(value.value()))) {
                heap.add(new Entry(value, nextSeq++));
                return true;
            }
            return false;
        }

        /** Out of the queue but still in the set: not added a second time. */
        synchronized boolean removeFromQueue(String value) {
            if (!set.contains(value)) {
                return false;
            }
            return heap.removeIf(e -> e.value().value().equals(value));
        }

        synchronized boolean remove(String value) {
            if (!set.remove(value)) {
                return false;
            }
            heap.removeIf(e -> e.value().value().equals(value));
            return true;
        }

        synchronized Optional<TimedValue> get() {
            Entry e = heap.poll();
            if (e == null) {
                return Optional.empty();
            }
            set.remove(e.value().value());
            return Optional.of(e.value());
        }

        synchronized Optional<TimedValue> head() {
            Entry e = heap.peek();
            return e == null ? Optional.empty() : Optional.of(e.value());
        }

        synchronized void clear() {
            heap.clear();
            set.clear();
        }

        synchronized List<String> ordered() {
            List<Entry> entries = new ArrayList<>(heap);
            entries.sort(heap.comparator());
            return entries.stream().map(e -> e.value().value()).toList();
        }

        synchronized Set<String> members() {
            return Set.copyOf(set);
        }
    }
}
