package io.qkcm.process;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.qkcm.runtime.options.ControllerManagerOptions;
import io.qkcm.runtime.options.Flags;
import io.qkcm.runtime.clients.KubeClients;
import io.qkcm.testing.AuditLog;
import io.qkcm.testing.RealApiServer;
import io.vertx.core.Vertx;

/**
 * --kube-api-qps / --kube-api-burst throttle each client as client-go's token bucket, and every
 * request names qkcm and the component in its user agent, as the API server's audit log shows.
 */
class KubeApiQpsIT {

    private static RealApiServer server;
    private static AuditLog audit;
    private static Vertx vertx;

    @BeforeAll
    static void start() {
        server = RealApiServer.audited();
        audit = new AuditLog(server.auditLog().orElseThrow());
        vertx = Vertx.vertx();
    }

    @AfterAll
    static void stop() {
        vertx.close();
    }

    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();

    private KubeClients clients(String qps, String burst) {
        Map<String, String> config = Map.of("qkcm.kubeconfig", server.kubeconfig().toString(),
                "qkcm.kube-api-qps", qps, "qkcm.kube-api-burst", burst);
        return new KubeClients(new ControllerManagerOptions(Flags.upstream(),
                name -> Optional.ofNullable(config.get(name))), registry, vertx);
    }

    /** Requests that had to wait for a token (rest_client_rate_limiter_duration_seconds count). */
    private long throttled() {
        return registry.find("rest.client.rate.limiter.duration").timers().stream().mapToLong(t -> t.count()).sum();
    }

    private double sent() {
        return registry.find("rest.client.requests").counters().stream().mapToDouble(c -> c.count()).sum();
    }

    private static Duration issue(KubernetesClient client, int requests) {
        long start = System.nanoTime();
        for (int i = 0; i < requests; i++) {
            client.namespaces().withName("default").get();
        }
        return Duration.ofNanos(System.nanoTime() - start);
    }

    @Test
    void eachClientIsATokenBucket() {
        try (KubeClients slow = clients("5", "1")) {
            String component = "qps-probe-" + System.nanoTime();
            KubernetesClient client = slow.forComponent(component);
            Instant began = Instant.now();
            // burst 1: the first request is free, the next 20 wait 200ms each
            assertThat(issue(client, 21)).isGreaterThanOrEqualTo(Duration.ofMillis(3800));
            assertThat(sent()).isEqualTo(21);
            assertThat(throttled()).as("requests that waited for a token").isBetween(10L, 20L);

            List<AuditLog.Entry> seen = audit.entries(e -> e.userAgent().endsWith("/" + component)
                    && !e.time().isBefore(began.minusSeconds(1)));
            assertThat(seen).hasSize(21).allSatisfy(e -> {
                assertThat(e.userAgent()).startsWith("qkcm/").contains("kubernetes/v1.34.4");
                assertThat(e.verb()).isEqualTo("get");
            });
        }
        // the same requests with a bucket that does not bind (control: the bound above is the throttle's)
        try (KubeClients fast = clients("1000", "1000")) {
            assertThat(issue(fast.forComponent("qps-fast"), 21)).isLessThan(Duration.ofMillis(3000));
        }
    }

    @Test
    void everyComponentHasItsOwnBucket() {
        try (KubeClients slow = clients("0.2", "1")) {
            KubernetesClient first = slow.forComponent("qps-own-1");
            KubernetesClient second = slow.forComponent("qps-own-2");
            issue(first, 1);
            issue(second, 1);
            // a shared bucket would have made the second wait 5s
            assertThat(throttled()).isZero();
            assertThat(issue(first, 1)).isGreaterThanOrEqualTo(Duration.ofMillis(2000));
            assertThat(throttled()).isEqualTo(1);
        }
    }

    @Test
    void burstIsSpentBeforeThrottling() {
        try (KubeClients bursty = clients("1", "10")) {
            KubernetesClient client = bursty.forComponent("qps-burst");
            issue(client, 10);
            assertThat(throttled()).as("requests within the burst never wait").isZero();
            // the bucket is empty now (less what refilled meanwhile): the next ones wait for tokens
            issue(client, 15);
            assertThat(throttled()).isGreaterThanOrEqualTo(1);
            assertThat(sent()).isEqualTo(25);
        }
    }

    /**
     * As upstream (cmd/kube-controller-manager/app/core.go): the garbage collector's client gets
     * twice --kube-api-qps, the namespace controller's 20× the QPS and 100× the burst.
     */
    @Test
    void garbageCollectorAndNamespaceControllerGetUpstreamsRaisedLimits() {
        try (KubeClients clients = clients("5", "1")) {
            issue(clients.forController("namespace-controller"), 21);
            assertThat(throttled()).as("burst 100: 21 requests never wait").isZero();

            // qps 10, burst 1: the first request is free, the next 20 are 100ms apart
            Duration elapsed = issue(clients.forController("generic-garbage-collector"), 21);
            assertThat(elapsed).isGreaterThanOrEqualTo(Duration.ofMillis(1900));
            double waited = registry.find("rest.client.rate.limiter.duration").timers().stream()
                    .mapToDouble(t -> t.totalTime(java.util.concurrent.TimeUnit.SECONDS)).sum();
            assertThat(waited).as("at --kube-api-qps=5 the waits would add up to ~4s").isLessThanOrEqualTo(2.1);
        }
    }
}
