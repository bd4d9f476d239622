package io.qkcm.controller.podgc;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Delayed;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * A delayer whose time moves only when told ({@link #step}): upstream's tests give the node queue a
 * fake clock the same way. Only one-shot {@code schedule(Runnable, …)} is supported, which is what
 * the work queue's {@code addAfter} uses.
 */
final class ManualDelayer extends AbstractExecutorService implements ScheduledExecutorService {

    private long now;
    private final List<Task> tasks = new ArrayList<>();

    private final class Task extends CompletableFuture<Object> implements ScheduledFuture<Object> {
        final long due;
        final Runnable command;

        Task(long due, Runnable command) {
            this.due = due;
            this.command = command;
        }

        @Override
        public long getDelay(TimeUnit unit) {
            synchronized (ManualDelayer.this) {
                return unit.convert(due - now, TimeUnit.NANOSECONDS);
            }
        }

        @Override
        public int compareTo(Delayed o) {
            return Long.compare(getDelay(TimeUnit.NANOSECONDS), o.getDelay(TimeUnit.NANOSECONDS));
        }
    }

    /** Moves the time forward and runs what became due. */
    void step(Duration d) {
        List<Task> due = new ArrayList<>();
        synchronized (this) {
            now += d.toNanos();
            for (Task t : List.copyOf(tasks)) {
                if (t.due <= now) {
                    tasks.remove(t);
                    due.add(t);
                }
            }
        }
        for (Task t : due) {
            if (!t.isCancelled()) {
                t.command.run();
                t.complete(null);
            }
        }
    }

    @Override
    public synchronized ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
        Task t = new Task(now + unit.toNanos(delay), command);
        tasks.add(t);
        return t;
    }

    @Override
    public <V> ScheduledFuture<V> schedule(Callable<V> callable, long delay, TimeUnit unit) {
        throw new UnsupportedOperationException();
    }

    @Override
    public ScheduledFuture<?> scheduleAtFixedRate(Runnable command, long initialDelay, long period, TimeUnit unit) {
        throw new UnsupportedOperationException();
    }

    @Override
    public ScheduledFuture<?> scheduleWithFixedDelay(Runnable command, long initialDelay, long delay, TimeUnit unit) {
        throw new UnsupportedOperationException();
    }

    @Override
    public void execute(Runnable command) {
        command.run();
    }

    @Override
    public void shutdown() {
    }

    @Override
    public List<Runnable> shutdownNow() {
        return List.of();
    }

    @Override
    public boolean isShutdown() {
        return false;
    }

    @Override
    public boolean isTerminated() {
        return false;
    }

    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit) {
        return true;
    }
}
