package io.qkcm.runtime.clients;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import java.util.Optional;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.qkcm.runtime.options.ControllerManagerOptions;
import io.qkcm.runtime.options.Flags;
import io.qkcm.testing.RealApiServer;
import io.qkcm.testing.TestNamespaces;
import io.vertx.core.Vertx;

/**
 * Once the lease is lost ({@link KubeClients#fenceWrites}) no write leaves the process through any of its
 * clients, whatever controller holds them, while reads still work; on a real API server, which must not
 * have received the refused writes.
 */
class WriteFenceTest {

    private static RealApiServer server;
    private static Vertx vertx;

    @BeforeAll
    static void start() {
        server = RealApiServer.get();
        vertx = Vertx.vertx();
    }

    @AfterAll
    static void stop() {
        vertx.close();
    }

    private static ConfigMap configMap(String namespace, String name) {
        return new ConfigMapBuilder().withNewMetadata().withNamespace(namespace).withName(name).endMetadata()
                .addToData("k", "v").build();
    }

    @Test
    void afterTheFenceWritesAreRefusedBeforeTheyAreSentAndReadsGoOn() {
        Map<String, String> config = Map.of("qkcm.kubeconfig", server.kubeconfig().toString());
        try (KubeClients clients = new KubeClients(
                new ControllerManagerOptions(Flags.upstream(), name -> Optional.ofNullable(config.get(name))),
                new SimpleMeterRegistry(), vertx); KubernetesClient admin = server.newClient()) {
            KubernetesClient rs = clients.forController("replicaset-controller");
            KubernetesClient events = clients.forComponent("event-broadcaster");
            String ns = TestNamespaces.newNamespace(admin, "fence");
            rs.configMaps().inNamespace(ns).resource(configMap(ns, "before")).create();
            assertThat(clients.writesFenced()).isFalse();

            clients.fenceWrites();

            assertThat(clients.writesFenced()).isTrue();
            assertThatThrownBy(() -> rs.configMaps().inNamespace(ns).resource(configMap(ns, "after")).create())
                    .isInstanceOf(KubernetesClientException.class).hasMessageContaining("leaderelection lost");
            assertThatThrownBy(() -> events.configMaps().inNamespace(ns).withName("before").delete())
                    .isInstanceOf(KubernetesClientException.class).hasMessageContaining("leaderelection lost");
            assertThatThrownBy(() -> rs.configMaps().inNamespace(ns).withName("before")
                    .edit(c -> new ConfigMapBuilder(c).addToData("k2", "v2").build()))
                    .isInstanceOf(KubernetesClientException.class).hasMessageContaining("leaderelection lost");
            // reads still go out
            assertThat(rs.configMaps().inNamespace(ns).withName("before").get()).isNotNull();

            // the API server never saw the refused writes (read with a client of its own)
            assertThat(admin.configMaps().inNamespace(ns).withName("after").get()).isNull();
            ConfigMap before = admin.configMaps().inNamespace(ns).withName("before").get();
            assertThat(before).isNotNull();
            assertThat(before.getData()).containsOnlyKeys("k");
        }
    }
}
