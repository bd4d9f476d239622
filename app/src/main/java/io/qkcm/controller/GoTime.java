package io.qkcm.controller;

import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;

/**
 * Go's {@code t.UTC().Format(time.RFC3339Nano)}: fractional seconds without trailing zeros, none if zero
 * (the endpoints controllers' last-change-trigger-time annotation).
 */
public final class GoTime {

    private static final DateTimeFormatter SECONDS = DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss")
            .withZone(ZoneOffset.UTC);

    private GoTime() {
    }

    public static String rfc3339NanoUtc(Instant t) {
        StringBuilder b = new StringBuilder(SECONDS.format(t));
        int nanos = t.getNano();
        if (nanos != 0) {
            String frac = String.format("%09d", nanos);
            int end = frac.length();
            while (frac.charAt(end - 1) == '0') {
                end--;
            }
            b.append('.').append(frac, 0, end);
        }
        return b.append('Z').toString();
    }
}
