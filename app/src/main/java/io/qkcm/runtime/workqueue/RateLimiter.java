package io.qkcm.runtime.workqueue;

import io.qkcm.runtime.flowcontrol.TokenBucket;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Per-item requeue delays, as client-go's workqueue rate limiters. {@link #controllerDefault()} is
 * upstream's DefaultControllerRateLimiter: the larger of a per-item exponential backoff (5ms doubling
 * to 1000s) and an overall token bucket (10 qps, burst 100).
 */
public interface RateLimiter<K> {

    Duration when(K item);

    void forget(K item);

    int numRequeues(K item);

    static <K> RateLimiter<K> controllerDefault() {
        return maxOf(exponential(Duration.ofMillis(5), Duration.ofSeconds(1000)), bucket(10, 100));
    }

    static <K> RateLimiter<K> exponential(Duration base, Duration max) {
        return new RateLimiter<>() {
            private final ConcurrentHashMap<K, Integer> failures = new ConcurrentHashMap<>();

            @Override
            public Duration when(K item) {
                int exp = failures.merge(item, 1, Integer::sum) - 1;
                double nanos = base.toNanos() * Math.pow(2, exp);
                if (nanos > max.toNanos() || Double.isInfinite(nanos)) {
                    return max;
                }
                return Duration.ofNanos((long) nanos);
            }

            @Override
            public void forget(K item) {
                failures.remove(item);
            }

            @Override
            public int numRequeues(K item) {
                return failures.getOrDefault(item, 0);
            }
        };
    }

    /** Overall token bucket: the delay until a token is free, reserving it now. */
    static <K> RateLimiter<K> bucket(double qps, int burst) {
        TokenBucket bucket = new TokenBucket(qps, burst);
        return new RateLimiter<>() {
            @Override
            public Duration when(K item) {
                return Duration.ofNanos(bucket.reserve());
            }

            @Override
            public void forget(K item) {
            }

            @Override
            public int numRequeues(K item) {
                return 0;
            }
        };
    }

    @SafeVarargs
    static <K> RateLimiter<K> maxOf(RateLimiter<K>... limiters) {
        return new RateLimiter<>() {
            @Override
            public Duration when(K item) {
                Duration max = Duration.ZERO;
                for (RateLimiter<K> l : limiters) {
                    Duration d = l.when(item);
                    if (d.compareTo(max) > 0) {
                        max = d;
                    }
                }
                return max;
            }

            @Override
            public void forget(K item) {
                for (RateLimiter<K> l : limiters) {
                    l.forget(item);
                }
            }

            @Override
            public int numRequeues(K item) {
                int max = 0;
                for (RateLimiter<K> l : limiters) {
                    max = Math.max(max, l.numRequeues(item));
                }
                return max;
            }
        };
    }
}
