package io.qkcm.controller.bootstrap;

import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.Optional;

/**
 * Go's {@code time.Parse(time.RFC3339, s)}, which reads a bootstrap token's {@code expiration}
 * (cluster-bootstrap's {@code secrets.GetExpiration}). Go tries a strict RFC 3339 reader first and
 * falls back to its general layout parser; the fallback accepts a superset with the same results,
 * so this is that parser run on the layout {@code 2006-01-02T15:04:05Z07:00}: a one-digit hour, a
 * comma as decimal mark, more than nine fraction digits (cut to nine) and zone offsets up to 24 h
 * and 60 min are read; {@code t}/{@code z} in lower case, a missing seconds field, spaces or any
 * other text are not. hack/golden/bootstrap's vectors pin it.
 */
final class GoRfc3339 {

    private GoRfc3339() {
    }

    /** The instant {@code s} names, or empty where Go returns an error. */
    static Optional<Instant> parse(String s) {
        Cursor c = new Cursor(s);
        try {
            // stdLongYear: four characters through atoi (a sign is allowed there, as in Go)
            if (c.remaining() < 4) {
                return Optional.empty();
            }
            int year = atoi(c.take(4));
            c.literal('-');
            int month = c.number(true);
            if (month <= 0 || month > 12) {
                return Optional.empty();
            }
            c.literal('-');
            int day = c.number(true);
            c.literal('T');
            int hour = c.number(false);
            if (hour < 0 || hour >= 24) {
                return Optional.empty();
            }
            c.literal(':');
            int minute = c.number(true);
            if (minute < 0 || minute >= 60) {
                return Optional.empty();
            }
            c.literal(':');
            int second = c.number(true);
            if (second < 0 || second >= 60) {
                return Optional.empty();
            }
            int nanos = 0;
            // a fraction the layout does not name is still read after the seconds
            if (c.remaining() >= 2 && commaOrPeriod(c.peek(0)) && isDigit(c.peek(1))) {
                int n = 2;
                while (n < c.remaining() && isDigit(c.peek(n))) {
                    n++;
                }
                nanos = nanoseconds(c.take(n));
            }
            // stdISO8601ColonTZ
            int offsetSeconds;
            if (c.remaining() >= 1 && c.peek(0) == 'Z') {
                c.take(1);
                offsetSeconds = 0;
            } else {
                if (c.remaining() < 6 || c.peek(3) != ':') {
                    return Optional.empty();
                }
                String tz = c.take(6);
                char sign = tz.charAt(0);
                int hr = fixedTwoDigits(tz.substring(1, 3));
                int mm = fixedTwoDigits(tz.substring(4, 6));
                // Go checks with > rather than >=: offsets of 24 h or 60 min are written by some
                if (hr > 24 || mm > 60) {
                    return Optional.empty();
                }
                offsetSeconds = (hr * 60 + mm) * 60;
                if (sign == '-') {
                    offsetSeconds = -offsetSeconds;
                } else if (sign != '+') {
                    return Optional.empty();
                }
            }
            if (c.remaining() > 0) {
                return Optional.empty(); // extra text
            }
            if (day < 1 || day > daysIn(month, year)) {
                return Optional.empty();
            }
            Instant local = LocalDateTime.of(year, month, day, hour, minute, second, nanos).toInstant(ZoneOffset.UTC);
            return Optional.of(local.minusSeconds(offsetSeconds));
        } catch (Bad e) {
            return Optional.empty();
        }
    }

    private static final class Bad extends Exception {
        private static final long serialVersionUID = 1L;

        Bad() {
            super(null, null, false, false);
        }
    }

    private static final class Cursor {
        private final String s;
        private int pos;

        Cursor(String s) {
            this.s = s;
        }

        int remaining() {
            return s.length() - pos;
        }

        char peek(int i) {
            return s.charAt(pos + i);
        }

        String take(int n) {
            String t = s.substring(pos, pos + n);
            pos += n;
            return t;
        }

        void literal(char ch) throws Bad {
            if (remaining() < 1 || peek(0) != ch) {
                throw new Bad();
            }
            pos++;
        }

        /** Go's getnum: one or two digits; {@code fixed} requires two. */
        int number(boolean fixed) throws Bad {
            if (remaining() < 1 || !isDigit(peek(0))) {
                throw new Bad();
            }
            if (remaining() < 2 || !isDigit(peek(1))) {
                if (fixed) {
                    throw new Bad();
                }
                return take(1).charAt(0) - '0';
            }
            String two = take(2);
            return (two.charAt(0) - '0') * 10 + (two.charAt(1) - '0');
        }
    }

    private static int fixedTwoDigits(String two) throws Bad {
        if (!isDigit(two.charAt(0)) || !isDigit(two.charAt(1))) {
            throw new Bad();
        }
        return (two.charAt(0) - '0') * 10 + (two.charAt(1) - '0');
    }

    /** Go's atoi: an optional sign, then digits only (none is zero). */
    private static int atoi(String s) throws Bad {
        boolean neg = false;
        int i = 0;
        if (!s.isEmpty() && (s.charAt(0) == '-' || s.charAt(0) == '+')) {
            neg = s.charAt(0) == '-';
            i = 1;
        }
        int x = 0;
        for (; i < s.length(); i++) {
            char ch = s.charAt(i);
            if (!isDigit(ch)) {
                throw new Bad();
            }
            x = x * 10 + (ch - '0');
        }
        return neg ? -x : x;
    }

    /** Go's parseNanoseconds: the separator and at most nine digits, scaled to nanoseconds. */
    private static int nanoseconds(String value) throws Bad {
        int nbytes = Math.min(value.length(), 10);
        int ns = atoi(value.substring(1, nbytes));
        for (int i = 0; i < 10 - nbytes; i++) {
            ns *= 10;
        }
        return ns;
    }

    private static boolean commaOrPeriod(char ch) {
        return ch == '.' || ch == ',';
    }

    private static boolean isDigit(char ch) {
        return ch >= '0' && ch <= '9';
    }

    private static int daysIn(int month, int year) {
        if (month == 2) {
            boolean leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
            return leap ? 29 : 28;
        }
        return switch (month) {
            case 4, 6, 9, 11 -> 30;
            default -> 31;
        };
    }
}
