package io.qkcm.controller.devicetainteviction;

import java.time.Clock;
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
 * The part of upstream's tainteviction.TimedWorkerQueue this controller uses ({@code UpdateWork},
 * {@code CancelWork}): one timer per pod key that runs the eviction at its fire time. Work whose fire time is
 * not after now runs at once and is kept, with no timer, until it is done, so it is neither replaced nor
 * cancelled meanwhile. (tainteviction's own copy is that controller's; no controller imports another.)
 */
final class TimedWorkerQueue {

    private static final Logger LOG = Logger.getLogger(TimedWorkerQueue.class);

    /** The work for one pod, due at {@code fireAt}. */
    interface WorkFunc {
        void run(PodRef pod, Instant fireAt) throws Exception;
    }

    /** A pod by namespace, name and UID (upstream's NamespacedObject). */
    record PodRef(String namespace, String name, String uid) {
        String key() {
            return namespace + "/" + name;
        }
    }

    private record TimedWorker(Instant createdAt, Instant fireAt, ScheduledFuture<?> timer) {
    }

    private final WorkFunc workFunc;
    private final Clock clock;
    private final ScheduledExecutorService timers;
    private final Executor executor;
    /** A null value is work running without a timer. */
    private final Map<String, TimedWorker> workers = new HashMap<>();

    TimedWorkerQueue(WorkFunc workFunc, Clock clock, ScheduledExecutorService timers, Executor executor) {
        this.workFunc = workFunc;
        this.clock = clock;
        this.timers = timers;
        this.executor = executor;
    }

    /** Upstream's UpdateWork: keeps running work and work due at the same time, else replaces it. */
    synchronized void updateWork(PodRef pod, Instant createdAt, Instant fireAt) {
        String key = pod.key();
        if (workers.containsKey(key)) {
            TimedWorker worker = workers.get(key);
            if (worker == null) {
                LOG.debugf("Keeping existing work, already in progress: item %s", key);
                return;
            }
            if (worker.fireAt().equals(fireAt)) {
                LOG.debugf("Keeping existing work, same time: item %s firedTime %s", key, fireAt);
                return;
            }
            LOG.debugf("Replacing existing work: item %s firedTime %s", key, worker.fireAt());
            worker.timer().cancel(false);
        }
        LOG.debugf("Adding TimedWorkerQueue item and to be fired at firedTime: item %s createTime %s firedTime %s", key,
                createdAt, fireAt);
        Duration delay = Duration.between(createdAt, fireAt);
        Runnable work = () -> runWrapped(pod, fireAt);
        if (delay.isZero() || delay.isNegative()) {
            workers.put(key, null);
            executor.execute(work);
            return;
        }
        ScheduledFuture<?> timer = timers.schedule(() -> executor.execute(work), delay.toNanos(), TimeUnit.NANOSECONDS);
        workers.put(key, new TimedWorker(createdAt, fireAt, timer));
    }

    /** Upstream's CancelWork: true when a scheduled timer was stopped (not work already running). */
    synchronized boolean cancelWork(String key) {
        if (!workers.containsKey(key)) {
            return false;
        }
        TimedWorker worker = workers.get(key);
        if (worker == null) {
            return false;
        }
        workers.remove(key);
        worker.timer().cancel(false);
        LOG.debugf("Cancelling TimedWorkerQueue item: item %s time %s", key, clock.instant());
        return true;
    }

    /** Whether {@code key} has work, scheduled or running (tests). */
    synchronized boolean hasWork(String key) {
        return workers.containsKey(key);
    }

    synchronized void shutDown() {
        workers.values().forEach(w -> {
            if (w != null) {
                w.timer().cancel(false);
            }
        });
        workers.clear();
    }

    /** Upstream's getWrappedWorkerFunc: the work, then the key is forgotten, whatever it returned. */
    private void runWrapped(PodRef pod, Instant fireAt) {
        String key = pod.key();
        LOG.debugf("Firing worker: item %s firedTime %s", key, fireAt);
        try {
            workFunc.run(pod, fireAt);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            LOG.errorf("TaintEvictionController: timed worker failed: %s", e.getMessage());
        }
        synchronized (this) {
            workers.remove(key);
        }
    }
}
