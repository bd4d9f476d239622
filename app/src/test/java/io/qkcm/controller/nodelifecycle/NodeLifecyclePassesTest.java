package io.qkcm.controller.nodelifecycle;

import static io.qkcm.testing.TestNamespaces.newNamespace;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.NodeConditionBuilder;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Taint;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.qkcm.controller.PodUtil;
import io.qkcm.testing.RealApiServer;
import io.qkcm.testing.RealApiServerResource;
import io.qkcm.testing.TestKubelet;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;

/**
 * node-lifecycle-controller as the manager starts it (its descriptor, its flags, its passes on their own
 * periods) with short periods: a node whose kubelet stops renewing its Lease is Unknown after
 * --node-monitor-grace-period, tainted unreachable:NoExecute and its pods not ready, while a node whose
 * Lease is renewed stays healthy; renewed again, it is untainted.
 */
@QuarkusTest
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
@TestProfile(NodeLifecyclePassesTest.Profile.class)
class NodeLifecyclePassesTest {

    public static class Profile implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("qkcm.controllers", "node-lifecycle-controller",
                    "qkcm.node-monitor-period", "200ms",
                    "qkcm.node-monitor-grace-period", "4s",
                    "qkcm.node-startup-grace-period", "4s",
                    "qkcm.node-eviction-rate", "10");
        }
    }

    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final String LEASE_NS = "kube-node-lease";

    private KubernetesClient client;
    private ScheduledExecutorService kubelets;
    /** The nodes whose kubelets renew their Leases. */
    private final Set<String> renewing = ConcurrentHashMap.newKeySet();
    private String healthy;
    private String dying;

    @BeforeEach
    void setUp() {
        client = RealApiServer.get().newClient();
        if (client.namespaces().withName(LEASE_NS).get() == null) {
            client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(LEASE_NS).endMetadata().build())
                    .create();
        }
        String suffix = Long.toString(System.nanoTime() % 1_000_000_000L, 36);
        healthy = "nlc-up-" + suffix;
        dying = "nlc-down-" + suffix;
        kubelets = Executors.newSingleThreadScheduledExecutor();
    }

    @AfterEach
    void tearDown() {
        kubelets.shutdownNow();
        for (String n : List.of(healthy, dying)) {
            client.nodes().withName(n).delete();
            client.leases().inNamespace(LEASE_NS).withName(n).delete();
        }
        client.close();
    }

    @Test
    void nodeThatStopsRenewingItsLeaseIsTaintedAndItsPodsNotReadyUntilItRenewsAgain() {
        for (String n : List.of(healthy, dying)) {
            Node created = client.nodes().resource(new NodeBuilder().withNewMetadata().withName(n)
                    .withLabels(Map.of("topology.kubernetes.io/zone", "zone-" + n)).endMetadata().withNewSpec().endSpec()
                    .build()).create();
            postReady(created);
            renew(n);
            renewing.add(n);
        }
        // the kubelets renew every 500 ms; the node's status heartbeat is never posted again
        kubelets.scheduleWithFixedDelay(() -> renewing.forEach(this::renew), 500, 500, TimeUnit.MILLISECONDS);
        String ns = newNamespace(client, "nlc-passes");
        new TestKubelet(client, dying).runningAndReady(client.pods().inNamespace(ns).resource(new PodBuilder()
                .withNewMetadata().withName("web").endMetadata().withNewSpec().addNewContainer().withName("main")
                .withImage("registry.k8s.io/pause:3.10").endContainer().endSpec().build()).create());

        // healthy for longer than the grace period, on its Lease alone
        await().pollDelay(Duration.ofSeconds(6)).atMost(TIMEOUT).until(() -> true);
        assertThat(ready(dying)).isEqualTo("True");
        assertThat(noExecute(dying)).isEmpty();

        renewing.remove(dying);
        await().atMost(TIMEOUT).untilAsserted(() -> {
            assertThat(ready(dying)).isEqualTo("Unknown");
            assertThat(noExecute(dying)).containsExactly("node.kubernetes.io/unreachable");
            assertThat(PodUtil.readyCondition(client.pods().inNamespace(ns).withName("web").get()).getStatus())
                    .isEqualTo("False");
        });
        assertThat(ready(healthy)).isEqualTo("True");
        assertThat(noExecute(healthy)).isEmpty();

        // back: Lease renewed and status posted
        postReady(client.nodes().withName(dying).get());
        renewing.add(dying);
        await().atMost(TIMEOUT).untilAsserted(() -> {
            assertThat(ready(dying)).isEqualTo("True");
            assertThat(noExecute(dying)).isEmpty();
        });
    }

    private void postReady(Node node) {
        String now = Instant.now().toString();
        await().atMost(TIMEOUT).ignoreExceptions().until(() -> client.nodes().withName(node.getMetadata().getName())
                .editStatus(n -> {
                    n.getStatus().setConditions(List.of(new NodeConditionBuilder().withType("Ready").withStatus("True")
                            .withReason("KubeletReady").withLastHeartbeatTime(now).withLastTransitionTime(now).build()));
                    return n;
                }) != null);
    }

    private void renew(String name) {
        ZonedDateTime now = ZonedDateTime.now(ZoneOffset.UTC);
        try {
            Lease existing = client.leases().inNamespace(LEASE_NS).withName(name).get();
            if (existing == null) {
                client.leases().inNamespace(LEASE_NS).resource(new LeaseBuilder().withNewMetadata().withName(name)
                        .endMetadata().withNewSpec().withHolderIdentity(name).withLeaseDurationSeconds(40)
                        .withRenewTime(now).endSpec().build()).create();
            } else {
                existing.getSpec().setRenewTime(now);
                client.leases().inNamespace(LEASE_NS).resource(existing).update();
            }
        } catch (RuntimeException e) {
            // a missed renewal is what a busy kubelet does too; the next one comes 500 ms later
        }
    }

    private String ready(String name) {
        var c = NodeHealthMonitor.condition(client.nodes().withName(name).get().getStatus(), "Ready");
        return c == null ? null : c.getStatus();
    }

    private List<String> noExecute(String name) {
        Node n = client.nodes().withName(name).get();
        List<Taint> taints = n.getSpec().getTaints() == null ? List.of() : n.getSpec().getTaints();
        return taints.stream().filter(t -> "NoExecute".equals(t.getEffect())).map(Taint::getKey).toList();
    }
}
