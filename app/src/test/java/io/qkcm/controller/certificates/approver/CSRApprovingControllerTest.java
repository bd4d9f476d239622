package io.qkcm.controller.certificates.approver;

import static io.qkcm.testing.TestCsrs.create;
import static io.qkcm.testing.TestCsrs.csrPem;
import static io.qkcm.testing.TestCsrs.get;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import jakarta.inject.Inject;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.certificates.v1.CertificateSigningRequest;
import io.fabric8.kubernetes.api.model.certificates.v1.CertificateSigningRequestCondition;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBindingBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.qkcm.testing.TestCsrs;
import io.qkcm.testing.ControllerHarness;
import io.qkcm.testing.ManagerOffProfile;
import io.qkcm.testing.RealApiServer;
import io.qkcm.testing.RealApiServerResource;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.vertx.core.Vertx;

/**
 * certificatesigningrequest-approving-controller against a real API server (RBAC): kubelet client requests
 * made by a bootstrap identity or by the node itself (impersonated, so the API server records them as the
 * requester) are approved once a SubjectAccessReview allows certificatesigningrequests/nodeclient or
 * /selfnodeclient, with upstream's condition; requests it does not recognise, and denied ones, are left
 * alone.
 */
@QuarkusTest
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
@TestProfile(ManagerOffProfile.class)
class CSRApprovingControllerTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final List<String> CLIENT_USAGES = List.of("digital signature", "client auth");
    private static final String KUBELET_CLIENT = "kubernetes.io/kube-apiserver-client-kubelet";

    @Inject
    Vertx vertx;

    static KubernetesClient admin;

    @BeforeAll
    static void setUp() {
        admin = RealApiServer.get().newClient();
    }

    @AfterAll
    static void tearDown() {
        admin.close();
    }

    private static KubernetesClient as(String user, String... groups) {
        Config config = Config.fromKubeconfig(RealApiServer.get().kubeconfigYaml());
        config.setImpersonateUsername(user);
        config.setImpersonateGroups(groups);
        return new KubernetesClientBuilder().withConfig(config).build();
    }

    private static void bind(String name, String clusterRole, String user) {
        admin.rbac().clusterRoleBindings().resource(new ClusterRoleBindingBuilder().withNewMetadata().withName(name)
                .endMetadata().withNewRoleRef().withApiGroup("rbac.authorization.k8s.io").withKind("ClusterRole")
                .withName(clusterRole).endRoleRef().addNewSubject().withApiGroup("rbac.authorization.k8s.io")
                .withKind("User").withName(user).endSubject().build()).create();
    }

    private static List<CertificateSigningRequestCondition> conditions(String name) {
        CertificateSigningRequest csr = get(admin, name);
        return csr.getStatus() == null ? List.of() : csr.getStatus().getConditions();
    }

    private static CertificateSigningRequestCondition awaitApproved(String name) {
        await().atMost(TIMEOUT).until(() -> conditions(name), c -> !c.isEmpty());
        List<CertificateSigningRequestCondition> conditions = conditions(name);
        assertThat(conditions).hasSize(1);
        return conditions.get(0);
    }

    @Test
    void kubeletClientRequestsAreApprovedWhenTheReviewAllowsThem() throws Exception {
        long n = System.nanoTime();
        try (var h = ControllerHarness.create(vertx, CSRApprovingController.NAME, "certificate-controller", Map.of(),
                CSRApprovingController::new).start()) {
            // the node's own request: selfnodeclient, allowed only once bound
            String node = "system:node:approve-" + n;
            bind("csr-create-" + n, "system:node-bootstrapper", node);
            String self = "self-" + n;
            try (KubernetesClient asNode = as(node, "system:nodes")) {
                create(asNode, self, KUBELET_CLIENT, CLIENT_USAGES, null, csrPem(TestCsrs.ecKey(), "O=system:nodes,CN=" + node));
            }
            assertThat(get(admin, self).getSpec().getUsername()).isEqualTo(node);
            // recognised, review denied: retried with backoff, not approved
            await().atMost(TIMEOUT).until(() -> h.controller.requeues(self) >= 2);
            assertThat(conditions(self)).isEmpty();
            bind("csr-selfnodeclient-" + n, "system:certificates.k8s.io:certificatesigningrequests:selfnodeclient", node);
            CertificateSigningRequestCondition approved = awaitApproved(self);
            assertThat(approved.getType()).isEqualTo("Approved");
            assertThat(approved.getStatus()).isEqualTo("True");
            assertThat(approved.getReason()).isEqualTo("AutoApproved");
            assertThat(approved.getMessage()).isEqualTo("Auto approving self kubelet client certificate after SubjectAccessReview.");
            assertThat(approved.getLastUpdateTime()).isNotEmpty();

            // a bootstrap identity's request for a node: nodeclient
            String bootstrap = "system:bootstrap:b" + n;
            bind("csr-create-b" + n, "system:node-bootstrapper", bootstrap);
            bind("csr-nodeclient-" + n, "system:certificates.k8s.io:certificatesigningrequests:nodeclient", bootstrap);
            String forNode = "bootstrap-" + n;
            String notRecognised = "serving-" + n;
            String wrongUsages = "usages-" + n;
            String denied = "denied-" + n;
            // denied before anyone may approve it (the node has no nodeclient permission): never approved
            try (KubernetesClient asNode = as(node, "system:nodes")) {
                create(asNode, denied, KUBELET_CLIENT, CLIENT_USAGES, null,
                        csrPem(TestCsrs.ecKey(), "O=system:nodes,CN=system:node:b" + n));
            }
            TestCsrs.deny(admin, denied);
            try (KubernetesClient asBootstrap = as(bootstrap, "system:bootstrappers")) {
                create(asBootstrap, notRecognised, "kubernetes.io/kubelet-serving",
                        List.of("digital signature", "server auth"), null, csrPem(TestCsrs.ecKey(),
                                "O=system:nodes,CN=system:node:b" + n, TestCsrs.dns("b.example")));
                create(asBootstrap, wrongUsages, KUBELET_CLIENT, List.of("digital signature", "server auth", "client auth"),
                        null, csrPem(TestCsrs.ecKey(), "O=system:nodes,CN=system:node:b" + n));
                create(asBootstrap, forNode, KUBELET_CLIENT, CLIENT_USAGES, null,
                        csrPem(TestCsrs.rsaKey(), "O=system:nodes,CN=system:node:b" + n));
            }
            CertificateSigningRequestCondition nodeClient = awaitApproved(forNode);
            assertThat(nodeClient.getReason()).isEqualTo("AutoApproved");
            assertThat(nodeClient.getMessage()).isEqualTo("Auto approving kubelet client certificate after SubjectAccessReview.");
            // handled before the last one (queue order) and left alone, without retries
            assertThat(conditions(notRecognised)).isEmpty();
            assertThat(conditions(wrongUsages)).isEmpty();
            assertThat(conditions(denied)).extracting(CertificateSigningRequestCondition::getType).containsExactly("Denied");
            assertThat(h.controller.requeues(notRecognised)).isZero();
            assertThat(h.controller.requeues(wrongUsages)).isZero();
        } finally {
            for (String b : List.of("csr-create-" + n, "csr-selfnodeclient-" + n, "csr-create-b" + n, "csr-nodeclient-" + n)) {
                admin.rbac().clusterRoleBindings().withName(b).delete();
            }
        }
    }
}
