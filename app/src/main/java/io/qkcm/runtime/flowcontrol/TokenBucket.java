package io.qkcm.runtime.flowcontrol;

/**
 * A token bucket with golang.org/x/time/rate semantics: {@code burst} tokens, refilled at {@code qps}.
 * {@link #reserve()} takes a token now (possibly going into debt) and returns how long the caller has
 * to wait for it, so callers that wait queue up fairly, as client-go's rate limiters do.
 */
public final class TokenBucket {

    private final double nanosPerToken;
    private final double burst;
    private double tokens;
    private long last;

    public TokenBucket(double qps, int burst) {
        if (qps <= 0 || burst <= 0) {
            throw new IllegalArgumentException("qps and burst must be positive: qps=" + qps + " burst=" + burst);
        }
        this.nanosPerToken = 1e9 / qps;
        this.burst = burst;
        this.tokens = burst;
        this.last = System.nanoTime();
    }

    /** Reserves one token; returns the nanoseconds to wait before using it (0 if available now). */
    public synchronized long reserve() {
        long now = System.nanoTime();
        tokens = Math.min(burst, tokens + (now - last) / nanosPerToken);
        last = now;
        tokens -= 1;
        return tokens >= 0 ? 0 : (long) Math.ceil(-tokens * nanosPerToken);
    }

    /** Gives back a token taken by {@link #reserve} that the caller decided not to use. */
    public synchronized void refund() {
        tokens = Math.min(burst, tokens + 1);
    }

    /** Blocks until a token is available, as client-go's rest client throttle does. */
    public void acquire() throws InterruptedException {
        long wait = reserve();
        if (wait > 0) {
            java.util.concurrent.TimeUnit.NANOSECONDS.sleep(wait);
        }
    }
}
