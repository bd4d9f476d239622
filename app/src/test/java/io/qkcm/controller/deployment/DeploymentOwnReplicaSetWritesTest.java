package io.qkcm.controller.deployment;

import static io.qkcm.testing.TestNamespaces.newNamespace;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.net.URI;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;

import jakarta.inject.Inject;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.ReplicaSet;
import io.fabric8.kubernetes.api.model.apps.ReplicaSetStatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.qkcm.controller.ApiErrors;
import io.qkcm.controller.deployment.util.DeploymentUtil;
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
 * Not upstream's: the Deployment controller's syncs read its own ReplicaSet updates before its cache shows
 * them (OwnWrites). The rollout's pattern from bench/results/2026-11-27-ownwrites-defaults, against a real API
 * server with the controller's cache held back: a sync scales two ReplicaSets proportionally, and the next sync,
 * while the cache still holds both as they were, goes on from the answers (it scales the old ReplicaSet down
 * again, from the answer) instead of scaling again from the cached versions, which the API server refuses with
 * 409 Conflict.
 */
@QuarkusTest
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
@TestProfile(ManagerOffProfile.class)
class DeploymentOwnReplicaSetWritesTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(60);

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

    private static <T extends HasMetadata> T cached(ControllerHarness<DeploymentController> h, Class<T> type, T live) {
        return h.informers.informerFor(type).getIndexer()
                .getByKey(live.getMetadata().getNamespace() + "/" + live.getMetadata().getName());
    }

    /** Waits until the controller's cache holds what the API server holds for every ReplicaSet and the Deployment. */
    private static void awaitCaught(ControllerHarness<DeploymentController> h, String ns) {
        await().atMost(TIMEOUT).until(() -> {
            for (ReplicaSet rs : replicaSets(ns)) {
                ReplicaSet c = cached(h, ReplicaSet.class, rs);
                if (c == null || !Objects.equals(c.getMetadata().getResourceVersion(), rs.getMetadata().getResourceVersion())) {
                    return false;
                }
            }
            Deployment d = client.apps().deployments().inNamespace(ns).withName("web").get();
            Deployment c = cached(h, Deployment.class, d);
            return c != null && Objects.equals(c.getMetadata().getResourceVersion(), d.getMetadata().getResourceVersion());
        });
    }

    /** Oldest first. */
    private static List<ReplicaSet> replicaSets(String ns) {
        return client.apps().replicaSets().inNamespace(ns).list().getItems().stream()
                .sorted(Comparator.comparing((ReplicaSet rs) -> rs.getMetadata().getCreationTimestamp())
                        .thenComparing(rs -> DeploymentUtil.revision(rs)))
                .toList();
    }

    /** What the ReplicaSet controller would report: {@code n} pods, all ready and available. */
    private static void available(String ns, String name, int n) {
        client.apps().replicaSets().inNamespace(ns).withName(name).editStatus(rs -> {
            rs.setStatus(new ReplicaSetStatusBuilder().withReplicas(n).withFullyLabeledReplicas(n).withReadyReplicas(n)
                    .withAvailableReplicas(n).withObservedGeneration(rs.getMetadata().getGeneration()).build());
            return rs;
        });
    }

    /**
     * Syncs on a caught-up cache until a sync writes no ReplicaSet, as the queue would. A conflict is retried:
     * upstream's own 409 of a sync that writes the Deployment's status twice from the Deployment it started with.
     */
    private static void syncUntilSteady(ControllerHarness<DeploymentController> h, String ns, String key)
            throws Exception {
        for (int i = 0; i < 5; i++) {
            awaitCaught(h, ns);
            List<String> before = replicaSets(ns).stream().map(rs -> rs.getMetadata().getResourceVersion()).toList();
            try {
                h.controller.sync(key);
            } catch (RuntimeException e) {
                if (!ApiErrors.isConflict(e)) {
                    throw e;
                }
                continue;
            }
            if (before.equals(replicaSets(ns).stream().map(rs -> rs.getMetadata().getResourceVersion()).toList())) {
                awaitCaught(h, ns);
                return;
            }
        }
        throw new AssertionError("the Deployment's ReplicaSets did not settle");
    }

    private static int replicas(ReplicaSet rs) {
        return rs.getSpec().getReplicas();
    }

    @Test
    void aSyncRightAfterItsOwnReplicaSetUpdatesGoesOnFromTheAnswersWhileTheCacheLags() throws Exception {
        String ns = newNamespace(client, "dep-ownrs");
        String key = ns + "/web";
        try (StallingProxy proxy = new StallingProxy(URI.create(client.getConfiguration().getMasterUrl()))) {
            Path kubeconfig = LosingPodControl.kubeconfigVia(proxy, client, "dep-ownrs");
            try (ControllerHarness<DeploymentController> h = ControllerHarness.withInformersVia(vertx,
                    DeploymentController.NAME, kubeconfig, ctx -> new DeploymentController(ctx, 1, Clock.systemUTC()))) {
                // no workers: the test runs the syncs, on caches it lets catch up first
                h.startInformers();
                client.apps().deployments().inNamespace(ns).resource(DeploymentTestSupport.rolling("web", 4, "web",
                        DeploymentTestSupport.READY_IMAGE, 1, 1)).create();
                syncUntilSteady(h, ns, key); // creates the first ReplicaSet, 4 replicas
                String a = replicaSets(ns).get(0).getMetadata().getName();
                available(ns, a, 4);
                // a new template: the second ReplicaSet is created with the surge's one replica and the first
                // scaled to 3, then the second scaled to 2; with no pod of it available yet, the rollout waits
                client.apps().deployments().inNamespace(ns).withName("web").edit(d -> {
                    d.getSpec().getTemplate().getSpec().getContainers().get(0).setImage("registry.k8s.io/pause:3.9");
                    return d;
                });
                syncUntilSteady(h, ns, key);
                List<ReplicaSet> both = replicaSets(ns);
                assertThat(both).extracting(DeploymentOwnReplicaSetWritesTest::replicas).containsExactly(3, 2);
                String b = both.get(1).getMetadata().getName();
                available(ns, a, 3);
                available(ns, b, 2);
                // scaled to 6 mid-rollout; the cache sees it, then is held back
                client.apps().deployments().inNamespace(ns).withName("web").edit(d -> {
                    d.getSpec().setReplicas(6);
                    return d;
                });
                awaitCaught(h, ns);
                proxy.stall();

                // a scaling event: 2 more replicas (7 allowed), proportionally: 3 -> 4 and 2 -> 3, with the new
                // desired/max annotations
                h.controller.sync(key);
                ReplicaSet a1 = client.apps().replicaSets().inNamespace(ns).withName(a).get();
                ReplicaSet b1 = client.apps().replicaSets().inNamespace(ns).withName(b).get();
                assertThat(replicas(a1)).isEqualTo(4);
                assertThat(replicas(b1)).isEqualTo(3);
                assertThat(a1.getMetadata().getAnnotations())
                        .containsEntry(DeploymentUtil.DESIRED_REPLICAS_ANNOTATION, "6")
                        .containsEntry(DeploymentUtil.MAX_REPLICAS_ANNOTATION, "7");
                ReplicaSet aCached = cached(h, ReplicaSet.class, a1);
                assertThat(replicas(aCached)).as("the cache is held back").isEqualTo(3);
                assertThat(aCached.getMetadata().getAnnotations())
                        .containsEntry(DeploymentUtil.DESIRED_REPLICAS_ANNOTATION, "4");

                // the next sync (another object's event would queue it): from the cache this is the same scaling
                // event again, and scaling the first ReplicaSet from its cached version is refused with 409. From
                // the answers the scale is done, and the rollout scales the first ReplicaSet's unavailable replica
                // down (4 -> 3: 7 pods, 5 must be available, the new ReplicaSet has 1 unavailable), writing from
                // the answer
                h.controller.sync(key);
                ReplicaSet a2 = client.apps().replicaSets().inNamespace(ns).withName(a).get();
                assertThat(replicas(a2)).isEqualTo(3);
                assertThat(a2.getMetadata().getResourceVersion()).isNotEqualTo(a1.getMetadata().getResourceVersion());
                assertThat(client.apps().replicaSets().inNamespace(ns).withName(b).get().getMetadata()
                        .getResourceVersion()).as("nothing to write to the new ReplicaSet")
                        .isEqualTo(b1.getMetadata().getResourceVersion());
                assertThat(replicas(cached(h, ReplicaSet.class, a1))).as("still held back").isEqualTo(3);
                assertThat(cached(h, ReplicaSet.class, a1).getMetadata().getResourceVersion())
                        .isEqualTo(aCached.getMetadata().getResourceVersion());

                // the cache catches up: it is read again
                proxy.resume();
                awaitCaught(h, ns);
                h.controller.sync(key);
                assertThat(replicas(client.apps().replicaSets().inNamespace(ns).withName(a).get())).isEqualTo(3);
            }
        }
    }
}
