package io.qkcm.controller.endpointslice;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Endpoints;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.qkcm.testing.RealApiServer;
import io.qkcm.testing.RealApiServerResource;
import io.qkcm.testing.TestKubelet;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;

/**
 * Deleting a Service cleans up after it as on an upstream cluster: endpoints-controller deletes its
 * Endpoints, and the garbage collector deletes its EndpointSlices (owned by the Service).
 */
@QuarkusTest
@TestProfile(UpdatesBatchPeriodTest.Profile.class)
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
class ServiceDeletionTest {

    @Test
    void deletingTheServiceRemovesItsEndpointsAndSlices() {
        try (KubernetesClient client = RealApiServer.get().newClient()) {
            String ns = "svc-delete-" + System.nanoTime();
            client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build())
                    .create();
            String node = "svc-delete-node-" + System.nanoTime();
            client.nodes().resource(new NodeBuilder().withNewMetadata().withName(node).endMetadata().build()).create();
            try {
                client.services().inNamespace(ns).resource(new ServiceBuilder().withNewMetadata().withName("web")
                        .endMetadata().withNewSpec().addToSelector("app", "web").addNewPort().withPort(80)
                        .withNewTargetPort(8080).endPort().endSpec().build()).create();
                TestKubelet kubelet = new TestKubelet(client, node);
                for (int i = 0; i < 2; i++) {
                    kubelet.runningAndReady(client.pods().inNamespace(ns).resource(new PodBuilder().withNewMetadata()
                            .withName("web-" + i).addToLabels("app", "web").endMetadata().withNewSpec()
                            .addNewContainer().withName("c").withImage("registry.k8s.io/pause:3.9").endContainer()
                            .endSpec().build()).create());
                }
                await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
                    Endpoints e = client.endpoints().inNamespace(ns).withName("web").get();
                    assertThat(e).isNotNull();
                    assertThat(e.getSubsets()).singleElement().satisfies(s -> assertThat(s.getAddresses()).hasSize(2));
                    assertThat(slices(client, ns)).singleElement().satisfies(s -> assertThat(s.getEndpoints()).hasSize(2));
                });

                client.services().inNamespace(ns).withName("web").delete();

                await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
                    assertThat(client.endpoints().inNamespace(ns).withName("web").get()).as("Endpoints").isNull();
                    assertThat(slices(client, ns)).as("EndpointSlices").isEmpty();
                });
                // the pods are not the Service's: they stay
                assertThat(client.pods().inNamespace(ns).list().getItems()).hasSize(2);
            } finally {
                client.namespaces().withName(ns).delete();
                client.nodes().withName(node).delete();
            }
        }
    }

    static List<EndpointSlice> slices(KubernetesClient client, String ns) {
        return client.discovery().v1().endpointSlices().inNamespace(ns)
                .withLabel("kubernetes.io/service-name", "web").list().getItems();
    }
}
