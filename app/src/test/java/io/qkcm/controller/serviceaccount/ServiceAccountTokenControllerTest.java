package io.qkcm.controller.serviceaccount;

import io.qkcm.pki.PrivateKeys;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.Map;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.api.model.authentication.TokenReview;
import io.fabric8.kubernetes.api.model.authentication.TokenReviewBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.qkcm.manager.ControllerManager;
import io.qkcm.testing.RealApiServer;
import io.qkcm.testing.RealApiServerResource;
import io.qkcm.testing.ServiceAccountTokenApiServer;
import io.qkcm.testing.TestPki;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;

/**
 * serviceaccount-token-controller: a token Secret gets a legacy JWT the API server accepts as the
 * ServiceAccount, plus ca.crt and namespace; it is deleted with its ServiceAccount.
 */
@QuarkusTest
@TestProfile(ServiceAccountTokenProfile.class)
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
class ServiceAccountTokenControllerTest {

    @Inject
    ControllerManager manager;

    @Test
    void tokenSecretIsPopulatedWithATokenTheApiServerAccepts() throws Exception {
        RealApiServer server = ServiceAccountTokenApiServer.get();
        // the controllers under test talk to the API server that trusts the test key
        assertThat(manager.options().string("kubeconfig")).isEqualTo(server.kubeconfig().toString());
        try (KubernetesClient client = server.newClient()) {
            String ns = "sa-token-" + System.nanoTime();
            client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build())
                    .create();
            ServiceAccount sa = client.serviceAccounts().inNamespace(ns).resource(new ServiceAccountBuilder()
                    .withNewMetadata().withName("builder").endMetadata().build()).create();
            client.secrets().inNamespace(ns).resource(new SecretBuilder().withNewMetadata().withName("builder-token")
                    .withAnnotations(Map.of("kubernetes.io/service-account.name", "builder")).endMetadata()
                    .withType("kubernetes.io/service-account-token").build()).create();

            Secret populated = await().atMost(Duration.ofSeconds(30)).until(
                    () -> client.secrets().inNamespace(ns).withName("builder-token").get(),
                    s -> s.getData() != null && s.getData().containsKey("token"));
            assertThat(decode(populated, "namespace")).isEqualTo(ns);
            // no --root-ca-file: the CA of qkcm's own API client configuration
            Config adminConfig = Config.fromKubeconfig(server.kubeconfigYaml());
            String expectedCa = adminConfig.getCaCertData() != null
                    ? new String(Base64.getDecoder().decode(adminConfig.getCaCertData()), StandardCharsets.UTF_8)
                    : java.nio.file.Files.readString(java.nio.file.Path.of(adminConfig.getCaCertFile()));
            assertThat(expectedCa).contains("-----BEGIN CERTIFICATE-----");
            assertThat(decode(populated, "ca.crt")).isEqualTo(expectedCa);
            assertThat(populated.getMetadata().getAnnotations())
                    .containsEntry("kubernetes.io/service-account.uid", sa.getMetadata().getUid());

            String token = decode(populated, "token");
            String[] parts = token.split("\\.");
            assertThat(parts).hasSize(3);
            Map<String, Object> header = Serialization.unmarshal(new String(Base64.getUrlDecoder().decode(parts[0]),
                    StandardCharsets.UTF_8), Map.class);
            assertThat(header).containsEntry("alg", "RS256")
                    .containsEntry("kid", PrivateKeys.keyId(TestPki.get().serviceAccountPublicKeyObject()));
            Map<String, Object> claims = Serialization.unmarshal(new String(Base64.getUrlDecoder().decode(parts[1]),
                    StandardCharsets.UTF_8), Map.class);
            assertThat(claims).containsEntry("iss", "kubernetes/serviceaccount")
                    .containsEntry("sub", "system:serviceaccount:" + ns + ":builder")
                    .containsEntry("kubernetes.io/serviceaccount/namespace", ns)
                    .containsEntry("kubernetes.io/serviceaccount/secret.name", "builder-token")
                    .containsEntry("kubernetes.io/serviceaccount/service-account.name", "builder")
                    .containsEntry("kubernetes.io/serviceaccount/service-account.uid", sa.getMetadata().getUid())
                    .doesNotContainKey("exp");

            // the API server authenticates the token as the service account
            TokenReview review = client.authentication().v1().tokenReviews().create(new TokenReviewBuilder()
                    .withNewSpec().withToken(token).endSpec().build());
            assertThat(review.getStatus().getError()).isNullOrEmpty();
            assertThat(review.getStatus().getAuthenticated()).isTrue();
            assertThat(review.getStatus().getUser().getUsername()).isEqualTo("system:serviceaccount:" + ns + ":builder");
            assertThat(review.getStatus().getUser().getUid()).isEqualTo(sa.getMetadata().getUid());

            // and a client presenting it is that service account
            Config asSa = new ConfigBuilder(Config.fromKubeconfig(server.kubeconfigYaml())).withClientCertData(null)
                    .withClientKeyData(null).withClientCertFile(null).withClientKeyFile(null).withOauthToken(token)
                    .build();
            try (KubernetesClient saClient = new KubernetesClientBuilder().withConfig(asSa).build()) {
                var self = saClient.authentication().v1().selfSubjectReviews()
                        .create(new io.fabric8.kubernetes.api.model.authentication.SelfSubjectReviewBuilder().build());
                assertThat(self.getStatus().getUserInfo().getUsername())
                        .isEqualTo("system:serviceaccount:" + ns + ":builder");
            }

            // a token secret goes with its service account
            client.serviceAccounts().inNamespace(ns).withName("builder").delete();
            await().atMost(Duration.ofSeconds(30)).untilAsserted(
                    () -> assertThat(client.secrets().inNamespace(ns).withName("builder-token").get()).isNull());
        }
    }

    @Test
    void aTamperedTokenIsRejectedByTheApiServer() {
        RealApiServer server = ServiceAccountTokenApiServer.get();
        try (KubernetesClient client = server.newClient()) {
            String ns = "sa-token-neg-" + System.nanoTime();
            client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build())
                    .create();
            client.serviceAccounts().inNamespace(ns).resource(new ServiceAccountBuilder().withNewMetadata()
                    .withName("other").endMetadata().build()).create();
            client.secrets().inNamespace(ns).resource(new SecretBuilder().withNewMetadata().withName("other-token")
                    .withAnnotations(Map.of("kubernetes.io/service-account.name", "other")).endMetadata()
                    .withType("kubernetes.io/service-account-token").build()).create();
            Secret populated = await().atMost(Duration.ofSeconds(30)).until(
                    () -> client.secrets().inNamespace(ns).withName("other-token").get(),
                    s -> s.getData() != null && s.getData().containsKey("token"));
            String token = decode(populated, "token");
            String tampered = token.substring(0, token.length() - 4)
                    + (token.endsWith("AAAA") ? "BBBB" : "AAAA");
            TokenReview review = client.authentication().v1().tokenReviews().create(new TokenReviewBuilder()
                    .withNewSpec().withToken(tampered).endSpec().build());
            assertThat(review.getStatus().getAuthenticated()).isNotEqualTo(Boolean.TRUE);
        }
    }

    private static String decode(Secret s, String key) {
        return new String(Base64.getDecoder().decode(s.getData().get(key)), StandardCharsets.UTF_8);
    }
}
