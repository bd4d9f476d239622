package io.qkcm.controller.cronjob.cron;

import java.nio.charset.StandardCharsets;
import java.time.DateTimeException;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.zone.ZoneRules;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * The parts of Go's {@code time} and {@code strings} packages robfig/cron and the CronJob controller
 * depend on, with Go's semantics: {@code time.Date}'s normalisation and its choice of offset for a
 * wall time that a DST change skips or repeats, {@code AddDate}, {@code Add}, {@code Sub} (saturating),
 * {@code Truncate} (on the absolute time), {@code LoadLocation}, {@code ParseDuration},
 * {@code strings.Fields} and {@code strconv.Atoi}, with their error texts.
 */
public final class GoTimes {

    /** Go's zero {@code time.Time}: January 1, year 1, 00:00:00 UTC. */
    public static final ZonedDateTime ZERO = ZonedDateTime.ofInstant(Instant.ofEpochSecond(-62135596800L), ZoneOffset.UTC);

    static final long SECOND = 1_000_000_000L;
    static final long MINUTE = 60 * SECOND;
    static final long HOUR = 60 * MINUTE;
    private static final Set<String> ZONE_IDS = ZoneId.getAvailableZoneIds();
    /**
     * Names of Go's zone database (tzdata) the JDK's leaves out: the fixed-offset zones it keeps only as
     * short IDs, and links it drops.
     */
    private static final java.util.Map<String, ZoneId> NOT_IN_JDK = java.util.Map.of(
            "EST", ZoneOffset.ofHours(-5),
            "MST", ZoneOffset.ofHours(-7),
            "HST", ZoneOffset.ofHours(-10),
            "ROC", ZoneId.of("Asia/Taipei"),
            "GMT+0", ZoneOffset.UTC,
            "GMT-0", ZoneOffset.UTC,
            "Factory", ZoneOffset.UTC);

    private GoTimes() {
    }

    public static boolean isZero(ZonedDateTime t) {
        return t.toInstant().equals(ZERO.toInstant());
    }

    /** {@code t.Add(d)}. */
    public static ZonedDateTime add(ZonedDateTime t, long nanos) {
        return ZonedDateTime.ofInstant(t.toInstant().plusNanos(nanos), t.getZone());
    }

    /** {@code t.Sub(u)}: nanoseconds, saturated at the int64 bounds as Go's Duration. */
    public static long sub(ZonedDateTime t, ZonedDateTime u) {
        return sub(t.toInstant(), u.toInstant());
    }

    public static long sub(Instant t, Instant u) {
        try {
            long secs = Math.subtractExact(t.getEpochSecond(), u.getEpochSecond());
            return Math.addExact(Math.multiplyExact(secs, SECOND), (long) t.getNano() - u.getNano());
        } catch (ArithmeticException e) {
            return t.isBefore(u) ? Long.MIN_VALUE : Long.MAX_VALUE;
        }
    }

    /** {@code t.Truncate(d)} for d a whole number of seconds: on the absolute time, not the wall clock. */
    static ZonedDateTime truncate(ZonedDateTime t, long unitSeconds) {
        long s = t.toEpochSecond();
        return ZonedDateTime.ofInstant(Instant.ofEpochSecond(s - Math.floorMod(s, unitSeconds)), t.getZone());
    }

    /** {@code time.Date(year, month, day, hour, min, sec, nsec, loc)}. */
    static ZonedDateTime date(long year, long month, long day, long hour, long min, long sec, long nsec, ZoneId loc) {
        long m = month - 1;
        year += Math.floorDiv(m, 12);
        m = Math.floorMod(m, 12);
        sec += Math.floorDiv(nsec, SECOND);
        nsec = Math.floorMod(nsec, SECOND);
        min += Math.floorDiv(sec, 60);
        sec = Math.floorMod(sec, 60);
        hour += Math.floorDiv(min, 60);
        min = Math.floorMod(min, 60);
        day += Math.floorDiv(hour, 24);
        hour = Math.floorMod(hour, 24);
        long days = LocalDate.of(Math.toIntExact(year), (int) m + 1, 1).toEpochDay() + day - 1;
        long unix = days * 86400 + hour * 3600 + min * 60 + sec;
        // the wall time read as UTC; the offset in force there, then the one in force at the instant
        // that offset gives (time.Date's adjustment near a zone transition)
        ZoneRules rules = loc.getRules();
        int offset = rules.getOffset(Instant.ofEpochSecond(unix)).getTotalSeconds();
        if (offset != 0) {
            long utc = unix - offset;
            offset = rules.getOffset(Instant.ofEpochSecond(utc)).getTotalSeconds();
        }
        return ZonedDateTime.ofInstant(Instant.ofEpochSecond(unix - offset, nsec), loc);
    }

    /** {@code t.AddDate(years, months, days)}: on the wall clock, normalised by {@link #date}. */
    static ZonedDateTime addDate(ZonedDateTime t, int years, int months, int days) {
        return date(t.getYear() + years, t.getMonthValue() + months, t.getDayOfMonth() + days, t.getHour(), t.getMinute(),
                t.getSecond(), t.getNano(), t.getZone());
    }

    /** {@code t.Weekday()}: Sunday is 0. */
    static int weekday(ZonedDateTime t) {
        return t.getDayOfWeek().getValue() % 7;
    }

    /**
     * {@code time.LoadLocation}: null stands for {@code time.Local} ("Local"); "" and "UTC" are UTC;
     * otherwise an IANA zone name known to the tz database.
     */
    public static ZoneId loadLocation(String name) throws GoError {
        if (name.isEmpty() || name.equals("UTC")) {
            return ZoneOffset.UTC;
        }
        if (name.equals("Local")) {
            return null;
        }
        if (containsDotDot(name) || name.charAt(0) == '/' || name.charAt(0) == '\\') {
            throw new GoError("time: invalid location name");
        }
        if (ZONE_IDS.contains(name)) {
            try {
                return ZoneId.of(name);
            } catch (DateTimeException e) {
                // fall through
            }
        }
        ZoneId known = NOT_IN_JDK.get(name);
        if (known != null) {
            return known;
        }
        throw new GoError("unknown time zone " + name);
    }

    private static boolean containsDotDot(String s) {
        if (s.length() < 2) {
            return false;
        }
        for (int i = 0; i < s.length() - 1; i++) {
            if (s.charAt(i) == '.' && s.charAt(i + 1) == '.') {
                return true;
            }
        }
        return false;
    }

    /** Go's {@code unicode.IsSpace}. */
    static boolean isSpace(int c) {
        if (c <= 0xFF) {
            return c == '\t' || c == '\n' || c == 0x0B || c == '\f' || c == '\r' || c == ' ' || c == 0x85 || c == 0xA0;
        }
        return c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F || c == 0x205F
                || c == 0x3000;
    }

    /** {@code strings.Fields}. */
    static List<String> fields(String s) {
        List<String> out = new ArrayList<>();
        int start = -1;
        for (int i = 0; i < s.length();) {
            int c = s.codePointAt(i);
            if (isSpace(c)) {
                if (start >= 0) {
                    out.add(s.substring(start, i));
                    start = -1;
                }
            } else if (start < 0) {
                start = i;
            }
            i += Character.charCount(c);
        }
        if (start >= 0) {
            out.add(s.substring(start));
        }
        return out;
    }

    /** {@code strings.TrimSpace}. */
    static String trimSpace(String s) {
        int b = 0;
        int e = s.length();
        while (b < e && isSpace(s.codePointAt(b))) {
            b += Character.charCount(s.codePointAt(b));
        }
        while (e > b && isSpace(s.codePointBefore(e))) {
            e -= Character.charCount(s.codePointBefore(e));
        }
        return s.substring(b, e);
    }

    /** {@code strings.Split}: empty pieces kept. */
    static List<String> split(String s, char sep) {
        List<String> out = new ArrayList<>();
        int from = 0;
        for (int i = 0; i < s.length(); i++) {
            if (s.charAt(i) == sep) {
                out.add(s.substring(from, i));
                from = i + 1;
            }
        }
        out.add(s.substring(from));
        return out;
    }

    /** {@code strconv.Atoi} on a 64-bit platform. */
    static long atoi(String s) throws GoError {
        String digits = s;
        boolean neg = false;
        if (!s.isEmpty() && (s.charAt(0) == '+' || s.charAt(0) == '-')) {
            neg = s.charAt(0) == '-';
            digits = s.substring(1);
        }
        if (digits.isEmpty()) {
            throw numError(s, "invalid syntax");
        }
        // ParseUint's loop: the first problem, left to right, wins
        long n = 0; // unsigned
        final long cutoff = Long.divideUnsigned(-1L, 10) + 1;
        for (int i = 0; i < digits.length(); i++) {
            char c = digits.charAt(i);
            if (c < '0' || c > '9') {
                throw numError(s, "invalid syntax");
            }
            if (Long.compareUnsigned(n, cutoff) >= 0) {
                throw numError(s, "value out of range");
            }
            n *= 10;
            long n1 = n + (c - '0');
            if (Long.compareUnsigned(n1, n) < 0) {
                throw numError(s, "value out of range");
            }
            n = n1;
        }
        if (!neg && Long.compareUnsigned(n, Long.MIN_VALUE) >= 0) {
            throw numError(s, "value out of range");
        }
        if (neg && Long.compareUnsigned(n, Long.MIN_VALUE) > 0) {
            throw numError(s, "value out of range");
        }
        return neg ? -n : n;
    }

    private static GoError numError(String s, String what) {
        return new GoError("strconv.Atoi: parsing " + quote(s) + ": " + what);
    }

    /** Go's {@code strconv.Quote} ({@code %q}) for the printable text a schedule holds. */
    public static String quote(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (int i = 0; i < s.length();) {
            int c = s.codePointAt(i);
            i += Character.charCount(c);
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\t' -> b.append("\\t");
                case '\r' -> b.append("\\r");
                case 0x07 -> b.append("\\a");
                case '\b' -> b.append("\\b");
                case '\f' -> b.append("\\f");
                case 0x0B -> b.append("\\v");
                default -> {
                    if (c < 0x20 || c == 0x7F) {
                        b.append(String.format("\\x%02x", c));
                    } else if (Character.isISOControl(c) || (!Character.isDefined(c)) || (c > 0x7F && isSpace(c) && c != ' ')) {
                        b.append(c <= 0xFFFF ? String.format("\\u%04x", c) : String.format("\\U%08x", c));
                    } else {
                        b.appendCodePoint(c);
                    }
                }
            }
        }
        return b.append('"').toString();
    }

    /** The time package's own {@code quote}: non-ASCII and control bytes as \xNN. */
    static String timeQuote(String s) {
        StringBuilder b = new StringBuilder("\"");
        for (byte x : s.getBytes(StandardCharsets.UTF_8)) {
            int c = x & 0xFF;
            if (c >= 0x80 || c < ' ') {
                b.append(String.format("\\x%02x", c));
            } else {
                if (c == '"' || c == '\\') {
                    b.append('\\');
                }
                b.append((char) c);
            }
        }
        return b.append('"').toString();
    }

    /** {@code time.ParseDuration}, in nanoseconds. */
    public static long parseDuration(String orig) throws GoError {
        byte[] s = orig.getBytes(StandardCharsets.UTF_8);
        int p = 0;
        long d = 0; // unsigned
        boolean neg = false;
        if (s.length > 0 && (s[0] == '-' || s[0] == '+')) {
            neg = s[0] == '-';
            p = 1;
        }
        if (s.length - p == 1 && s[p] == '0') {
            return 0;
        }
        if (p == s.length) {
            throw durationError("invalid duration", orig);
        }
        final long limit = Long.MIN_VALUE; // 1<<63 as unsigned
        while (p < s.length) {
            long v = 0;
            long f = 0;
            double scale = 1;
            if (!(s[p] == '.' || (s[p] >= '0' && s[p] <= '9'))) {
                throw durationError("invalid duration", orig);
            }
            int pl = p;
            // leadingInt
            for (; p < s.length; p++) {
                int c = s[p];
                if (c < '0' || c > '9') {
                    break;
                }
                if (Long.compareUnsigned(v, Long.divideUnsigned(limit, 10)) > 0) {
                    throw durationError("invalid duration", orig);
                }
                v = v * 10 + (c - '0');
                if (Long.compareUnsigned(v, limit) > 0) {
                    throw durationError("invalid duration", orig);
                }
            }
            boolean pre = pl != p;
            boolean post = false;
            if (p < s.length && s[p] == '.') {
                p++;
                int fl = p;
                boolean overflow = false;
                for (; p < s.length; p++) {
                    int c = s[p];
                    if (c < '0' || c > '9') {
                        break;
                    }
                    if (overflow) {
                        continue;
                    }
                    if (Long.compareUnsigned(f, Long.MAX_VALUE / 10) > 0) {
                        overflow = true;
                        continue;
                    }
                    long y = f * 10 + (c - '0');
                    if (Long.compareUnsigned(y, limit) > 0) {
                        overflow = true;
                        continue;
                    }
                    f = y;
                    scale *= 10;
                }
                post = fl != p;
            }
            if (!pre && !post) {
                throw durationError("invalid duration", orig);
            }
            int u0 = p;
            for (; p < s.length; p++) {
                int c = s[p];
                if (c == '.' || (c >= '0' && c <= '9')) {
                    break;
                }
            }
            if (p == u0) {
                throw durationError("missing unit in duration", orig);
            }
            String u = new String(s, u0, p - u0, StandardCharsets.UTF_8);
            long unit = switch (u) {
                case "ns" -> 1L;
                case "us", "\u00b5s", "\u03bcs" -> 1_000L;
                case "ms" -> 1_000_000L;
                case "s" -> SECOND;
                case "m" -> MINUTE;
                case "h" -> HOUR;
                default -> -1L;
            };
            if (unit < 0) {
                throw durationError("unknown unit " + timeQuote(u) + " in duration", orig);
            }
            if (Long.compareUnsigned(v, Long.divideUnsigned(limit, unit)) > 0) {
                throw durationError("invalid duration", orig);
            }
            v *= unit;
            if (f > 0) {
                v += (long) ((double) f * ((double) unit / scale));
                if (Long.compareUnsigned(v, limit) > 0) {
                    throw durationError("invalid duration", orig);
                }
            }
            d += v;
            if (Long.compareUnsigned(d, limit) > 0) {
                throw durationError("invalid duration", orig);
            }
        }
        if (neg) {
            return -d;
        }
        if (Long.compareUnsigned(d, Long.MAX_VALUE) > 0) {
            throw durationError("invalid duration", orig);
        }
        return d;
    }

    private static GoError durationError(String message, String value) {
        return new GoError("time: " + message + " " + timeQuote(value));
    }

    /** {@code t.In(loc).Format(time.RFC3339)}: whole seconds, "Z" or ±hh:mm. */
    public static String rfc3339(Instant t, ZoneId loc) {
        ZonedDateTime z = ZonedDateTime.ofInstant(t, loc);
        StringBuilder b = new StringBuilder();
        int y = z.getYear();
        if (y < 0) {
            b.append('-');
            y = -y;
        }
        b.append(String.format("%04d-%02d-%02dT%02d:%02d:%02d", y, z.getMonthValue(), z.getDayOfMonth(), z.getHour(),
                z.getMinute(), z.getSecond()));
        int off = z.getOffset().getTotalSeconds();
        if (off == 0) {
            return b.append('Z').toString();
        }
        b.append(off < 0 ? '-' : '+');
        int mins = Math.abs(off) / 60;
        return b.append(String.format("%02d:%02d", mins / 60, mins % 60)).toString();
    }

    /** An error with Go's text. */
    public static final class GoError extends Exception {
        private static final long serialVersionUID = 1L;

        public GoError(String message) {
            super(message);
        }
    }
}
