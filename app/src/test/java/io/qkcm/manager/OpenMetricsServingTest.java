package io.qkcm.manager;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpResponse;
import java.util.Map;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;

import io.qkcm.manager.serving.SecureServing;
import io.qkcm.manager.serving.ServingTestClient;
import io.qkcm.testing.RealApiServerResource;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;

/**
 * kwokctl's command line: {@code --authorization-always-allow-paths=/healthz,/readyz,/livez,/metrics} and no
 * authentication/authorization kubeconfig (and not in a cluster): /metrics is open, everything else denied.
 */
@QuarkusTest
@TestProfile(OpenMetricsServingTest.Profile.class)
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
class OpenMetricsServingTest {

    public static class Profile implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("qkcm.authorization-always-allow-paths", "/healthz,/readyz,/livez,/metrics");
        }
    }

    @Inject
    SecureServing serving;

    @Test
    void metricsInTheAllowListIsOpen() throws Exception {
        ServingTestClient http = new ServingTestClient(serving.port());
        HttpResponse<String> metrics = http.get("/metrics");
        assertThat(metrics.statusCode()).isEqualTo(200);
        assertThat(metrics.body()).contains("jvm_memory_used_bytes{");
        // client_golang's process metrics, as upstream exports them (ProcessMetrics)
        assertThat(metrics.body()).contains("\nprocess_cpu_seconds_total ", "\nprocess_resident_memory_bytes ",
                "\nprocess_open_fds ", "\nprocess_max_fds ", "\nprocess_virtual_memory_bytes ");
        // no TokenReview client: a token is not looked at, the request stays anonymous
        assertThat(http.get("/metrics", "whatever").statusCode()).isEqualTo(200);
        // no SubjectAccessReview client: anything not allow-listed is forbidden
        HttpResponse<String> other = http.get("/configz");
        assertThat(other.statusCode()).isEqualTo(403);
        assertThat(other.body()).contains("forbidden: User \\\"system:anonymous\\\" cannot get path \\\"/configz\\\"");
        // with leader election off (the test default): one check per started controller, no leaderElection
        String verbose = http.get("/healthz?verbose").body();
        assertThat(verbose).contains("[+]replicaset-controller ok\n", "[+]deployment-controller ok\n")
                .doesNotContain("leaderElection").endsWith("healthz check passed\n");
        // /readyz adds the readiness check: every shared informer has synced
        assertThat(http.get("/readyz?verbose").body()).contains("[+]replicaset-controller ok\n",
                "[+]informers-synced ok\n");
    }

    @Inject
    io.micrometer.core.instrument.MeterRegistry registry;

    /**
     * Counters whose upstream name has no {@code _total} (UpstreamCounterNames) are served under that name, their
     * TYPE line still {@code counter}; every other counter keeps Micrometer's {@code _total}.
     */
    @Test
    void countersWithoutTotalUpstreamKeepUpstreamsNames() throws Exception {
        // each under its real tag keys: the running controllers may have registered the same meters already
        java.util.Map<String, String[]> micrometerNames = new java.util.LinkedHashMap<>();
        micrometerNames.put("volume.operation.total.errors",
                new String[] { "operation_name", "open-metrics-test", "plugin_name", "open-metrics-test" });
        micrometerNames.put("endpoint.slice.controller.changes", new String[] { "operation", "open-metrics-test" });
        micrometerNames.put("endpoint.slice.controller.syncs", new String[] { "result", "open-metrics-test" });
        micrometerNames.put("endpoint.slice.mirroring.controller.changes", new String[] { "operation", "open-metrics-test" });
        micrometerNames.put("attach.detach.controller.attachdetach.controller.forced.detaches",
                new String[] { "reason", "open-metrics-test" });
        micrometerNames.forEach((name, tags) -> io.micrometer.core.instrument.Counter.builder(name).tags(tags)
                .register(registry).increment(2));
        io.micrometer.core.instrument.Counter.builder("open.metrics.test.calls").description("open-metrics-test")
                .register(registry).increment();
        // a leading newline: the checks below look for whole lines, and a meter may come first in the body
        String body = "\n" + new ServingTestClient(serving.port()).get("/metrics").body();
        assertThat(io.qkcm.manager.serving.UpstreamCounterNames.WITHOUT_TOTAL).hasSize(micrometerNames.size());
        for (String upstream : io.qkcm.manager.serving.UpstreamCounterNames.WITHOUT_TOTAL) {
            assertThat(body).contains("\n# HELP " + upstream + " ", "\n# TYPE " + upstream + " counter\n")
                    .containsPattern("\n" + upstream + "\\{[^}]*=\"open-metrics-test\",} 2.0\n")
                    .doesNotContain(upstream + "_total");
        }
        assertThat(body).contains("\n# TYPE open_metrics_test_calls_total counter\n", "\nopen_metrics_test_calls_total 1.0\n",
                "\nprocess_cpu_seconds_total ", "\n# TYPE workqueue_adds_total counter\n");
    }

    @io.quarkus.test.common.http.TestHTTPResource("/q/health")
    java.net.URI quarkusHealth;

    /** The same checks are smallrye-health checks: Quarkus' own endpoint (dev mode, tests) lists them. */
    @Test
    void theChecksAreSmallryeHealthChecks() throws Exception {
        var response = java.net.http.HttpClient.newHttpClient().send(
                java.net.http.HttpRequest.newBuilder(quarkusHealth).build(),
                java.net.http.HttpResponse.BodyHandlers.ofString());
        assertThat(response.statusCode()).as(response.body()).isEqualTo(200);
        assertThat(response.body()).contains("\"name\": \"replicaset-controller\"", "\"name\": \"informers-synced\"")
                .contains("\"status\": \"UP\"");
    }
}
