package io.qkcm.endpointslice;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.util.Map;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.qkcm.controller.ApiErrors;
import io.qkcm.testing.ResettingServer;

/**
 * EndpointSlice creations (from generateName) are sent as client-go sends them: never again after the
 * connection was reset once the request went out. fabric8 re-sends such a POST, and a slice made twice
 * from generateName is two slices.
 */
class EndpointSliceCreationRetriesTest {

    /** A client with fabric8's retries on, as every client of the manager has them, quick for the test. */
    private static KubernetesClient clientFor(int port) {
        Config config = new ConfigBuilder(Config.empty()).withMasterUrl("http://127.0.0.1:" + port)
                .withRequestRetryBackoffLimit(3).withRequestRetryBackoffInterval(10).withRequestTimeout(10_000).build();
        return new KubernetesClientBuilder().withConfig(config).build();
    }

    private static EndpointSlice slice() {
        return new EndpointSliceBuilder().withNewMetadata().withGenerateName("web-").withNamespace("ns")
                .withLabels(Map.of("kubernetes.io/service-name", "web")).endMetadata().withAddressType("IPv4").build();
    }

    @Test
    void aSliceCreationIsNotSentAgainAfterTheConnectionWasReset() throws Exception {
        try (ResettingServer server = new ResettingServer(); KubernetesClient client = clientFor(server.port())) {
            // the premise: fabric8 itself re-sends the POST after a reset
            catchThrowable(() -> client.discovery().v1().endpointSlices().inNamespace("ns").resource(slice()).create());
            assertThat(server.requests.get()).isGreaterThan(1);

            server.requests.set(0);
            Throwable t = catchThrowable(() -> EndpointSliceWriter.of(client).create(slice()));
            assertThat(ApiErrors.isOutcomeUnknown(t)).isTrue();
            assertThat(server.requests.get()).isEqualTo(1);
        }
    }
}
