package io.qkcm.controller.endpointslicemirroring;

import static io.qkcm.testing.TestNamespaces.newNamespace;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import jakarta.inject.Inject;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.EndpointPortBuilder;
import io.fabric8.kubernetes.api.model.EndpointSubsetBuilder;
import io.fabric8.kubernetes.api.model.Endpoints;
import io.fabric8.kubernetes.api.model.EndpointsBuilder;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSliceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.qkcm.controller.util.endpointslice.StaleInformerCacheException;
import io.qkcm.testing.ControllerHarness;
import io.qkcm.testing.ManagerOffProfile;
import io.qkcm.testing.RealApiServer;
import io.qkcm.testing.RealApiServerResource;
import io.qkcm.testing.StallingProxy;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.vertx.core.Vertx;

/**
 * A mirrored slice creation of unknown outcome that the API server did perform: the slice exists, the
 * cache (its informers behind a stalled {@link StallingProxy}) does not show it. The next syncs list
 * the Endpoints' slices from the API server and wait for the cache instead of creating a second one.
 * (The lost answer itself is {@link MirroredSliceCreationRetriesTest}'s; here its outcome is set up
 * directly: the slice made, the Endpoints marked.)
 */
@QuarkusTest
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
@TestProfile(ManagerOffProfile.class)
class MirroredSliceUncertainCreateTest {

    @Inject
    Vertx vertx;

    static KubernetesClient client;

    @BeforeAll
    static void setUp() {
        client = RealApiServer.get().newClient();
    }

    @AfterAll
    static void tearDown() {
        client.close();
    }

    private static List<EndpointSlice> liveSlices(String ns) {
        return client.discovery().v1().endpointSlices().inNamespace(ns)
                .withLabel(MirroringUtil.LABEL_SERVICE_NAME, "ext").list().getItems();
    }

    private static List<EndpointSlice> cachedSlices(ControllerHarness<?> h, String ns) {
        return h.informers.informerFor(EndpointSlice.class).getStore().list().stream()
                .filter(s -> ns.equals(s.getMetadata().getNamespace())).toList();
    }

    @Test
    void aMirroredSliceMadeByACreationOfUnknownOutcomeIsNotMadeAgain() throws Exception {
        String ns = newNamespace(client, "mirror-lost-create");
        URI apiServer = URI.create(client.getConfiguration().getMasterUrl());
        try (StallingProxy proxy = new StallingProxy(apiServer)) {
            Path kubeconfig = Files.createTempFile("mirror-lost-answers", ".kubeconfig");
            String server = client.getConfiguration().getMasterUrl().replaceAll("/$", "");
            Files.writeString(kubeconfig, Files.readString(RealApiServer.get().kubeconfig()).replace(server, proxy.url()));
            try (ControllerHarness<EndpointSliceMirroringController> h = ControllerHarness.withInformersVia(vertx,
                    EndpointSliceMirroringController.NAME, kubeconfig,
                    ctx -> new EndpointSliceMirroringController(ctx, 1, 1000, Duration.ZERO))) {
                h.startInformers();
                client.services().inNamespace(ns).resource(new ServiceBuilder().withNewMetadata().withName("ext")
                        .endMetadata().withNewSpec().addNewPort().withName("http").withPort(80).endPort().endSpec().build())
                        .create();
                client.endpoints().inNamespace(ns).resource(new EndpointsBuilder().withNewMetadata().withName("ext")
                        .endMetadata().withSubsets(new EndpointSubsetBuilder().addNewAddress().withIp("10.0.0.1").endAddress()
                                .withPorts(new EndpointPortBuilder().withName("http").withPort(80).withProtocol("TCP").build())
                                .build())
                        .build()).create();
                String key = ns + "/ext";
                await().atMost(Duration.ofSeconds(30))
                        .until(() -> h.informers.informerFor(Service.class).getStore().getByKey(key) != null
                                && h.informers.informerFor(Endpoints.class).getStore().getByKey(key) != null);

                // the creation whose answer was lost: performed, not seen by the stalled cache
                proxy.stall();
                client.discovery().v1().endpointSlices().inNamespace(ns).resource(new EndpointSliceBuilder()
                        .withNewMetadata().withGenerateName("ext-").withLabels(Map.of(MirroringUtil.LABEL_SERVICE_NAME,
                                "ext", MirroringUtil.LABEL_MANAGED_BY, MirroringUtil.CONTROLLER_NAME))
                        .endMetadata().withAddressType("IPv4").addNewEndpoint().withAddresses("10.0.0.1")
                        .withNewConditions().withReady(true).endConditions().endEndpoint().addNewPort().withName("http")
                        .withPort(80).withProtocol("TCP").endPort().build()).create();
                h.controller.endpointSliceTracker().markCreateUncertain(ns, "ext");

                // upstream (and qkcm without the check) would create the slice again from the cache now
                for (int i = 0; i < 3; i++) {
                    assertThatThrownBy(() -> h.controller.sync(key)).isInstanceOf(StaleInformerCacheException.class);
                }
                assertThat(liveSlices(ns)).hasSize(1);

                proxy.resume();
                await().atMost(Duration.ofSeconds(30)).until(() -> cachedSlices(h, ns).size() == 1);
                h.controller.sync(key);
                h.controller.sync(key);
                assertThat(liveSlices(ns)).hasSize(1);
            }
        }
    }
}
