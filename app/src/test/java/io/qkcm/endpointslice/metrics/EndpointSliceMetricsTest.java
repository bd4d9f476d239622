package io.qkcm.endpointslice.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

import io.micrometer.prometheus.PrometheusConfig;
import io.micrometer.prometheus.PrometheusMeterRegistry;

/** The metrics under upstream's Prometheus names (simpleclient text format), and metrics.Cache's totals. */
class EndpointSliceMetricsTest {

    @Test
    void namesAsUpstream() {
        PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
        EndpointSliceMetrics m = new EndpointSliceMetrics(registry);
        m.change("create");
        m.sync("success");
        m.endpointsAddedPerSync(3);
        m.endpointsRemovedPerSync(0);
        m.endpointSlicesChangedPerSync("Disabled", "", 1);
        MetricsCache cache = new MetricsCache(100, m);
        cache.updateTrafficDistributionForService("ns/a", "PreferClose");
        String text = registry.scrape();
        assertThat(text).contains("endpoint_slice_controller_changes_total{operation=\"create\",} 1.0",
                "endpoint_slice_controller_syncs_total{result=\"success\",} 1.0",
                "endpoint_slice_controller_endpoints_added_per_sync_bucket{le=\"4.0\",} 1.0",
                "endpoint_slice_controller_endpoints_removed_per_sync_count",
                "endpoint_slice_controller_endpointslices_changed_per_sync_count{topology=\"Disabled\",traffic_distribution=\"\",} 1.0",
                "endpoint_slice_controller_endpoints_desired ",
                "endpoint_slice_controller_num_endpoint_slices ",
                "endpoint_slice_controller_desired_endpoint_slices ",
                "endpoint_slice_controller_services_count_by_traffic_distribution{traffic_distribution=\"PreferClose\",} 1.0");
    }

    @Test
    void cacheTotalsFollowServices() {
        EndpointSliceMetrics m = new EndpointSliceMetrics(new PrometheusMeterRegistry(PrometheusConfig.DEFAULT));
        MetricsCache cache = new MetricsCache(100, m);
        MetricsCache.ServicePortCache a = new MetricsCache.ServicePortCache();
        a.set("p80", new MetricsCache.EfficiencyInfo(250, 4));
        cache.updateServicePortCache("ns/a", a);
        assertThat(m.endpointsDesired()).isEqualTo(250);
        assertThat(m.numEndpointSlices()).isEqualTo(4);
        assertThat(m.desiredEndpointSlices()).isEqualTo(3);

        // a Service without endpoints still wants its placeholder
        MetricsCache.ServicePortCache b = new MetricsCache.ServicePortCache();
        b.set("none", new MetricsCache.EfficiencyInfo(0, 1));
        cache.updateServicePortCache("ns/b", b);
        assertThat(m.desiredEndpointSlices()).isEqualTo(4);

        cache.deleteService("ns/a");
        assertThat(m.endpointsDesired()).isZero();
        assertThat(m.numEndpointSlices()).isEqualTo(1);
        assertThat(m.desiredEndpointSlices()).isEqualTo(1);
    }
}
