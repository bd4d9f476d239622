package io.qkcm.controller.ttl;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import jakarta.inject.Inject;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.qkcm.testing.Conflicts;
import io.qkcm.testing.ControllerHarness;
import io.qkcm.testing.ManagerOffProfile;
import io.qkcm.testing.QueueProbe;
import io.qkcm.testing.RealApiServer;
import io.qkcm.testing.RealApiServerResource;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.vertx.core.Vertx;

/**
 * ttl-controller against a real API server: upstream's TestUpdateNodeIfNeeded as nodes (annotation
 * missing, not a number, already right), and the boundaries of TestDesiredTTL as a cluster that grows
 * past 100 nodes and shrinks back, with the hysteresis between 90 and 100.
 */
@QuarkusTest
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
@TestProfile(ManagerOffProfile.class)
class TTLControllerTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(90);
    private static final String TTL = TTLController.OBJECT_TTL_ANNOTATION_KEY;

    @Inject
    Vertx vertx;

    private KubernetesClient client;
    private ControllerHarness<TTLController> harness;
    private final List<String> nodes = new ArrayList<>();

    @BeforeEach
    void setUp() throws InterruptedException {
        client = RealApiServer.get().newClient();
        harness = ControllerHarness.create(vertx, TTLController.NAME, TTLController::new).start();
    }

    @AfterEach
    void tearDown() {
        harness.close();
        for (String n : nodes) {
            client.nodes().withName(n).delete();
        }
        client.close();
    }

    private Node node(String prefix, Map<String, String> annotations) {
        String name = prefix + "-" + Long.toString(System.nanoTime() % 1_000_000_000L, 36);
        Node created = client.nodes().resource(new NodeBuilder().withNewMetadata().withName(name)
                .withAnnotations(annotations).endMetadata().build()).create();
        nodes.add(name);
        return created;
    }

    private String ttl(String name) {
        Node n = client.nodes().withName(name).get();
        return n.getMetadata().getAnnotations() == null ? null : n.getMetadata().getAnnotations().get(TTL);
    }

    /** A kubelet's status update, say: any update queues the node. */
    private Node touch(String name) {
        return Conflicts.retry(() -> client.nodes().withName(name).edit(n -> {
            Map<String, String> labels = new java.util.HashMap<>();
            if (n.getMetadata().getLabels() != null) {
                labels.putAll(n.getMetadata().getLabels());
            }
            labels.put("touched", Long.toString(System.nanoTime()));
            n.getMetadata().setLabels(labels);
            return n;
        }));
    }

    private QueueProbe queue() {
        return QueueProbe.of(harness.context.metrics(), TTLController.QUEUE);
    }

    private java.util.function.BooleanSupplier cached(Node node) {
        return QueueProbe.cacheHolds(harness.informers.informerFor(Node.class), node, false);
    }

    @Test
    void everyNodeCarriesTheTtlOfASmallCluster() {
        Node bare = node("ttl-bare", Map.of("a", "b"));
        Node garbage = node("ttl-garbage", Map.of(TTL, "soon"));
        await().atMost(TIMEOUT).until(() -> "0".equals(ttl(bare.getMetadata().getName()))
                && "0".equals(ttl(garbage.getMetadata().getName())));
        // the patch set the one annotation and left the others
        assertThat(client.nodes().withName(bare.getMetadata().getName()).get().getMetadata().getAnnotations())
                .containsEntry("a", "b");

        // already right, as Atoi reads it: no patch
        QueueProbe.Mark mark = queue().mark();
        Node right = node("ttl-right", Map.of(TTL, "00"));
        queue().awaitProcessedSince(mark, cached(right), TIMEOUT);
        Node after = client.nodes().withName(right.getMetadata().getName()).get();
        assertThat(after.getMetadata().getResourceVersion()).isEqualTo(right.getMetadata().getResourceVersion());
        assertThat(after.getMetadata().getAnnotations()).containsEntry(TTL, "00");
    }

    @Test
    void theTtlFollowsClusterSizeWithHysteresis() {
        int existing = harness.controller.boundaries().nodeCount();
        assertThat(existing).as("nodes left in the API server by other tests").isLessThan(89);
        List<String> mine = new ArrayList<>();
        for (int i = existing; i < 100; i++) {
            mine.add(node("ttl-size", Map.of()).getMetadata().getName());
        }
        String first = mine.get(0);
        await().atMost(TIMEOUT).until(() -> harness.controller.boundaries().nodeCount() == 100);
        await().atMost(TIMEOUT).until(() -> "0".equals(ttl(first)));
        assertThat(harness.controller.boundaries().desiredTTLSeconds()).isZero();

        // the 101st node moves the cluster to the next step: it is synced with the new TTL at once
        String hundredFirst = node("ttl-size", Map.of()).getMetadata().getName();
        mine.add(hundredFirst);
        await().atMost(TIMEOUT).until(() -> "15".equals(ttl(hundredFirst)));
        // the others on their next update
        touch(first);
        await().atMost(TIMEOUT).until(() -> "15".equals(ttl(first)));

        // back to 95: still above the step's sizeMin (90), the TTL stays
        for (int i = 0; i < 6; i++) {
            client.nodes().withName(mine.remove(mine.size() - 1)).delete();
        }
        await().atMost(TIMEOUT).until(() -> harness.controller.boundaries().nodeCount() == 95);
        QueueProbe.Mark mark = queue().mark();
        Node touched = touch(first);
        queue().awaitProcessedSince(mark, cached(touched), TIMEOUT);
        assertThat(ttl(first)).isEqualTo("15");

        // below 90: the step down
        while (harness.controller.boundaries().nodeCount() >= 90) {
            String gone = mine.remove(mine.size() - 1);
            client.nodes().withName(gone).delete();
            await().atMost(TIMEOUT).until(() -> client.nodes().withName(gone).get() == null);
            await().atMost(TIMEOUT).until(() -> harness.informers.informerFor(Node.class).getStore().getByKey(gone) == null);
        }
        assertThat(harness.controller.boundaries().desiredTTLSeconds()).isZero();
        touch(first);
        await().atMost(TIMEOUT).until(() -> "0".equals(ttl(first)));
    }
}
