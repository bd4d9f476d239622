package io.qkcm.controller.certificates.signer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.charset.StandardCharsets;
import java.security.KeyPair;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.List;
import java.util.Map;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.authentication.SelfSubjectReview;
import io.fabric8.kubernetes.api.model.certificates.v1.CertificateSigningRequest;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBindingBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.qkcm.testing.TestCsrs;
import io.qkcm.controller.certificates.approver.CSRApprovingController;
import io.qkcm.testing.ControllerHarness;
import io.qkcm.testing.ManagerOffProfile;
import io.qkcm.testing.RealApiServer;
import io.qkcm.testing.RealApiServerResource;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.vertx.core.Vertx;

/**
 * A kubelet's TLS bootstrap, end to end, with qkcm's approving and signing controllers: a bootstrap token
 * (kubeadm's RBAC: its group may create requests and have node client requests approved), a client
 * request made with it, approved through the SubjectAccessReview and signed by the API server's client
 * CA, and the issued certificate authenticating as {@code system:node:<name>} in group system:nodes.
 */
@QuarkusTest
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
@TestProfile(ManagerOffProfile.class)
class KubeletBootstrapTest {

    @Inject
    Vertx vertx;

    @Test
    void aBootstrapTokensClientRequestBecomesTheNodesCredential() throws Exception {
        RealApiServer server = RealApiServer.withSigningClientCa();
        String tokenId = Long.toString(System.nanoTime() % 2_000_000_000L, 36);
        tokenId = (tokenId + "aaaaaa").substring(0, 6);
        String tokenSecret = "0123456789abcdef";
        String group = "system:bootstrappers:qkcm-test-" + tokenId;
        String node = "system:node:boot-" + tokenId;
        Map<String, String> kubeconfig = Map.of("qkcm.kubeconfig", server.kubeconfig().toString());
        try (KubernetesClient admin = server.newClient();
                var approver = ControllerHarness.create(vertx, CSRApprovingController.NAME, "certificate-controller",
                        kubeconfig, CSRApprovingController::new).start();
                var signer = ControllerHarness.create(vertx, CSRSigningController.NAME, "certificate-controller",
                        Map.of("qkcm.kubeconfig", server.kubeconfig().toString(),
                                "qkcm.cluster-signing-cert-file", server.clientCaCertFile().toString(),
                                "qkcm.cluster-signing-key-file", server.clientCaKeyFile().toString()),
                        ctx -> CertificateSigningRequestSigningControllerDescriptor.newController(ctx, Clock.systemUTC()))
                        .start()) {
            // what kubeadm sets up: the token, and its group's two permissions
            admin.secrets().inNamespace("kube-system").resource(new SecretBuilder().withNewMetadata()
                    .withName("bootstrap-token-" + tokenId).endMetadata().withType("bootstrap.kubernetes.io/token")
                    .withStringData(Map.of("token-id", tokenId, "token-secret", tokenSecret,
                            "usage-bootstrap-authentication", "true", "auth-extra-groups", group,
                            "expiration", Instant.now().plus(Duration.ofHours(1)).toString()))
                    .build()).create();
            bind(admin, "qkcm-test-bootstrapper-" + tokenId, "system:node-bootstrapper", group);
            bind(admin, "qkcm-test-nodeclient-" + tokenId,
                    "system:certificates.k8s.io:certificatesigningrequests:nodeclient", group);

            // the kubelet: a key, a request made with the bootstrap token
            KeyPair key = TestCsrs.ecKey();
            String name = "node-csr-" + tokenId;
            Config asToken = Config.fromKubeconfig(server.kubeconfigYaml());
            asToken.setClientCertData(null);
            asToken.setClientKeyData(null);
            asToken.setClientCertFile(null);
            asToken.setClientKeyFile(null);
            asToken.setOauthToken(tokenId + "." + tokenSecret);
            try (KubernetesClient kubelet = new KubernetesClientBuilder().withConfig(asToken).build()) {
                TestCsrs.create(kubelet, name, "kubernetes.io/kube-apiserver-client-kubelet",
                        List.of("digital signature", "client auth"), null,
                        TestCsrs.csrPem(key, "O=system:nodes,CN=" + node));
            }
            CertificateSigningRequest issued = await().atMost(Duration.ofSeconds(30))
                    .until(() -> TestCsrs.get(admin, name), c -> TestCsrs.certificatePem(c) != null);
            assertThat(issued.getSpec().getUsername()).isEqualTo("system:bootstrap:" + tokenId);
            assertThat(issued.getSpec().getGroups()).contains(group, "system:bootstrappers");
            assertThat(issued.getStatus().getConditions()).singleElement().satisfies(c -> {
                assertThat(c.getType()).isEqualTo("Approved");
                assertThat(c.getReason()).isEqualTo("AutoApproved");
                assertThat(c.getMessage()).isEqualTo("Auto approving kubelet client certificate after SubjectAccessReview.");
            });

            // the kubelet's new credential
            String pem = TestCsrs.certificatePem(issued);
            Config asNode = Config.fromKubeconfig(server.kubeconfigYaml());
            asNode.setClientCertFile(null);
            asNode.setClientKeyFile(null);
            asNode.setClientCertData(Base64.getEncoder().encodeToString(pem.getBytes(StandardCharsets.US_ASCII)));
            asNode.setClientKeyData(Base64.getEncoder().encodeToString("-----BEGIN PRIVATE KEY-----\n"
                    .concat(Base64.getMimeEncoder(64, new byte[] { '\n' }).encodeToString(key.getPrivate().getEncoded()))
                    .concat("\n-----END PRIVATE KEY-----\n").getBytes(StandardCharsets.US_ASCII)));
            asNode.setClientKeyAlgo("EC");
            try (KubernetesClient kubelet = new KubernetesClientBuilder().withConfig(asNode).build()) {
                var user = kubelet.authentication().v1().selfSubjectReviews().create(new SelfSubjectReview())
                        .getStatus().getUserInfo();
                assertThat(user.getUsername()).isEqualTo(node);
                assertThat(user.getGroups()).contains("system:nodes");
            }
        }
    }

    private static void bind(KubernetesClient admin, String name, String clusterRole, String group) {
        admin.rbac().clusterRoleBindings().resource(new ClusterRoleBindingBuilder().withNewMetadata().withName(name)
                .endMetadata().withNewRoleRef().withApiGroup("rbac.authorization.k8s.io").withKind("ClusterRole")
                .withName(clusterRole).endRoleRef().addNewSubject().withApiGroup("rbac.authorization.k8s.io")
                .withKind("Group").withName(group).endSubject().build()).create();
    }
}
