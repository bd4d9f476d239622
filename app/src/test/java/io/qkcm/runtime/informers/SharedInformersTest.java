package io.qkcm.runtime.informers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.Map;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.qkcm.manager.ControllerManager;
import io.qkcm.testing.RealApiServer;
import io.qkcm.testing.RealApiServerResource;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;

/** The manager connects to a real kube-apiserver and its shared caches see what the test writes. */
@QuarkusTest
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
class SharedInformersTest {

    @Inject
    ControllerManager manager;

    @Test
    void oneCachePerTypeSeesObjectsFromTheApiServer() throws Exception {
        assertThat(manager.running()).isTrue();
        SharedInformers informers = manager.informers();
        SharedIndexInformer<ConfigMap> first = informers.informerFor(ConfigMap.class);
        SharedIndexInformer<ConfigMap> second = informers.informerFor(ConfigMap.class);
        assertThat(second).isSameAs(first);
        assertThat(informers.cachedTypes().stream().filter(t -> t == ConfigMap.class)).hasSize(1);
        // several running controllers read pods (replicaset, replicationcontroller, deployment, namespace,
        // serviceaccount-token): the process still holds exactly one pod informer, created once
        assertThat(manager.controllers()).extracting(c -> c.name())
                .contains("replicaset-controller", "replicationcontroller-controller", "deployment-controller");
        assertThat(informers.all().stream().filter(i -> i.getApiTypeClass() == io.fabric8.kubernetes.api.model.Pod.class))
                .hasSize(1);
        assertThat(informers.informerFor(io.fabric8.kubernetes.api.model.Pod.class))
                .isSameAs(informers.all().stream()
                        .filter(i -> i.getApiTypeClass() == io.fabric8.kubernetes.api.model.Pod.class).findFirst().orElseThrow());

        try (KubernetesClient client = RealApiServer.get().newClient()) {
            String ns = "shared-informers-" + System.nanoTime();
            client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build())
                    .create();
            client.configMaps().inNamespace(ns).resource(new ConfigMapBuilder().withNewMetadata().withName("probe")
                    .endMetadata().withData(Map.of("k", "v")).build()).create();
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
                ConfigMap cached = first.getStore().getByKey(ns + "/probe");
                assertThat(cached).isNotNull();
                assertThat(cached.getData()).containsEntry("k", "v");
                // the shared caches drop managedFields, as upstream's informer transform
                assertThat(cached.getMetadata().getManagedFields()).isNullOrEmpty();
            });
            // and keep objects by index value, read without the cache's lock (Indexes)
            assertThat(IndexedItemStore.of(first.getIndexer())).isNotNull();
            assertThat(Indexes.byIndex(first, io.fabric8.kubernetes.client.informers.cache.Cache.NAMESPACE_INDEX, ns))
                    .extracting(c -> c.getMetadata().getName()).contains("probe");
        }
    }

    @Test
    void cachedObjectsShareEqualLabelsAndOwnerReferences() throws Exception {
        SharedIndexInformer<io.fabric8.kubernetes.api.model.Pod> pods = manager.informers()
                .informerFor(io.fabric8.kubernetes.api.model.Pod.class);
        try (KubernetesClient client = RealApiServer.get().newClient()) {
            String ns = "shared-contents-" + System.nanoTime();
            client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build())
                    .create();
            // an owner no controller acts on: a ConfigMap (the pods are left alone, with no node to run on)
            ConfigMap owner = client.configMaps().inNamespace(ns).resource(new ConfigMapBuilder().withNewMetadata()
                    .withName("owner").endMetadata().build()).create();
            for (String name : new String[] {"a", "b"}) {
                client.pods().inNamespace(ns).resource(new io.fabric8.kubernetes.api.model.PodBuilder().withNewMetadata()
                        .withName(name).addToLabels("app", "shared-" + ns).addToLabels("tier", "x")
                        .addNewOwnerReference().withApiVersion("v1").withKind("ConfigMap").withName("owner")
                        .withUid(owner.getMetadata().getUid()).endOwnerReference().endMetadata()
                        .withNewSpec().addNewContainer().withName("c").withImage("i").endContainer().endSpec().build())
                        .create();
            }
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
                var a = pods.getStore().getByKey(ns + "/a");
                var b = pods.getStore().getByKey(ns + "/b");
                assertThat(a).isNotNull();
                assertThat(b).isNotNull();
                assertThat(b.getMetadata().getLabels()).isSameAs(a.getMetadata().getLabels())
                        .containsExactly(Map.entry("app", "shared-" + ns), Map.entry("tier", "x"));
                assertThat(b.getMetadata().getOwnerReferences()).isSameAs(a.getMetadata().getOwnerReferences());
                assertThat(a.getMetadata().getOwnerReferences().get(0).getUid()).isEqualTo(owner.getMetadata().getUid());
            });
        }
    }
}
