package io.qkcm.controller.nodeipam;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * Upstream's node_ipam_controller_* cidrset metrics (pkg/controller/nodeipam/ipam/cidrset/metrics.go),
 * labelled {@code clusterCIDR}: cidrset_cidrs_allocations_total, cidrset_cidrs_releases_total,
 * cirdset_max_cidrs (upstream's spelling), cidrset_usage_cidrs and cidrset_allocation_tries_per_request
 * (buckets 1, 5, 25, 125, 625). A CIDR set rebuilt for the same cluster CIDR keeps its series.
 */
final class CidrSetMetrics {

    private static final String SUBSYSTEM = "node.ipam.controller.";

    private final MeterRegistry registry;
    private final Map<String, Series> series = new ConcurrentHashMap<>();

    CidrSetMetrics(MeterRegistry registry) {
        this.registry = registry;
    }

    Series series(String clusterCIDR) {
        return series.computeIfAbsent(clusterCIDR, Series::new);
    }

    /** The allocations counted so far for {@code clusterCIDR} (tests). */
    double allocations(String clusterCIDR) {
        Counter c = registry.find(SUBSYSTEM + "cidrset.cidrs.allocations").tag("clusterCIDR", clusterCIDR).counter();
        return c == null ? 0 : c.count();
    }

    /** The releases counted so far for {@code clusterCIDR} (tests). */
    double releases(String clusterCIDR) {
        Counter c = registry.find(SUBSYSTEM + "cidrset.cidrs.releases").tag("clusterCIDR", clusterCIDR).counter();
        return c == null ? 0 : c.count();
    }

    /** The series of one cluster CIDR. */
    final class Series {
        private final Counter allocations;
        private final Counter releases;
        private final DistributionSummary tries;
        private volatile double max;
        private volatile double usage;

        private Series(String clusterCIDR) {
            allocations = Counter.builder(SUBSYSTEM + "cidrset.cidrs.allocations")
                    .description("Counter measuring total number of CIDR allocations.").tag("clusterCIDR", clusterCIDR)
                    .register(registry);
            releases = Counter.builder(SUBSYSTEM + "cidrset.cidrs.releases")
                    .description("Counter measuring total number of CIDR releases.").tag("clusterCIDR", clusterCIDR)
                    .register(registry);
            Gauge.builder(SUBSYSTEM + "cirdset.max.cidrs", this, s -> s.max)
                    .description("Maximum number of CIDRs that can be allocated.").tag("clusterCIDR", clusterCIDR)
                    .strongReference(true).register(registry);
            Gauge.builder(SUBSYSTEM + "cidrset.usage.cidrs", this, s -> s.usage)
                    .description("Gauge measuring percentage of allocated CIDRs.").tag("clusterCIDR", clusterCIDR)
                    .strongReference(true).register(registry);
            // upstream's help text, a copy-paste slip of its own, kept so both expose the same text
            tries = DistributionSummary.builder(SUBSYSTEM + "cidrset.allocation.tries.per.request")
                    .description("Number of endpoints added on each Service sync").tag("clusterCIDR", clusterCIDR)
                    .serviceLevelObjectives(1, 5, 25, 125, 625).register(registry);
        }

        void max(long maxCIDRs) {
            max = maxCIDRs;
        }

        void usage(double fraction) {
            usage = fraction;
        }

        void allocated(long triesNeeded, double fraction) {
            allocations.increment();
            tries.record(triesNeeded);
            usage = fraction;
        }

        void occupied() {
            allocations.increment();
        }

        void released() {
            releases.increment();
        }
    }
}
