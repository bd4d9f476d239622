package io.qkcm.runtime.informers;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.qkcm.testing.RealApiServer;

/** The metadata-only reflector against a real API server: list, watch, updates, deletes, stop. */
class MetadataInformersTest {

    @Test
    void listsAndWatchesMetadataOnly() {
        try (KubernetesClient client = RealApiServer.get().newClient()) {
            String ns = "metadata-informers-" + Long.toString(System.nanoTime(), 36);
            client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build())
                    .create();
            client.configMaps().inNamespace(ns).resource(new ConfigMapBuilder().withNewMetadata().withName("before")
                    .addToLabels("a", "b").endMetadata().addToData("k", "v").build()).create();

            MetadataInformers informers = new MetadataInformers(new MetadataClient(client));
            MetadataInformers.MetadataInformer informer = informers.informerFor(new GroupVersionResource("", "v1", "configmaps"),
                    "ConfigMap");
            List<String> seen = new CopyOnWriteArrayList<>();
            informer.addHandler(new MetadataInformers.Handler() {
                @Override
                public void onAdd(ObjectMetadata obj) {
                    if (obj.namespace().equals(ns)) {
                        seen.add("add " + obj.name());
                    }
                }

                @Override
                public void onUpdate(ObjectMetadata oldObj, ObjectMetadata newObj) {
                    if (newObj.namespace().equals(ns)) {
                        seen.add("update " + newObj.name() + " " + newObj.finalizers());
                    }
                }

                @Override
                public void onDelete(ObjectMetadata obj) {
                    if (obj.namespace().equals(ns)) {
                        seen.add("delete " + obj.name());
                    }
                }
            });
            informer.start();
            try {
                await().atMost(Duration.ofSeconds(30)).until(informer::hasSynced);
                ObjectMetadata before = informer.get(ns + "/before");
                assertThat(before).isNotNull();
                assertThat(before.apiVersion()).isEqualTo("v1");
                assertThat(before.kind()).isEqualTo("ConfigMap");
                assertThat(before.uid()).isEqualTo(client.configMaps().inNamespace(ns).withName("before").get()
                        .getMetadata().getUid());

                client.configMaps().inNamespace(ns).resource(new ConfigMapBuilder().withNewMetadata().withName("after")
                        .endMetadata().build()).create();
                client.configMaps().inNamespace(ns).withName("after").edit(c -> {
                    c.getMetadata().setFinalizers(List.of("qkcm.io/test"));
                    return c;
                });
                client.configMaps().inNamespace(ns).withName("before").delete();
                await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(seen).containsExactly(
                        "add before", "add after", "update after [qkcm.io/test]", "delete before"));
                assertThat(informer.get(ns + "/before")).isNull();
                assertThat(informer.get(ns + "/after").finalizers()).containsExactly("qkcm.io/test");

                informer.stop();
                client.configMaps().inNamespace(ns).withName("after").edit(c -> {
                    c.getMetadata().setFinalizers(List.of());
                    return c;
                });
                client.configMaps().inNamespace(ns).withName("after").delete();
                await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(5))
                        .untilAsserted(() -> assertThat(seen).hasSize(4));
            } finally {
                informers.shutdown();
            }
        }
    }

    /** A handler recording the events of namespace {@code ns}. */
    private static MetadataInformers.Handler recorder(String ns, List<String> seen) {
        return new MetadataInformers.Handler() {
            @Override
            public void onAdd(ObjectMetadata obj) {
                if (obj.namespace().equals(ns)) {
                    seen.add("add " + obj.name());
                }
            }

            @Override
            public void onUpdate(ObjectMetadata oldObj, ObjectMetadata newObj) {
            }

            @Override
            public void onDelete(ObjectMetadata obj) {
                if (obj.namespace().equals(ns)) {
                    seen.add("delete " + obj.name());
                }
            }
        };
    }

    /**
     * One informer per resource for all its users (the garbage collector's and the quota controller's
     * monitors): a second use gets the same informer, a handler added late gets the cache replayed as
     * adds, one user releasing it leaves it running for the other, the last release stops it (its watch
     * ends) and a use after that gets a new informer.
     */
    @Test
    void oneInformerPerResourceSharedUntilItsLastUseIsReleased() {
        try (KubernetesClient client = RealApiServer.get().newClient()) {
            String ns = "metadata-shared-" + Long.toString(System.nanoTime(), 36);
            client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build())
                    .create();
            client.configMaps().inNamespace(ns).resource(new ConfigMapBuilder().withNewMetadata().withName("one")
                    .endMetadata().build()).create();
            MetadataInformers informers = new MetadataInformers(new MetadataClient(client));
            GroupVersionResource configMaps = new GroupVersionResource("", "v1", "configmaps");
            try {
                MetadataInformers.MetadataInformer first = informers.informerFor(configMaps, "ConfigMap");
                List<String> firstSeen = new CopyOnWriteArrayList<>();
                MetadataInformers.Handler firstHandler = recorder(ns, firstSeen);
                first.addHandler(firstHandler);
                first.start();
                await().atMost(Duration.ofSeconds(30)).until(first::hasSynced);
                assertThat(firstSeen).containsExactly("add one");

                MetadataInformers.MetadataInformer second = informers.informerFor(configMaps, "ConfigMap");
                assertThat(second).isSameAs(first);
                assertThat(first.uses()).isEqualTo(2);
                List<String> secondSeen = new CopyOnWriteArrayList<>();
                MetadataInformers.Handler secondHandler = recorder(ns, secondSeen);
                second.addHandler(secondHandler);
                // the cache, replayed before addHandler returned
                assertThat(secondSeen).containsExactly("add one");
                second.start();
                assertThat(first.byNamespace(ns)).extracting(ObjectMetadata::name).containsExactly("one");

                // the first user leaves: the informer keeps running for the second
                first.removeHandler(firstHandler);
                first.release();
                assertThat(first.stopped()).isFalse();
                assertThat(informers.existing(configMaps)).containsSame(first);
                client.configMaps().inNamespace(ns).resource(new ConfigMapBuilder().withNewMetadata().withName("two")
                        .endMetadata().build()).create();
                client.configMaps().inNamespace(ns).withName("one").delete();
                await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(secondSeen)
                        .containsExactly("add one", "add two", "delete one"));
                assertThat(firstSeen).containsExactly("add one");
                assertThat(first.byNamespace(ns)).extracting(ObjectMetadata::name).containsExactly("two");

                // the last user leaves: the informer stops, a new use gets a new one
                second.removeHandler(secondHandler);
                second.release();
                assertThat(first.stopped()).isTrue();
                assertThat(informers.existing(configMaps)).isEmpty();
                MetadataInformers.MetadataInformer third = informers.informerFor(configMaps, "ConfigMap");
                assertThat(third).isNotSameAs(first);
                assertThat(third.uses()).isEqualTo(1);
            } finally {
                informers.shutdown();
            }
        }
    }
}
