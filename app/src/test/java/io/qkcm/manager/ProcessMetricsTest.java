package io.qkcm.manager;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.management.ManagementFactory;

import org.junit.jupiter.api.Test;

import io.micrometer.prometheus.PrometheusConfig;
import io.micrometer.prometheus.PrometheusMeterRegistry;

/** client_golang's process metrics, under its names, from procfs. */
class ProcessMetricsTest {

    @Test
    void fieldsAreCountedAfterACommandNameWithSpacesAndParentheses() {
        // pid (comm) state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt utime stime
        // cutime cstime priority nice threads itrealvalue starttime vsize rss
        String stat = "42 (java (qkcm) x) S 1 42 42 0 -1 4194560 100 0 0 0 250 150 0 0 20 0 30 0 1000 "
                + "123456789 5000 18446744073709551615";
        assertThat(ProcessMetrics.sumFields(stat, 14, 15)).isEqualTo(400);
        assertThat(ProcessMetrics.sumFields(stat, 23, -1)).isEqualTo(123456789);
        assertThat(ProcessMetrics.sumFields(stat, 24, -1)).isEqualTo(5000);
    }

    @Test
    void theSoftLimitOfOpenFiles() {
        String limits = """
                Limit                     Soft Limit           Hard Limit           Units
                Max cpu time              unlimited            unlimited            seconds
                Max open files            1048576              1048576              files
                """;
        assertThat(ProcessMetrics.maxOpenFiles(limits)).isEqualTo(1048576);
    }

    @Test
    void exportedUnderUpstreamNamesWithThisProcessValues() {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        new ProcessMetrics().bindTo(registry);
        String text = registry.scrape();
        assertThat(text).contains("process_cpu_seconds_total ", "process_resident_memory_bytes ",
                "process_virtual_memory_bytes ", "process_open_fds ", "process_max_fds ");
        double rss = registry.get("process.resident.memory.bytes").gauge().value();
        long heapUsed = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
        // the resident set holds at least the used heap's pages that were touched, and is not absurd
        assertThat(rss).isGreaterThan(10 * 1024 * 1024).isLessThan(64.0 * 1024 * 1024 * 1024);
        assertThat(heapUsed).isPositive();
        double cpu = registry.get("process.cpu.seconds").functionCounter().count();
        assertThat(cpu).isPositive();
        assertThat(registry.get("process.open.fds").gauge().value()).isGreaterThan(3);
    }
}
