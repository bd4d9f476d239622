package io.qkcm.controller.nodeipam;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import jakarta.inject.Inject;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.qkcm.testing.ControllerHarness;
import io.qkcm.testing.ManagerOffProfile;
import io.qkcm.testing.RealApiServer;
import io.qkcm.testing.RealApiServerResource;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.vertx.core.Vertx;

/**
 * node-ipam-controller against a real API server, mirroring upstream's range_allocator_test.go tables
 * (TestOccupyPreExistingCIDR, TestAllocateOrOccupyCIDRSuccess/Failure, TestReleaseCIDRSuccess,
 * TestNodeDeletionReleaseCIDR). Upstream pre-occupies CIDRs white-box; here real nodes hold them, which
 * is what such an occupation stands for. Nodes are cluster-scoped and the allocator takes every node,
 * so each test starts from a cluster without nodes (test classes run one after another).
 */
@QuarkusTest
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
@TestProfile(ManagerOffProfile.class)
class NodeIpamControllerTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    @Inject
    Vertx vertx;

    static KubernetesClient client;

    @BeforeAll
    static void setUp() {
        client = RealApiServer.get().newClient();
    }

    @AfterAll
    static void tearDown() {
        deleteAllNodes();
        client.close();
    }

    @BeforeEach
    void noNodes() {
        deleteAllNodes();
    }

    static void deleteAllNodes() {
        for (Node n : client.nodes().list().getItems()) {
            if (n.getMetadata().getFinalizers() != null && !n.getMetadata().getFinalizers().isEmpty()) {
                client.nodes().withName(n.getMetadata().getName()).edit(x -> {
                    x.getMetadata().setFinalizers(List.of());
                    return x;
                });
            }
            client.nodes().withName(n.getMetadata().getName()).delete();
        }
        await().atMost(TIMEOUT).until(() -> client.nodes().list().getItems().isEmpty());
    }

    private ControllerHarness<NodeIpamController> start(String... flagsAndValues) throws InterruptedException {
        Map<String, String> config = new HashMap<>();
        config.put("qkcm.allocate-node-cidrs", "true");
        for (int i = 0; i < flagsAndValues.length; i += 2) {
            config.put("qkcm." + flagsAndValues[i], flagsAndValues[i + 1]);
        }
        return ControllerHarness.create(vertx, NodeIpamController.NAME, "node-controller", config,
                ctx -> new NodeIpamController(ctx, NodeIpamControllerDescriptor.params(ctx.options()))).start();
    }

    private static Node node(String name, String... podCIDRs) {
        NodeBuilder b = new NodeBuilder().withNewMetadata().withName(name).endMetadata();
        if (podCIDRs.length > 0) {
            b.withNewSpec().withPodCIDR(podCIDRs[0]).withPodCIDRs(podCIDRs).endSpec();
        }
        return client.nodes().resource(b.build()).create();
    }

    private static List<String> awaitPodCIDRs(String name) {
        await().atMost(TIMEOUT).until(() -> {
            Node n = client.nodes().withName(name).get();
            return n.getSpec() != null && n.getSpec().getPodCIDRs() != null && !n.getSpec().getPodCIDRs().isEmpty();
        });
        Node n = client.nodes().withName(name).get();
        // upstream's patch sets the single-stack field to the first CIDR too
        assertThat(n.getSpec().getPodCIDR()).isEqualTo(n.getSpec().getPodCIDRs().get(0));
        return n.getSpec().getPodCIDRs();
    }

    private static List<String> podCIDRs(String name) {
        Node n = client.nodes().withName(name).get();
        return n.getSpec() == null || n.getSpec().getPodCIDRs() == null ? List.of() : n.getSpec().getPodCIDRs();
    }

    private static List<Event> events(String node, String reason) {
        return client.v1().events().inNamespace("default").list().getItems().stream()
                .filter(e -> node.equals(e.getInvolvedObject().getName()) && reason.equals(e.getReason())).toList();
    }

    /** Queues the node again (an update), as a kubelet's next status write would. */
    private static void touch(String name) {
        client.nodes().withName(name).patch(PatchContext.of(PatchType.JSON_MERGE),
                "{\"metadata\":{\"labels\":{\"touched\":\"" + System.nanoTime() + "\"}}}");
    }

    /** "When there's no ServiceCIDR return first CIDR in range", then the block after it. */
    @Test
    void firstBlockOfTheRangeThenTheNext() throws Exception {
        try (var c = start("cluster-cidr", "127.123.234.0/24", "node-cidr-mask-size", "30")) {
            node("node0");
            assertThat(awaitPodCIDRs("node0")).containsExactly("127.123.234.0/30");
            node("node1");
            assertThat(awaitPodCIDRs("node1")).containsExactly("127.123.234.4/30");
        }
    }

    /**
     * "Correctly filter out ServiceCIDR" and "Correctly ignore already allocated CIDRs": the service
     * range and the podCIDRs nodes hold at start are never handed out; allocation walks on from the last.
     */
    @Test
    void serviceRangeAndExistingPodCIDRsAreSkipped() throws Exception {
        node("held-64", "127.123.234.64/30");
        node("held-68", "127.123.234.68/30");
        node("held-72", "127.123.234.72/30");
        node("held-80", "127.123.234.80/30");
        try (var c = start("cluster-cidr", "127.123.234.0/24", "node-cidr-mask-size", "30",
                "service-cluster-ip-range", "127.123.234.0/26")) {
            node("node0");
            assertThat(awaitPodCIDRs("node0")).containsExactly("127.123.234.76/30");
            node("node1");
            assertThat(awaitPodCIDRs("node1")).containsExactly("127.123.234.84/30");
        }
    }

    /** "no double counting": the block between two held ones. */
    @Test
    void noDoubleCounting() throws Exception {
        node("node0", "10.10.0.0/24");
        node("node1", "10.10.2.0/24");
        try (var c = start("cluster-cidr", "10.10.0.0/22", "node-cidr-mask-size", "24")) {
            node("node2");
            assertThat(awaitPodCIDRs("node2")).containsExactly("10.10.1.0/24");
        }
    }

    /** "Dualstack CIDRs v4,v6" and "v6,v4": one block of each family, in --cluster-cidr's order. */
    @Test
    void dualStackInClusterCIDROrder() throws Exception {
        try (var c = start("cluster-cidr", "127.123.234.0/8,ace:cab:deca::/84", "node-cidr-mask-size-ipv4", "24",
                "node-cidr-mask-size-ipv6", "98", "service-cluster-ip-range", "127.123.234.0/26")) {
            node("node0");
            assertThat(awaitPodCIDRs("node0")).containsExactly("127.0.0.0/24", "ace:cab:deca::/98");
        }
        deleteAllNodes();
        try (var c = start("cluster-cidr", "ace:cab:deca::/84,127.123.234.0/8", "node-cidr-mask-size-ipv4", "24",
                "node-cidr-mask-size-ipv6", "98", "service-cluster-ip-range", "127.123.234.0/26")) {
            node("node1");
            assertThat(awaitPodCIDRs("node1")).containsExactly("ace:cab:deca::/98", "127.0.0.0/24");
        }
    }

    /**
     * TestAllocateOrOccupyCIDRFailure and "Correctly release preallocated CIDR": with every block held,
     * a new node gets upstream's CIDRNotAvailable event and no podCIDR; once a holder is deleted, its
     * block goes to the waiting node.
     */
    @Test
    void exhaustedRangeThenReleasedBlock() throws Exception {
        node("held-0", "127.123.234.0/30");
        node("held-4", "127.123.234.4/30");
        node("held-8", "127.123.234.8/30");
        node("held-12", "127.123.234.12/30");
        try (var c = start("cluster-cidr", "127.123.234.0/28", "node-cidr-mask-size", "30")) {
            Node waiting = node("node0");
            await().atMost(TIMEOUT).until(() -> !events("node0", "CIDRNotAvailable").isEmpty());
            Event e = events("node0", "CIDRNotAvailable").get(0);
            assertThat(e.getType()).isEqualTo("Normal");
            assertThat(e.getMessage()).isEqualTo("Node node0 status is now: CIDRNotAvailable");
            assertThat(e.getSource().getComponent()).isEqualTo("cidrAllocator");
            assertThat(e.getInvolvedObject().getKind()).isEqualTo("Node");
            assertThat(e.getInvolvedObject().getUid()).isEqualTo(waiting.getMetadata().getUid());
            assertThat(podCIDRs("node0")).isEmpty();

            client.nodes().withName("held-4").delete();
            await().atMost(TIMEOUT).until(() -> client.nodes().withName("held-4").get() == null);
            touch("node0");
            assertThat(awaitPodCIDRs("node0")).containsExactly("127.123.234.4/30");
        }
    }

    /** "Correctly recycle CIDR": a deleted node's block is handed out again once the walk comes back to it. */
    @Test
    void deletedNodesBlockIsRecycled() throws Exception {
        node("held-4", "127.123.234.4/30");
        node("held-8", "127.123.234.8/30");
        node("held-12", "127.123.234.12/30");
        try (var c = start("cluster-cidr", "127.123.234.0/28", "node-cidr-mask-size", "30")) {
            node("node-a");
            assertThat(awaitPodCIDRs("node-a")).containsExactly("127.123.234.0/30");
            client.nodes().withName("node-a").delete();
            await().atMost(TIMEOUT).until(() -> client.nodes().withName("node-a").get() == null);
            node("node-b");
            assertThat(awaitPodCIDRs("node-b")).containsExactly("127.123.234.0/30");
        }
    }

    /**
     * TestNodeDeletionReleaseCIDR: a node being deleted keeps its block (nothing is allocated to it or
     * released) until it is gone.
     */
    @Test
    void terminatingNodeKeepsItsBlockUntilGone() throws Exception {
        client.nodes().resource(new NodeBuilder().withNewMetadata().withName("leaving")
                .withFinalizers("example.com/hold").endMetadata().withNewSpec().withPodCIDR("10.10.0.0/24")
                .withPodCIDRs("10.10.0.0/24").endSpec().build()).create();
        client.nodes().withName("leaving").delete();
        try (var c = start("cluster-cidr", "10.10.0.0/23", "node-cidr-mask-size", "24")) {
            node("node0");
            assertThat(awaitPodCIDRs("node0")).containsExactly("10.10.1.0/24");
            node("node1");
            await().atMost(TIMEOUT).until(() -> !events("node1", "CIDRNotAvailable").isEmpty());
            assertThat(podCIDRs("node1")).isEmpty();

            client.nodes().withName("leaving").edit(n -> {
                n.getMetadata().setFinalizers(List.of());
                return n;
            });
            await().atMost(TIMEOUT).until(() -> client.nodes().withName("leaving").get() == null);
            touch("node1");
            assertThat(awaitPodCIDRs("node1")).containsExactly("10.10.0.0/24");
        }
    }

    /**
     * A replica that starts allocating later (a standby taking the lease) first rebuilds its sets from the
     * nodes as they are then: a block given to a node after this controller was built is not handed out
     * again, whichever node is synced first.
     */
    @Test
    void setsAreRebuiltBeforeTheFirstAllocation() throws Exception {
        Map<String, String> config = Map.of("qkcm.allocate-node-cidrs", "true", "qkcm.cluster-cidr", "10.10.0.0/22",
                "qkcm.node-cidr-mask-size", "24");
        try (var c = ControllerHarness.create(vertx, NodeIpamController.NAME, "node-controller", config,
                ctx -> new NodeIpamController(ctx, NodeIpamControllerDescriptor.params(ctx.options())))) {
            // given out by another leader after this replica was built
            node("held", "10.10.0.0/24");
            node("node0");
            c.startInformers();
            await().atMost(TIMEOUT).until(() -> c.informers.informerFor(Node.class).getStore().getByKey("node0") != null
                    && c.informers.informerFor(Node.class).getStore().getByKey("held") != null);
            // node0 synced before "held" ever is
            c.controller.sync("node0");
            assertThat(awaitPodCIDRs("node0")).containsExactly("10.10.1.0/24");
        }
    }

    /**
     * TestOccupyPreExistingCIDR: the podCIDRs nodes hold when the allocator is built must lie in the
     * cluster CIDRs, index by index; otherwise the controller (and the process) does not start.
     */
    @Test
    void preExistingPodCIDRsMustFitTheClusterCIDRs() {
        IPNet v4 = IPNet.parseSloppy("10.10.0.0/16");
        IPNet v6 = IPNet.parseSloppy("ace:cab:deca::/8");
        RangeAllocator.Params single = new RangeAllocator.Params(List.of(v4), null, null, List.of(24));
        RangeAllocator.Params dual = new RangeAllocator.Params(List.of(v4, v6), null, null, List.of(24, 24));

        Object[][] cases = {
                { "success, single stack no node allocation", single, new String[0], null },
                { "success, dual stack no node allocation", dual, new String[0], null },
                { "success, single stack correct node allocation", single, new String[] { "10.10.0.1/24" }, null },
                { "success, dual stack both allocated correctly", dual, new String[] { "10.10.0.1/24", "a00::/86" }, null },
                { "fail, single stack incorrect node allocation", single, new String[] { "172.10.0.1/24" },
                        "failed to mark cidr[172.10.0.0/24] at idx [0] as occupied for node: node0: cidr 172.10.0.0/24 is out the range of cluster cidr 10.10.0.0/16" },
                { "fail, dualstack node allocating from non existing cidr", single,
                        new String[] { "10.10.0.1/24", "a00::/86" },
                        "node:node0 has an allocated cidr: a00::/86 at index:1 that does not exist in cluster cidrs configuration" },
                { "fail, dualstack node allocating bad v4", dual, new String[] { "172.10.0.1/24", "a00::/86" },
                        "failed to mark cidr[172.10.0.0/24] at idx [0] as occupied for node: node0: cidr 172.10.0.0/24 is out the range of cluster cidr 10.10.0.0/16" },
                { "fail, dualstack node allocating bad v6", dual, new String[] { "10.10.0.1/24", "cdd::/86" },
                        "failed to mark cidr[cdd::/86] at idx [1] as occupied for node: node0: cidr cdd::/86 is out the range of cluster cidr a00::/8" } };
        for (Object[] tc : cases) {
            deleteAllNodes();
            node("node0", (String[]) tc[2]);
            RangeAllocator allocator = new RangeAllocator(client, null, (o, type, reason, message) -> {
            }, (RangeAllocator.Params) tc[1], new CidrSetMetrics(new SimpleMeterRegistry()));
            if (tc[3] == null) {
                allocator.prime(() -> client.nodes().list().getItems());
                assertThat(allocator.cidrSets()).as((String) tc[0]).hasSize(((RangeAllocator.Params) tc[1]).clusterCIDRs().size());
            } else {
                assertThatThrownBy(() -> allocator.prime(() -> client.nodes().list().getItems())).as((String) tc[0])
                        .hasMessage((String) tc[3]);
            }
        }
    }
}
