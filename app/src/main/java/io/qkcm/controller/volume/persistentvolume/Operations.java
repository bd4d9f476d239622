package io.qkcm.controller.volume.persistentvolume;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.function.LongSupplier;

import org.jboss.logging.Logger;

/**
 * Upstream's goroutinemap with exponential backoff on error (runningOperations): at most one
 * operation of a name runs at a time, and after a failure the name is refused until its backoff
 * (500 ms doubling up to 2m2s) has passed. The next sync of the object asks again.
 */
final class Operations {

    static final Duration INITIAL_BACKOFF = Duration.ofMillis(500);
    static final Duration MAX_BACKOFF = Duration.ofMinutes(2).plusSeconds(2);

    private static final Logger LOG = Logger.getLogger(Operations.class);

    private volatile ExecutorService executor;
    private final LongSupplier nanoTime;
    private final Map<String, State> operations = new HashMap<>();

    private static final class State {
        boolean running;
        long lastErrorNanos;
        long backoffNanos;
    }

    Operations(ExecutorService executor, LongSupplier nanoTime) {
        this.executor = executor;
        this.nanoTime = nanoTime;
    }

    /** The threads operations run on from now on; null while the controller is stopped. */
    void use(ExecutorService executor) {
        this.executor = executor;
    }

    /** Runs {@code operation} unless one of the name runs or is backing off; returns whether it started. */
    synchronized boolean run(String name, Callable<Void> operation) {
        ExecutorService pool = executor;
        if (pool == null || pool.isShutdown()) {
            // not leading: the next sync after the controller starts asks again
            LOG.debugf("operation %s not started: the controller is not running", name);
            return false;
        }
        State state = operations.get(name);
        if (state != null) {
            if (state.running) {
                LOG.tracef("operation %s is already running", name);
                return false;
            }
            if (nanoTime.getAsLong() - state.lastErrorNanos < state.backoffNanos) {
                LOG.tracef("operation %s is backing off", name);
                return false;
            }
        } else {
            state = new State();
            operations.put(name, state);
        }
        state.running = true;
        State s = state;
        pool.execute(() -> {
            Exception failure = null;
            try {
                operation.call();
            } catch (Exception e) {
                failure = e;
            }
            finish(name, s, failure);
        });
        return true;
    }

    private synchronized void finish(String name, State state, Exception failure) {
        state.running = false;
        if (failure == null) {
            operations.remove(name);
            return;
        }
        state.backoffNanos = state.backoffNanos == 0 ? INITIAL_BACKOFF.toNanos()
                : Math.min(state.backoffNanos * 2, MAX_BACKOFF.toNanos());
        state.lastErrorNanos = nanoTime.getAsLong();
        LOG.debugf("operation %s failed, no retries permitted for %dms: %s", name, state.backoffNanos / 1_000_000,
                failure.getMessage());
    }

    synchronized boolean isRunning(String name) {
        State s = operations.get(name);
        return s != null && s.running;
    }
}
