package io.qkcm.controller.endpointslicemirroring.metrics;

import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.IntStream;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Metrics;

/**
 * Upstream's endpoint_slice_mirroring_controller_* metrics (pkg/controller/endpointslicemirroring/metrics),
 * same names, help texts and buckets, registered once in the global registry (Quarkus links its registry
 * to it, as the garbage collector's metric does).
 */
public final class MirroringMetrics {

    private static final String SUBSYSTEM = "endpoint.slice.mirroring.controller.";

    public final DistributionSummary endpointsAddedPerSync;
    public final DistributionSummary endpointsUpdatedPerSync;
    public final DistributionSummary endpointsRemovedPerSync;
    public final DistributionSummary addressesSkippedPerSync;
    public final DistributionSummary endpointsSyncDuration;
    final AtomicLong endpointsDesired = new AtomicLong();
    final AtomicLong numEndpointSlices = new AtomicLong();
    final AtomicLong desiredEndpointSlices = new AtomicLong();
    private final Counter creates;
    private final Counter updates;
    private final Counter deletes;

    /** On the process's registry (ControllerContext.metrics()), once per controller. */
    public MirroringMetrics(MeterRegistry registry) {
        double[] perSync = exponential(2, 2, 15);
        endpointsAddedPerSync = histogram(registry, "endpoints.added.per.sync",
                "Number of endpoints added on each Endpoints sync", perSync);
        endpointsUpdatedPerSync = histogram(registry, "endpoints.updated.per.sync",
                "Number of endpoints updated on each Endpoints sync", perSync);
        endpointsRemovedPerSync = histogram(registry, "endpoints.removed.per.sync",
                "Number of endpoints removed on each Endpoints sync", perSync);
        addressesSkippedPerSync = histogram(registry, "addresses.skipped.per.sync",
                "Number of addresses skipped on each Endpoints sync due to being invalid or exceeding MaxEndpointsPerSubset",
                perSync);
        endpointsSyncDuration = histogram(registry, "endpoints.sync.duration", "Duration of syncEndpoints() in seconds",
                exponential(0.001, 2, 15));
        Gauge.builder(SUBSYSTEM + "endpoints.desired", endpointsDesired, AtomicLong::get)
                .description("Number of endpoints desired").register(registry);
        Gauge.builder(SUBSYSTEM + "num.endpoint.slices", numEndpointSlices, AtomicLong::get)
                .description("Number of EndpointSlices").register(registry);
        Gauge.builder(SUBSYSTEM + "desired.endpoint.slices", desiredEndpointSlices, AtomicLong::get)
                .description("Number of EndpointSlices that would exist with perfect endpoint allocation")
                .register(registry);
        creates = change(registry, "create");
        updates = change(registry, "update");
        deletes = change(registry, "delete");
    }

    /** The process' metrics (upstream RegisterMetrics: registered once however often the controller starts). */

    /** endpoint_slice_mirroring_controller_changes{operation=create|update|delete}. */
    public void change(String operation) {
        switch (operation) {
            case "create" -> creates.increment();
            case "update" -> updates.increment();
            case "delete" -> deletes.increment();
            default -> throw new IllegalArgumentException(operation);
        }
    }

    private static Counter change(MeterRegistry registry, String operation) {
        return Counter.builder(SUBSYSTEM + "changes").description("Number of EndpointSlice changes")
                .tag("operation", operation).register(registry);
    }

    private static DistributionSummary histogram(MeterRegistry registry, String name, String help, double[] buckets) {
        return DistributionSummary.builder(SUBSYSTEM + name).description(help).serviceLevelObjectives(buckets)
                .register(registry);
    }

    private static double[] exponential(double start, double factor, int count) {
        return IntStream.range(0, count).mapToDouble(i -> start * Math.pow(factor, i)).toArray();
    }
}
