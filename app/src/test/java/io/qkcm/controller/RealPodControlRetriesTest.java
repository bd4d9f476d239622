package io.qkcm.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import com.sun.net.httpserver.HttpServer;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.PodTemplateSpecBuilder;
import io.fabric8.kubernetes.api.model.apps.ReplicaSetBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.qkcm.runtime.events.EventRecorder;
import io.qkcm.testing.ResettingServer;

/**
 * Pod creations are sent as client-go sends them: never again after an I/O error (fabric8 would
 * re-send the POST, and a pod made from generateName twice is two pods), again after 429/5xx only
 * when the server gives a Retry-After. Against servers that reset the connection after reading the
 * request, or answer 429 then 201.
 */
class RealPodControlRetriesTest {

    private final List<String> events = Collections.synchronizedList(new ArrayList<>());
    private final EventRecorder recorder = (object, type, reason, message) -> events.add(reason);

    /** A client with fabric8's retries on (as every client of the manager has them), quick for the test. */
    static KubernetesClient clientFor(int port) {
        Config config = new ConfigBuilder(Config.empty()).withMasterUrl("http://127.0.0.1:" + port)
                .withRequestRetryBackoffLimit(3).withRequestRetryBackoffInterval(10).withRequestTimeout(10_000).build();
        return new KubernetesClientBuilder().withConfig(config).build();
    }

    private static final HasMetadata OWNER = new ReplicaSetBuilder().withNewMetadata().withName("web").withNamespace("ns")
            .withUid("uid-1").endMetadata().build();
    private static final OwnerReference REF = new OwnerReferenceBuilder().withApiVersion("apps/v1").withKind("ReplicaSet")
            .withName("web").withUid("uid-1").withController(true).withBlockOwnerDeletion(true).build();
    private static final PodTemplateSpec TEMPLATE = new PodTemplateSpecBuilder().withNewMetadata()
            .withLabels(Map.of("app", "web")).endMetadata().withNewSpec().addNewContainer().withName("c").withImage("i")
            .endContainer().endSpec().build();

    @Test
    void aCreationIsNotSentAgainAfterTheConnectionWasReset() throws Exception {
        try (ResettingServer server = new ResettingServer(); KubernetesClient client = clientFor(server.port())) {
            // the premise: fabric8 itself re-sends a POST after a reset
            catchThrowable(() -> client.pods().inNamespace("ns")
                    .resource(new PodBuilder().withNewMetadata().withGenerateName("web-").endMetadata().build()).create());
            assertThat(server.requests.get()).isGreaterThan(1);

            server.requests.set(0);
            RealPodControl control = new RealPodControl(client, recorder);
            Throwable t = catchThrowable(() -> control.createPods("ns", TEMPLATE, OWNER, REF));
            assertThat(t).isInstanceOf(KubernetesClientException.class);
            assertThat(ApiErrors.isOutcomeUnknown(t)).isTrue();
            assertThat(server.requests.get()).isEqualTo(1);
            assertThat(events).containsExactly(PodControl.FAILED_CREATE_POD_REASON);
        }
    }

    private static HttpServer answering(List<int[]> script, AtomicInteger requests) throws Exception {
        HttpServer http = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        http.createContext("/", exchange -> {
            exchange.getRequestBody().readAllBytes();
            int n = requests.getAndIncrement();
            int[] step = script.get(Math.min(n, script.size() - 1));
            int code = step[0];
            int retryAfter = step[1];
            String body;
            if (code == 201) {
                body = "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"web-abcde\",\"namespace\":\"ns\"}}";
            } else {
                body = "{\"apiVersion\":\"v1\",\"kind\":\"Status\",\"status\":\"Failure\",\"code\":" + code
                        + ",\"reason\":\"" + (code == 429 ? "TooManyRequests" : "InternalError") + "\""
                        + (retryAfter > 0 ? ",\"details\":{\"retryAfterSeconds\":" + retryAfter + "}" : "") + "}";
                if (retryAfter > 0) {
                    exchange.getResponseHeaders().add("Retry-After", String.valueOf(retryAfter));
                }
            }
            byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
            exchange.getResponseHeaders().add("Content-Type", "application/json");
            exchange.sendResponseHeaders(code, bytes.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(bytes);
            }
        });
        http.start();
        return http;
    }

    @Test
    void aCreationIsSentAgainAfterTooManyRequestsWithRetryAfter() throws Exception {
        AtomicInteger requests = new AtomicInteger();
        HttpServer http = answering(List.of(new int[] { 429, 1 }, new int[] { 201, 0 }), requests);
        try (KubernetesClient client = clientFor(http.getAddress().getPort())) {
            RealPodControl control = new RealPodControl(client, recorder);
            assertThat(control.createPods("ns", TEMPLATE, OWNER, REF).getMetadata().getName()).isEqualTo("web-abcde");
            assertThat(requests.get()).isEqualTo(2);
            assertThat(events).containsExactly(PodControl.SUCCESSFUL_CREATE_POD_REASON);
        } finally {
            http.stop(0);
        }
    }

    @Test
    void aCreationAnsweredWithAServerErrorWithoutRetryAfterIsNotSentAgain() throws Exception {
        AtomicInteger requests = new AtomicInteger();
        HttpServer http = answering(List.of(new int[] { 500, 0 }, new int[] { 201, 0 }), requests);
        try (KubernetesClient client = clientFor(http.getAddress().getPort())) {
            RealPodControl control = new RealPodControl(client, recorder);
            Throwable t = catchThrowable(() -> control.createPods("ns", TEMPLATE, OWNER, REF));
            assertThat(ApiErrors.code(t)).isEqualTo(500);
            assertThat(requests.get()).isEqualTo(1);
            assertThat(events).containsExactly(PodControl.FAILED_CREATE_POD_REASON);
        } finally {
            http.stop(0);
        }
    }
}
