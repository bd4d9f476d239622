package io.qkcm.controller.tainteviction;

import static io.qkcm.testing.TestNamespaces.newNamespace;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import jakarta.inject.Inject;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.Taint;
import io.fabric8.kubernetes.api.model.TaintBuilder;
import io.fabric8.kubernetes.api.model.Toleration;
import io.fabric8.kubernetes.api.model.TolerationBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.micrometer.core.instrument.Counter;
import io.qkcm.testing.Conflicts;
import io.qkcm.testing.ControllerHarness;
import io.qkcm.testing.ManagerOffProfile;
import io.qkcm.testing.QueueProbe;
import io.qkcm.testing.RealApiServer;
import io.qkcm.testing.RealApiServerResource;
import io.qkcm.testing.TestKubelet;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.vertx.core.Vertx;

/**
 * taint-eviction-controller against a real API server, upstream's taint_eviction_test.go tables as
 * cluster changes: NoExecute taints added to a node (as {@code kubectl taint} does), pods created on or
 * bound to a tainted node, tolerationSeconds counted on a {@link FakeClock} the test moves, the taint
 * removed and the pod updated before the deadline, the node deleted. No kubelet runs, so a deleted pod
 * stays with its deletionTimestamp: "deleted" is the DELETE the controller sent.
 */
@QuarkusTest
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
@TestProfile(ManagerOffProfile.class)
class TaintEvictionControllerTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    @Inject
    Vertx vertx;

    private KubernetesClient client;
    private FakeClock clock;
    private ControllerHarness<TaintEvictionController> harness;
    private final List<String> nodes = new ArrayList<>();
    private String ns;

    @BeforeEach
    void setUp() throws InterruptedException {
        client = RealApiServer.get().newClient();
        clock = new FakeClock(Instant.now());
        harness = ControllerHarness.create(vertx, TaintEvictionController.NAME, "node-controller", Map.of(),
                context -> new TaintEvictionController(context, clock)).start();
        ns = newNamespace(client, "taint");
    }

    @AfterEach
    void tearDown() {
        harness.close();
        for (String n : nodes) {
            client.nodes().withName(n).delete();
        }
        // no kubelet finishes the graceful deletions
        client.pods().inNamespace(ns).withGracePeriod(0).delete();
        client.close();
    }

    // ---- the cluster ---------------------------------------------------------------------------

    private String node(Taint... taints) {
        String name = "taint-" + Long.toString(System.nanoTime() % 1_000_000_000L, 36);
        client.nodes().resource(new NodeBuilder().withNewMetadata().withName(name).endMetadata().withNewSpec()
                .withTaints(taints).endSpec().build()).create();
        nodes.add(name);
        return name;
    }

    /** upstream's createNoExecuteTaint */
    private static Taint noExecute(int index) {
        return new TaintBuilder().withKey("testTaint" + index).withValue("test" + index).withEffect("NoExecute")
                .withTimeAdded(Instant.now().truncatedTo(java.time.temporal.ChronoUnit.SECONDS).toString()).build();
    }

    /** upstream's addToleration: the taint's key, value and effect, with tolerationSeconds (null: forever). */
    private static Toleration toleration(int index, Long seconds) {
        return new TolerationBuilder().withKey("testTaint" + index).withValue("test" + index).withEffect("NoExecute")
                .withTolerationSeconds(seconds).build();
    }

    private Pod pod(String name, String nodeName, Toleration... tolerations) {
        return client.pods().inNamespace(ns).resource(new PodBuilder().withNewMetadata().withName(name).endMetadata()
                .withNewSpec().withNodeName(nodeName).withTolerations(tolerations).addNewContainer().withName("main")
                .withImage("registry.k8s.io/pause:3.10").endContainer().endSpec().build()).create();
    }

    /** {@code kubectl taint node <node> ...:NoExecute}: the node's taints become {@code taints}. */
    private Node setTaints(String nodeName, Taint... taints) {
        return Conflicts.retry(() -> client.nodes().withName(nodeName).edit(n -> {
            n.getSpec().setTaints(new ArrayList<>(List.of(taints)));
            return n;
        }));
    }

    private Pod get(String name) {
        return client.pods().inNamespace(ns).withName(name).get();
    }

    private boolean deleted(String name) {
        Pod p = get(name);
        return p == null || p.getMetadata().getDeletionTimestamp() != null;
    }

    private static PodCondition disruptionTarget(Pod pod) {
        return pod.getStatus().getConditions().stream().filter(c -> "DisruptionTarget".equals(c.getType())).findFirst()
                .orElse(null);
    }

    private List<String> evictionEvents(String pod) {
        return client.v1().events().inNamespace(ns).list().getItems().stream()
                .filter(e -> "TaintManagerEviction".equals(e.getReason()))
                .filter(e -> pod.equals(e.getInvolvedObject().getName()))
                .map(Event::getMessage).toList();
    }

    private double deletions() {
        Counter c = harness.context.metrics().find("taint.eviction.controller.pod.deletions").counter();
        return c == null ? 0 : c.count();
    }

    private String key(String pod) {
        return TimedWorkerQueue.key(ns, pod);
    }

    private TimedWorkerQueue.TimedWorker scheduled(String pod) {
        return harness.controller.taintEvictionQueue().getWorkerUnsafe(key(pod));
    }

    /** Work scheduled or running: once there is none, a deletion decided has been made. */
    private boolean hasWork(String pod) {
        return harness.controller.taintEvictionQueue().hasWork(key(pod));
    }

    private QueueProbe nodeQueue() {
        return QueueProbe.of(harness.context.metrics(), TaintEvictionController.NODE_QUEUE);
    }

    private QueueProbe podQueue() {
        return QueueProbe.of(harness.context.metrics(), TaintEvictionController.POD_QUEUE);
    }

    private <T extends io.fabric8.kubernetes.api.model.HasMetadata> java.util.function.BooleanSupplier cached(
            Class<T> type, T object) {
        return QueueProbe.cacheHolds(harness.informers.informerFor(type), object, false);
    }

    /** Every pod of the namespace as the watch saw it, in order. */
    final class Seen implements Watcher<Pod>, AutoCloseable {
        final List<Pod> updates = new CopyOnWriteArrayList<>();
        final Watch watch = client.pods().inNamespace(ns).watch(this);

        @Override
        public void eventReceived(Action action, Pod pod) {
            updates.add(pod);
        }

        @Override
        public void onClose(WatcherException cause) {
        }

        /** The pod's first version marked for deletion; the condition must be there already. */
        Pod firstDeleting(String name) {
            return updates.stream().filter(p -> name.equals(p.getMetadata().getName()))
                    .filter(p -> p.getMetadata().getDeletionTimestamp() != null).findFirst().orElseThrow();
        }

        /** The pod's first version with a DisruptionTarget condition. */
        Pod firstDisrupted(String name) {
            return updates.stream().filter(p -> name.equals(p.getMetadata().getName()))
                    .filter(p -> p.getStatus() != null && p.getStatus().getConditions() != null
                            && disruptionTarget(p) != null)
                    .findFirst().orElseThrow();
        }

        @Override
        public void close() {
            watch.close();
        }
    }

    // ---- the tables ----------------------------------------------------------------------------

    /**
     * TestUpdateNode "Added taint", "Only one added taint tolerated", TestUpdateNodeWithMultiplePods
     * "Evict all pods not matching all taints instantly", TestCreatePod "infinite invalid toleration":
     * {@code kubectl taint} adds NoExecute taints; every pod that does not tolerate them all is deleted
     * at once, its DisruptionTarget condition written first, with the TaintManagerEviction event; the
     * pod tolerating them all forever stays.
     */
    @Test
    void untoleratedPodsAreDeletedAtOnceWithTheDisruptionTargetFirst() {
        String nodeName = node();
        pod("untolerating", nodeName);
        pod("tolerates-another", nodeName, toleration(2, null));
        pod("tolerates-one-of-two", nodeName, toleration(1, 100L));
        pod("tolerates-forever", nodeName, toleration(1, null), toleration(2, null));
        double before = deletions();
        try (Seen seen = new Seen()) {
            QueueProbe.Mark mark = nodeQueue().mark();
            Node tainted = setTaints(nodeName, noExecute(1), noExecute(2));

            await().atMost(TIMEOUT).until(() -> deleted("untolerating") && deleted("tolerates-another")
                    && deleted("tolerates-one-of-two"));
            for (String name : List.of("untolerating", "tolerates-another", "tolerates-one-of-two")) {
                await().atMost(TIMEOUT).until(() -> seen.updates.stream().anyMatch(
                        p -> name.equals(p.getMetadata().getName()) && p.getMetadata().getDeletionTimestamp() != null));
                Pod disrupted = seen.firstDisrupted(name);
                // the condition was written before the DELETE, never with it
                assertThat(disrupted.getMetadata().getDeletionTimestamp()).isNull();
                PodCondition c = disruptionTarget(seen.firstDeleting(name));
                assertThat(c.getStatus()).isEqualTo("True");
                assertThat(c.getReason()).isEqualTo("DeletionByTaintManager");
                assertThat(c.getMessage()).isEqualTo("Taint manager: deleting due to NoExecute taint");
                await().atMost(TIMEOUT).untilAsserted(() -> assertThat(evictionEvents(name))
                        .containsExactly("Marking for deletion Pod " + ns + "/" + name));
            }
            Event event = client.v1().events().inNamespace(ns).list().getItems().stream()
                    .filter(e -> "untolerating".equals(e.getInvolvedObject().getName())).findFirst().orElseThrow();
            assertThat(event.getSource().getComponent()).isEqualTo("taint-eviction-controller");
            assertThat(event.getType()).isEqualTo("Normal");
            await().atMost(TIMEOUT).until(() -> deletions() - before == 3);

            // the sync of the taint change is over and left nothing scheduled for the tolerating pod
            nodeQueue().awaitProcessedSince(mark, cached(Node.class, tainted), TIMEOUT);
            assertThat(hasWork("tolerates-forever")).isFalse();
            assertThat(deleted("tolerates-forever")).isFalse();
            assertThat(disruptionTarget(get("tolerates-forever"))).isNull();
            assertThat(harness.controller.taintedNode(nodeName)).extracting(Taint::getKey)
                    .containsExactly("testTaint1", "testTaint2");
        }
    }

    /**
     * TestCreatePod "schedule on tainted Node" (and with infinite toleration), TestUpdatePod "scheduling
     * onto tainted Node", TestEventualConsistency: pods created on, or bound to, a node already tainted are
     * handled by their own update.
     */
    @Test
    void podsArrivingOnATaintedNodeAreDeleted() {
        String nodeName = node(noExecute(1));
        pod("created-there", nodeName);
        pod("created-tolerating", nodeName, toleration(1, null));
        Pod unbound = pod("bound-later", null);
        await().atMost(TIMEOUT).until(() -> deleted("created-there"));

        QueueProbe.Mark mark = podQueue().mark();
        Pod bound = new TestKubelet(client, nodeName).bind(unbound);
        await().atMost(TIMEOUT).until(() -> deleted("bound-later"));
        assertThat(disruptionTarget(get("bound-later")).getReason()).isEqualTo("DeletionByTaintManager");

        podQueue().awaitProcessedSince(mark, cached(Pod.class, bound), TIMEOUT);
        assertThat(hasWork("created-tolerating")).isFalse();
        assertThat(deleted("created-tolerating")).isFalse();
    }

    /**
     * TestUpdateNodeWithMultiplePods "Pods with different toleration times are evicted appropriately",
     * TestUpdateNode "Pod with multiple tolerations are evicted when first one runs out": each pod goes
     * when the shortest tolerationSeconds of the tolerations it uses has passed on the clock, not before.
     */
    @Test
    void tolerationSecondsAreCountedOnTheClock() {
        String nodeName = node();
        pod("thirty", nodeName, toleration(1, 30L), toleration(2, null));
        pod("sixty", nodeName, toleration(1, 600L), toleration(2, 60L));
        Instant taintedAt = clock.now();
        setTaints(nodeName, noExecute(1), noExecute(2));

        await().atMost(TIMEOUT).until(() -> scheduled("thirty") != null && scheduled("sixty") != null);
        Instant createdAt = scheduled("thirty").createdAt();
        assertThat(createdAt).isAfter(taintedAt).isBefore(taintedAt.plusSeconds(1));
        assertThat(scheduled("thirty").fireAt()).isEqualTo(createdAt.plusSeconds(30));
        assertThat(scheduled("sixty").fireAt()).isEqualTo(scheduled("sixty").createdAt().plusSeconds(60));

        clock.step(Duration.ofSeconds(29));
        // nothing was due: both timers are still set, neither pod was touched
        assertThat(clock.pendingTimers()).isEqualTo(2);
        assertThat(deleted("thirty")).isFalse();

        clock.step(Duration.ofSeconds(1));
        await().atMost(TIMEOUT).until(() -> deleted("thirty"));
        await().atMost(TIMEOUT).until(() -> scheduled("thirty") == null);
        assertThat(deleted("sixty")).isFalse();
        assertThat(clock.pendingTimers()).isEqualTo(1);

        clock.step(Duration.ofSeconds(30));
        await().atMost(TIMEOUT).until(() -> deleted("sixty"));
        assertThat(disruptionTarget(get("sixty")).getReason()).isEqualTo("DeletionByTaintManager");
        await().atMost(TIMEOUT).untilAsserted(() -> assertThat(evictionEvents("sixty"))
                .containsExactly("Marking for deletion Pod " + ns + "/sixty"));
    }

    /** TestUpdateNode "Taint removed": the scheduled deletion is cancelled, with its event, and never happens. */
    @Test
    void aTaintRemovedBeforeTheDeadlineCancelsTheDeletion() {
        String nodeName = node();
        pod("tolerating", nodeName, toleration(1, 30L));
        setTaints(nodeName, noExecute(1));
        await().atMost(TIMEOUT).until(() -> scheduled("tolerating") != null);

        clock.step(Duration.ofSeconds(10));
        setTaints(nodeName);
        await().atMost(TIMEOUT).until(() -> scheduled("tolerating") == null);
        assertThat(clock.pendingTimers()).isZero();
        assertThat(harness.controller.taintedNode(nodeName)).isNull();
        await().atMost(TIMEOUT).untilAsserted(() -> assertThat(evictionEvents("tolerating"))
                .containsExactly("Cancelling deletion of Pod " + ns + "/tolerating"));

        clock.step(Duration.ofSeconds(60));
        assertThat(deleted("tolerating")).isFalse();
        assertThat(disruptionTarget(get("tolerating"))).isNull();
    }

    /**
     * TestUpdateNodeWithMultipleTaints, as a pod update: a pod updated to tolerate the taint forever has its
     * deletion cancelled; TestUpdatePod "lengthening toleration shouldn't work": a longer tolerationSeconds
     * keeps the deadline already set.
     */
    @Test
    void aPodUpdatedToTolerateForeverIsKeptAndALongerTolerationDoesNotHelp() {
        String nodeName = node();
        pod("made-forever", nodeName, toleration(1, 30L));
        pod("lengthened", nodeName, toleration(1, 10L));
        Instant taintedAt = clock.now();
        setTaints(nodeName, noExecute(1));
        await().atMost(TIMEOUT).until(() -> scheduled("made-forever") != null && scheduled("lengthened") != null);

        clock.step(Duration.ofSeconds(1));
        updateTolerationSeconds("made-forever", null);
        updateTolerationSeconds("lengthened", 100L);
        await().atMost(TIMEOUT).until(() -> scheduled("made-forever") == null);
        await().atMost(TIMEOUT).untilAsserted(() -> assertThat(evictionEvents("made-forever"))
                .containsExactly("Cancelling deletion of Pod " + ns + "/made-forever"));
        // the longer toleration was seen, and the first deadline kept
        await().atMost(TIMEOUT).until(() -> {
            Pod cached = harness.informers.informerFor(Pod.class).getStore().getByKey(ns + "/lengthened");
            return cached.getSpec().getTolerations().get(0).getTolerationSeconds() == 100L;
        });
        podQueue().awaitIdle(TIMEOUT);
        assertThat(scheduled("lengthened").createdAt()).isAfter(taintedAt).isBefore(taintedAt.plusSeconds(1));
        assertThat(scheduled("lengthened").fireAt()).isEqualTo(scheduled("lengthened").createdAt().plusSeconds(10));

        clock.step(Duration.ofSeconds(9));
        await().atMost(TIMEOUT).until(() -> deleted("lengthened"));
        clock.step(Duration.ofSeconds(120));
        assertThat(deleted("made-forever")).isFalse();
        assertThat(evictionEvents("lengthened")).doesNotContain("Cancelling deletion of Pod " + ns + "/lengthened");
    }

    /** TestDeleteNode: a deleted node's taints are forgotten; its tolerating pod's timer is left as upstream leaves it. */
    @Test
    void aDeletedNodeIsForgotten() {
        String nodeName = node(noExecute(1));
        pod("tolerating", nodeName, toleration(1, null));
        await().atMost(TIMEOUT).until(() -> harness.controller.taintedNode(nodeName) != null);

        client.nodes().withName(nodeName).delete();
        await().atMost(TIMEOUT).until(() -> harness.controller.taintedNode(nodeName) == null);

        // a pod arriving for the node name now finds no taints: nothing is scheduled, nothing deleted
        QueueProbe.Mark mark = podQueue().mark();
        Pod late = pod("late", nodeName);
        podQueue().awaitProcessedSince(mark, cached(Pod.class, late), TIMEOUT);
        assertThat(hasWork("late")).isFalse();
        assertThat(deleted("late")).isFalse();
    }

    private void updateTolerationSeconds(String pod, Long seconds) {
        Conflicts.retry(() -> client.pods().inNamespace(ns).withName(pod).edit(p -> {
            p.getSpec().getTolerations().get(0).setTolerationSeconds(seconds);
            return p;
        }));
    }
}
