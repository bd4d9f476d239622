package io.qkcm.controller.endpointslice;

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
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.inject.Inject;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.qkcm.controller.ApiErrors;
import io.qkcm.controller.util.endpointslice.StaleInformerCacheException;
import io.qkcm.endpointslice.EndpointSliceWriter;
import io.qkcm.testing.ControllerHarness;
import io.qkcm.testing.ManagerOffProfile;
import io.qkcm.testing.RealApiServer;
import io.qkcm.testing.RealApiServerResource;
import io.qkcm.testing.StallingProxy;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpClosedException;

/**
 * A slice creation whose answer is lost: the API server made the slice (under a name it generated),
 * the connection closed before the response, and the watch that would show it is on the same broken
 * network. The controller's informers connect through a {@link StallingProxy} that holds the cache
 * back; its writes go directly, then are reported as "Connection was closed". Upstream, from the cache
 * without the slice, creates a second one (removed again on a later sync); qkcm lists the Service's
 * slices from the API server and waits until the cache shows them. Syncs are driven by hand.
 */
@QuarkusTest
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
@TestProfile(ManagerOffProfile.class)
class EndpointSliceUncertainCreatesTest {

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

    /** Performs each write, then, while {@code lose} is set, stalls the cache's proxy and throws what a lost answer throws. */
    static class LostAnswers implements EndpointSliceWriter {
        final EndpointSliceWriter real;
        final StallingProxy cacheProxy;
        final AtomicBoolean lose = new AtomicBoolean();
        final AtomicInteger creates = new AtomicInteger();

        LostAnswers(EndpointSliceWriter real, StallingProxy cacheProxy) {
            this.real = real;
            this.cacheProxy = cacheProxy;
        }

        @Override
        public EndpointSlice create(EndpointSlice slice) {
            creates.incrementAndGet();
            if (lose.get()) {
                cacheProxy.stall();
            }
            EndpointSlice created = real.create(slice);
            if (lose.get()) {
                throw new KubernetesClientException("Connection was closed", new HttpClosedException("Connection was closed"));
            }
            return created;
        }

        @Override
        public EndpointSlice update(EndpointSlice slice) {
            return real.update(slice);
        }

        @Override
        public void delete(String namespace, String name) {
            real.delete(namespace, name);
        }
    }

    private static List<EndpointSlice> liveSlices(String ns, String service) {
        return client.discovery().v1().endpointSlices().inNamespace(ns)
                .withLabel("kubernetes.io/service-name", service).list().getItems();
    }

    private static List<EndpointSlice> cachedSlices(ControllerHarness<?> h, String ns, String service) {
        return h.informers.informerFor(EndpointSlice.class).getStore().list().stream()
                .filter(s -> ns.equals(s.getMetadata().getNamespace()) && s.getMetadata().getLabels() != null
                        && service.equals(s.getMetadata().getLabels().get("kubernetes.io/service-name")))
                .toList();
    }

    @Test
    void aSliceCreationWhoseAnswerIsLostIsNotRepeatedFromTheStaleCache() throws Exception {
        String ns = newNamespace(client, "eps-lost-create");
        URI apiServer = URI.create(client.getConfiguration().getMasterUrl());
        try (StallingProxy proxy = new StallingProxy(apiServer)) {
            Path kubeconfig = Files.createTempFile("eps-lost-answers", ".kubeconfig");
            String server = client.getConfiguration().getMasterUrl().replaceAll("/$", "");
            Files.writeString(kubeconfig, Files.readString(RealApiServer.get().kubeconfig()).replace(server, proxy.url()));
            LostAnswers[] writer = new LostAnswers[1];
            try (ControllerHarness<EndpointSliceController> h = ControllerHarness.withInformersVia(vertx,
                    EndpointSliceController.NAME, kubeconfig, ctx -> new EndpointSliceController(ctx, 1, Duration.ZERO,
                            100, real -> writer[0] = new LostAnswers(real, proxy)))) {
                h.startInformers();
                // no pods: the Service gets one placeholder slice, created from generateName
                Service svc = new ServiceBuilder().withNewMetadata().withName("web").withNamespace(ns).endMetadata()
                        .withNewSpec().withSelector(Map.of("app", "web")).addNewPort().withName("http").withPort(80)
                        .withTargetPort(new IntOrString(8080)).endPort().endSpec().build();
                client.services().inNamespace(ns).resource(svc).create();
                String key = ns + "/web";
                await().atMost(Duration.ofSeconds(30))
                        .until(() -> h.informers.informerFor(Service.class).getStore().getByKey(key) != null);

                writer[0].lose.set(true);
                assertThatThrownBy(() -> h.controller.syncService(key))
                        .satisfies(e -> assertThat(ApiErrors.isOutcomeUnknown(e)).isTrue());
                writer[0].lose.set(false);
                assertThat(liveSlices(ns, "web")).hasSize(1);
                assertThat(cachedSlices(h, ns, "web")).isEmpty();

                // the cache still shows no slice: upstream would create a second one now
                for (int i = 0; i < 3; i++) {
                    assertThatThrownBy(() -> h.controller.syncService(key)).isInstanceOf(StaleInformerCacheException.class);
                }
                assertThat(writer[0].creates.get()).isEqualTo(1);
                assertThat(liveSlices(ns, "web")).hasSize(1);

                proxy.resume();
                await().atMost(Duration.ofSeconds(30)).until(() -> cachedSlices(h, ns, "web").size() == 1);
                h.controller.syncService(key);
                h.controller.syncService(key);
                assertThat(writer[0].creates.get()).isEqualTo(1);
                assertThat(liveSlices(ns, "web")).hasSize(1);
            }
        }
    }

    @Test
    void aSliceCreationWhoseAnswerIsLostAndThatWasNotMadeIsMadeOnce() throws Exception {
        String ns = newNamespace(client, "eps-lost-nocreate");
        URI apiServer = URI.create(client.getConfiguration().getMasterUrl());
        try (StallingProxy proxy = new StallingProxy(apiServer)) {
            Path kubeconfig = Files.createTempFile("eps-lost-answers", ".kubeconfig");
            String server = client.getConfiguration().getMasterUrl().replaceAll("/$", "");
            Files.writeString(kubeconfig, Files.readString(RealApiServer.get().kubeconfig()).replace(server, proxy.url()));
            AtomicInteger posts = new AtomicInteger();
            AtomicBoolean fail = new AtomicBoolean();
            try (ControllerHarness<EndpointSliceController> h = ControllerHarness.withInformersVia(vertx,
                    EndpointSliceController.NAME, kubeconfig, ctx -> new EndpointSliceController(ctx, 1, Duration.ZERO,
                            100, writer -> new LostAnswers(writer, proxy) {
                                @Override
                                public EndpointSlice create(EndpointSlice slice) {
                                    posts.incrementAndGet();
                                    if (fail.get()) {
                                        // the request never reached the API server
                                        throw new KubernetesClientException("Connection was closed",
                                                new HttpClosedException("Connection was closed"));
                                    }
                                    return real.create(slice);
                                }
                            }))) {
                h.startInformers();
                Service svc = new ServiceBuilder().withNewMetadata().withName("web").withNamespace(ns).endMetadata()
                        .withNewSpec().withSelector(Map.of("app", "web")).addNewPort().withName("http").withPort(80)
                        .withTargetPort(new IntOrString(8080)).endPort().endSpec().build();
                client.services().inNamespace(ns).resource(svc).create();
                String key = ns + "/web";
                await().atMost(Duration.ofSeconds(30))
                        .until(() -> h.informers.informerFor(Service.class).getStore().getByKey(key) != null);

                fail.set(true);
                assertThatThrownBy(() -> h.controller.syncService(key))
                        .satisfies(e -> assertThat(ApiErrors.isOutcomeUnknown(e)).isTrue());
                fail.set(false);
                assertThat(liveSlices(ns, "web")).isEmpty();

                // the list proves the slice absent: the next sync makes it, once
                h.controller.syncService(key);
                assertThat(posts.get()).isEqualTo(2);
                assertThat(liveSlices(ns, "web")).hasSize(1);
                await().atMost(Duration.ofSeconds(30)).until(() -> cachedSlices(h, ns, "web").size() == 1);
                h.controller.syncService(key);
                assertThat(posts.get()).isEqualTo(2);
                assertThat(liveSlices(ns, "web")).hasSize(1);
            }
        }
    }
}
