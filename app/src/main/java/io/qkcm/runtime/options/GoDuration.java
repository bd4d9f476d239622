package io.qkcm.runtime.options;

import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Go's time.ParseDuration and Duration.String, since upstream's flags speak Go durations ("1m30s"). */
public final class GoDuration {

    private static final Pattern PART = Pattern.compile("(\\d+(?:\\.\\d*)?|\\.\\d+)(ns|us|µs|ms|s|m|h)");

    private GoDuration() {
    }

    public static Duration parse(String s) {
        String in = s.trim();
        if (in.equals("0")) {
            return Duration.ZERO;
        }
        boolean negative = in.startsWith("-");
        if (negative || in.startsWith("+")) {
            in = in.substring(1);
        }
        if (in.isEmpty()) {
            throw new IllegalArgumentException("invalid duration \"" + s + "\"");
        }
        Matcher m = PART.matcher(in);
        int pos = 0;
        double nanos = 0;
        while (pos < in.length()) {
            if (!m.find(pos) || m.start() != pos) {
                throw new IllegalArgumentException("invalid duration \"" + s + "\"");
            }
            double value = Double.parseDouble(m.group(1));
            nanos += value * switch (m.group(2)) {
                case "ns" -> 1;
                case "us", "µs" -> 1e3;
                case "ms" -> 1e6;
                case "s" -> 1e9;
                case "m" -> 60e9;
                default -> 3600e9;
            };
            pos = m.end();
        }
        Duration d = Duration.ofNanos(Math.round(nanos));
        return negative ? d.negated() : d;
    }

    /** Formats as Go's Duration.String for the units upstream defaults use ("15s", "12h0m0s", "100ms"). */
    public static String format(Duration d) {
        if (d.isZero()) {
            return "0s";
        }
        long nanos = d.toNanos();
        if (nanos < 1_000_000_000L && nanos % 1_000_000 == 0) {
            return (nanos / 1_000_000) + "ms";
        }
        StringBuilder sb = new StringBuilder();
        long h = d.toHours();
        long m = d.toMinutesPart();
        double sec = d.toSecondsPart() + d.toNanosPart() / 1e9;
        if (h > 0) {
            sb.append(h).append('h');
        }
        if (h > 0 || m > 0) {
            sb.append(m).append('m');
        }
        String secs = sec == Math.rint(sec) ? Long.toString((long) sec) : Double.toString(sec);
        sb.append(secs).append('s');
        return sb.toString();
    }
}
