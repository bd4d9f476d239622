package io.qkcm.controller.daemon;

import static io.qkcm.controller.daemon.DaemonTestSupport.activePods;
import static io.qkcm.controller.daemon.DaemonTestSupport.createNode;
import static io.qkcm.controller.daemon.DaemonTestSupport.daemonSet;
import static io.qkcm.controller.daemon.DaemonTestSupport.targetNode;
import static io.qkcm.testing.TestNamespaces.newNamespace;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Collectors;

import jakarta.inject.Inject;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.DaemonSetUpdateStrategy;
import io.fabric8.kubernetes.api.model.apps.DaemonSetUpdateStrategyBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.qkcm.controller.ApiErrors;
import io.qkcm.controller.PodUtil;
import io.qkcm.testing.ControllerHarness;
import io.qkcm.testing.LosingPodControl;
import io.qkcm.testing.ManagerOffProfile;
import io.qkcm.testing.RealApiServer;
import io.qkcm.testing.RealApiServerResource;
import io.qkcm.testing.StallingProxy;
import io.qkcm.testing.TestKubelet;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.vertx.core.Vertx;

/**
 * Daemon pod writes whose answer is lost: the API server performed the write, the connection closed
 * before the response, and the watch that would have shown it is on the same broken network. The
 * controller's informers connect through a {@link StallingProxy} that holds the cache back; its writes go
 * directly and are performed, then reported as "Connection was closed". Upstream lowers its expectations
 * on the error and, from the stale cache, makes a second daemon pod for the node (beyond maxSurge) or
 * deletes again; qkcm keeps them raised and waits until a list from the API server shows the cache
 * caught up. Syncs are driven by hand, so every step is deterministic.
 */
@QuarkusTest
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
@TestProfile(ManagerOffProfile.class)
class DaemonSetUncertainWritesTest {

    private static final Map<String, String> LABELS = Map.of("app", "lost-answer");

    @Inject
    Vertx vertx;

    static KubernetesClient client;
    private final List<String> nodes = new ArrayList<>();

    @BeforeAll
    static void setUp() {
        client = RealApiServer.get().newClient();
    }

    @AfterAll
    static void tearDown() {
        client.close();
    }

    @AfterEach
    void deleteNodes() {
        nodes.forEach(n -> client.nodes().withName(n).delete());
    }

    private record Setup(ControllerHarness<DaemonSetsController> harness, LosingPodControl pods) {
    }

    private Setup newController(StallingProxy proxy) throws Exception {
        Path kubeconfig = LosingPodControl.kubeconfigVia(proxy, client, "ds-lost-answers");
        LosingPodControl[] wrapper = new LosingPodControl[1];
        ControllerHarness<DaemonSetsController> harness = ControllerHarness.withInformersVia(vertx,
                DaemonSetsController.NAME, kubeconfig,
                ctx -> new DaemonSetsController(ctx, 1, real -> wrapper[0] = new LosingPodControl(real, proxy)));
        harness.startInformers();
        return new Setup(harness, wrapper[0]);
    }

    /** {@code count} Ready nodes sharing a unique label (the DaemonSet's node selector), seen by the controller's cache. */
    private Map<String, String> pool(ControllerHarness<?> h, int count, String prefix) {
        Map<String, String> pool = Map.of("qkcm.test/pool", prefix + "-" + Long.toString(System.nanoTime() % 1_000_000L, 36));
        List<String> names = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            String name = prefix + "-" + i + "-" + Long.toString(System.nanoTime() % 1_000_000_000L, 36);
            nodes.add(name);
            names.add(name);
            createNode(client, name, pool);
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> names.stream().allMatch(n -> {
            Node cached = h.informers.informerFor(Node.class).getStore().getByKey(n);
            return cached != null && cached.getSpec().getTaints().stream()
                    .noneMatch(t -> "node.kubernetes.io/not-ready".equals(t.getKey()));
        }));
        return pool;
    }

    private static List<Pod> cachedPods(ControllerHarness<?> h, String ns) {
        return h.informers.informerFor(Pod.class).getStore().list().stream()
                .filter(p -> ns.equals(p.getMetadata().getNamespace()) && p.getMetadata().getDeletionTimestamp() == null)
                .toList();
    }

    /** Live daemon pods per node, from the API server. */
    private static Map<String, Long> podsPerNode(String ns) {
        return activePods(client, ns).stream().collect(Collectors.groupingBy(p -> String.valueOf(targetNode(p)),
                Collectors.counting()));
    }

    private static void awaitCachedDaemonSet(ControllerHarness<?> h, String key) {
        await().atMost(Duration.ofSeconds(30))
                .until(() -> h.informers.informerFor(DaemonSet.class).getStore().getByKey(key) != null);
    }

    private static DaemonSetUpdateStrategy onDelete() {
        return new DaemonSetUpdateStrategyBuilder().withType("OnDelete").build();
    }

    @Test
    void aCreationWhoseAnswerIsLostIsNotRepeatedOnItsNode() throws Exception {
        String ns = newNamespace(client, "ds-lost-create");
        URI apiServer = URI.create(client.getConfiguration().getMasterUrl());
        try (StallingProxy proxy = new StallingProxy(apiServer)) {
            Setup s = newController(proxy);
            try (ControllerHarness<DaemonSetsController> h = s.harness()) {
                Map<String, String> pool = pool(h, 3, "lost-create");
                client.apps().daemonSets().inNamespace(ns).resource(daemonSet("agent", LABELS, pool, onDelete())).create();
                String key = ns + "/agent";
                awaitCachedDaemonSet(h, key);

                s.pods().lose.set(true);
                // slow start: the first batch is one creation; it happens, its answer is lost
                assertThatThrownBy(() -> h.controller.syncDaemonSet(key))
                        .satisfies(e -> assertThat(ApiErrors.isOutcomeUnknown(e)).isTrue());
                s.pods().lose.set(false);
                assertThat(activePods(client, ns)).hasSize(1);
                assertThat(cachedPods(h, ns)).isEmpty();

                // the cache still shows no pod: upstream would now create one on every node, a second on one
                for (int i = 0; i < 3; i++) {
                    h.controller.syncDaemonSet(key);
                }
                assertThat(podsPerNode(ns).values()).containsOnly(1L);
                assertThat(s.pods().creates.get()).isEqualTo(1);
                assertThat(h.controller.expectations().isUncertain(key)).isTrue();

                proxy.resume();
                await().atMost(Duration.ofSeconds(30)).until(() -> cachedPods(h, ns).size() == 1);
                h.controller.syncDaemonSet(key);
                assertThat(s.pods().creates.get()).isEqualTo(3);
                await().atMost(Duration.ofSeconds(30)).until(() -> cachedPods(h, ns).size() == 3);
                h.controller.syncDaemonSet(key);
                assertThat(s.pods().creates.get()).isEqualTo(3);
                assertThat(podsPerNode(ns)).hasSize(3).allSatisfy((node, n) -> assertThat(n).isEqualTo(1L));
                assertThat(h.controller.expectations().satisfiedExpectations(key)).isTrue();
            }
        }
    }

    /**
     * maxSurge 1: the surge pod's creation is performed, its answer lost. From a cache without it the
     * rolling update would surge again: a third pod on the node, or a second surge elsewhere.
     */
    @Test
    void aSurgeCreationWhoseAnswerIsLostNeverExceedsMaxSurge() throws Exception {
        String ns = newNamespace(client, "ds-lost-surge");
        URI apiServer = URI.create(client.getConfiguration().getMasterUrl());
        try (StallingProxy proxy = new StallingProxy(apiServer)) {
            Setup s = newController(proxy);
            try (ControllerHarness<DaemonSetsController> h = s.harness()) {
                Map<String, String> pool = pool(h, 2, "lost-surge");
                DaemonSetUpdateStrategy surge = new DaemonSetUpdateStrategyBuilder().withType("RollingUpdate")
                        .withNewRollingUpdate().withMaxUnavailable(new IntOrString(0)).withMaxSurge(new IntOrString(1))
                        .endRollingUpdate().build();
                client.apps().daemonSets().inNamespace(ns).resource(daemonSet("agent", LABELS, pool, surge)).create();
                String key = ns + "/agent";
                awaitCachedDaemonSet(h, key);
                h.controller.syncDaemonSet(key);
                await().atMost(Duration.ofSeconds(30)).until(() -> cachedPods(h, ns).size() == 2);
                // the kubelets: both pods run and are ready, in the cache too
                for (Pod p : activePods(client, ns)) {
                    new TestKubelet(client, targetNode(p)).runningAndReady(p);
                }
                await().atMost(Duration.ofSeconds(30)).until(() -> cachedPods(h, ns).stream().allMatch(PodUtil::isReady));
                h.controller.syncDaemonSet(key);
                assertThat(s.pods().creates.get()).isEqualTo(2);

                io.qkcm.testing.Conflicts.retry(() -> client.apps().daemonSets().inNamespace(ns).withName("agent").edit(d -> {
                    d.getSpec().getTemplate().getSpec().getContainers().get(0).setImage("registry.k8s.io/pause:3.9");
                    return d;
                }));
                await().atMost(Duration.ofSeconds(30)).until(() -> "registry.k8s.io/pause:3.9".equals(
                        h.informers.informerFor(DaemonSet.class).getStore().getByKey(key).getSpec().getTemplate().getSpec()
                                .getContainers().get(0).getImage()));

                s.pods().lose.set(true);
                assertThatThrownBy(() -> h.controller.syncDaemonSet(key))
                        .satisfies(e -> assertThat(ApiErrors.isOutcomeUnknown(e)).isTrue());
                s.pods().lose.set(false);
                assertThat(s.pods().creates.get()).isEqualTo(3);
                assertThat(activePods(client, ns)).hasSize(3);

                // the cache shows no surge pod: upstream would surge again
                for (int i = 0; i < 3; i++) {
                    h.controller.syncDaemonSet(key);
                }
                // 2 nodes + maxSurge 1
                assertThat(activePods(client, ns)).hasSize(3);
                assertThat(podsPerNode(ns).values()).allSatisfy(n -> assertThat(n).isLessThanOrEqualTo(2L));
                assertThat(s.pods().creates.get()).isEqualTo(3);

                proxy.resume();
                await().atMost(Duration.ofSeconds(30)).until(() -> cachedPods(h, ns).size() == 3);
                // the surge pod is not ready: the rollout holds at maxSurge
                h.controller.syncDaemonSet(key);
                assertThat(s.pods().creates.get()).isEqualTo(3);
                assertThat(activePods(client, ns)).hasSize(3);
                assertThat(h.controller.expectations().satisfiedExpectations(key)).isTrue();
            }
        }
    }

    @Test
    void deletionsWhoseAnswersAreLostAreNotRepeatedBeforeTheCacheCatchesUp() throws Exception {
        String ns = newNamespace(client, "ds-lost-delete");
        URI apiServer = URI.create(client.getConfiguration().getMasterUrl());
        try (StallingProxy proxy = new StallingProxy(apiServer)) {
            Setup s = newController(proxy);
            try (ControllerHarness<DaemonSetsController> h = s.harness()) {
                Map<String, String> pool = pool(h, 3, "lost-delete");
                client.apps().daemonSets().inNamespace(ns).resource(daemonSet("agent", LABELS, pool, onDelete())).create();
                String key = ns + "/agent";
                awaitCachedDaemonSet(h, key);
                h.controller.syncDaemonSet(key); // slow start 1, 2
                await().atMost(Duration.ofSeconds(30)).until(() -> cachedPods(h, ns).size() == 3);
                assertThat(s.pods().creates.get()).isEqualTo(3);

                // two nodes leave the pool: their daemon pods are to go
                List<String> leaving = nodes.subList(nodes.size() - 2, nodes.size());
                for (String n : leaving) {
                    client.nodes().withName(n).edit(node -> {
                        node.getMetadata().getLabels().remove("qkcm.test/pool");
                        return node;
                    });
                }
                await().atMost(Duration.ofSeconds(30)).until(() -> leaving.stream().noneMatch(n -> h.informers
                        .informerFor(Node.class).getStore().getByKey(n).getMetadata().getLabels().containsKey("qkcm.test/pool")));

                s.pods().lose.set(true);
                assertThatThrownBy(() -> h.controller.syncDaemonSet(key))
                        .satisfies(e -> assertThat(ApiErrors.isOutcomeUnknown(e)).isTrue());
                s.pods().lose.set(false);
                assertThat(s.pods().deletes.get()).isEqualTo(2);
                assertThat(activePods(client, ns)).hasSize(1);
                assertThat(cachedPods(h, ns)).hasSize(3);

                // the cache still shows 3 pods: upstream would delete 2 again
                for (int i = 0; i < 3; i++) {
                    h.controller.syncDaemonSet(key);
                }
                assertThat(s.pods().deletes.get()).isEqualTo(2);
                assertThat(h.controller.expectations().isUncertain(key)).isTrue();

                proxy.resume();
                await().atMost(Duration.ofSeconds(30)).until(() -> cachedPods(h, ns).size() == 1);
                h.controller.syncDaemonSet(key);
                assertThat(s.pods().deletes.get()).isEqualTo(2);
                assertThat(s.pods().creates.get()).isEqualTo(3);
                assertThat(activePods(client, ns)).hasSize(1)
                        .allSatisfy(p -> assertThat(Objects.requireNonNull(targetNode(p))).isNotIn(leaving));
                assertThat(h.controller.expectations().satisfiedExpectations(key)).isTrue();
            }
        }
    }
}
