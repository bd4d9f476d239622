package io.qkcm.controller.bootstrap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Base64;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

import jakarta.inject.Inject;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.qkcm.testing.ControllerHarness;
import io.qkcm.testing.ManagerOffProfile;
import io.qkcm.testing.RealApiServer;
import io.qkcm.testing.RealApiServerResource;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.vertx.core.Vertx;

/**
 * bootstrap-signer-controller against a real API server, on a clock the test sets: the signatures it
 * writes into kube-public/cluster-info are upstream's byte for byte (the golden vectors of
 * hack/golden/bootstrap, which upstream's own DetachedTokenIsValid — kubeadm join's check — accepts),
 * follow the kubeconfig and the tokens, and go when a token goes, expires or stops signing.
 */
@QuarkusTest
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
@TestProfile(ManagerOffProfile.class)
class BootstrapSignerTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final String SYSTEM = "kube-system";
    private static final String PUBLIC = "kube-public";

    @Inject
    Vertx vertx;

    static KubernetesClient client;
    static final AtomicReference<Instant> clock = new AtomicReference<>(Instant.now());
    static ControllerHarness<BootstrapSigner> signer;

    /** Upstream's signatures: kubeadm's cluster-info kubeconfig, then with another server address. */
    static String kubeconfig;
    static String kubeconfigChanged;
    static final Map<String, String> expected = new HashMap<>();

    @BeforeAll
    static void setUp() throws Exception {
        client = RealApiServer.get().newClient();
        for (JsonNode v : BootstrapGoldenVectorsTest.vectors()) {
            if (!v.has("content") || !v.get("content").asText().startsWith("apiVersion")) {
                continue;
            }
            String content = v.get("content").asText();
            if (content.contains("192.168.1.10")) {
                kubeconfigChanged = content;
            } else {
                kubeconfig = content;
            }
            expected.put(v.get("tokenID").asText() + (content.contains("192.168.1.10") ? "/changed" : ""),
                    v.get("signature").asText());
        }
        assertThat(expected).containsKeys("abcdef", "7x9k2m", "abcdef/changed");
    }

    @AfterAll
    static void tearDown() {
        if (signer != null) {
            signer.close();
            signer = null;
        }
        clean();
        client.close();
    }

    @BeforeEach
    void cleanAndStart() throws InterruptedException {
        clean();
        clock.set(Instant.now());
        if (signer == null) {
            signer = ControllerHarness.create(vertx, BootstrapSigner.NAME, "bootstrap-signer", Map.of(),
                    context -> new BootstrapSigner(context, clock::get)).start();
        }
    }

    static void clean() {
        client.configMaps().inNamespace(PUBLIC).withName("cluster-info").delete();
        client.secrets().inNamespace(SYSTEM).withField("type", "bootstrap.kubernetes.io/token").delete();
        await().atMost(TIMEOUT).until(() -> client.configMaps().inNamespace(PUBLIC).withName("cluster-info").get() == null
                && client.secrets().inNamespace(SYSTEM).withField("type", "bootstrap.kubernetes.io/token").list()
                        .getItems().isEmpty());
    }

    static Secret token(String id, String secret, Map<String, String> more) {
        SecretBuilder b = new SecretBuilder().withNewMetadata().withNamespace(SYSTEM).withName("bootstrap-token-" + id)
                .endMetadata().withType("bootstrap.kubernetes.io/token").addToStringData("token-id", id)
                .addToStringData("token-secret", secret);
        more.forEach(b::addToStringData);
        return client.secrets().inNamespace(SYSTEM).resource(b.build()).create();
    }

    static Map<String, String> signing() {
        return Map.of("usage-bootstrap-signing", "true", "usage-bootstrap-authentication", "true");
    }

    static void clusterInfo(Map<String, String> data) {
        ConfigMap cm = new ConfigMapBuilder().withNewMetadata().withNamespace(PUBLIC).withName("cluster-info")
                .endMetadata().withData(data).build();
        client.configMaps().inNamespace(PUBLIC).resource(cm).create();
    }

    static Map<String, String> data() {
        ConfigMap cm = client.configMaps().inNamespace(PUBLIC).withName("cluster-info").get();
        return cm == null || cm.getData() == null ? Map.of() : cm.getData();
    }

    @Test
    void signsClusterInfoForEverySigningTokenAsUpstreamAndFollowsTheKubeconfig() {
        clusterInfo(Map.of("kubeconfig", kubeconfig, "jws-kubeconfig-abcdef", "old signature", "other", "kept"));
        // created first: once the signing tokens' signatures are there, the signer has seen this one
        token("n0s1gn", "0123456789abcdef", Map.of("usage-bootstrap-authentication", "true"));
        token("abcdef", "0123456789abcdef", Map.of("usage-bootstrap-signing", "true", "usage-bootstrap-authentication",
                "true", "expiration", clock.get().plus(Duration.ofHours(1)).truncatedTo(ChronoUnit.SECONDS).toString()));
        token("7x9k2m", "q8w7e6r5t4y3u2i1", signing());

        await().atMost(TIMEOUT).until(() -> expected.get("abcdef").equals(data().get("jws-kubeconfig-abcdef"))
                && expected.get("7x9k2m").equals(data().get("jws-kubeconfig-7x9k2m")));
        assertThat(data()).containsEntry("other", "kept").containsEntry("kubeconfig", kubeconfig)
                .doesNotContainKey("jws-kubeconfig-n0s1gn").hasSize(4);
        assertThat(Jws.detachedTokenIsValid(data().get("jws-kubeconfig-abcdef"), kubeconfig, "abcdef",
                "0123456789abcdef".getBytes(StandardCharsets.UTF_8))).isTrue();

        // a new kubeconfig is signed again
        ConfigMap cm = client.configMaps().inNamespace(PUBLIC).withName("cluster-info").get();
        cm.getData().put("kubeconfig", kubeconfigChanged);
        client.configMaps().inNamespace(PUBLIC).resource(cm).update();
        await().atMost(TIMEOUT).until(() -> expected.get("abcdef/changed").equals(data().get("jws-kubeconfig-abcdef")));
        assertThat(Jws.detachedTokenIsValid(data().get("jws-kubeconfig-7x9k2m"), kubeconfigChanged, "7x9k2m",
                "q8w7e6r5t4y3u2i1".getBytes(StandardCharsets.UTF_8))).isTrue();
    }

    @Test
    void removesSignaturesOfTokensDeletedExpiredOrNoLongerSigning() {
        clusterInfo(Map.of("kubeconfig", kubeconfig, "jws-kubeconfig-zzzzzz", "of a token long gone"));
        token("abcdef", "0123456789abcdef", signing());
        token("7x9k2m", "q8w7e6r5t4y3u2i1", Map.of("usage-bootstrap-signing", "true",
                "expiration", clock.get().plus(Duration.ofHours(1)).truncatedTo(ChronoUnit.SECONDS).toString()));
        await().atMost(TIMEOUT).until(() -> data().containsKey("jws-kubeconfig-abcdef")
                && data().containsKey("jws-kubeconfig-7x9k2m") && !data().containsKey("jws-kubeconfig-zzzzzz"));

        client.secrets().inNamespace(SYSTEM).withName("bootstrap-token-abcdef").delete();
        await().atMost(TIMEOUT).until(() -> !data().containsKey("jws-kubeconfig-abcdef"));
        assertThat(data()).containsEntry("jws-kubeconfig-7x9k2m", expected.get("7x9k2m"));

        // expiry is checked when something queues the ConfigMap (upstream does not wait for it): here a
        // change of the token, two hours later
        clock.set(clock.get().plus(Duration.ofHours(2)));
        client.secrets().inNamespace(SYSTEM).withName("bootstrap-token-7x9k2m")
                .edit(s -> new SecretBuilder(s).editMetadata().addToLabels("touched", "yes").endMetadata().build());
        await().atMost(TIMEOUT).until(() -> !data().containsKey("jws-kubeconfig-7x9k2m"));

        // a token that stops being for signing loses its signature
        token("abcdef", "0123456789abcdef", signing());
        await().atMost(TIMEOUT).until(() -> expected.get("abcdef").equals(data().get("jws-kubeconfig-abcdef")));
        client.secrets().inNamespace(SYSTEM).withName("bootstrap-token-abcdef").edit(s -> {
            s.getData().put("usage-bootstrap-signing",
                    Base64.getEncoder().encodeToString("false".getBytes(StandardCharsets.UTF_8)));
            return s;
        });
        await().atMost(TIMEOUT).until(() -> !data().containsKey("jws-kubeconfig-abcdef"));
        assertThat(data()).containsOnlyKeys("kubeconfig");
    }
}
