package io.qkcm.controller.cronjob.cron;

import java.time.ZonedDateTime;

/** robfig/cron's {@code ConstantDelaySchedule} ({@code @every <duration>}), at whole seconds. */
public record ConstantDelaySchedule(long delayNanos) implements Schedule {

    private static final long SECOND = 1_000_000_000L;

    /** robfig/cron's {@code Every}: at least one second, the fraction of a second dropped. */
    public static ConstantDelaySchedule every(long durationNanos) {
        if (durationNanos < SECOND) {
            durationNanos = SECOND;
        }
        return new ConstantDelaySchedule(durationNanos - durationNanos % SECOND);
    }

    @Override
    public ZonedDateTime next(ZonedDateTime t) {
        return GoTimes.add(t, delayNanos - t.getNano());
    }
}
