package io.qkcm.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.io.InputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Status;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;

/**
 * {@link ApiErrors#isOutcomeUnknown}: which failures leave a write's outcome open, with the
 * exceptions the fabric8 client really throws (a server that reads the request and hangs up; a port
 * nobody listens on) and the API server's statuses.
 */
class ApiErrorsOutcomeTest {

    private static KubernetesClient clientFor(int port) {
        Config config = new ConfigBuilder(Config.empty()).withMasterUrl("http://127.0.0.1:" + port)
                .withRequestRetryBackoffLimit(0).withRequestTimeout(10_000).build();
        return new KubernetesClientBuilder().withConfig(config).build();
    }

    @Test
    void aRequestSentAndAnsweredByAHangUpHasAnUnknownOutcome() throws Exception {
        try (ServerSocket server = new ServerSocket(0, 5, InetAddress.getLoopbackAddress())) {
            Thread hangUp = new Thread(() -> {
                try (Socket s = server.accept()) {
                    InputStream in = s.getInputStream();
                    byte[] buf = new byte[4096];
                    in.read(buf); // the request arrived
                } catch (Exception e) {
                    // the test fails on its own assertions
                }
            });
            hangUp.start();
            try (KubernetesClient client = clientFor(server.getLocalPort())) {
                Throwable t = catchThrowable(() -> client.pods().inNamespace("default").resource(
                        new io.fabric8.kubernetes.api.model.PodBuilder().withNewMetadata().withGenerateName("p-").endMetadata()
                                .build())
                        .create());
                assertThat(t).isInstanceOf(KubernetesClientException.class);
                assertThat(ApiErrors.isOutcomeUnknown(t)).as("%s", t).isTrue();
            }
            hangUp.join();
        }
    }

    @Test
    void aRequestThatNeverLeftIsAPlainFailure() throws Exception {
        int port;
        try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = probe.getLocalPort();
        }
        try (KubernetesClient client = clientFor(port)) {
            Throwable t = catchThrowable(() -> client.pods().inNamespace("default").withName("x").delete());
            assertThat(t).isInstanceOf(KubernetesClientException.class);
            assertThat(ApiErrors.isOutcomeUnknown(t)).as("%s", t).isFalse();
        }
    }

    private static KubernetesClientException status(int code, String reason) {
        Status s = new StatusBuilder().withCode(code).withReason(reason).withStatus("Failure").build();
        return new KubernetesClientException(s);
    }

    @Test
    void statusesFromTheApiServer() {
        // 504 Timeout: "the server was unable to return a response in the time allotted, but may still be processing the request"
        assertThat(ApiErrors.isOutcomeUnknown(status(504, "Timeout"))).isTrue();
        assertThat(ApiErrors.isOutcomeUnknown(status(409, "AlreadyExists"))).isFalse();
        assertThat(ApiErrors.isOutcomeUnknown(status(409, "Conflict"))).isFalse();
        assertThat(ApiErrors.isOutcomeUnknown(status(422, "Invalid"))).isFalse();
        assertThat(ApiErrors.isOutcomeUnknown(status(403, "Forbidden"))).isFalse();
        assertThat(ApiErrors.isOutcomeUnknown(status(500, "InternalError"))).isFalse();
        assertThat(ApiErrors.isOutcomeUnknown(new IllegalStateException("not an API error"))).isFalse();
    }
}
