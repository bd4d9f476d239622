package io.qkcm.controller.nodelifecycle.scheduler;

import io.qkcm.runtime.flowcontrol.TokenBucket;

/**
 * The part of client-go's flowcontrol.RateLimiter a {@link RateLimitedTimedQueue} uses: a token taken
 * without waiting, the rate it was built with, and its release when swapped out.
 */
public interface RateLimiter {

    /** Takes a token if one is available now (client-go's TryAccept). */
    boolean tryAccept();

    /** The rate in tokens per second. */
    float qps();

    /** Releases what the limiter holds (client-go's Stop); the token bucket holds nothing. */
    default void stop() {
    }

    /**
     * flowcontrol.NewTokenBucketRateLimiter(qps, burst) on the real clock, as upstream's. A rate of zero or
     * less is x/time/rate's zero Limit: the burst once, then never again.
     */
    static RateLimiter tokenBucket(float qps, int burst) {
        if (qps <= 0) {
            return new RateLimiter() {
                private int left = burst;

                @Override
                public synchronized boolean tryAccept() {
                    if (left <= 0) {
                        return false;
                    }
                    left--;
                    return true;
                }

                @Override
                public float qps() {
                    return qps;
                }
            };
        }
        TokenBucket bucket = new TokenBucket(qps, burst);
        return new RateLimiter() {
            @Override
            public boolean tryAccept() {
                if (bucket.reserve() == 0) {
                    return true;
                }
                // not available now: give back the token reserve() took into debt
                bucket.refund();
                return false;
            }

            @Override
            public float qps() {
                return qps;
            }
        };
    }

    /**
     * flowcontrol.NewFakeNeverRateLimiter: never accepts. Its QPS reads 1, as client-go's does (so swapping
     * it for a 1 qps limiter is a no-op there too).
     */
    static RateLimiter never() {
        return new RateLimiter() {
            @Override
            public boolean tryAccept() {
                return false;
            }

            @Override
            public float qps() {
                return 1;
            }
        };
    }

    /** flowcontrol.NewFakeAlwaysRateLimiter: always accepts; QPS 1 (tests). */
    static RateLimiter always() {
        return new RateLimiter() {
            @Override
            public boolean tryAccept() {
                return true;
            }

            @Override
            public float qps() {
                return 1;
            }
        };
    }
}
