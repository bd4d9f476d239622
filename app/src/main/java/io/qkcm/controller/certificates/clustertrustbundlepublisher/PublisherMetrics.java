package io.qkcm.controller.certificates.clustertrustbundlepublisher;

import java.util.stream.IntStream;

import io.fabric8.kubernetes.client.KubernetesClientException;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * Upstream's clustertrustbundlepublisher metrics: {@code clustertrustbundle_publisher_sync_total} and
 * {@code clustertrustbundle_publisher_sync_duration_seconds}, by {@code code}: 200 on success, the API
 * status code of a failed request, else 500.
 */
final class PublisherMetrics {

    private static final String SUBSYSTEM = "clustertrustbundle.publisher.";
    /** metrics.ExponentialBuckets(0.001, 2, 15). */
    private static final double[] BUCKETS = IntStream.range(0, 15).mapToDouble(i -> 0.001 * Math.pow(2, i)).toArray();

    private final MeterRegistry registry;

    PublisherMetrics(MeterRegistry registry) {
        this.registry = registry;
    }

    void record(double seconds, Exception error) {
        String code = code(error);
        DistributionSummary.builder(SUBSYSTEM + "sync.duration.seconds")
                .description("The time it took to sync a cluster trust bundle.").tag("code", code)
                .serviceLevelObjectives(BUCKETS).register(registry).record(seconds);
        Counter.builder(SUBSYSTEM + "sync").description("Number of syncs that occurred in cluster trust bundle publisher.")
                .tag("code", code).register(registry).increment();
    }

    static String code(Exception error) {
        if (error == null) {
            return "200";
        }
        if (error instanceof KubernetesClientException e && e.getCode() > 0) {
            return Integer.toString(e.getCode());
        }
        return "500";
    }
}
