package io.qkcm.controller.podautoscaler.monitor;

import java.time.Duration;
import java.util.stream.IntStream;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * Upstream's podautoscaler/monitor: horizontal_pod_autoscaler_controller_reconciliations_total and
 * _reconciliation_duration_seconds (labels action, error), metric_computation_total and
 * _metric_computation_duration_seconds (labels action, error, metric_type), with upstream's buckets
 * (1 ms doubling, 15 of them).
 */
public final class Monitor {

    public static final String ACTION_SCALE_UP = "scale_up";
    public static final String ACTION_SCALE_DOWN = "scale_down";
    public static final String ACTION_NONE = "none";
    public static final String ERROR_SPEC = "spec";
    public static final String ERROR_INTERNAL = "internal";
    public static final String ERROR_NONE = "none";

    private static final String PREFIX = "horizontal.pod.autoscaler.controller.";
    private static final double[] BUCKETS = IntStream.range(0, 15).mapToDouble(i -> 0.001 * Math.pow(2, i)).toArray();

    private final MeterRegistry registry;

    public Monitor(MeterRegistry registry) {
        this.registry = registry;
    }

    public void observeReconciliationResult(String action, String error, Duration duration) {
        Counter.builder(PREFIX + "reconciliations")
                .description("Number of reconciliations of HPA controller. The label 'action' should be either 'scale_down', 'scale_up', or 'none'. Also, the label 'error' should be either 'spec', 'internal', or 'none'.")
                .tag("action", action).tag("error", error).register(registry).increment();
        DistributionSummary.builder(PREFIX + "reconciliation.duration.seconds")
                .description("The time(seconds) that the HPA controller takes to reconcile once.")
                .serviceLevelObjectives(BUCKETS).tag("action", action).tag("error", error).register(registry)
                .record(duration.toNanos() / 1e9);
    }

    public void observeMetricComputationResult(String action, String error, Duration duration, String metricType) {
        Counter.builder(PREFIX + "metric.computation")
                .description("Number of metric computations. The label 'metric_type' corresponds to HPA.spec.metrics[*].type")
                .tag("action", action).tag("error", error).tag("metric_type", metricType).register(registry).increment();
        DistributionSummary.builder(PREFIX + "metric.computation.duration.seconds")
                .description("The time(seconds) that the HPA controller takes to calculate one metric.")
                .serviceLevelObjectives(BUCKETS).tag("action", action).tag("error", error).tag("metric_type", metricType)
                .register(registry).record(duration.toNanos() / 1e9);
    }
}
