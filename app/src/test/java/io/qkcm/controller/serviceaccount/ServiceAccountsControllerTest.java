package io.qkcm.controller.serviceaccount;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.qkcm.controller.namespace.NamespaceLifecycleProfile;
import io.qkcm.testing.RealApiServer;
import io.qkcm.testing.RealApiServerResource;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;

/** serviceaccount-controller: a {@code default} ServiceAccount in every namespace, recreated when deleted. */
@QuarkusTest
@TestProfile(NamespaceLifecycleProfile.class)
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
class ServiceAccountsControllerTest {

    @Test
    void defaultServiceAccountIsCreatedAndRecreated() {
        try (KubernetesClient client = RealApiServer.get().newClient()) {
            String ns = "sa-default-" + System.nanoTime();
            client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build())
                    .create();
            ServiceAccount first = await().atMost(Duration.ofSeconds(30))
                    .until(() -> client.serviceAccounts().inNamespace(ns).withName("default").get(), sa -> sa != null);

            client.serviceAccounts().inNamespace(ns).withName("default").withGracePeriod(0).delete();

            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
                ServiceAccount again = client.serviceAccounts().inNamespace(ns).withName("default").get();
                assertThat(again).isNotNull();
                assertThat(again.getMetadata().getUid()).isNotEqualTo(first.getMetadata().getUid());
            });
            // the JOSDK dependent writes what upstream writes: a plain create, no annotation, label or owner
            ServiceAccount recreated = client.serviceAccounts().inNamespace(ns).withName("default").get();
            assertThat(recreated.getMetadata().getAnnotations()).isNullOrEmpty();
            assertThat(recreated.getMetadata().getLabels()).isNullOrEmpty();
            assertThat(recreated.getMetadata().getOwnerReferences()).isNullOrEmpty();
            assertThat(recreated.getMetadata().getManagedFields()).extracting(f -> f.getOperation()).doesNotContain("Apply");
            // only "default" is ensured
            assertThat(client.serviceAccounts().inNamespace(ns).list().getItems())
                    .extracting(sa -> sa.getMetadata().getName()).containsExactly("default");
        }
    }
}
