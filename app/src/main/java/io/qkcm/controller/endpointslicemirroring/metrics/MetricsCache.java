package io.qkcm.controller.endpointslicemirroring.metrics;

import java.util.HashMap;
import java.util.Map;

/**
 * Upstream metrics.Cache: per Endpoints resource and port map, desired endpoints and actual slices,
 * feeding the endpoints_desired, num_endpoint_slices and desired_endpoint_slices gauges.
 */
public final class MetricsCache {

    /** Endpoints and slices for one port map of one Endpoints resource. */
    public record EfficiencyInfo(int endpoints, int slices) {
    }

    /** The efficiency of one Endpoints resource, by port map key. */
    public static final class EndpointPortCache {
        private final Map<String, EfficiencyInfo> items = new HashMap<>();

        public void set(String portMapKey, EfficiencyInfo info) {
            items.put(portMapKey, info);
        }

        int numEndpoints() {
            return items.values().stream().mapToInt(EfficiencyInfo::endpoints).sum();
        }
    }

    private final int maxEndpointsPerSlice;
    private final MirroringMetrics metrics;
    private final Map<String, EndpointPortCache> cache = new HashMap<>();
    private int numEndpoints;

    public MetricsCache(int maxEndpointsPerSlice, MirroringMetrics metrics) {
        this.maxEndpointsPerSlice = maxEndpointsPerSlice;
        this.metrics = metrics;
    }

    /** Replaces the entry of Endpoints {@code namespace/name} and updates the gauges. */
    public synchronized void updateEndpointPortCache(String endpointsKey, EndpointPortCache epCache) {
        EndpointPortCache previous = cache.get(endpointsKey);
        int prevNumEndpoints = previous == null ? 0 : previous.numEndpoints();
        numEndpoints = numEndpoints + epCache.numEndpoints() - prevNumEndpoints;
        cache.put(endpointsKey, epCache);
        updateMetrics();
    }

    public synchronized void deleteEndpoints(String endpointsKey) {
        EndpointPortCache previous = cache.remove(endpointsKey);
        if (previous != null) {
            numEndpoints -= previous.numEndpoints();
            updateMetrics();
        }
    }

    synchronized int[] desiredAndActualSlices() {
        int desired = 0;
        int actual = 0;
        for (EndpointPortCache c : cache.values()) {
            for (EfficiencyInfo info : c.items.values()) {
                actual += info.slices();
                desired += numDesiredSlices(info.endpoints(), maxEndpointsPerSlice);
            }
        }
        return new int[] { desired, actual };
    }

    private void updateMetrics() {
        int[] u = desiredAndActualSlices();
        metrics.numEndpointSlices.set(u[1]);
        metrics.desiredEndpointSlices.set(u[0]);
        metrics.endpointsDesired.set(numEndpoints);
    }

    static int numDesiredSlices(int numEndpoints, int maxPerSlice) {
        return (int) Math.ceil((double) numEndpoints / (double) maxPerSlice);
    }
}
