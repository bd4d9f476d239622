package io.qkcm.manager;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Base64;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import jakarta.inject.Inject;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.api.model.authentication.TokenRequestBuilder;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBindingBuilder;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.micrometer.core.instrument.MeterRegistry;
import io.qkcm.runtime.workqueue.RateLimiter;
import io.qkcm.runtime.workqueue.WorkQueue;
import io.qkcm.runtime.workqueue.WorkqueueMetrics;
import io.qkcm.manager.serving.SecureServing;
import io.qkcm.manager.serving.ServingTestClient;
import io.qkcm.testing.RealApiServer;
import io.qkcm.testing.RealApiServerResource;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.net.PemKeyCertOptions;

/**
 * Upstream's secure serving against a real API server: /healthz over HTTPS without credentials,
 * /metrics refused to anonymous users and invalid tokens, and allowed for a service account only once
 * RBAC grants it {@code get} on the non-resource URL (TokenReview + SubjectAccessReview).
 */
@QuarkusTest
@TestProfile(SecureServingTest.Profile.class)
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
class SecureServingTest {

    public static class Profile implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            String kubeconfig = RealApiServer.get().kubeconfig().toString();
            return Map.of(
                    "qkcm.authentication-kubeconfig", kubeconfig,
                    "qkcm.authorization-kubeconfig", kubeconfig,
                    "qkcm.authorization-always-allow-paths", "/healthz,/readyz,/livez,/open/*,/shadow,/shadow.html",
                    "qkcm.leader-elect", "true",
                    "qkcm.leader-elect-resource-name", "secure-serving-test");
        }
    }

    @Inject
    SecureServing serving;
    @Inject
    MeterRegistry registry;
    @Inject
    Vertx vertx;

    private static final ScheduledExecutorService DELAYER = Executors.newSingleThreadScheduledExecutor();

    @AfterAll
    static void stopDelayer() {
        DELAYER.shutdownNow();
    }

    private ServingTestClient client() {
        assertThat(serving.port()).as("serving").isPositive();
        return new ServingTestClient(serving.port());
    }

    @Test
    void healthzIsOpenOverHttps() throws Exception {
        ServingTestClient http = client();
        // right after startup a controller's check may not pass yet (upstream answers 500 then too)
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            HttpResponse<String> r = http.get("/healthz");
            assertThat(r.statusCode()).isEqualTo(200);
            assertThat(r.body()).isEqualTo("ok");
            assertThat(r.headers().firstValue("Content-Type")).hasValue("text/plain; charset=utf-8");
        });

        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            HttpResponse<String> v = http.get("/healthz?verbose");
            assertThat(v.statusCode()).isEqualTo(200);
            assertThat(v.body()).contains("[+]leaderElection ok\n").endsWith("healthz check passed\n");
        });
        assertThat(http.get("/livez").body()).isEqualTo("ok");
        assertThat(http.get("/readyz?verbose").body()).endsWith("readyz check passed\n");
        // a sub-path of an always-allowed path is not allowed (exact match, as upstream)
        assertThat(http.get("/healthz/leaderElection").statusCode()).isEqualTo(403);
    }

    @Test
    void metricsRefusesAnonymousAndInvalidTokens() throws Exception {
        ServingTestClient http = client();
        HttpResponse<String> anonymous = http.get("/metrics");
        assertThat(anonymous.statusCode()).isEqualTo(403);
        assertThat(anonymous.headers().firstValue("Content-Type")).hasValue("application/json");
        assertThat(anonymous.body()).contains("\"reason\":\"Forbidden\"")
                .contains("\"message\":\"forbidden: User \\\"system:anonymous\\\" cannot get path \\\"/metrics\\\"\"");

        HttpResponse<String> invalid = http.get("/metrics", "not-a-valid-token");
        assertThat(invalid.statusCode()).isEqualTo(401);
        assertThat(invalid.body()).contains("\"reason\":\"Unauthorized\"");
        // upstream authenticates before authorizing, also on always-allowed paths
        assertThat(http.get("/healthz", "not-a-valid-token").statusCode()).isEqualTo(401);
    }

    @Test
    void shadowReportIsServedInShadowModeOnly() throws Exception {
        ServingTestClient http = client();
        assertThat(http.get("/shadow").statusCode()).isEqualTo(404);
        io.qkcm.runtime.shadow.ShadowMatcher matcher = new io.qkcm.runtime.shadow.ShadowMatcher(Duration.ofSeconds(1),
                new io.micrometer.core.instrument.simple.SimpleMeterRegistry(), java.time.Clock.systemUTC(), false);
        matcher.submit(new io.qkcm.runtime.shadow.ShadowAction(io.qkcm.runtime.shadow.ShadowAction.Side.QKCM,
                "replicaset-controller", "create", "/pods", "", "ns", "web-*", 201, Map.of("kind", "Pod"),
                java.time.Instant.now()));
        matcher.closeAll();
        serving.shadow(matcher);
        try {
            HttpResponse<String> json = http.get("/shadow");
            assertThat(json.statusCode()).isEqualTo(200);
            assertThat(json.headers().firstValue("Content-Type")).hasValue("application/json");
            assertThat(json.body()).contains("\"action\" : \"create /pods ns/web-*\"").contains("\"class\" : \"only-qkcm\"");
            HttpResponse<String> html = http.get("/shadow.html");
            assertThat(html.statusCode()).isEqualTo(200);
            assertThat(html.body()).contains("<h1>qkcm shadow mode</h1>").contains("create /pods ns/web-*");
        } finally {
            serving.shadow(null);
            matcher.close();
        }
    }

    @Test
    void allowListedPrefixIsOpen() throws Exception {
        ServingTestClient http = client();
        // "/open/*" is in the allow list: authorized without credentials; nothing is served there
        assertThat(http.get("/open/anything").statusCode()).isEqualTo(404);
        assertThat(http.get("/closed").statusCode()).isEqualTo(403);
    }

    @Test
    void serviceAccountNeedsRbacForMetrics() throws Exception {
        // a queue with the controllers' metrics provider, so workqueue_* series exist without a controller
        WorkQueue<String> queue = new WorkQueue<>("secure-serving-test", RateLimiter.controllerDefault(), DELAYER,
                new WorkqueueMetrics(registry));
        queue.add("item");
        ControllerManager.runningControllerGauge(registry, "secure-serving-test-controller", () -> true);

        ServingTestClient http = client();
        String ns = "secure-serving-" + System.nanoTime();
        try (KubernetesClient kube = RealApiServer.get().newClient()) {
            kube.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build()).create();
            String denied = token(kube, ns, "denied");
            String allowed = token(kube, ns, "scraper");

            HttpResponse<String> r = http.get("/metrics", denied);
            assertThat(r.statusCode()).isEqualTo(403);
            assertThat(r.body()).contains("forbidden: User \\\"system:serviceaccount:" + ns + ":denied\\\" cannot get path \\\"/metrics\\\"");

            kube.rbac().clusterRoles().resource(new ClusterRoleBuilder().withNewMetadata().withName(ns + "-metrics")
                    .endMetadata().addNewRule().withNonResourceURLs("/metrics").withVerbs("get").endRule().build())
                    .create();
            kube.rbac().clusterRoleBindings().resource(new ClusterRoleBindingBuilder().withNewMetadata()
                    .withName(ns + "-metrics").endMetadata().withNewRoleRef().withApiGroup("rbac.authorization.k8s.io")
                    .withKind("ClusterRole").withName(ns + "-metrics").endRoleRef().addNewSubject()
                    .withKind("ServiceAccount").withNamespace(ns).withName("scraper").endSubject().build()).create();

            // RBAC caches refresh within a moment; a denial is cached for 10s, so allow for both
            await().atMost(Duration.ofSeconds(40)).pollInterval(Duration.ofSeconds(1)).untilAsserted(() -> {
                HttpResponse<String> ok = http.get("/metrics", allowed);
                assertThat(ok.statusCode()).isEqualTo(200);
                assertThat(ok.headers().firstValue("Content-Type").orElse("")).startsWith("text/plain; version=0.0.4");
                assertThat(ok.body())
                        .contains("workqueue_adds_total{name=\"secure-serving-test\",} 1.0")
                        .contains("workqueue_depth{name=\"secure-serving-test\",}")
                        .contains("workqueue_queue_duration_seconds_bucket{name=\"secure-serving-test\"")
                        .contains("workqueue_work_duration_seconds_bucket{")
                        .contains("workqueue_retries_total{")
                        .contains("workqueue_unfinished_work_seconds{")
                        .contains("workqueue_longest_running_processor_seconds{")
                        // the controllers' queues, fed by JOSDK's metrics hooks, under upstream's queue names
                        .contains("workqueue_adds_total{name=\"replicaset\",}")
                        .contains("workqueue_depth{name=\"deployment\",}")
                        .contains("workqueue_work_duration_seconds_bucket{name=\"replicaset\"")
                        .contains("workqueue_unfinished_work_seconds{name=\"endpoint\",}")
                        .containsPattern("rest_client_requests_total\\{code=\"200\",host=\"[^\"]+\",method=\"GET\",\\}")
                        .contains("rest_client_request_duration_seconds_bucket{host=")
                        .contains("leader_election_master_status{name=\"secure-serving-test\",}")
                        .contains("running_managed_controllers{manager=\"kube-controller-manager\",name=\"secure-serving-test-controller\",} 1.0")
                        .contains("jvm_memory_used_bytes")
                        .contains("process_cpu_usage");
            });
            // the same service account is still refused elsewhere
            assertThat(http.get("/healthz/leaderElection", allowed).statusCode()).isEqualTo(403);
        }
    }

    @Test
    void clientCertificateOfTheApiServersClientCaAuthenticates() throws Exception {
        // the admin kubeconfig's client certificate is signed by the API server's client CA, which
        // kube-system/extension-apiserver-authentication publishes; its user is in system:masters
        Config admin = Config.fromKubeconfig(RealApiServer.get().kubeconfigYaml());
        String cert = pemOf(admin.getClientCertData(), admin.getClientCertFile());
        String key = pemOf(admin.getClientKeyData(), admin.getClientKeyFile());
        HttpClient c = vertx.createHttpClient(new HttpClientOptions().setSsl(true).setTrustAll(true).setVerifyHost(false)
                .setKeyCertOptions(new PemKeyCertOptions().setCertValue(Buffer.buffer(cert)).setKeyValue(Buffer.buffer(key))));
        try {
            int status = c.request(HttpMethod.GET, serving.port(), "127.0.0.1", "/metrics")
                    .compose(req -> req.send()).map(resp -> resp.statusCode())
                    .toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
            assertThat(status).isEqualTo(200);
        } finally {
            c.close();
        }
    }

    private static String pemOf(String data, String file) throws Exception {
        if (data != null) {
            return new String(Base64.getDecoder().decode(data));
        }
        return java.nio.file.Files.readString(java.nio.file.Path.of(file));
    }

    private static String token(KubernetesClient kube, String ns, String name) {
        kube.serviceAccounts().inNamespace(ns).resource(new ServiceAccountBuilder().withNewMetadata().withName(name)
                .endMetadata().build()).create();
        return kube.serviceAccounts().inNamespace(ns).withName(name)
                .tokenRequest(new TokenRequestBuilder().withNewSpec().withExpirationSeconds(3600L).endSpec().build())
                .getStatus().getToken();
    }
}
