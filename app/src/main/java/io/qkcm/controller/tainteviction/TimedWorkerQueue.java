package io.qkcm.controller.tainteviction;

import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

import org.jboss.logging.Logger;

/**
 * Upstream's TimedWorkerQueue (timed_workers.go): one timer per key that runs the work function at its
 * fire time, on the clock it is given. A key whose work runs at once (fire time not after creation) is
 * kept with no timer until the work is done, so it is neither added again nor cancelled meanwhile.
 * The work runs on {@code executor} (upstream: a goroutine per timer), never on the clock's thread.
 */
final class TimedWorkerQueue {

    private static final Logger LOG = Logger.getLogger(TimedWorkerQueue.class);

    /** Upstream's clock.WithDelayedExecution: the time, and a function run once a delay has passed. */
    interface Clock {
        Instant now();

        /** Runs {@code f} once {@code delay} has passed on this clock; the timer can be stopped before. */
        Timer afterFunc(Duration delay, Runnable f);

        /** The wall clock, its timers on {@code timers}. */
        static Clock system(ScheduledExecutorService timers) {
            return new Clock() {
                @Override
                public Instant now() {
                    return Instant.now();
                }

                @Override
                public Timer afterFunc(Duration delay, Runnable f) {
                    // a delay beyond ~292 years is still a delay, not an overflow
                    long nanos = delay.getSeconds() >= Long.MAX_VALUE / 1_000_000_000L ? Long.MAX_VALUE : delay.toNanos();
                    ScheduledFuture<?> future = timers.schedule(f, nanos, TimeUnit.NANOSECONDS);
                    return () -> future.cancel(false);
                }
            };
        }
    }

    interface Timer {
        void stop();
    }

    /** The work: delete the pod {@code namespace/name}, whose eviction was due at {@code fireAt}. */
    interface WorkFunc {
        void run(String namespace, String name, Instant fireAt) throws Exception;
    }

    /** Upstream's TimedWorker: the work item, when it was created and when it fires. */
    record TimedWorker(String namespace, String name, Instant createdAt, Instant fireAt, Timer timer) {
        void cancel() {
            timer.stop();
        }
    }

    private final WorkFunc workFunc;
    private final Clock clock;
    private final Executor executor;
    /** Keyed by {@code namespace/name}; a null value is work already running without a timer. */
    private final Map<String, TimedWorker> workers = new HashMap<>();

    TimedWorkerQueue(WorkFunc workFunc, Clock clock, Executor executor) {
        this.workFunc = workFunc;
        this.clock = clock;
        this.executor = executor;
    }

    static String key(String namespace, String name) {
        return namespace + "/" + name;
    }

    /** Upstream's AddWork: a key already present keeps its work. */
    synchronized void addWork(String namespace, String name, Instant createdAt, Instant fireAt) {
        String key = key(namespace, name);
        if (workers.containsKey(key)) {
            LOG.tracef("Trying to add already existing work, skipping: item %s createTime %s firedTime %s", key,
                    createdAt, fireAt);
            return;
        }
        LOG.tracef("Adding TimedWorkerQueue item and to be fired at firedTime: item %s createTime %s firedTime %s", key,
                createdAt, fireAt);
        workers.put(key, createWorker(namespace, name, createdAt, fireAt));
    }

    /** Upstream's CancelWork: true when a timer was stopped (not when the work was already running). */
    synchronized boolean cancelWork(String key) {
        if (!workers.containsKey(key)) {
            return false;
        }
        TimedWorker worker = workers.remove(key);
        LOG.tracef("Cancelling TimedWorkerQueue item: item %s time %s", key, clock.now());
        if (worker != null) {
            worker.cancel();
            return true;
        }
        return false;
    }

    /** Upstream's GetWorkerUnsafe: the scheduled work of {@code key}, null when none or already running. */
    synchronized TimedWorker getWorkerUnsafe(String key) {
        return workers.get(key);
    }

    /** Whether {@code key} has work, scheduled or running. */
    synchronized boolean hasWork(String key) {
        return workers.containsKey(key);
    }

    /** Stops every timer (the controller stops). */
    synchronized void shutDown() {
        workers.values().forEach(w -> {
            if (w != null) {
                w.cancel();
            }
        });
        workers.clear();
    }

    /** Upstream's createWorker: run now (and keep no timer), or set a timer for fireAt − createdAt. */
    private TimedWorker createWorker(String namespace, String name, Instant createdAt, Instant fireAt) {
        Duration delay = Duration.between(createdAt, fireAt);
        Runnable work = () -> runWrapped(namespace, name, fireAt);
        if (delay.isZero() || delay.isNegative()) {
            executor.execute(work);
            return null;
        }
        Timer timer = clock.afterFunc(delay, () -> executor.execute(work));
        return new TimedWorker(namespace, name, createdAt, fireAt, timer);
    }

    /** Upstream's getWrappedWorkerFunc: the work, then the key is forgotten, whatever it returned. */
    private void runWrapped(String namespace, String name, Instant fireAt) {
        String key = key(namespace, name);
        LOG.tracef("Firing worker: item %s firedTime %s", key, fireAt);
        Exception error = null;
        try {
            workFunc.run(namespace, name, fireAt);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            error = e;
        } catch (Exception e) {
            error = e;
        }
        if (error != null) {
            LOG.errorf("TaintEvictionController: timed worker failed: %s", error.getMessage());
        }
        synchronized (this) {
            LOG.tracef("Worker finished, removing: item %s err %s", key, error);
            workers.remove(key);
        }
    }
}
