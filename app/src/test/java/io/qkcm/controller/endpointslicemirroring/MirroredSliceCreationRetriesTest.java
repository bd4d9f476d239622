package io.qkcm.controller.endpointslicemirroring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.util.List;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Endpoints;
import io.fabric8.kubernetes.api.model.EndpointsBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.qkcm.controller.ApiErrors;
import io.qkcm.controller.endpointslicemirroring.metrics.MirroringMetrics;
import io.qkcm.endpointslice.util.EndpointSliceTracker;
import io.qkcm.testing.ResettingServer;

/**
 * Mirrored slices are created from generateName too: the creation is sent once when the connection is
 * reset after the request went out (fabric8 would re-send it: a second slice), and the Endpoints are
 * marked as having a creation of unknown outcome, so the next sync first asks the API server.
 */
class MirroredSliceCreationRetriesTest {

    @Test
    void aMirroredSliceCreationIsNotSentAgainAfterTheConnectionWasReset() throws Exception {
        try (ResettingServer server = new ResettingServer()) {
            Config config = new ConfigBuilder(Config.empty()).withMasterUrl("http://127.0.0.1:" + server.port())
                    .withRequestRetryBackoffLimit(3).withRequestRetryBackoffInterval(10).withRequestTimeout(10_000)
                    .build();
            try (KubernetesClient client = new KubernetesClientBuilder().withConfig(config).build()) {
                EndpointSliceTracker tracker = new EndpointSliceTracker();
                Reconciler reconciler = new Reconciler(client, tracker, (object, type, reason, message) -> {
                }, 1000, new MirroringMetrics(new SimpleMeterRegistry()));
                Endpoints endpoints = new EndpointsBuilder().withNewMetadata().withNamespace("ns").withName("svc")
                        .withUid("uid-1").endMetadata().addNewSubset().addNewAddress().withIp("10.0.0.1").endAddress()
                        .addNewPort().withPort(80).withProtocol("TCP").endPort().endSubset().build();

                Throwable t = catchThrowable(() -> reconciler.reconcile(endpoints, List.of()));
                assertThat(ApiErrors.isOutcomeUnknown(t)).isTrue();
                assertThat(server.requests.get()).isEqualTo(1);
                assertThat(tracker.createUncertain("ns", "svc")).isTrue();
            }
        }
    }
}
