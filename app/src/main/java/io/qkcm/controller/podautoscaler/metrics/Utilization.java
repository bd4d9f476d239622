package io.qkcm.controller.podautoscaler.metrics;

import java.util.Map;

/** Upstream's metrics/utilization.go: usage ratios over a set of pod metrics. */
public final class Utilization {

    private Utilization() {
    }

    /** Upstream's GetResourceUtilizationRatio's results. */
    public record ResourceRatio(double ratio, int utilization, long rawAverageValue) {
    }

    /** Upstream's GetMetricUsageRatio's results. */
    public record UsageRatio(double ratio, long usage) {
    }

    /**
     * Utilization (percent of the requests, over the pods that have a request) against the target
     * utilization; the average raw value per pod counted.
     */
    public static ResourceRatio resourceUtilizationRatio(Map<String, PodMetric> metrics, Map<String, Long> requests,
            int targetUtilization) throws MetricsException {
        long metricsTotal = 0;
        long requestsTotal = 0;
        int entries = 0;
        for (Map.Entry<String, PodMetric> e : metrics.entrySet()) {
            Long request = requests.get(e.getKey());
            if (request == null) {
                continue;
            }
            metricsTotal += e.getValue().value();
            requestsTotal += request;
            entries++;
        }
        if (requestsTotal == 0) {
            throw new MetricsException("no metrics returned matched known pods");
        }
        int utilization = (int) ((metricsTotal * 100) / requestsTotal);
        return new ResourceRatio((double) utilization / (double) targetUtilization, utilization, metricsTotal / entries);
    }

    /** The average value per pod against the target value. */
    public static UsageRatio metricUsageRatio(Map<String, PodMetric> metrics, long targetUsage) {
        long total = 0;
        for (PodMetric m : metrics.values()) {
            total += m.value();
        }
        long usage = total / metrics.size();
        return new UsageRatio((double) usage / (double) targetUsage, usage);
    }
}
