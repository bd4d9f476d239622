package io.qkcm.endpointslice.metrics;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * Upstream metrics.Cache: per Service, the endpoints and slices of each port mapping, summed into the
 * desired-endpoints / actual-slices / desired-slices gauges, and the Services per trafficDistribution.
 * Keys are "namespace/name".
 */
public final class MetricsCache {

    private final int maxEndpointsPerSlice;
    private final EndpointSliceMetrics metrics;
    private long numEndpoints;
    private long numSlicesActual;
    private long numSlicesDesired;
    private final Map<String, ServicePortCache> cache = new HashMap<>();
    private final Map<String, Set<String>> servicesByTrafficDistribution = new HashMap<>();

    public MetricsCache(int maxEndpointsPerSlice, EndpointSliceMetrics metrics) {
        this.maxEndpointsPerSlice = maxEndpointsPerSlice;
        this.metrics = metrics;
    }

    /** Endpoints and slices of one port mapping of a Service. */
    public record EfficiencyInfo(int endpoints, int slices) {
    }

    /** A Service's EfficiencyInfo by port-map key. */
    public static final class ServicePortCache {
        private final Map<String, EfficiencyInfo> items = new HashMap<>();

        public void set(String portMapKey, EfficiencyInfo info) {
            items.put(portMapKey, info);
        }

        /** actual slices, desired slices, endpoints. */
        long[] totals(int maxEndpointsPerSlice) {
            long actual = 0;
            long desired = 0;
            long endpoints = 0;
            for (EfficiencyInfo e : items.values()) {
                endpoints += e.endpoints();
                actual += e.slices();
                desired += numDesiredSlices(e.endpoints(), maxEndpointsPerSlice);
            }
            // a Service always has at least its placeholder slice
            if (desired == 0) {
                desired = 1;
            }
            return new long[] { actual, desired, endpoints };
        }
    }

    public synchronized void updateServicePortCache(String serviceKey, ServicePortCache spCache) {
        long[] prev = { 0, 0, 0 };
        ServicePortCache existing = cache.get(serviceKey);
        if (existing != null) {
            prev = existing.totals(maxEndpointsPerSlice);
        }
        long[] curr = spCache.totals(maxEndpointsPerSlice);
        numEndpoints += curr[2] - prev[2];
        numSlicesDesired += curr[1] - prev[1];
        numSlicesActual += curr[0] - prev[0];
        cache.put(serviceKey, spCache);
        updateMetrics();
    }

    /** {@code trafficDistribution} null: the Service uses none (or an invalid one). */
    public synchronized void updateTrafficDistributionForService(String serviceKey, String trafficDistribution) {
        servicesByTrafficDistribution.values().forEach(s -> s.remove(serviceKey));
        if (trafficDistribution != null) {
            servicesByTrafficDistribution.computeIfAbsent(trafficDistribution, k -> new HashSet<>()).add(serviceKey);
        }
        updateMetrics();
    }

    public synchronized void deleteService(String serviceKey) {
        servicesByTrafficDistribution.values().forEach(s -> s.remove(serviceKey));
        ServicePortCache spCache = cache.remove(serviceKey);
        if (spCache != null) {
            long[] t = spCache.totals(maxEndpointsPerSlice);
            numEndpoints -= t[2];
            numSlicesDesired -= t[1];
            numSlicesActual -= t[0];
            updateMetrics();
        }
    }

    private void updateMetrics() {
        metrics.setTotals(numSlicesActual, numSlicesDesired, numEndpoints);
        Map<String, Integer> counts = new HashMap<>();
        servicesByTrafficDistribution.forEach((k, v) -> counts.put(k, v.size()));
        metrics.setServicesByTrafficDistribution(counts);
    }

    static int numDesiredSlices(int numEndpoints, int maxEndpointsPerSlice) {
        if (numEndpoints == 0) {
            return 0;
        }
        if (numEndpoints <= maxEndpointsPerSlice) {
            return 1;
        }
        return (int) Math.ceil((double) numEndpoints / maxEndpointsPerSlice);
    }

    long numEndpoints() {
        return numEndpoints;
    }

    long numSlicesActual() {
        return numSlicesActual;
    }

    long numSlicesDesired() {
        return numSlicesDesired;
    }
}
