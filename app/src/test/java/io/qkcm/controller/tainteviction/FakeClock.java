package io.qkcm.controller.tainteviction;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * A clock whose time moves only when told ({@link #step}), its timers fired by the step that reaches
 * them, as k8s.io/utils/clock/testing's FakeClock that upstream's tests give the TimedWorkerQueue.
 */
final class FakeClock implements TimedWorkerQueue.Clock {

    private Instant now;
    private final List<Pending> timers = new ArrayList<>();

    private record Pending(Instant due, Runnable f) {
    }

    FakeClock(Instant start) {
        this.now = start;
    }

    @Override
    public synchronized Instant now() {
        return now;
    }

    @Override
    public synchronized TimedWorkerQueue.Timer afterFunc(Duration delay, Runnable f) {
        Pending p = new Pending(now.plus(delay), f);
        timers.add(p);
        return () -> {
            synchronized (FakeClock.this) {
                timers.remove(p);
            }
        };
    }

    /** Moves the time forward and runs the timers that became due, in order of their due time. */
    void step(Duration d) {
        List<Pending> due = new ArrayList<>();
        synchronized (this) {
            now = now.plus(d);
            for (Pending p : List.copyOf(timers)) {
                if (!p.due().isAfter(now)) {
                    timers.remove(p);
                    due.add(p);
                }
            }
        }
        due.sort((a, b) -> a.due().compareTo(b.due()));
        due.forEach(p -> p.f().run());
    }

    /** Timers set and neither fired nor stopped. */
    synchronized int pendingTimers() {
        return timers.size();
    }
}
