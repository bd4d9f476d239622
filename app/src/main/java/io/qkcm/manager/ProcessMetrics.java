package io.qkcm.manager;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import jakarta.inject.Singleton;

/**
 * The process metrics every Go binary of Kubernetes exports through client_golang's process collector,
 * under its names, read from procfs as that collector reads them: {@code process_cpu_seconds_total}
 * (utime + stime of {@code /proc/self/stat} in clock ticks of 1/100 s), {@code
 * process_resident_memory_bytes} and {@code process_virtual_memory_bytes} (from the same line),
 * {@code process_open_fds} ({@code /proc/self/fd}) and {@code process_max_fds} (the soft limit in
 * {@code /proc/self/limits}). Micrometer's own JVM metrics stay beside them; these make dashboards
 * written for kube-controller-manager work unchanged. Off Linux (no procfs) nothing is registered.
 */
@Singleton
public class ProcessMetrics implements MeterBinder {

    /** USER_HZ: the unit of utime/stime on Linux, as the Go collector assumes. */
    private static final double CLOCK_TICKS = 100.0;
    /** The page size of amd64/arm64 Linux, in which /proc/self/stat counts rss. */
    private static final long PAGE_SIZE = 4096;
    private static final Path STAT = Path.of("/proc/self/stat");

    @Override
    public void bindTo(MeterRegistry registry) {
        if (!Files.isReadable(STAT)) {
            return;
        }
        FunctionCounter.builder("process.cpu.seconds", this, p -> p.stat(14, 15) / CLOCK_TICKS)
                .description("Total user and system CPU time spent in seconds.").register(registry);
        Gauge.builder("process.resident.memory.bytes", this, p -> p.stat(24, -1) * PAGE_SIZE)
                .description("Resident memory size in bytes.").register(registry);
        Gauge.builder("process.virtual.memory.bytes", this, p -> p.stat(23, -1))
                .description("Virtual memory size in bytes.").register(registry);
        Gauge.builder("process.open.fds", this, ProcessMetrics::openFds)
                .description("Number of open file descriptors.").register(registry);
        Gauge.builder("process.max.fds", this, ProcessMetrics::maxFds)
                .description("Maximum number of open file descriptors.").register(registry);
    }

    /**
     * The sum of fields {@code a} and {@code b} of {@code /proc/self/stat}, numbered as proc(5) numbers
     * them (1 = pid, 2 = the command name, which may hold spaces, so fields are counted after its closing
     * parenthesis); {@code b < 0} for field {@code a} alone.
     */
    double stat(int a, int b) {
        try {
            return sumFields(Files.readString(STAT), a, b);
        } catch (IOException | RuntimeException e) {
            return Double.NaN;
        }
    }

    static double sumFields(String statLine, int a, int b) {
        String afterComm = statLine.substring(statLine.lastIndexOf(')') + 2);
        List<String> fields = List.of(afterComm.trim().split(" +"));
        // fields[0] is field 3 (state)
        double sum = Double.parseDouble(fields.get(a - 3));
        if (b >= 0) {
            sum += Double.parseDouble(fields.get(b - 3));
        }
        return sum;
    }

    double openFds() {
        int n = 0;
        try (DirectoryStream<Path> fds = Files.newDirectoryStream(Path.of("/proc/self/fd"))) {
            for (Path ignored : fds) {
                n++;
            }
        } catch (IOException | RuntimeException e) {
            return Double.NaN;
        }
        // the directory stream itself holds one descriptor while it is counted
        return n - 1;
    }

    double maxFds() {
        try {
            return maxOpenFiles(Files.readString(Path.of("/proc/self/limits")));
        } catch (IOException | RuntimeException e) {
            return Double.NaN;
        }
    }

    static double maxOpenFiles(String limits) {
        for (String line : limits.split("\n")) {
            if (line.startsWith("Max open files")) {
                String soft = line.substring("Max open files".length()).trim().split(" +")[0];
                return "unlimited".equals(soft) ? Double.POSITIVE_INFINITY : Double.parseDouble(soft);
            }
        }
        return Double.NaN;
    }
}
