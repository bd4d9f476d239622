package io.qkcm.controller.cronjob.cron;

import java.time.ZoneId;
import java.util.List;
import java.util.Map;

import io.qkcm.controller.cronjob.cron.GoTimes.GoError;

/**
 * robfig/cron v3's standard parser ({@code cron.ParseStandard}): five fields (minute, hour, day of
 * month, month, day of week) with ranges, steps, names, '*' and '?', the descriptors
 * (@yearly/@annually, @monthly, @weekly, @daily/@midnight, @hourly, @every &lt;duration&gt;) and an
 * optional {@code TZ=}/{@code CRON_TZ=} prefix. Errors carry robfig/cron's texts.
 */
public final class CronParser {

    record Bounds(long min, long max, Map<String, Long> names) {
    }

    static final Bounds SECONDS = new Bounds(0, 59, null);
    static final Bounds MINUTES = new Bounds(0, 59, null);
    static final Bounds HOURS = new Bounds(0, 23, null);
    static final Bounds DOM = new Bounds(1, 31, null);
    static final Bounds MONTHS = new Bounds(1, 12, Map.ofEntries(Map.entry("jan", 1L), Map.entry("feb", 2L),
            Map.entry("mar", 3L), Map.entry("apr", 4L), Map.entry("may", 5L), Map.entry("jun", 6L), Map.entry("jul", 7L),
            Map.entry("aug", 8L), Map.entry("sep", 9L), Map.entry("oct", 10L), Map.entry("nov", 11L), Map.entry("dec", 12L)));
    static final Bounds DOW = new Bounds(0, 6, Map.of("sun", 0L, "mon", 1L, "tue", 2L, "wed", 3L, "thu", 4L, "fri", 5L,
            "sat", 6L));

    private CronParser() {
    }

    /** {@code cron.ParseStandard(spec)}. */
    public static Schedule parseStandard(String spec) throws GoError {
        if (spec.isEmpty()) {
            throw new GoError("empty spec string");
        }
        ZoneId loc = null; // time.Local
        if (spec.startsWith("TZ=") || spec.startsWith("CRON_TZ=")) {
            int i = spec.indexOf(' ');
            int eq = spec.indexOf('=');
            if (i < 0) {
                // upstream slices spec[eq+1:-1] and panics
                throw new GoError("panic: runtime error: slice bounds out of range [:-1]");
            }
            String name = spec.substring(eq + 1, i);
            try {
                loc = GoTimes.loadLocation(name);
            } catch (GoError e) {
                throw new GoError("provided bad location " + name + ": " + e.getMessage());
            }
            spec = GoTimes.trimSpace(spec.substring(i));
        }
        if (spec.startsWith("@")) {
            return parseDescriptor(spec, loc);
        }
        List<String> fields = GoTimes.fields(spec);
        if (fields.size() != 5) {
            throw new GoError("expected exactly 5 fields, found " + fields.size() + ": [" + String.join(" ", fields) + "]");
        }
        long second = getField("0", SECONDS);
        long minute = getField(fields.get(0), MINUTES);
        long hour = getField(fields.get(1), HOURS);
        long dayOfMonth = getField(fields.get(2), DOM);
        long month = getField(fields.get(3), MONTHS);
        long dayOfWeek = getField(fields.get(4), DOW);
        return new SpecSchedule(second, minute, hour, dayOfMonth, month, dayOfWeek, loc);
    }

    /** A comma-separated list of ranges; empty items are skipped (strings.FieldsFunc). */
    static long getField(String field, Bounds r) throws GoError {
        long bits = 0;
        for (String expr : field.split(",")) {
            if (expr.isEmpty()) {
                continue;
            }
            bits |= getRange(expr, r);
        }
        return bits;
    }

    /** {@code number | number "-" number [ "/" number ]}, '*' or '?'. */
    static long getRange(String expr, Bounds r) throws GoError {
        List<String> rangeAndStep = GoTimes.split(expr, '/');
        List<String> lowAndHigh = GoTimes.split(rangeAndStep.get(0), '-');
        boolean singleDigit = lowAndHigh.size() == 1;
        long start;
        long end;
        long step;
        long extra = 0;
        if (lowAndHigh.get(0).equals("*") || lowAndHigh.get(0).equals("?")) {
            start = r.min();
            end = r.max();
            extra = SpecSchedule.STAR_BIT;
        } else {
            start = parseIntOrName(lowAndHigh.get(0), r.names());
            switch (lowAndHigh.size()) {
                case 1 -> end = start;
                case 2 -> end = parseIntOrName(lowAndHigh.get(1), r.names());
                default -> throw new GoError("too many hyphens: " + expr);
            }
        }
        switch (rangeAndStep.size()) {
            case 1 -> step = 1;
            case 2 -> {
                step = mustParseInt(rangeAndStep.get(1));
                if (singleDigit) {
                    end = r.max();
                }
                if (step > 1) {
                    extra = 0;
                }
            }
            default -> throw new GoError("too many slashes: " + expr);
        }
        if (start < r.min()) {
            throw new GoError("beginning of range (" + start + ") below minimum (" + r.min() + "): " + expr);
        }
        if (end > r.max()) {
            throw new GoError("end of range (" + end + ") above maximum (" + r.max() + "): " + expr);
        }
        if (start > end) {
            throw new GoError("beginning of range (" + start + ") beyond end of range (" + end + "): " + expr);
        }
        if (step == 0) {
            throw new GoError("step of range should be a positive number: " + expr);
        }
        return getBits(start, end, step) | extra;
    }

    private static long parseIntOrName(String expr, Map<String, Long> names) throws GoError {
        if (names != null) {
            Long named = names.get(expr.toLowerCase(java.util.Locale.ROOT));
            if (named != null) {
                return named;
            }
        }
        return mustParseInt(expr);
    }

    private static long mustParseInt(String expr) throws GoError {
        long num;
        try {
            num = GoTimes.atoi(expr);
        } catch (GoError e) {
            throw new GoError("failed to parse int from " + expr + ": " + e.getMessage());
        }
        if (num < 0) {
            throw new GoError("negative number (" + num + ") not allowed: " + expr);
        }
        return num;
    }

    /** The bits of [min, max] at the given step. */
    static long getBits(long min, long max, long step) {
        if (step == 1) {
            return ~(-1L << (max + 1)) & (-1L << min);
        }
        long bits = 0;
        for (long i = min; Long.compareUnsigned(i, max) <= 0; i += step) {
            bits |= 1L << i;
        }
        return bits;
    }

    private static long all(Bounds r) {
        return getBits(r.min(), r.max(), 1) | SpecSchedule.STAR_BIT;
    }

    private static Schedule parseDescriptor(String descriptor, ZoneId loc) throws GoError {
        long s0 = 1L << SECONDS.min();
        long m0 = 1L << MINUTES.min();
        long h0 = 1L << HOURS.min();
        switch (descriptor) {
            case "@yearly", "@annually" -> {
                return new SpecSchedule(s0, m0, h0, 1L << DOM.min(), 1L << MONTHS.min(), all(DOW), loc);
            }
            case "@monthly" -> {
                return new SpecSchedule(s0, m0, h0, 1L << DOM.min(), all(MONTHS), all(DOW), loc);
            }
            case "@weekly" -> {
                return new SpecSchedule(s0, m0, h0, all(DOM), all(MONTHS), 1L << DOW.min(), loc);
            }
            case "@daily", "@midnight" -> {
                return new SpecSchedule(s0, m0, h0, all(DOM), all(MONTHS), all(DOW), loc);
            }
            case "@hourly" -> {
                return new SpecSchedule(s0, m0, all(HOURS), all(DOM), all(MONTHS), all(DOW), loc);
            }
            default -> {
            }
        }
        String every = "@every ";
        if (descriptor.startsWith(every)) {
            long duration;
            try {
                duration = GoTimes.parseDuration(descriptor.substring(every.length()));
            } catch (GoError e) {
                throw new GoError("failed to parse duration " + descriptor + ": " + e.getMessage());
            }
            return ConstantDelaySchedule.every(duration);
        }
        throw new GoError("unrecognized descriptor: " + descriptor);
    }
}
