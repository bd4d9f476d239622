package io.qkcm.controller.replicaset;

import static io.qkcm.controller.replicaset.RsTestSupport.activePods;
import static io.qkcm.controller.replicaset.RsTestSupport.replicaSet;
import static io.qkcm.testing.TestNamespaces.newNamespace;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import jakarta.inject.Inject;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.apps.ReplicaSet;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.qkcm.controller.ApiErrors;
import io.qkcm.testing.ControllerHarness;
import io.qkcm.testing.LosingPodControl;
import io.qkcm.testing.ManagerOffProfile;
import io.qkcm.testing.RealApiServer;
import io.qkcm.testing.RealApiServerResource;
import io.qkcm.testing.StallingProxy;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.vertx.core.Vertx;

/**
 * Writes whose answer is lost (issue 19's split run: the API server created the pod, the connection
 * closed before the response, and the watch that would have shown the pod was on the same broken
 * network). The ReplicaSet controller's informers connect through a {@link StallingProxy} that holds
 * the cache back; its writes go directly and are performed, then reported as "Connection was closed".
 * Upstream lowers its expectations on the error and, with the cache behind, writes again (pods beyond
 * spec); qkcm keeps them and waits until a list from the API server shows the cache caught up.
 * Syncs are driven by hand, so every step is deterministic.
 */
@QuarkusTest
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
@TestProfile(ManagerOffProfile.class)
class ReplicaSetUncertainWritesTest {

    private static final Map<String, String> LABELS = Map.of("app", "lost-answer");

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

    private record Setup(ControllerHarness<ReplicaSetController<ReplicaSet>> harness, LosingPodControl pods) {
    }

    private Setup newController(StallingProxy proxy) throws Exception {
        Path kubeconfig = LosingPodControl.kubeconfigVia(proxy, client, "rs-lost-answers");
        LosingPodControl[] wrapper = new LosingPodControl[1];
        ControllerHarness<ReplicaSetController<ReplicaSet>> harness = ControllerHarness.withInformersVia(vertx,
                ReplicaSetController.NAME, kubeconfig,
                ctx -> new ReplicaSetController<>(ctx, ReplicaSet.class, ReplicaSetController.QUEUE, 1,
                        ReplicaSetSource.replicaSets(ctx.informers(), ctx.client()), ReplicaSetController.EVENT_SOURCE,
                        real -> wrapper[0] = new LosingPodControl(real, proxy)));
        harness.startInformers();
        return new Setup(harness, wrapper[0]);
    }

    private static int cachedPods(ControllerHarness<?> h, String ns) {
        return (int) h.informers.informerFor(Pod.class).getStore().list().stream()
                .filter(p -> ns.equals(p.getMetadata().getNamespace()) && p.getMetadata().getDeletionTimestamp() == null)
                .count();
    }

    @Test
    void aCreationWhoseAnswerIsLostIsNotRepeatedBeforeTheCacheCatchesUp() throws Exception {
        String ns = newNamespace(client, "rs-lost-create");
        URI apiServer = URI.create(client.getConfiguration().getMasterUrl());
        try (StallingProxy proxy = new StallingProxy(apiServer)) {
            Setup s = newController(proxy);
            try (ControllerHarness<ReplicaSetController<ReplicaSet>> h = s.harness()) {
                client.apps().replicaSets().inNamespace(ns).resource(replicaSet("web", 3, LABELS)).create();
                String key = ns + "/web";
                await().atMost(Duration.ofSeconds(30))
                        .until(() -> h.informers.informerFor(ReplicaSet.class).getStore().getByKey(key) != null);

                s.pods().lose.set(true);
                // slow start: the first batch is one creation; it happens, its answer is lost
                assertThatThrownBy(() -> h.controller.sync(key)).satisfies(e -> assertThat(ApiErrors.isOutcomeUnknown(e)).isTrue());
                s.pods().lose.set(false);
                assertThat(activePods(client, ns)).hasSize(1);
                assertThat(cachedPods(h, ns)).isZero();

                // the cache still shows no pod: upstream would now create 3 more
                for (int i = 0; i < 3; i++) {
                    h.controller.sync(key);
                }
                assertThat(activePods(client, ns)).hasSize(1);
                assertThat(s.pods().creates.get()).isEqualTo(1);
                assertThat(h.controller.expectations().isUncertain(key)).isTrue();

                proxy.resume();
                await().atMost(Duration.ofSeconds(30)).until(() -> cachedPods(h, ns) == 1);
                h.controller.sync(key);
                assertThat(activePods(client, ns)).hasSize(3);
                assertThat(s.pods().creates.get()).isEqualTo(3);
                await().atMost(Duration.ofSeconds(30)).until(() -> cachedPods(h, ns) == 3);
                h.controller.sync(key);
                assertThat(s.pods().creates.get()).isEqualTo(3);
                assertThat(h.controller.expectations().satisfiedExpectations(key)).isTrue();
            }
        }
    }

    @Test
    void deletionsWhoseAnswersAreLostAreNotRepeatedBeforeTheCacheCatchesUp() throws Exception {
        String ns = newNamespace(client, "rs-lost-delete");
        URI apiServer = URI.create(client.getConfiguration().getMasterUrl());
        try (StallingProxy proxy = new StallingProxy(apiServer)) {
            Setup s = newController(proxy);
            try (ControllerHarness<ReplicaSetController<ReplicaSet>> h = s.harness()) {
                client.apps().replicaSets().inNamespace(ns).resource(replicaSet("web", 4, LABELS)).create();
                String key = ns + "/web";
                await().atMost(Duration.ofSeconds(30))
                        .until(() -> h.informers.informerFor(ReplicaSet.class).getStore().getByKey(key) != null);
                h.controller.sync(key); // slow start 1, 2, 1
                await().atMost(Duration.ofSeconds(30)).until(() -> cachedPods(h, ns) == 4);
                assertThat(s.pods().creates.get()).isEqualTo(4);

                client.apps().replicaSets().inNamespace(ns).withName("web").scale(1);
                await().atMost(Duration.ofSeconds(30)).until(() -> RsTestSupport
                        .n(h.informers.informerFor(ReplicaSet.class).getStore().getByKey(key).getSpec().getReplicas()) == 1);

                s.pods().lose.set(true);
                assertThatThrownBy(() -> h.controller.sync(key)).satisfies(e -> assertThat(ApiErrors.isOutcomeUnknown(e)).isTrue());
                s.pods().lose.set(false);
                assertThat(s.pods().deletes.get()).isEqualTo(3);
                assertThat(activePods(client, ns)).hasSize(1);
                assertThat(cachedPods(h, ns)).isEqualTo(4);

                // the cache still shows 4 pods: upstream would delete 3 again
                for (int i = 0; i < 3; i++) {
                    h.controller.sync(key);
                }
                assertThat(s.pods().deletes.get()).isEqualTo(3);

                proxy.resume();
                await().atMost(Duration.ofSeconds(30)).until(() -> cachedPods(h, ns) == 1);
                h.controller.sync(key);
                assertThat(s.pods().deletes.get()).isEqualTo(3);
                assertThat(s.pods().creates.get()).isEqualTo(4);
                assertThat(activePods(client, ns)).hasSize(1);
                assertThat(h.controller.expectations().satisfiedExpectations(key)).isTrue();
            }
        }
    }
}
