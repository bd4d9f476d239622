package io.qkcm.controller.daemon;

import static io.qkcm.controller.daemon.DaemonTestSupport.activePods;
import static io.qkcm.controller.daemon.DaemonTestSupport.createNode;
import static io.qkcm.controller.daemon.DaemonTestSupport.daemonSet;
import static io.qkcm.controller.daemon.DaemonTestSupport.targetNode;
import static io.qkcm.testing.TestNamespaces.newNamespace;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.inject.Inject;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.DaemonSetUpdateStrategyBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.qkcm.controller.daemon.DaemonTestSupport.FakeNodes;
import io.qkcm.testing.ControllerHarness;
import io.qkcm.testing.ManagerOffProfile;
import io.qkcm.testing.RealApiServer;
import io.qkcm.testing.RealApiServerResource;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.vertx.core.Vertx;

/**
 * The DaemonSet controller run by hand (the application's manager is off): a stale pod cache never
 * causes a second pod on a node (expectations), and a controller killed in the middle of a rolling
 * update and replaced by a new one finishes it with exactly one new pod per node.
 */
@QuarkusTest
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
@TestProfile(ManagerOffProfile.class)
class DaemonSetRestartTest {

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

    /** A DaemonSet controller as the manager builds it, outside the application, so that it can be killed. */
    private ControllerHarness<DaemonSetsController> newController() {
        return ControllerHarness.create(vertx, DaemonSetsController.NAME, DaemonSetControllerDescriptor::newController);
    }

    private Map<String, String> pool(int count, String prefix) {
        Map<String, String> pool = Map.of("qkcm.test/pool", prefix + "-" + Long.toString(System.nanoTime() % 1_000_000L, 36));
        for (int i = 0; i < count; i++) {
            String name = prefix + "-" + i + "-" + Long.toString(System.nanoTime() % 1_000_000_000L, 36);
            nodes.add(name);
            createNode(client, name, pool);
        }
        return pool;
    }

    /** Every pod UID the API server reported, and the most live pods seen at once on one node. */
    static final class PodWatch implements Watcher<Pod> {
        final Set<String> uids = ConcurrentHashMap.newKeySet();
        final Map<String, Pod> live = new ConcurrentHashMap<>();
        volatile int maxPerNode;

        @Override
        public synchronized void eventReceived(Action action, Pod pod) {
            uids.add(pod.getMetadata().getUid());
            if (action == Action.DELETED || pod.getMetadata().getDeletionTimestamp() != null) {
                live.remove(pod.getMetadata().getName());
            } else {
                live.put(pod.getMetadata().getName(), pod);
            }
            Map<String, Integer> perNode = new HashMap<>();
            live.values().forEach(p -> perNode.merge(String.valueOf(targetNode(p)), 1, Integer::sum));
            maxPerNode = Math.max(maxPerNode, perNode.values().stream().mapToInt(Integer::intValue).max().orElse(0));
        }

        @Override
        public void onClose(WatcherException cause) {
        }
    }

    @Test
    void staleCacheNeverCausesASecondPodOnANode() throws Exception {
        String ns = newNamespace(client, "ds-stale");
        Map<String, String> pool = pool(3, "stale");
        try (ControllerHarness<DaemonSetsController> instance = newController()) {
            instance.startInformers();
            // the pod cache stops here: pods created from now on are never observed
            instance.informers.informerFor(Pod.class).stop();
            client.apps().daemonSets().inNamespace(ns).resource(daemonSet("agent", Map.of("app", "agent"), pool,
                    new DaemonSetUpdateStrategyBuilder().withType("OnDelete").build())).create();
            String key = ns + "/agent";
            await().atMost(Duration.ofSeconds(30)).until(() -> instance.informers.informerFor(DaemonSet.class)
                    .getStore().getByKey(key) != null);
            instance.controller.syncDaemonSet(key);
            assertThat(activePods(client, ns)).hasSize(3);
            for (int i = 0; i < 3; i++) {
                instance.controller.syncDaemonSet(key);
            }
            assertThat(activePods(client, ns)).hasSize(3);
            assertThat(instance.controller.expectations().satisfiedExpectations(key)).isFalse();
        }
    }

    @Test
    void aControllerKilledMidRolloutAndRestartedCreatesNoExtraPod() throws Exception {
        int n = 8;
        String ns = newNamespace(client, "ds-restart");
        Map<String, String> pool = pool(n, "restart");
        PodWatch watch = new PodWatch();
        try (FakeNodes fake = new FakeNodes(client, ns); Watch w = client.pods().inNamespace(ns).watch(watch)) {
            ControllerHarness<DaemonSetsController> first = newController().start();
            client.apps().daemonSets().inNamespace(ns).resource(daemonSet("agent", Map.of("app", "agent"), pool,
                    new DaemonSetUpdateStrategyBuilder().withType("RollingUpdate").withNewRollingUpdate()
                            .withMaxUnavailable(new IntOrString(2)).endRollingUpdate().build()))
                    .create();
            await().atMost(Duration.ofSeconds(90)).untilAsserted(() -> assertThat(client.apps().daemonSets()
                    .inNamespace(ns).withName("agent").get().getStatus().getNumberAvailable()).isEqualTo(n));
            assertThat(watch.uids).hasSize(n);
            String oldHash = activePods(client, ns).get(0).getMetadata().getLabels().get("controller-revision-hash");

            io.qkcm.testing.Conflicts.retry(() -> client.apps().daemonSets().inNamespace(ns).withName("agent").edit(d -> {
                d.getSpec().getTemplate().getSpec().getContainers().get(0).setImage("registry.k8s.io/pause:3.9");
                return d;
            }));
            await().atMost(Duration.ofSeconds(90)).until(() -> activePods(client, ns).stream()
                    .filter(p -> !oldHash.equals(p.getMetadata().getLabels().get("controller-revision-hash"))).count() >= 2);
            first.kill();
            // whatever the dead controller had in flight lands before the next one starts
            AtomicInteger last = new AtomicInteger(-1);
            await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(30))
                    .until(() -> last.getAndSet(watch.uids.size()) == watch.uids.size());
            assertThat(watch.uids.size()).isLessThan(2 * n);

            try (ControllerHarness<DaemonSetsController> second = newController().start()) {
                await().atMost(Duration.ofSeconds(120)).untilAsserted(() -> {
                    DaemonSet ds = client.apps().daemonSets().inNamespace(ns).withName("agent").get();
                    assertThat(ds.getStatus().getUpdatedNumberScheduled()).isEqualTo(n);
                    assertThat(ds.getStatus().getNumberAvailable()).isEqualTo(n);
                    assertThat(activePods(client, ns)).hasSize(n).allSatisfy(p -> assertThat(
                            p.getMetadata().getLabels().get("controller-revision-hash")).isNotEqualTo(oldHash));
                });
                await().during(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(10))
                        .until(() -> watch.uids.size() == 2 * n);
            }
            // one pod per node for each revision, never two at once on a node
            assertThat(watch.uids).hasSize(2 * n);
            assertThat(watch.maxPerNode).isEqualTo(1);
            assertThat(client.apps().controllerRevisions().inNamespace(ns).list().getItems()).hasSize(2);
        }
    }
}
