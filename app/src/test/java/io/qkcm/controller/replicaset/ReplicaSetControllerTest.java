package io.qkcm.controller.replicaset;

import static io.qkcm.controller.replicaset.RsTestSupport.activePods;
import static io.qkcm.controller.replicaset.RsTestSupport.controllerRef;
import static io.qkcm.controller.replicaset.RsTestSupport.n;
import static io.qkcm.controller.replicaset.RsTestSupport.replicaSet;
import static io.qkcm.testing.TestNamespaces.newNamespace;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.ResourceQuota;
import io.fabric8.kubernetes.api.model.ResourceQuotaBuilder;
import io.fabric8.kubernetes.api.model.apps.ReplicaSet;
import io.fabric8.kubernetes.api.model.apps.ReplicaSetCondition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.qkcm.testing.RealApiServer;
import io.qkcm.testing.RealApiServerResource;
import io.qkcm.testing.TestKubelet;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;

/** The ReplicaSet and ReplicationController controllers against a real API server. */
@QuarkusTest
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
@TestProfile(ReplicaSetControllerTest.Profile.class)
class ReplicaSetControllerTest {

    public static class Profile implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("qkcm.controllers", "replicaset-controller,replicationcontroller-controller");
        }
    }

    private static final PatchContext MERGE = PatchContext.of(PatchType.JSON_MERGE);
    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final Map<String, String> LABELS = Map.of("app", "web");

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

    private ReplicaSet rs(String ns, String name) {
        return client.apps().replicaSets().inNamespace(ns).withName(name).get();
    }

    private void scale(String ns, String name, int replicas) {
        client.apps().replicaSets().inNamespace(ns).withName(name)
                .patch(MERGE, "{\"spec\":{\"replicas\":" + replicas + "}}");
    }

    private List<Event> events(String ns, String involvedName) {
        return client.v1().events().inNamespace(ns).list().getItems().stream()
                .filter(e -> involvedName.equals(e.getInvolvedObject().getName())).toList();
    }

    @Test
    void scalesUpAndDownWithOwnedPodsStatusAndEvents() {
        String ns = newNamespace(client, "rs-scale");
        ReplicaSet created = client.apps().replicaSets().inNamespace(ns).resource(replicaSet("web", 3, LABELS)).create();

        await().atMost(TIMEOUT).untilAsserted(() -> {
            List<Pod> pods = activePods(client, ns);
            assertThat(pods).hasSize(3);
            for (Pod p : pods) {
                assertThat(p.getMetadata().getGenerateName()).isEqualTo("web-");
                assertThat(p.getMetadata().getName()).matches("web-[a-z0-9]{5}");
                assertThat(p.getMetadata().getLabels()).containsAllEntriesOf(LABELS);
                OwnerReference ref = controllerRef(p);
                assertThat(ref).isNotNull();
                assertThat(ref.getApiVersion()).isEqualTo("apps/v1");
                assertThat(ref.getKind()).isEqualTo("ReplicaSet");
                assertThat(ref.getName()).isEqualTo("web");
                assertThat(ref.getUid()).isEqualTo(created.getMetadata().getUid());
                assertThat(ref.getBlockOwnerDeletion()).isTrue();
            }
            ReplicaSet rs = rs(ns, "web");
            assertThat(rs.getStatus().getReplicas()).isEqualTo(3);
            assertThat(rs.getStatus().getFullyLabeledReplicas()).isEqualTo(3);
            assertThat(rs.getStatus().getObservedGeneration()).isEqualTo(rs.getMetadata().getGeneration());
        });
        Set<String> podNames = activePods(client, ns).stream().map(p -> p.getMetadata().getName())
                .collect(Collectors.toSet());
        await().atMost(TIMEOUT).untilAsserted(() -> assertThat(events(ns, "web").stream()
                .filter(e -> "SuccessfulCreate".equals(e.getReason()))
                .map(Event::getMessage).collect(Collectors.toSet()))
                .isEqualTo(podNames.stream().map(n -> "Created pod: " + n).collect(Collectors.toSet())));
        Event e = events(ns, "web").get(0);
        assertThat(e.getSource().getComponent()).isEqualTo("replicaset-controller");
        assertThat(e.getInvolvedObject().getKind()).isEqualTo("ReplicaSet");

        // ready pods are counted
        activePods(client, ns).forEach(kubelet::runningAndReady);
        await().atMost(TIMEOUT).untilAsserted(() -> {
            ReplicaSet rs = rs(ns, "web");
            assertThat(rs.getStatus().getReadyReplicas()).isEqualTo(3);
            assertThat(rs.getStatus().getAvailableReplicas()).isEqualTo(3);
        });

        scale(ns, "web", 1);
        await().atMost(TIMEOUT).untilAsserted(() -> {
            assertThat(activePods(client, ns)).hasSize(1);
            ReplicaSet rs = rs(ns, "web");
            assertThat(rs.getStatus().getReplicas()).isEqualTo(1);
            assertThat(rs.getStatus().getObservedGeneration()).isEqualTo(rs.getMetadata().getGeneration());
            assertThat(events(ns, "web").stream().filter(ev -> "SuccessfulDelete".equals(ev.getReason()))
                    .map(Event::getMessage).toList()).hasSize(2).allMatch(m -> m.matches("Deleted pod: web-[a-z0-9]{5}"));
        });

        scale(ns, "web", 4);
        await().atMost(TIMEOUT).untilAsserted(() -> assertThat(activePods(client, ns)).hasSize(4));
    }

    @Test
    void deletesPodsInUpstreamRankingOrder() {
        String ns = newNamespace(client, "rs-rank");
        client.apps().replicaSets().inNamespace(ns).resource(replicaSet("rank", 4, LABELS)).create();
        await().atMost(TIMEOUT).untilAsserted(() -> assertThat(activePods(client, ns)).hasSize(4));
        List<Pod> pods = activePods(client, ns).stream()
                .sorted(Comparator.comparing(p -> p.getMetadata().getName())).toList();
        Pod pending = pods.get(0); // stays unscheduled and Pending
        Pod notReady = pods.get(1); // Running, not ready
        Pod costly = pods.get(2); // ready recently, deletion cost 5
        Pod cheapOld = pods.get(3); // ready for an hour, no deletion cost (0)

        kubelet.running(notReady, false, null);
        client.pods().inNamespace(ns).withName(costly.getMetadata().getName()).patch(MERGE,
                "{\"metadata\":{\"annotations\":{\"controller.kubernetes.io/pod-deletion-cost\":\"5\"}}}");
        kubelet.runningAndReady(costly);
        kubelet.running(cheapOld, true, Instant.now().minus(Duration.ofHours(1)));
        await().atMost(TIMEOUT).untilAsserted(() -> assertThat(n(rs(ns, "rank").getStatus().getReadyReplicas())).isEqualTo(2));

        // without the deletion cost the pod ready for less time would go first; with it, the cheaper one
        List<Pod> expectedOrder = List.of(pending, notReady, cheapOld, costly);
        for (int i = 0; i < expectedOrder.size(); i++) {
            scale(ns, "rank", 3 - i);
            Set<String> expectedGone = expectedOrder.subList(0, i + 1).stream().map(p -> p.getMetadata().getName())
                    .collect(Collectors.toSet());
            int remaining = 3 - i;
            await().atMost(TIMEOUT).untilAsserted(() -> {
                List<Pod> active = activePods(client, ns);
                assertThat(active).hasSize(remaining);
                assertThat(active).noneMatch(p -> expectedGone.contains(p.getMetadata().getName()));
            });
        }
    }

    @Test
    void adoptsMatchingOrphansAndReleasesPodsThatStopMatching() {
        String ns = newNamespace(client, "rs-adopt");
        Pod orphan = client.pods().inNamespace(ns).resource(new PodBuilder().withNewMetadata().withName("orphan")
                .withLabels(LABELS).endMetadata().withSpec(RsTestSupport.template(LABELS).getSpec()).build()).create();
        Pod stranger = client.pods().inNamespace(ns).resource(new PodBuilder().withNewMetadata().withName("stranger")
                .withLabels(Map.of("app", "other")).endMetadata().withSpec(RsTestSupport.template(LABELS).getSpec()).build())
                .create();
        ReplicaSet created = client.apps().replicaSets().inNamespace(ns).resource(replicaSet("adopter", 2, LABELS)).create();

        await().atMost(TIMEOUT).untilAsserted(() -> {
            Pod adopted = client.pods().inNamespace(ns).withName("orphan").get();
            OwnerReference ref = controllerRef(adopted);
            assertThat(ref).isNotNull();
            assertThat(ref.getUid()).isEqualTo(created.getMetadata().getUid());
            assertThat(ref.getKind()).isEqualTo("ReplicaSet");
            assertThat(ref.getBlockOwnerDeletion()).isTrue();
            assertThat(adopted.getMetadata().getUid()).isEqualTo(orphan.getMetadata().getUid());
            assertThat(activePods(client, ns)).hasSize(3); // orphan + 1 created + stranger
            assertThat(controllerRef(client.pods().inNamespace(ns).withName("stranger").get())).isNull();
        });
        assertThat(stranger.getMetadata().getName()).isEqualTo("stranger");

        // an owned pod whose labels stop matching is released, and replaced
        client.pods().inNamespace(ns).withName("orphan").patch(MERGE, "{\"metadata\":{\"labels\":{\"app\":\"retired\"}}}");
        await().atMost(TIMEOUT).untilAsserted(() -> {
            Pod released = client.pods().inNamespace(ns).withName("orphan").get();
            assertThat(released.getMetadata().getOwnerReferences()).isNullOrEmpty();
            List<Pod> owned = activePods(client, ns).stream().filter(p -> controllerRef(p) != null).toList();
            assertThat(owned).hasSize(2);
            assertThat(rs(ns, "adopter").getStatus().getReplicas()).isEqualTo(2);
        });
    }

    @Test
    void availabilityWaitsForMinReadySecondsAndIsRequeued() {
        String ns = newNamespace(client, "rs-minready");
        ReplicaSet spec = replicaSet("slow", 2, LABELS);
        spec.getSpec().setMinReadySeconds(8);
        client.apps().replicaSets().inNamespace(ns).resource(spec).create();
        await().atMost(TIMEOUT).untilAsserted(() -> assertThat(activePods(client, ns)).hasSize(2));
        List<Pod> pods = activePods(client, ns);
        kubelet.runningAndReady(pods.get(0));
        kubelet.running(pods.get(1), true, Instant.now().minus(Duration.ofMinutes(5)));

        // the long-ready pod is available at once, the fresh one not yet
        await().atMost(TIMEOUT).untilAsserted(() -> {
            ReplicaSet rs = rs(ns, "slow");
            assertThat(n(rs.getStatus().getReadyReplicas())).isEqualTo(2);
            assertThat(n(rs.getStatus().getAvailableReplicas())).isEqualTo(1);
        });
        Instant seen = Instant.now();
        // with no further change to any object, a requeue after minReadySeconds makes it available
        await().atMost(TIMEOUT).untilAsserted(() -> assertThat(n(rs(ns, "slow").getStatus().getAvailableReplicas()))
                .isEqualTo(2));
        assertThat(Duration.between(seen, Instant.now())).isLessThan(Duration.ofSeconds(30));
    }

    @Test
    void replicaFailureConditionUnderResourceQuotaIsSetAndCleared() {
        String ns = newNamespace(client, "rs-quota");
        ResourceQuota quota = client.resourceQuotas().inNamespace(ns).resource(new ResourceQuotaBuilder()
                .withNewMetadata().withName("pods").endMetadata().withNewSpec().addToHard("pods", new Quantity("2"))
                .endSpec().build()).create();
        // no resourcequota controller runs here: publish the quota's status as it would
        quota.setStatus(new io.fabric8.kubernetes.api.model.ResourceQuotaStatusBuilder()
                .addToHard("pods", new Quantity("2")).addToUsed("pods", new Quantity("0")).build());
        client.resourceQuotas().inNamespace(ns).resource(quota).updateStatus();

        client.apps().replicaSets().inNamespace(ns).resource(replicaSet("capped", 3, LABELS)).create();
        await().atMost(TIMEOUT).untilAsserted(() -> {
            assertThat(activePods(client, ns)).hasSize(2);
            ReplicaSet rs = rs(ns, "capped");
            ReplicaSetCondition c = ReplicaSetStatusUtil.getCondition(rs.getStatus(), "ReplicaFailure");
            assertThat(c).isNotNull();
            assertThat(c.getStatus()).isEqualTo("True");
            assertThat(c.getReason()).isEqualTo("FailedCreate");
            assertThat(c.getMessage()).contains("exceeded quota");
            assertThat(rs.getStatus().getReplicas()).isEqualTo(2);
        });
        assertThat(events(ns, "capped")).anySatisfy(ev -> {
            assertThat(ev.getReason()).isEqualTo("FailedCreate");
            assertThat(ev.getType()).isEqualTo("Warning");
            assertThat(ev.getMessage()).startsWith("Error creating: ").contains("exceeded quota");
        });

        client.resourceQuotas().inNamespace(ns).withName("pods").patch(MERGE, "{\"spec\":{\"hard\":{\"pods\":\"3\"}}}");
        client.resourceQuotas().inNamespace(ns).withName("pods").subresource("status").patch(MERGE,
                "{\"status\":{\"hard\":{\"pods\":\"3\"}}}");
        await().atMost(TIMEOUT).untilAsserted(() -> {
            assertThat(activePods(client, ns)).hasSize(3);
            ReplicaSet rs = rs(ns, "capped");
            assertThat(ReplicaSetStatusUtil.getCondition(rs.getStatus(), "ReplicaFailure")).isNull();
            assertThat(rs.getStatus().getReplicas()).isEqualTo(3);
        });
    }

    @Test
    void replacesPodsDeletedBehindItsBack() {
        String ns = newNamespace(client, "rs-behind");
        client.apps().replicaSets().inNamespace(ns).resource(replicaSet("keeper", 3, LABELS)).create();
        await().atMost(TIMEOUT).untilAsserted(() -> assertThat(activePods(client, ns)).hasSize(3));
        Set<String> first = activePods(client, ns).stream().map(p -> p.getMetadata().getUid()).collect(Collectors.toSet());

        // one pod removed outright, the others all at once
        Pod victim = activePods(client, ns).get(0);
        client.pods().inNamespace(ns).withName(victim.getMetadata().getName()).withGracePeriod(0).delete();
        await().atMost(TIMEOUT).untilAsserted(() -> {
            List<Pod> active = activePods(client, ns);
            assertThat(active).hasSize(3);
            assertThat(active).noneMatch(p -> p.getMetadata().getUid().equals(victim.getMetadata().getUid()));
        });
        client.pods().inNamespace(ns).withGracePeriod(0).delete();
        await().atMost(TIMEOUT).untilAsserted(() -> {
            List<Pod> active = activePods(client, ns);
            assertThat(active).hasSize(3);
            assertThat(active).noneMatch(p -> first.contains(p.getMetadata().getUid()));
            assertThat(rs(ns, "keeper").getStatus().getReplicas()).isEqualTo(3);
        });
        // a pod that finished stops counting and is replaced
        Pod done = activePods(client, ns).get(0);
        kubelet.failed(done);
        await().atMost(TIMEOUT).untilAsserted(() -> {
            assertThat(activePods(client, ns)).hasSize(3);
            assertThat(activePods(client, ns)).noneMatch(p -> p.getMetadata().getUid().equals(done.getMetadata().getUid()));
        });
    }

    @Test
    void namespaceBeingTerminatedDoesNotCauseAHotLoop() throws Exception {
        String ns = newNamespace(client, "rs-term");
        client.apps().replicaSets().inNamespace(ns).resource(replicaSet("doomed", 0, LABELS)).create();
        await().atMost(TIMEOUT).untilAsserted(() -> assertThat(rs(ns, "doomed").getStatus()).isNotNull());
        // no namespace controller runs here, so the namespace stays Terminating
        client.namespaces().withName(ns).delete();
        await().atMost(TIMEOUT).untilAsserted(() -> assertThat(client.namespaces().withName(ns).get().getStatus()
                .getPhase()).isEqualTo("Terminating"));
        double before = ApiServerMetrics.podCreateRequests(client, "403");
        scale(ns, "doomed", 5);
        // the 5 creations are attempted once (slow start 1+2+2) and refused ...
        await().atMost(TIMEOUT).until(() -> ApiServerMetrics.podCreateRequests(client, "403") - before >= 5);
        // ... and, expected but never observed, not retried in a loop (only after the 5 minute expiry)
        await().during(Duration.ofSeconds(6)).atMost(Duration.ofSeconds(10))
                .until(() -> ApiServerMetrics.podCreateRequests(client, "403") - before == 5);
        assertThat(activePods(client, ns)).isEmpty();
        assertThat(events(ns, "doomed")).noneMatch(ev -> "FailedCreate".equals(ev.getReason()));
    }
}
