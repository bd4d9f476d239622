package io.qkcm.controller.tainteviction;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * A clock whose time moves when told ({@link #step}), its timers fired by the step that reaches them, as
 * k8s.io/utils/clock/testing's FakeClock that upstream's tests give the TimedWorkerQueue. Each reading
 * also moves it on by a microsecond, as a real clock is never read twice at the same instant: the taint
 * manager keeps a scheduled deletion when a second sync of the same taints comes strictly later
 * (upstream's {@code Before}), and re-schedules it, with a cancel event, at an equal instant.
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
        now = now.plusNanos(1000);
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
