package io.qkcm.controller.nodelifecycle;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.NodeCondition;
import io.fabric8.kubernetes.api.model.NodeConditionBuilder;
import io.fabric8.kubernetes.api.model.Taint;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.qkcm.testing.Conflicts;
import io.qkcm.testing.RealApiServer;
import io.qkcm.testing.RealApiServerResource;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;

/** The NoSchedule tainting pass against a real API server: taints follow node conditions. */
@QuarkusTest
@TestProfile(NodeLifecycleControllerTest.Profile.class)
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
class NodeLifecycleControllerTest {

    public static class Profile implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("qkcm.controllers", "node-lifecycle-controller");
        }
    }

    private KubernetesClient client;
    private String nodeName;

    @BeforeEach
    void setUp() {
        client = RealApiServer.get().newClient();
        nodeName = "nlc-" + System.nanoTime();
    }

    @AfterEach
    void tearDown() {
        client.nodes().withName(nodeName).delete();
        client.close();
    }

    @Test
    void noScheduleTaintsFollowConditionsAndCordon() {
        // A node registered as the API server's node admission leaves it: not-ready taint, plus a
        // user's own taints, NoSchedule and NoExecute, this pass must not touch.
        client.nodes().resource(new NodeBuilder().withNewMetadata().withName(nodeName).endMetadata()
                .withNewSpec()
                .addNewTaint().withKey("node.kubernetes.io/not-ready").withEffect("NoSchedule").endTaint()
                .addNewTaint().withKey("example.com/dedicated").withValue("db").withEffect("NoSchedule").endTaint()
                .addNewTaint().withKey("example.com/maintenance").withEffect("NoExecute").endTaint()
                .endSpec().build()).create();
        setConditions(condition("Ready", "True"), condition("MemoryPressure", "False"));

        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(taints())
                .containsExactlyInAnyOrder("example.com/dedicated:NoSchedule", "example.com/maintenance:NoExecute"));

        setConditions(condition("Ready", "Unknown"), condition("MemoryPressure", "True"));
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(taints()).containsExactlyInAnyOrder(
                "example.com/dedicated:NoSchedule", "example.com/maintenance:NoExecute",
                "node.kubernetes.io/unreachable:NoSchedule", "node.kubernetes.io/memory-pressure:NoSchedule"));
        Node tainted = client.nodes().withName(nodeName).get();
        assertThat(tainted.getSpec().getTaints()).filteredOn(t -> t.getKey().equals("node.kubernetes.io/unreachable"))
                .allSatisfy(t -> assertThat(t.getTimeAdded()).isNotNull());

        Conflicts.retry(() -> client.nodes().withName(nodeName).edit(n -> {
            n.getSpec().setUnschedulable(true);
            return n;
        }));
        setConditions(condition("Ready", "True"), condition("MemoryPressure", "False"));
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(taints()).containsExactlyInAnyOrder(
                "example.com/dedicated:NoSchedule", "example.com/maintenance:NoExecute",
                "node.kubernetes.io/unschedulable:NoSchedule"));
    }

    /** The node's taints but the NoExecute not-ready and unreachable ones, the health pass's (NodeLifecycleHealthTest). */
    private List<String> taints() {
        Node n = client.nodes().withName(nodeName).get();
        List<Taint> taints = n.getSpec().getTaints() == null ? List.of() : n.getSpec().getTaints();
        return taints.stream().filter(t -> !("NoExecute".equals(t.getEffect())
                && List.of("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable").contains(t.getKey())))
                .map(t -> t.getKey() + ":" + t.getEffect()).toList();
    }

    /** Writes status as a kubelet would, retrying when the controller updated the node meanwhile. */
    private void setConditions(NodeCondition... conditions) {
        await().atMost(Duration.ofSeconds(30)).ignoreException(KubernetesClientException.class)
                .until(() -> client.nodes().withName(nodeName).editStatus(n -> {
                    n.getStatus().setConditions(List.of(conditions));
                    return n;
                }) != null);
    }

    private static NodeCondition condition(String type, String status) {
        return new NodeConditionBuilder().withType(type).withStatus(status).withReason("Test")
                .withLastHeartbeatTime(java.time.Instant.now().toString())
                .withLastTransitionTime(java.time.Instant.now().toString()).build();
    }
}
