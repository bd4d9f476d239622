package io.qkcm.controller.replicaset;

import static io.qkcm.controller.replicaset.RsTestSupport.activePods;
import static io.qkcm.controller.replicaset.RsTestSupport.controllerRef;
import static io.qkcm.testing.TestNamespaces.newNamespace;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.ReplicationController;
import io.fabric8.kubernetes.api.model.ReplicationControllerBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.qkcm.testing.RealApiServer;
import io.qkcm.testing.RealApiServerResource;
import io.qkcm.testing.TestKubelet;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;

/** The ReplicationController controller: the ReplicaSet controller's behaviour, on RCs. */
@QuarkusTest
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
@TestProfile(ReplicaSetControllerTest.Profile.class)
class ReplicationControllerTest {

    private static final PatchContext MERGE = PatchContext.of(PatchType.JSON_MERGE);
    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final Map<String, String> LABELS = Map.of("app", "legacy");

    static KubernetesClient client;
    static TestKubelet kubelet;

    @BeforeAll
    static void setUp() {
        client = RealApiServer.get().newClient();
        kubelet = new TestKubelet(client);
    }

    @AfterAll
    static void tearDown() {
        client.close();
    }

    private List<Event> events(String ns, String involvedName) {
        return client.v1().events().inNamespace(ns).list().getItems().stream()
                .filter(e -> involvedName.equals(e.getInvolvedObject().getName())).toList();
    }

    @Test
    void replicationControllerBehavesLikeAReplicaSet() {
        String ns = newNamespace(client, "rc-parity");
        ReplicationController rc = client.replicationControllers().inNamespace(ns).resource(
                new ReplicationControllerBuilder().withNewMetadata().withName("legacy").endMetadata().withNewSpec()
                        .withReplicas(3).withSelector(LABELS).withTemplate(RsTestSupport.template(LABELS)).endSpec()
                        .build()).create();
        await().atMost(TIMEOUT).untilAsserted(() -> {
            List<Pod> pods = activePods(client, ns);
            assertThat(pods).hasSize(3);
            for (Pod p : pods) {
                assertThat(p.getMetadata().getName()).matches("legacy-[a-z0-9]{5}");
                OwnerReference ref = controllerRef(p);
                assertThat(ref.getApiVersion()).isEqualTo("v1");
                assertThat(ref.getKind()).isEqualTo("ReplicationController");
                assertThat(ref.getUid()).isEqualTo(rc.getMetadata().getUid());
                assertThat(ref.getBlockOwnerDeletion()).isTrue();
            }
            ReplicationController cur = client.replicationControllers().inNamespace(ns).withName("legacy").get();
            assertThat(cur.getStatus().getReplicas()).isEqualTo(3);
            assertThat(cur.getStatus().getFullyLabeledReplicas()).isEqualTo(3);
            assertThat(cur.getStatus().getObservedGeneration()).isEqualTo(cur.getMetadata().getGeneration());
        });
        activePods(client, ns).forEach(kubelet::runningAndReady);
        client.replicationControllers().inNamespace(ns).withName("legacy")
                .patch(MERGE, "{\"spec\":{\"replicas\":1}}");
        await().atMost(TIMEOUT).untilAsserted(() -> {
            assertThat(activePods(client, ns)).hasSize(1);
            ReplicationController cur = client.replicationControllers().inNamespace(ns).withName("legacy").get();
            assertThat(cur.getStatus().getReplicas()).isEqualTo(1);
            assertThat(cur.getStatus().getReadyReplicas()).isEqualTo(1);
            assertThat(cur.getStatus().getAvailableReplicas()).isEqualTo(1);
            List<Event> events = events(ns, "legacy");
            assertThat(events).filteredOn(ev -> "SuccessfulCreate".equals(ev.getReason())).hasSize(3);
            assertThat(events).filteredOn(ev -> "SuccessfulDelete".equals(ev.getReason())).hasSize(2);
            assertThat(events).allSatisfy(ev -> {
                assertThat(ev.getSource().getComponent()).isEqualTo("replication-controller");
                assertThat(ev.getInvolvedObject().getKind()).isEqualTo("ReplicationController");
            });
        });
    }

    @Test
    void adoptsOrphansMatchingItsMapSelector() {
        String ns = newNamespace(client, "rc-adopt");
        client.pods().inNamespace(ns).resource(new PodBuilder().withNewMetadata().withName("orphan")
                .withLabels(LABELS).endMetadata().withSpec(RsTestSupport.template(LABELS).getSpec()).build()).create();
        ReplicationController rc = client.replicationControllers().inNamespace(ns).resource(
                new ReplicationControllerBuilder().withNewMetadata().withName("adopter").endMetadata().withNewSpec()
                        .withReplicas(1).withSelector(LABELS).withTemplate(RsTestSupport.template(LABELS)).endSpec()
                        .build()).create();
        await().atMost(TIMEOUT).untilAsserted(() -> {
            OwnerReference ref = controllerRef(client.pods().inNamespace(ns).withName("orphan").get());
            assertThat(ref).isNotNull();
            assertThat(ref.getKind()).isEqualTo("ReplicationController");
            assertThat(ref.getUid()).isEqualTo(rc.getMetadata().getUid());
            assertThat(activePods(client, ns)).hasSize(1);
            assertThat(client.replicationControllers().inNamespace(ns).withName("adopter").get().getStatus()
                    .getReplicas()).isEqualTo(1);
        });
    }
}
