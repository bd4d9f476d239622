package io.qkcm.endpointslice.metrics;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.IntStream;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Metrics;

/**
 * The {@code endpoint_slice_controller_*} metrics of k8s.io/endpointslice/metrics, under upstream's
 * Prometheus names. Upstream registers them once per process in the legacy registry; {@link #global()}
 * is that single instance (Quarkus links its registry to Micrometer's global one).
 */
public final class EndpointSliceMetrics {

    private static final String PREFIX = "endpoint.slice.controller.";

    /** prometheus.ExponentialBuckets(2, 2, 15). */
    private static final double[] PER_SYNC_BUCKETS = IntStream.range(0, 15).mapToDouble(i -> Math.pow(2, i + 1)).toArray();

    /** prometheus.DefBuckets, what upstream's histogram without explicit buckets gets. */
    private static final double[] DEFAULT_BUCKETS = { .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10 };

    private final MeterRegistry registry;
    private final DistributionSummary endpointsAddedPerSync;
    private final DistributionSummary endpointsRemovedPerSync;
    private final AtomicLong endpointsDesired = new AtomicLong();
    private final AtomicLong numEndpointSlices = new AtomicLong();
    private final AtomicLong desiredEndpointSlices = new AtomicLong();
    private final Map<String, AtomicLong> servicesByTrafficDistribution = new ConcurrentHashMap<>();

    public EndpointSliceMetrics(MeterRegistry registry) {
        this.registry = registry;
        this.endpointsAddedPerSync = DistributionSummary.builder(PREFIX + "endpoints.added.per.sync")
                .description("Number of endpoints added on each Service sync").serviceLevelObjectives(PER_SYNC_BUCKETS)
                .register(registry);
        this.endpointsRemovedPerSync = DistributionSummary.builder(PREFIX + "endpoints.removed.per.sync")
                .description("Number of endpoints removed on each Service sync").serviceLevelObjectives(PER_SYNC_BUCKETS)
                .register(registry);
        Gauge.builder(PREFIX + "endpoints.desired", endpointsDesired, AtomicLong::get)
                .description("Number of endpoints desired").register(registry);
        Gauge.builder(PREFIX + "num.endpoint.slices", numEndpointSlices, AtomicLong::get)
                .description("Number of EndpointSlices").register(registry);
        Gauge.builder(PREFIX + "desired.endpoint.slices", desiredEndpointSlices, AtomicLong::get)
                .description("Number of EndpointSlices that would exist with perfect endpoint allocation")
                .register(registry);
    }

    /** The process-wide instance on Micrometer's global registry. */

    public void endpointsAddedPerSync(int n) {
        endpointsAddedPerSync.record(n);
    }

    public void endpointsRemovedPerSync(int n) {
        endpointsRemovedPerSync.record(n);
    }

    /** {@code endpoint_slice_controller_changes{operation=create|update|delete}}. */
    public void change(String operation) {
        Counter.builder(PREFIX + "changes").description("Number of EndpointSlice changes").tag("operation", operation)
                .register(registry).increment();
    }

    /** {@code endpoint_slice_controller_endpointslices_changed_per_sync{topology,traffic_distribution}}. */
    public void endpointSlicesChangedPerSync(String topology, String trafficDistribution, int n) {
        DistributionSummary.builder(PREFIX + "endpointslices.changed.per.sync")
                .description("Number of EndpointSlices changed on each Service sync")
                .tag("topology", topology).tag("traffic_distribution", trafficDistribution)
                .serviceLevelObjectives(DEFAULT_BUCKETS).register(registry).record(n);
    }

    /** {@code endpoint_slice_controller_syncs{result=success|stale|error}}. */
    public void sync(String result) {
        Counter.builder(PREFIX + "syncs").description("Number of EndpointSlice syncs").tag("result", result)
                .register(registry).increment();
    }

    void setTotals(long slicesActual, long slicesDesired, long endpoints) {
        numEndpointSlices.set(slicesActual);
        desiredEndpointSlices.set(slicesDesired);
        endpointsDesired.set(endpoints);
    }

    /**
     * {@code endpoint_slice_controller_services_count_by_traffic_distribution}: upstream resets the
     * vector and sets one series per value in use; a value no longer in use reads 0 here.
     */
    void setServicesByTrafficDistribution(Map<String, Integer> counts) {
        servicesByTrafficDistribution.forEach((k, v) -> {
            if (!counts.containsKey(k)) {
                v.set(0);
            }
        });
        counts.forEach((value, count) -> servicesByTrafficDistribution.computeIfAbsent(value, v -> {
            AtomicLong holder = new AtomicLong();
            Gauge.builder(PREFIX + "services.count.by.traffic.distribution", holder, AtomicLong::get)
                    .description("Number of Services using some specific trafficDistribution")
                    .tag("traffic_distribution", v).register(registry);
            return holder;
        }).set(count));
    }

    long endpointsDesired() {
        return endpointsDesired.get();
    }

    long numEndpointSlices() {
        return numEndpointSlices.get();
    }

    long desiredEndpointSlices() {
        return desiredEndpointSlices.get();
    }
}
