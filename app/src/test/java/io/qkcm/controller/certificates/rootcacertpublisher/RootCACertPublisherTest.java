package io.qkcm.controller.certificates.rootcacertpublisher;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Files;
import java.time.Duration;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.qkcm.controller.namespace.NamespaceLifecycleProfile;
import io.qkcm.testing.Conflicts;
import io.qkcm.testing.RealApiServer;
import io.qkcm.testing.RealApiServerResource;
import io.qkcm.testing.TestPki;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;

/** root-ca-certificate-publisher-controller: kube-root-ca.crt from --root-ca-file, kept as published. */
@QuarkusTest
@TestProfile(NamespaceLifecycleProfile.class)
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
class RootCACertPublisherTest {

    @Test
    void kubeRootCaIsPublishedRestoredAndRecreated() throws Exception {
        String ca = Files.readString(TestPki.get().rootCaFile());
        try (KubernetesClient client = RealApiServer.get().newClient()) {
            String ns = "root-ca-" + System.nanoTime();
            client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build())
                    .create();
            ConfigMap published = await().atMost(Duration.ofSeconds(30))
                    .until(() -> client.configMaps().inNamespace(ns).withName("kube-root-ca.crt").get(),
                            cm -> cm != null);
            assertThat(published.getData()).isEqualTo(Map.of("ca.crt", ca));
            assertThat(published.getMetadata().getAnnotations()).containsEntry("kubernetes.io/description",
                    RootCACertPublisher.DESCRIPTION);
            // the JOSDK dependent writes what upstream writes: only the description, no owner, no apply
            assertThat(published.getMetadata().getAnnotations()).containsOnlyKeys("kubernetes.io/description");
            assertThat(published.getMetadata().getLabels()).isNullOrEmpty();
            assertThat(published.getMetadata().getOwnerReferences()).isNullOrEmpty();
            assertThat(published.getMetadata().getManagedFields()).extracting(f -> f.getOperation()).containsOnly("Update");

            // an edit is reverted
            Conflicts.retry(() -> client.configMaps().inNamespace(ns).withName("kube-root-ca.crt").edit(cm -> {
                cm.setData(Map.of("ca.crt", "tampered", "extra", "x"));
                cm.getMetadata().setAnnotations(Map.of());
                return cm;
            }));
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
                ConfigMap cm = client.configMaps().inNamespace(ns).withName("kube-root-ca.crt").get();
                assertThat(cm.getData()).isEqualTo(Map.of("ca.crt", ca));
                assertThat(cm.getMetadata().getAnnotations()).containsEntry("kubernetes.io/description",
                        RootCACertPublisher.DESCRIPTION);
            });

            // a deletion is undone
            String uid = client.configMaps().inNamespace(ns).withName("kube-root-ca.crt").get().getMetadata().getUid();
            client.configMaps().inNamespace(ns).withName("kube-root-ca.crt").delete();
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
                ConfigMap cm = client.configMaps().inNamespace(ns).withName("kube-root-ca.crt").get();
                assertThat(cm).isNotNull();
                assertThat(cm.getMetadata().getUid()).isNotEqualTo(uid);
                assertThat(cm.getData()).isEqualTo(Map.of("ca.crt", ca));
            });
        }
    }
}
