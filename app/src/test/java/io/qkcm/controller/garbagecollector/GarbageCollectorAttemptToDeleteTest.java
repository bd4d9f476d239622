package io.qkcm.controller.garbagecollector;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Level;

import jakarta.inject.Inject;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.qkcm.manager.ControllerManager;
import io.qkcm.testing.LogCapture;
import io.qkcm.testing.RealApiServer;
import io.qkcm.testing.RealApiServerResource;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;

/**
 * The attempt-to-delete worker against a real kube-apiserver, as upstream's: a NotFound on the
 * DELETE becomes a virtual delete event and the item is forgotten (no error logged, no retry); a
 * queued node whose identity the graph has since corrected is worked on with the graph's identity.
 */
@QuarkusTest
@TestProfile(GarbageCollectorProfile.class)
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
class GarbageCollectorAttemptToDeleteTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final String QUEUE = "garbage_collector_attempt_to_delete";
    static KubernetesClient client;

    @Inject
    ControllerManager manager;
    @Inject
    MeterRegistry registry;

    @BeforeAll
    static void connect() {
        client = RealApiServer.get().newClient();
    }

    @AfterAll
    static void close() {
        client.close();
    }

    @AfterEach
    void reset() {
        gc().operations().beforeRequest = (verb, item) -> {
        };
    }

    GarbageCollector gc() {
        return (GarbageCollector) manager.controllers().stream().filter(c -> c.name().equals(GarbageCollector.NAME))
                .findFirst().orElseThrow();
    }

    String namespace(String prefix) {
        String ns = prefix + "-" + Long.toString(System.nanoTime(), 36);
        client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build()).create();
        return ns;
    }

    double retries() {
        Counter c = registry.find("workqueue.retries").tag("name", QUEUE).counter();
        return c == null ? 0 : c.count();
    }

    /**
     * A dependent whose only owner never existed is deleted by the collector; someone else deletes it
     * between the collector's GET and its DELETE. The DELETE's NotFound is a virtual delete event: the
     * node leaves the graph, nothing is logged as an error, and the item is not retried.
     */
    @Test
    void notFoundOnDeleteIsAVirtualDeleteEventAndForgotten() {
        try (LogCapture capture = LogCapture.start("io.qkcm", Level.WARNING)) {
            notFoundOnDelete(capture);
        }
    }

    private void notFoundOnDelete(LogCapture capture) {
        await().atMost(TIMEOUT).until(() -> gc().isSynced());
        String ns = namespace("gc-notfound");
        AtomicInteger deletesSeen = new AtomicInteger();
        AtomicInteger deletedFirst = new AtomicInteger();
        gc().operations().beforeRequest = (verb, item) -> {
            if (verb.equals("delete") && ns.equals(item.namespace()) && item.name().equals("dependent")) {
                deletesSeen.incrementAndGet();
                // another actor wins the race: the object is gone when the collector's DELETE arrives
                if (client.configMaps().inNamespace(ns).withName("dependent").delete().size() == 1) {
                    deletedFirst.incrementAndGet();
                }
            }
        };
        double retriesBefore = retries();

        ConfigMap dependent = client.configMaps().inNamespace(ns).resource(new ConfigMapBuilder().withNewMetadata()
                .withName("dependent").withOwnerReferences(new OwnerReferenceBuilder().withApiVersion("v1")
                        .withKind("ConfigMap").withName("ghost").withUid("00000000-0000-0000-0000-0000000000aa").build())
                .endMetadata().addToData("k", "v").build()).create();
        String uid = dependent.getMetadata().getUid();

        await().atMost(TIMEOUT).untilAsserted(() -> {
            assertThat(deletedFirst.get()).as("the test deleted the dependent just before the collector").isEqualTo(1);
            assertThat(client.configMaps().inNamespace(ns).withName("dependent").get()).isNull();
            assertThat(gc().graphHasUid(uid)).as("the dependent's node left the graph").isFalse();
            assertThat(gc().attemptToDeleteQueue().length()).isZero();
        });
        assertThat(deletesSeen.get()).as("one DELETE, not retried").isEqualTo(1);
        assertThat(retries() - retriesBefore).as("attempt-to-delete retries").isZero();
        assertThat(capture.lines()).as("warnings and errors logged").noneMatch(l -> l.contains("dependent") || l.contains(uid)
                || l.contains("error syncing item"));
    }

    /**
     * A node still queued under an identity the graph has since corrected (here: the kind a bad owner
     * reference gave it) is worked on with the graph's identity: the collector asks the API server
     * for the object as it is, not for the stale coordinates.
     */
    @Test
    void queuedNodeWithAnOutdatedIdentityIsRefreshedFromTheGraph() {
        await().atMost(TIMEOUT).until(() -> gc().isSynced());
        String ns = namespace("gc-refresh");
        ConfigMap owner = client.configMaps().inNamespace(ns).resource(new ConfigMapBuilder().withNewMetadata()
                .withName("owner").endMetadata().addToData("k", "v").build()).create();
        String uid = owner.getMetadata().getUid();
        await().atMost(TIMEOUT).until(() -> gc().graphNode(uid) != null && gc().graphNode(uid).isObserved());
        Node current = gc().graphNode(uid);

        List<ObjectRef> requested = new CopyOnWriteArrayList<>();
        gc().operations().beforeRequest = (verb, item) -> {
            if (item.uid().equals(uid)) {
                requested.add(item);
            }
        };
        Node stale = current.cloneWithIdentity(new ObjectRef("v1", "Secret", "owner", uid, ns));
        gc().attemptToDeleteQueue().add(stale);

        await().atMost(TIMEOUT).untilAsserted(() -> {
            assertThat(requested).isNotEmpty();
            assertThat(gc().attemptToDeleteQueue().length()).isZero();
        });
        assertThat(requested).as("requests the collector made for the node").allSatisfy(r -> {
            assertThat(r.kind()).isEqualTo("ConfigMap");
            assertThat(r.apiVersion()).isEqualTo("v1");
        });
        assertThat(gc().graphNode(uid)).isSameAs(current);
        assertThat(client.configMaps().inNamespace(ns).withName("owner").get()).isNotNull();
    }
}
