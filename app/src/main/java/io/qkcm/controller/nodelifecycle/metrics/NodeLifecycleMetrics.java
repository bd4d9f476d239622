package io.qkcm.controller.nodelifecycle.metrics;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.IntStream;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * Upstream's node_collector_* metrics (pkg/controller/nodelifecycle/metrics.go), same names, help texts,
 * labels and buckets: per zone the share of healthy nodes, the zone's size, its unhealthy nodes and the
 * NoExecute taints added (evictions_total), and the durations of one node's and of a whole health pass.
 *
 * <p>Upstream's gauges are process globals; so are the values here (one holder per gauge and zone), so
 * a controller that restarts in the same process (leadership lost and regained) keeps feeding the gauges
 * its registry already has.
 */
public final class NodeLifecycleMetrics {

    private static final String SUBSYSTEM = "node.collector.";
    private static final Map<String, AtomicLong> GAUGES = new ConcurrentHashMap<>();

    private final MeterRegistry registry;
    private final DistributionSummary updateNodeHealthDuration;
    private final DistributionSummary updateAllNodesHealthDuration;

    public NodeLifecycleMetrics(MeterRegistry registry) {
        this.registry = registry;
        this.updateNodeHealthDuration = DistributionSummary.builder(SUBSYSTEM + "update.node.health.duration.seconds")
                .description("Duration in seconds for NodeController to update the health of a single node.")
                .serviceLevelObjectives(exponential(0.001, 4, 8)).register(registry);
        this.updateAllNodesHealthDuration = DistributionSummary
                .builder(SUBSYSTEM + "update.all.nodes.health.duration.seconds")
                .description("Duration in seconds for NodeController to update the health of all nodes.")
                .serviceLevelObjectives(exponential(0.01, 4, 8)).register(registry);
    }

    /** node_collector_zone_health{zone}: percentage of healthy nodes. */
    public void zoneHealth(String zone, double percent) {
        gauge("zone.health", "Gauge measuring percentage of healthy nodes per zone.", zone, percent);
    }

    /** node_collector_zone_size{zone}: registered nodes. */
    public void zoneSize(String zone, double nodes) {
        gauge("zone.size", "Gauge measuring number of registered Nodes per zones.", zone, nodes);
    }

    /** node_collector_unhealthy_nodes_in_zone{zone}: not Ready nodes. */
    public void unhealthyNodes(String zone, double nodes) {
        gauge("unhealthy.nodes.in.zone", "Gauge measuring number of not Ready Nodes per zones.", zone, nodes);
    }

    /** node_collector_evictions_total{zone}: incremented by {@code n} (0 initialises a new zone's series). */
    public void evictions(String zone, double n) {
        Counter.builder(SUBSYSTEM + "evictions")
                .description("Number of Node evictions that happened since current instance of NodeController started.")
                .tag("zone", zone).register(registry).increment(n);
    }

    public void observeUpdateNodeHealth(double seconds) {
        updateNodeHealthDuration.record(seconds);
    }

    public void observeUpdateAllNodesHealth(double seconds) {
        updateAllNodesHealthDuration.record(seconds);
    }

    /** The value of a gauge (tests); NaN when it was never set. */
    public double gaugeValue(String name, String zone) {
        Gauge g = registry.find(SUBSYSTEM + name).tag("zone", zone).gauge();
        return g == null ? Double.NaN : g.value();
    }

    /** The evictions_total count of a zone (tests); NaN when the series does not exist. */
    public double evictionsCount(String zone) {
        Counter c = registry.find(SUBSYSTEM + "evictions").tag("zone", zone).counter();
        return c == null ? Double.NaN : c.count();
    }

    private void gauge(String name, String help, String zone, double value) {
        AtomicLong holder = GAUGES.computeIfAbsent(name + "\n" + zone, k -> new AtomicLong());
        holder.set(Double.doubleToRawLongBits(value));
        if (registry.find(SUBSYSTEM + name).tag("zone", zone).gauge() == null) {
            Gauge.builder(SUBSYSTEM + name, holder, h -> Double.longBitsToDouble(h.get())).description(help)
                    .tag("zone", zone).register(registry);
        }
    }

    private static double[] exponential(double start, double factor, int count) {
        return IntStream.range(0, count).mapToDouble(i -> start * Math.pow(factor, i)).toArray();
    }
}
