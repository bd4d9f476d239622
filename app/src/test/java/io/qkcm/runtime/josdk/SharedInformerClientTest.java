package io.qkcm.runtime.josdk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.qkcm.testing.RealApiServer;

/**
 * The one informer chain JOSDK 5.2's InformerManager uses —
 * {@code resources(type).inAnyNamespace().withLabelSelector(null).runnableInformer(0)} — answered with a
 * view of the shared informer: same store, handlers added to and removed from the shared one, start
 * meaning "synced", stop leaving the shared informer running; chains that need an informer of their own
 * are refused.
 */
class SharedInformerClientTest {

    @Test
    void josdksInformerChainIsAViewOfTheSharedInformer() throws Exception {
        try (StandaloneRuntime runtime = new StandaloneRuntime(); KubernetesClient admin = RealApiServer.get().newClient()) {
            KubernetesClient wrapped = SharedInformerClient.wrap(runtime.clients.forController("probe"), runtime.informers);
            SharedIndexInformer<ConfigMap> view = wrapped.resources(ConfigMap.class).inAnyNamespace()
                    .withLabelSelector((String) null).runnableInformer(0);
            assertThat(view).isInstanceOf(SharedInformerView.class);
            SharedIndexInformer<ConfigMap> shared = runtime.informers.informerFor(ConfigMap.class);
            assertThat(((SharedInformerView<ConfigMap>) view).shared()).isSameAs(shared);
            assertThat(view.getStore()).isSameAs(shared.getStore());

            List<String> viaView = new CopyOnWriteArrayList<>();
            List<String> viaOther = new CopyOnWriteArrayList<>();
            view.addEventHandler(handler(viaView));
            shared.addEventHandler(handler(viaOther));
            runtime.informers.start();
            view.start().toCompletableFuture().get();
            assertThat(shared.hasSynced()).isTrue();

            String ns = "view-" + Long.toString(System.nanoTime() % 1_000_000_000L, 36);
            admin.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build()).create();
            admin.resource(cm(ns, "one")).create();
            await().atMost(Duration.ofSeconds(30)).until(() -> viaView.contains(ns + "/one") && viaOther.contains(ns + "/one"));

            // stopping the view detaches its handlers only: the shared informer and other handlers go on
            view.stop();
            admin.resource(cm(ns, "two")).create();
            await().atMost(Duration.ofSeconds(30)).until(() -> viaOther.contains(ns + "/two"));
            assertThat(shared.isRunning()).isTrue();
            assertThat(viaView).doesNotContain(ns + "/two");
            // the wrapped client is the controller's own for everything else
            assertThat(wrapped.configMaps().inNamespace(ns).withName("two").get()).isNotNull();
        }
    }

    @Test
    void chainsThatNeedAnInformerOfTheirOwnAreRefused() {
        try (StandaloneRuntime runtime = new StandaloneRuntime()) {
            KubernetesClient wrapped = SharedInformerClient.wrap(runtime.clients.forController("probe"), runtime.informers);
            assertThatThrownBy(() -> wrapped.resources(ConfigMap.class).inNamespace("x").runnableInformer(0))
                    .isInstanceOf(IllegalStateException.class);
            assertThatThrownBy(() -> wrapped.resources(ConfigMap.class).inAnyNamespace().withLabelSelector("a=b"))
                    .isInstanceOf(IllegalStateException.class);
            assertThatThrownBy(() -> wrapped.resources(ConfigMap.class).inAnyNamespace().withLabelSelector((String) null)
                    .withLimit(10L)).isInstanceOf(IllegalStateException.class);
        }
    }

    private static ConfigMap cm(String ns, String name) {
        return new ConfigMapBuilder().withNewMetadata().withName(name).withNamespace(ns).endMetadata().build();
    }

    private static ResourceEventHandler<ConfigMap> handler(List<String> seen) {
        return new ResourceEventHandler<>() {
            @Override
            public void onAdd(ConfigMap obj) {
                seen.add(obj.getMetadata().getNamespace() + "/" + obj.getMetadata().getName());
            }

            @Override
            public void onUpdate(ConfigMap oldObj, ConfigMap newObj) {
            }

            @Override
            public void onDelete(ConfigMap obj, boolean deletedFinalStateUnknown) {
            }
        };
    }
}
