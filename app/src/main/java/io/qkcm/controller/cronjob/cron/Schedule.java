package io.qkcm.controller.cronjob.cron;

import java.time.ZonedDateTime;

/**
 * robfig/cron's {@code Schedule}. A Go {@code time.Time} is a {@link ZonedDateTime} here: its instant,
 * and its zone as the Go time's location (which matters for a schedule without a location of its own,
 * interpreted in the given time's location).
 */
public interface Schedule {

    /** The next activation strictly after {@code t}, in {@code t}'s zone; {@link GoTimes#ZERO} if none. */
    ZonedDateTime next(ZonedDateTime t);
}
