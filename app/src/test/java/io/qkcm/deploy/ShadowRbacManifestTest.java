package io.qkcm.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReview;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReviewBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.qkcm.testing.RealApiServer;

/**
 * deploy/kubeadm/shadow-rbac.yaml on a real API server (RBAC authorizer, upstream's bootstrap roles): the
 * shadow identity gets what kube-controller-manager's own identity has (its controllers' ServiceAccount
 * tokens, events), its own Lease and the authentication ConfigMap, and no more than upstream's identity
 * (no pod writes of its own); the viewer role reads /shadow.
 */
class ShadowRbacManifestTest {

    private static final String USER = "system:qkcm-shadow";
    private static KubernetesClient client;
    private static List<HasMetadata> objects;

    @BeforeAll
    static void apply() throws Exception {
        client = RealApiServer.get().newClient();
        try (InputStream in = Files.newInputStream(Path.of("../deploy/kubeadm/shadow-rbac.yaml"))) {
            objects = client.load(in).items();
        }
        assertThat(objects).hasSize(5);
        client.resourceList(objects).serverSideApply();
    }

    @AfterAll
    static void remove() {
        client.resourceList(objects).delete();
        client.close();
    }

    private static boolean allowed(String user, String namespace, String group, String resource, String subresource,
            String verb, String name) {
        SubjectAccessReview review = client.authorization().v1().subjectAccessReview().create(new SubjectAccessReviewBuilder()
                .withNewSpec().withUser(user).withNewResourceAttributes().withNamespace(namespace).withGroup(group)
                .withResource(resource).withSubresource(subresource).withVerb(verb).withName(name).endResourceAttributes()
                .endSpec().build());
        return review.getStatus().getAllowed();
    }

    @Test
    void theShadowIdentityHasKubeControllerManagersPermissionsAndItsOwnLease() {
        // what upstream's identity does with --use-service-account-credentials: its controllers' tokens
        assertThat(allowed(USER, "kube-system", "", "serviceaccounts", "token", "create", "replicaset-controller")).isTrue();
        assertThat(allowed(USER, "default", "", "events", "", "create", null)).isTrue();
        assertThat(allowed(USER, "kube-system", "", "configmaps", "", "get", "extension-apiserver-authentication")).isTrue();
        // its own Lease, created and renewed
        assertThat(allowed(USER, "kube-system", "coordination.k8s.io", "leases", "", "create", null)).isTrue();
        assertThat(allowed(USER, "kube-system", "coordination.k8s.io", "leases", "", "update", "kube-controller-manager-shadow")).isTrue();
        // nothing beyond upstream's identity: writes go through the controllers' ServiceAccounts
        assertThat(allowed(USER, "default", "", "pods", "", "create", null)).isFalse();
        assertThat(allowed(USER, "default", "apps", "replicasets", "", "delete", "web")).isFalse();
        assertThat(allowed(USER, "kube-system", "coordination.k8s.io", "leases", "", "update", "other-lease")).isFalse();
    }

    @Test
    void theViewerRoleReadsTheReport() {
        SubjectAccessReview review = client.authorization().v1().subjectAccessReview().create(new SubjectAccessReviewBuilder()
                .withNewSpec().withUser("someone").withNewNonResourceAttributes().withPath("/shadow.html").withVerb("get")
                .endNonResourceAttributes().endSpec().build());
        assertThat(review.getStatus().getAllowed()).isFalse();
        assertThat(objects).anyMatch(o -> "qkcm-shadow:viewer".equals(o.getMetadata().getName())
                && "ClusterRole".equals(o.getKind()));
        client.rbac().clusterRoleBindings().resource(new io.fabric8.kubernetes.api.model.rbac.ClusterRoleBindingBuilder()
                .withNewMetadata().withName("qkcm-shadow-viewer-test").endMetadata()
                .withNewRoleRef().withApiGroup("rbac.authorization.k8s.io").withKind("ClusterRole").withName("qkcm-shadow:viewer").endRoleRef()
                .addNewSubject().withApiGroup("rbac.authorization.k8s.io").withKind("User").withName("someone").endSubject()
                .build()).serverSideApply();
        try {
            org.awaitility.Awaitility.await().atMost(java.time.Duration.ofSeconds(30)).until(() -> client.authorization().v1()
                    .subjectAccessReview().create(new SubjectAccessReviewBuilder().withNewSpec().withUser("someone")
                            .withNewNonResourceAttributes().withPath("/shadow.html").withVerb("get").endNonResourceAttributes()
                            .endSpec().build()).getStatus().getAllowed());
        } finally {
            client.rbac().clusterRoleBindings().withName("qkcm-shadow-viewer-test").delete();
        }
    }
}
