package io.qkcm.controller;

import java.time.Duration;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

import org.jboss.logging.Logger;

/**
 * Upstream's ControllerExpectations (pkg/controller/controller_utils.go): per controller key, how
 * many creations and deletions the controller has issued but not yet seen in its informer cache.
 * A controller acts on a key only when its expectations are fulfilled, or older than
 * {@link #EXPECTATIONS_TIMEOUT} (a watch event may have been missed), so that a stale cache never
 * causes duplicate creations or deletions.
 */
public class ControllerExpectations {

    public static final Duration EXPECTATIONS_TIMEOUT = Duration.ofMinutes(5);

    private static final Logger LOG = Logger.getLogger(ControllerExpectations.class);

    private final ConcurrentMap<String, Expectations> store = new ConcurrentHashMap<>();
    /** Keys with a write whose outcome is unknown (see {@link #markUncertain}). */
    private final Set<String> uncertain = ConcurrentHashMap.newKeySet();
    private final LongSupplier nanoClock;

    public ControllerExpectations() {
        this(System::nanoTime);
    }

    /** With a clock (nanoseconds, monotonic), for tests of expiry. */
    public ControllerExpectations(LongSupplier nanoClock) {
        this.nanoClock = nanoClock;
    }

    /** Upstream's ControlleeExpectations: outstanding adds and deletes since {@code timestamp}. */
    public static final class Expectations {
        private final AtomicLong add;
        private final AtomicLong del;
        private final String key;
        private final long timestampNanos;

        Expectations(String key, long add, long del, long timestampNanos) {
            this.key = key;
            this.add = new AtomicLong(add);
            this.del = new AtomicLong(del);
            this.timestampNanos = timestampNanos;
        }

        public void add(long adds, long dels) {
            add.addAndGet(adds);
            del.addAndGet(dels);
        }

        public boolean fulfilled() {
            return add.get() <= 0 && del.get() <= 0;
        }

        public long pendingAdds() {
            return add.get();
        }

        public long pendingDeletes() {
            return del.get();
        }

        public String key() {
            return key;
        }

        @Override
        public String toString() {
            return "{key=" + key + ", add=" + add.get() + ", del=" + del.get() + "}";
        }
    }

    public Optional<Expectations> getExpectations(String controllerKey) {
        return Optional.ofNullable(store.get(controllerKey));
    }

    public void deleteExpectations(String controllerKey) {
        store.remove(controllerKey);
        uncertain.remove(controllerKey);
    }

    /**
     * Not in upstream: records that a creation or deletion of {@code controllerKey} failed with its
     * outcome unknown ({@link ApiErrors#isOutcomeUnknown}). Upstream lowers the expectation on any
     * error; when the write did happen and the watch is still catching up, the next sync sees a cache
     * without it and writes again (pods beyond spec). Instead the expectation stays raised, so the key
     * waits, and the controller asks the API server whether its cache has caught up
     * ({@link #isUncertain}, then {@link #deleteExpectations} once it has). New expectations, set
     * when the old ones are satisfied or expired, clear the mark.
     */
    public void markUncertain(String controllerKey) {
        if (store.containsKey(controllerKey)) {
            uncertain.add(controllerKey);
        }
    }

    /** Whether {@code controllerKey} waits on a write whose outcome is unknown. */
    public boolean isUncertain(String controllerKey) {
        return uncertain.contains(controllerKey);
    }

    /**
     * True when the controller may act on {@code controllerKey}: no expectations recorded, all of them
     * observed, or recorded more than {@link #EXPECTATIONS_TIMEOUT} ago.
     */
    public boolean satisfiedExpectations(String controllerKey) {
        Expectations exp = store.get(controllerKey);
        if (exp == null) {
            LOG.tracef("controller %s either never recorded expectations, or the ttl expired", controllerKey);
            return true;
        }
        if (exp.fulfilled()) {
            LOG.tracef("controller expectations fulfilled %s", exp);
            return true;
        }
        if (isExpired(exp)) {
            LOG.debugf("controller expectations expired %s", exp);
            return true;
        }
        LOG.tracef("controller still waiting on expectations %s", exp);
        return false;
    }

    private boolean isExpired(Expectations exp) {
        return nanoClock.getAsLong() - exp.timestampNanos > EXPECTATIONS_TIMEOUT.toNanos();
    }

    /** Replaces the expectations of {@code controllerKey}, timestamped now. */
    public void setExpectations(String controllerKey, int add, int del) {
        Expectations exp = new Expectations(controllerKey, add, del, nanoClock.getAsLong());
        LOG.tracef("setting expectations %s", exp);
        store.put(controllerKey, exp);
        uncertain.remove(controllerKey);
    }

    public void expectCreations(String controllerKey, int adds) {
        setExpectations(controllerKey, adds, 0);
    }

    public void expectDeletions(String controllerKey, int dels) {
        setExpectations(controllerKey, 0, dels);
    }

    public void lowerExpectations(String controllerKey, int add, int del) {
        Expectations exp = store.get(controllerKey);
        if (exp != null) {
            exp.add(-add, -del);
            LOG.tracef("lowered expectations %s", exp);
        }
    }

    public void raiseExpectations(String controllerKey, int add, int del) {
        Expectations exp = store.get(controllerKey);
        if (exp != null) {
            exp.add(add, del);
            LOG.tracef("raised expectations %s", exp);
        }
    }

    public void creationObserved(String controllerKey) {
        lowerExpectations(controllerKey, 1, 0);
    }

    public void deletionObserved(String controllerKey) {
        lowerExpectations(controllerKey, 0, 1);
    }
}
