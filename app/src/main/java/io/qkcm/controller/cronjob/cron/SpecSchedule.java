package io.qkcm.controller.cronjob.cron;

import java.time.ZoneId;
import java.time.ZonedDateTime;

/**
 * robfig/cron's {@code SpecSchedule}: one bit set per field (bit 63, the star bit, records a '*' or
 * '?'), and {@link #next}, which walks month, day, hour, minute and second forward on the wall clock
 * of the schedule's location. {@code location} null is Go's {@code time.Local}: the location of the
 * time handed to {@link #next}.
 */
public record SpecSchedule(long second, long minute, long hour, long dom, long month, long dow, ZoneId location)
        implements Schedule {

    static final long STAR_BIT = 1L << 63;

    @Override
    public ZonedDateTime next(ZonedDateTime t) {
        ZoneId origLocation = t.getZone();
        ZoneId loc = location == null ? t.getZone() : location;
        if (location != null) {
            t = t.withZoneSameInstant(location);
        }
        // the upcoming whole second
        t = GoTimes.add(t, GoTimes.SECOND - t.getNano());
        boolean added = false;
        int yearLimit = t.getYear() + 5;

        wrap:
        while (true) {
            if (t.getYear() > yearLimit) {
                return GoTimes.ZERO;
            }
            while (((1L << t.getMonthValue()) & month) == 0) {
                if (!added) {
                    added = true;
                    t = GoTimes.date(t.getYear(), t.getMonthValue(), 1, 0, 0, 0, 0, loc);
                }
                t = GoTimes.addDate(t, 0, 1, 0);
                if (t.getMonthValue() == 1) {
                    continue wrap;
                }
            }
            while (!dayMatches(t)) {
                if (!added) {
                    added = true;
                    t = GoTimes.date(t.getYear(), t.getMonthValue(), t.getDayOfMonth(), 0, 0, 0, 0, loc);
                }
                t = GoTimes.addDate(t, 0, 0, 1);
                // a DST change at midnight moves the day's start: back to midnight
                if (t.getHour() != 0) {
                    if (t.getHour() > 12) {
                        t = GoTimes.add(t, (24 - t.getHour()) * GoTimes.HOUR);
                    } else {
                        t = GoTimes.add(t, -t.getHour() * GoTimes.HOUR);
                    }
                }
                if (t.getDayOfMonth() == 1) {
                    continue wrap;
                }
            }
            while (((1L << t.getHour()) & hour) == 0) {
                if (!added) {
                    added = true;
                    t = GoTimes.date(t.getYear(), t.getMonthValue(), t.getDayOfMonth(), t.getHour(), 0, 0, 0, loc);
                }
                t = GoTimes.add(t, GoTimes.HOUR);
                if (t.getHour() == 0) {
                    continue wrap;
                }
            }
            while (((1L << t.getMinute()) & minute) == 0) {
                if (!added) {
                    added = true;
                    t = GoTimes.truncate(t, 60);
                }
                t = GoTimes.add(t, GoTimes.MINUTE);
                if (t.getMinute() == 0) {
                    continue wrap;
                }
            }
            while (((1L << t.getSecond()) & second) == 0) {
                if (!added) {
                    added = true;
                    t = GoTimes.truncate(t, 1);
                }
                t = GoTimes.add(t, GoTimes.SECOND);
                if (t.getSecond() == 0) {
                    continue wrap;
                }
            }
            return t.withZoneSameInstant(origLocation);
        }
    }

    /** Day of month and day of week: both must match if either field holds a star, else either one. */
    boolean dayMatches(ZonedDateTime t) {
        boolean domMatch = ((1L << t.getDayOfMonth()) & dom) != 0;
        boolean dowMatch = ((1L << GoTimes.weekday(t)) & dow) != 0;
        if ((dom & STAR_BIT) != 0 || (dow & STAR_BIT) != 0) {
            return domMatch && dowMatch;
        }
        return domMatch || dowMatch;
    }
}
