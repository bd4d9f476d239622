package io.qkcm.controller.nodelifecycle.scheduler;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.function.Supplier;

import org.junit.jupiter.api.Test;

/** Upstream's scheduler/rate_limited_queue_test.go, case by case. */
class RateLimitedTimedQueueTest {

    /** A clock whose every reading is given by {@code next} (upstream's replaced {@code now}). */
    static Clock ticking(Supplier<Instant> next) {
        return new Clock() {
            @Override
            public ZoneId getZone() {
                return ZoneOffset.UTC;
            }

            @Override
            public Clock withZone(ZoneId zone) {
                return this;
            }

            @Override
            public Instant instant() {
                return next.get();
            }
        };
    }

    /** One second later at every reading, from the epoch. */
    static Clock secondTicks() {
        long[] tick = {0};
        return ticking(() -> Instant.ofEpochSecond(tick[0]++));
    }

    private static RateLimitedTimedQueue threeValues(Clock clock) {
        RateLimitedTimedQueue q = new RateLimitedTimedQueue(RateLimiter.always(), clock);
        q.add("first", "11111");
        q.add("second", "22222");
        q.add("third", "33333");
        return q;
    }

    @Test
    void uniqueQueueGet() {
        Clock clock = secondTicks();
        RateLimitedTimedQueue.UniqueQueue queue = new RateLimitedTimedQueue.UniqueQueue();
        for (String v : List.of("first", "second", "third")) {
            queue.add(new RateLimitedTimedQueue.TimedValue(v, v, clock.instant(), clock.instant()));
        }
        assertThat(queue.ordered()).containsExactly("first", "second", "third");
        assertThat(queue.members()).containsExactlyInAnyOrder("first", "second", "third");
        queue.get();
        assertThat(queue.ordered()).containsExactly("second", "third");
        assertThat(queue.members()).containsExactlyInAnyOrder("second", "third");
    }

    @Test
    void addNode() {
        RateLimitedTimedQueue q = threeValues(Clock.systemUTC());
        assertThat(q.queued()).containsExactly("first", "second", "third");
        assertThat(q.members()).containsExactlyInAnyOrder("first", "second", "third");
    }

    @Test
    void delNode() {
        for (String removed : List.of("first", "second", "third")) {
            RateLimitedTimedQueue q = threeValues(secondTicks());
            q.remove(removed);
            List<String> expected = new ArrayList<>(List.of("first", "second", "third"));
            expected.remove(removed);
            assertThat(q.queued()).as("removed %s", removed).containsExactlyElementsOf(expected);
            assertThat(q.members()).as("removed %s", removed).containsExactlyInAnyOrderElementsOf(expected);
        }
    }

    @Test
    void tryProcessesWhatWasNotRemoved() {
        RateLimitedTimedQueue q = threeValues(Clock.systemUTC());
        q.remove("second");
        Set<String> processed = new HashSet<>();
        q.tryEach(v -> {
            processed.add(v.value());
            return RateLimitedTimedQueue.Outcome.DONE;
        });
        assertThat(processed).containsExactlyInAnyOrder("first", "third");
    }

    @Test
    void tryOrdering() {
        // every reading 1 ms later, except the readings held back by delay
        long[] current = {0};
        int[] delay = {0};
        Clock clock = ticking(() -> {
            if (delay[0] > 0) {
                delay[0]--;
            } else {
                current[0] += 1_000_000;
            }
            return Instant.ofEpochSecond(0, current[0]);
        });
        RateLimitedTimedQueue q = threeValues(clock);
        List<String> order = new ArrayList<>();
        int[] count = {0};
        boolean[] hasQueued = {false};
        q.tryEach(v -> {
            count[0]++;
            assertThat(v.processAt()).isNotNull();
            switch (v.value()) {
                case "first" -> assertThat(v.addedAt()).isEqualTo(Instant.ofEpochSecond(0, 1_000_000));
                case "second" -> {
                    assertThat(v.addedAt()).isEqualTo(Instant.ofEpochSecond(0, 2_000_000));
                    if (hasQueued[0]) {
                        assertThat(v.processAt()).isEqualTo(Instant.ofEpochSecond(0, 6_000_000));
                        break;
                    }
                    hasQueued[0] = true;
                    delay[0] = 1;
                    return RateLimitedTimedQueue.Outcome.retryAfter(Duration.ofMillis(2));
                }
                case "third" -> assertThat(v.addedAt()).isEqualTo(Instant.ofEpochSecond(0, 3_000_000));
                default -> throw new AssertionError(v);
            }
            order.add(v.value());
            return RateLimitedTimedQueue.Outcome.DONE;
        });
        // "second" is due again only after the try ends
        assertThat(order).containsExactly("first", "third");
        assertThat(count[0]).isEqualTo(3);
    }

    @Test
    void removingWhileTryIsNotRetried() throws InterruptedException {
        RateLimitedTimedQueue q = threeValues(Clock.systemUTC());
        CountDownLatch processing = new CountDownLatch(1);
        CountDownLatch removed = new CountDownLatch(1);
        Thread remover = new Thread(() -> {
            try {
                processing.await();
            } catch (InterruptedException e) {
                return;
            }
            q.remove("second");
            removed.countDown();
        });
        remover.start();
        List<String> order = new ArrayList<>();
        int[] count = {0};
        boolean[] queued = {false};
        q.tryEach(v -> {
            count[0]++;
            if (!queued[0] && v.value().equals("second")) {
                queued[0] = true;
                processing.countDown();
                try {
                    removed.await();
                } catch (InterruptedException e) {
                    throw new AssertionError(e);
                }
                return RateLimitedTimedQueue.Outcome.retryAfter(Duration.ofMillis(1));
            }
            order.add(v.value());
            return RateLimitedTimedQueue.Outcome.DONE;
        });
        remover.join();
        assertThat(order).containsExactly("first", "third");
        assertThat(count[0]).isEqualTo(3);
    }

    @Test
    void clear() {
        RateLimitedTimedQueue q = threeValues(Clock.systemUTC());
        q.clear();
        assertThat(q.queued()).isEmpty();
    }

    @Test
    void swapLimiter() {
        RateLimitedTimedQueue q = new RateLimitedTimedQueue(RateLimiter.always(), Clock.systemUTC());
        assertThat(q.qps()).isEqualTo(RateLimiter.always().qps());
        q.swapLimiter(0);
        assertThat(q.qps()).isEqualTo(RateLimiter.never().qps());
        q.add("x", "1");
        List<String> processed = new ArrayList<>();
        q.tryEach(v -> {
            processed.add(v.value());
            return RateLimitedTimedQueue.Outcome.DONE;
        });
        assertThat(processed).as("a zero rate stops the queue").isEmpty();
        q.swapLimiter(5.5f);
        assertThat(q.qps()).isEqualTo(5.5f);
    }

    @Test
    void addAfterTryIsIgnoredUntilRemoved() {
        RateLimitedTimedQueue q = threeValues(Clock.systemUTC());
        q.remove("second");
        Set<String> processed = new HashSet<>();
        q.tryEach(v -> {
            processed.add(v.value());
            return RateLimitedTimedQueue.Outcome.DONE;
        });
        assertThat(processed).containsExactlyInAnyOrder("first", "third");
        assertThat(q.add("first", "11111")).isFalse();
        q.tryEach(v -> {
            throw new AssertionError("processed " + v.value() + " again without an explicit remove");
        });
        q.remove("first");
        assertThat(q.add("first", "11111")).isTrue();
    }

    @Test
    void tokenBucketLimitsTheQueue() {
        // burst 1 at 1 qps: one value now, the next one a second later
        RateLimitedTimedQueue q = new RateLimitedTimedQueue(RateLimiter.tokenBucket(1, 1), Clock.systemUTC());
        q.add("a", "1");
        q.add("b", "2");
        List<String> processed = new ArrayList<>();
        q.tryEach(v -> {
            processed.add(v.value());
            return RateLimitedTimedQueue.Outcome.DONE;
        });
        assertThat(processed).containsExactly("a");
        assertThat(q.queued()).containsExactly("b");
    }
}
