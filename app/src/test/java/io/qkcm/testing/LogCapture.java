package io.qkcm.testing;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;

/**
 * Captures the log records of a logger tree (JBoss LogManager is the JUL manager in Quarkus tests) with
 * their formatted message, parameters and exception text, so a test can assert what was (not) logged.
 * {@link #start} proves the capture works by logging and finding a probe line.
 */
public final class LogCapture implements AutoCloseable {

    private final String loggerName;
    private final Level minLevel;
    private final List<String> lines = new CopyOnWriteArrayList<>();
    private final Handler handler = new Handler() {
        @Override
        public void publish(LogRecord r) {
            if (r.getLevel().intValue() < minLevel.intValue()) {
                return;
            }
            StringBuilder b = new StringBuilder().append(r.getLevel()).append(' ').append(r.getLoggerName()).append(": ");
            b.append(r.getMessage());
            Object[] params = r.getParameters();
            if (params != null) {
                for (Object p : params) {
                    b.append(" | ").append(p);
                }
            }
            Throwable t = r.getThrown();
            while (t != null) {
                b.append(" | ").append(t);
                t = t.getCause();
            }
            lines.add(b.toString());
        }

        @Override
        public void flush() {
        }

        @Override
        public void close() {
        }
    };

    private LogCapture(String loggerName, Level minLevel) {
        this.loggerName = loggerName;
        this.minLevel = minLevel;
    }

    /** Starts capturing records of {@code loggerName} and below at {@code minLevel} or above. */
    public static LogCapture start(String loggerName, Level minLevel) {
        LogCapture c = new LogCapture(loggerName, minLevel);
        java.util.logging.Logger.getLogger(loggerName).addHandler(c.handler);
        String probe = "log-capture-probe-" + System.nanoTime();
        org.jboss.logging.Logger.getLogger(loggerName + ".probe").warn(probe);
        if (c.lines.stream().noneMatch(l -> l.contains(probe))) {
            c.close();
            throw new IllegalStateException("log capture of " + loggerName + " does not see its probe line");
        }
        c.lines.removeIf(l -> l.contains(probe));
        return c;
    }

    public List<String> lines() {
        return new ArrayList<>(lines);
    }

    @Override
    public void close() {
        java.util.logging.Logger.getLogger(loggerName).removeHandler(handler);
    }
}
