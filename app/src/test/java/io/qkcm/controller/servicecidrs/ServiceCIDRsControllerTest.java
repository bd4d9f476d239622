package io.qkcm.controller.servicecidrs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;

import jakarta.inject.Inject;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.networking.v1.IPAddress;
import io.fabric8.kubernetes.api.model.networking.v1.IPAddressBuilder;
import io.fabric8.kubernetes.api.model.networking.v1.ServiceCIDR;
import io.fabric8.kubernetes.api.model.networking.v1.ServiceCIDRBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
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
 * service-cidr-controller against a real API server (which serves networking.k8s.io/v1 ServiceCIDR and
 * IPAddress in v1.34), mirroring upstream's servicecidrs_controller_test.go: TestControllerSync as what
 * the API server ends up holding (finalizer, Ready condition, deletion held or done), and the tables of
 * canDeleteCIDR, containingServiceCIDRs (ipToCidrs) and overlappingServiceCIDRs (cidrToCidrs) on the
 * controller's caches. The API server's own ServiceCIDR ({@code kubernetes}, its service range) overlaps
 * none of the ranges used here; upstream's tables name theirs {@code kubernetes} too, called
 * {@code default-cidr} here. The controller's clock is the test's: the 10 s deletion grace period is
 * passed by moving it.
 */
@QuarkusTest
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
@TestProfile(ManagerOffProfile.class)
class ServiceCIDRsControllerTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final String TEST_LABEL = "qkcm-test";

    @Inject
    Vertx vertx;

    static KubernetesClient client;
    private final AtomicReference<Duration> clockOffset = new AtomicReference<>(Duration.ZERO);
    private ControllerHarness<ServiceCIDRsController> harness;

    @BeforeAll
    static void setUp() {
        client = RealApiServer.get().newClient();
    }

    @AfterAll
    static void tearDown() {
        client.close();
    }

    @BeforeEach
    void clean() {
        cleanUp();
    }

    @AfterEach
    void stop() {
        if (harness != null) {
            harness.close();
        }
        cleanUp();
    }

    /** Every ServiceCIDR and IPAddress a test made (finalizers stripped), and waits until they are gone. */
    private static void cleanUp() {
        for (ServiceCIDR c : client.network().v1().serviceCIDRs().withLabel(TEST_LABEL).list().getItems()) {
            client.network().v1().serviceCIDRs().withName(c.getMetadata().getName())
                    .patch(PatchContext.of(PatchType.JSON_MERGE), "{\"metadata\":{\"finalizers\":null}}");
            client.network().v1().serviceCIDRs().withName(c.getMetadata().getName()).delete();
        }
        client.network().v1().ipAddresses().withLabel(TEST_LABEL).delete();
        await().atMost(TIMEOUT).until(() -> client.network().v1().serviceCIDRs().withLabel(TEST_LABEL).list().getItems()
                .isEmpty() && client.network().v1().ipAddresses().withLabel(TEST_LABEL).list().getItems().isEmpty());
    }

    /** The controller on the test's clock (now + the offset); {@code run} false starts its informers only. */
    private ServiceCIDRsController controller(boolean run) throws InterruptedException {
        Clock clock = new Clock() {
            @Override
            public ZoneOffset getZone() {
                return ZoneOffset.UTC;
            }

            @Override
            public Clock withZone(java.time.ZoneId zone) {
                return this;
            }

            @Override
            public Instant instant() {
                return Instant.now().plus(clockOffset.get());
            }
        };
        harness = ControllerHarness.create(vertx, ServiceCIDRsController.NAME, "service-cidrs-controller", Map.of(),
                ctx -> new ServiceCIDRsController(ctx, clock));
        return run ? harness.start().controller : harness.startInformers().controller;
    }

    private static ServiceCIDR serviceCIDR(String name, String... cidrs) {
        return client.network().v1().serviceCIDRs().resource(new ServiceCIDRBuilder().withNewMetadata().withName(name)
                .withLabels(Map.of(TEST_LABEL, "true")).endMetadata().withNewSpec().withCidrs(cidrs).endSpec().build())
                .create();
    }

    /** Upstream's makeIPAddress: an address of the API server's allocator, labelled with its family. */
    private static IPAddress ipAddress(String name) {
        String family = name.contains(":") ? "IPv6" : "IPv4";
        return client.network().v1().ipAddresses().resource(new IPAddressBuilder().withNewMetadata().withName(name)
                .withLabels(Map.of(TEST_LABEL, "true", ServiceCIDRsController.LABEL_IP_FAMILY, family,
                        ServiceCIDRsController.LABEL_MANAGED_BY, ServiceCIDRsController.IPALLOCATOR))
                .endMetadata().withNewSpec().withNewParentRef().withGroup("").withResource("services")
                .withNamespace("default").withName("svc").endParentRef().endSpec().build()).create();
    }

    private ServiceCIDR cached(String name) {
        return harness.informers.informerFor(ServiceCIDR.class).getStore().getByKey(name);
    }

    private void awaitCached(String... names) {
        await().atMost(TIMEOUT).until(() -> Arrays.stream(names).allMatch(n -> cached(n) != null));
    }

    private void awaitCachedIPs(String... names) {
        await().atMost(TIMEOUT).until(() -> Arrays.stream(names)
                .allMatch(n -> harness.informers.informerFor(IPAddress.class).getStore().getByKey(n) != null));
    }

    private static ServiceCIDR get(String name) {
        return client.network().v1().serviceCIDRs().withName(name).get();
    }

    private static Condition ready(ServiceCIDR c) {
        if (c == null || c.getStatus() == null || c.getStatus().getConditions() == null) {
            return null;
        }
        return c.getStatus().getConditions().stream().filter(x -> "Ready".equals(x.getType())).findFirst().orElse(null);
    }

    private static void touch(String name) {
        client.network().v1().serviceCIDRs().withName(name).patch(PatchContext.of(PatchType.JSON_MERGE),
                "{\"metadata\":{\"labels\":{\"touched\":\"" + System.nanoTime() + "\"}}}");
    }

    /** "service CIDR must have finalizer": the finalizer, then Ready=True applied by the controller. */
    @Test
    void newServiceCIDRGetsFinalizerAndReady() throws Exception {
        controller(true);
        serviceCIDR("no-finalizer", "192.168.0.0/24", "2001:db2::/64");
        await().atMost(TIMEOUT).until(() -> ready(get("no-finalizer")) != null);
        ServiceCIDR c = get("no-finalizer");
        assertThat(c.getMetadata().getFinalizers()).containsExactly(ServiceCIDRsController.FINALIZER);
        Condition ready = ready(c);
        assertThat(ready.getStatus()).isEqualTo("True");
        assertThat(ready.getMessage()).isEqualTo("Kubernetes Service CIDR is ready");
        assertThat(ready.getReason()).isNullOrEmpty();
        assertThat(ready.getLastTransitionTime()).isNotNull();
        // the status is server-side applied under upstream's field manager
        assertThat(c.getMetadata().getManagedFields()).anySatisfy(f -> {
            assertThat(f.getManager()).isEqualTo(ServiceCIDRsController.NAME);
            assertThat(f.getOperation()).isEqualTo("Apply");
            assertThat(f.getSubresource()).isEqualTo("status");
        });
    }

    /**
     * "service CIDR being deleted but within the grace period must be requeued not remove the
     * finalizer", then "service CIDR being deleted must remove the finalizer" once the clock has passed it.
     */
    @Test
    void deletionWaitsForTheGracePeriod() throws Exception {
        ServiceCIDRsController c = controller(true);
        serviceCIDR("deleting-cidr", "192.168.0.0/24", "2001:db2::/64");
        await().atMost(TIMEOUT).until(() -> ready(cached("deleting-cidr")) != null);
        QueueProbe probe = QueueProbe.of(harness.context.metrics(), ServiceCIDRsController.QUEUE);
        QueueProbe.Mark mark = probe.mark();
        client.network().v1().serviceCIDRs().withName("deleting-cidr").delete();
        probe.awaitProcessedSince(mark, () -> cached("deleting-cidr") != null
                && cached("deleting-cidr").getMetadata().getDeletionTimestamp() != null, TIMEOUT);
        ServiceCIDR held = get("deleting-cidr");
        assertThat(held.getMetadata().getFinalizers()).containsExactly(ServiceCIDRsController.FINALIZER);
        assertThat(ready(held).getStatus()).isEqualTo("True");
        assertThat(c.canDeleteCIDR(held)).isTrue();

        clockOffset.set(ServiceCIDRsController.DELETION_GRACE_PERIOD.plusSeconds(1));
        touch("deleting-cidr");
        await().atMost(TIMEOUT).until(() -> get("deleting-cidr") == null);
    }

    /**
     * "service CIDR being deleted with IPv4 addresses should update the status": Ready=False, reason
     * Terminating, the finalizer kept; the IPAddress deleted, the ServiceCIDR goes.
     */
    @Test
    void deletionHeldByAnIPAddressOnlyItHolds() throws Exception {
        clockOffset.set(Duration.ofMinutes(1));
        controller(true);
        serviceCIDR("deleted-cidr", "192.168.0.0/24", "2001:db2::/64");
        ipAddress("192.168.0.1");
        await().atMost(TIMEOUT).until(() -> ready(cached("deleted-cidr")) != null);
        client.network().v1().serviceCIDRs().withName("deleted-cidr").delete();
        await().atMost(TIMEOUT).until(() -> "False".equals(statusOf("deleted-cidr")));
        Condition ready = ready(get("deleted-cidr"));
        assertThat(ready.getReason()).isEqualTo("Terminating");
        assertThat(ready.getMessage()).isEqualTo(ServiceCIDRsController.MESSAGE_TERMINATING);
        assertThat(get("deleted-cidr").getMetadata().getFinalizers()).containsExactly(ServiceCIDRsController.FINALIZER);

        // upstream's deleteIPAddress handler queues the ServiceCIDRs holding it
        client.network().v1().ipAddresses().withName("192.168.0.1").delete();
        await().atMost(TIMEOUT).until(() -> get("deleted-cidr") == null);
    }

    /** The IPv6 case of the same: 2001:db2::1 holds it. */
    @Test
    void deletionHeldByAnIPv6Address() throws Exception {
        clockOffset.set(Duration.ofMinutes(1));
        controller(true);
        serviceCIDR("deleted-cidr", "192.168.0.0/24", "2001:db2::/64");
        ipAddress("2001:db2::1");
        await().atMost(TIMEOUT).until(() -> ready(cached("deleted-cidr")) != null);
        client.network().v1().serviceCIDRs().withName("deleted-cidr").delete();
        await().atMost(TIMEOUT).until(() -> "False".equals(statusOf("deleted-cidr")));
        assertThat(ready(get("deleted-cidr")).getReason()).isEqualTo("Terminating");
    }

    /**
     * "...overlapping same range and IPv4 addresses should remove the finalizer", "...overlapping and
     * IPv6 addresses...": another ServiceCIDR holds the addresses, so the deletion goes through; and
     * "...not overlapping..." (a /26 elsewhere) does not hold them, so it is held.
     */
    @Test
    void anotherServiceCIDRHoldingTheAddressesLetsTheDeletionThrough() throws Exception {
        clockOffset.set(Duration.ofMinutes(1));
        controller(true);
        serviceCIDR("deleted-cidr", "192.168.0.0/24", "2001:db2::/64");
        serviceCIDR("overlapping", "192.168.0.0/16", "2001:db2::/48");
        ipAddress("192.168.0.1");
        ipAddress("2001:db2::1");
        await().atMost(TIMEOUT).until(() -> ready(cached("deleted-cidr")) != null && cached("overlapping") != null);
        awaitCachedIPs("192.168.0.1", "2001:db2::1");
        client.network().v1().serviceCIDRs().withName("deleted-cidr").delete();
        await().atMost(TIMEOUT).until(() -> get("deleted-cidr") == null);

        serviceCIDR("deleted-cidr2", "192.168.0.0/24", "2001:db2::/64");
        serviceCIDR("elsewhere", "192.168.255.0/26", "2001:db2:a:b::/64");
        awaitCached("deleted-cidr2", "elsewhere");
        await().atMost(TIMEOUT).until(() -> ready(cached("deleted-cidr2")) != null);
        // the /24 and /64 hold the addresses too: the /16 and /48 go
        client.network().v1().serviceCIDRs().withName("overlapping").delete();
        await().atMost(TIMEOUT).until(() -> get("overlapping") == null);
        // now nothing else holds 192.168.0.1 (the /26 lies elsewhere): held
        client.network().v1().serviceCIDRs().withName("deleted-cidr2").delete();
        await().atMost(TIMEOUT).until(() -> "False".equals(statusOf("deleted-cidr2")));
    }

    private static String statusOf(String name) {
        Condition c = ready(get(name));
        return c == null ? null : c.getStatus();
    }

    /** TestController_canDeleteCIDR, on the controller's caches. */
    @Test
    void canDeleteCIDR() throws Exception {
        Object[][] cases = {
                { "empty", new String[0][], new String[0], true },
                { "CIDR and no IPs", new String[][] { { "default-cidr", "192.168.0.0/24", "2001:db2::/64" } },
                        new String[0], true },
                { "CIDR with IPs", new String[][] { { "default-cidr", "192.168.0.0/24", "2001:db2::/64" } },
                        new String[] { "192.168.0.24" }, false },
                { "CIDR without IPs", new String[][] { { "default-cidr", "192.168.0.0/24", "2001:db2::/64" } },
                        new String[] { "192.168.1.24" }, true },
                { "CIDR with IPv4 address referencing the subnet address",
                        new String[][] { { "default-cidr", "192.168.0.0/24", "2001:db2::/64" } },
                        new String[] { "192.168.0.0" }, true },
                { "CIDR with IPv4 address referencing the broadcast address",
                        new String[][] { { "default-cidr", "192.168.0.0/24", "2001:db2::/64" } },
                        new String[] { "192.168.0.255" }, true },
                { "CIDR with IPv6 address referencing the broadcast address",
                        new String[][] { { "default-cidr", "192.168.0.0/24", "2001:db2::/64" } },
                        new String[] { "2001:db2::ffff:ffff:ffff:ffff" }, false },
                { "CIDR with same range overlapping and IPs",
                        new String[][] { { "default-cidr", "192.168.0.0/24", "2001:db2::/64" },
                                { "overlapping", "192.168.0.0/24", "2001:db2::/64" } },
                        new String[] { "192.168.0.23" }, true },
                { "CIDR with smaller range overlapping and IPs",
                        new String[][] { { "default-cidr", "192.168.0.0/24", "2001:db2::/64" },
                                { "overlapping", "192.168.0.0/26", "2001:db2::/64" } },
                        new String[] { "192.168.0.23" }, true },
                { "CIDR with smaller range overlapping but IPs orphan",
                        new String[][] { { "default-cidr", "192.168.0.0/24", "2001:db2::/64" },
                                { "overlapping", "192.168.0.0/28", "2001:db2::/64" } },
                        new String[] { "192.168.0.23" }, false },
                { "CIDR with larger range overlapping and IPs",
                        new String[][] { { "default-cidr", "192.168.0.0/24", "2001:db2::/64" },
                                { "overlapping", "192.168.0.0/16", "2001:db2::/64" } },
                        new String[] { "192.168.0.23" }, true } };
        ServiceCIDRsController c = controller(false);
        for (Object[] tc : cases) {
            cleanUp();
            String[][] cidrs = (String[][]) tc[1];
            for (String[] cidr : cidrs) {
                serviceCIDR(cidr[0], Arrays.copyOfRange(cidr, 1, cidr.length));
            }
            for (String ip : (String[]) tc[2]) {
                ipAddress(ip);
            }
            awaitCached(Arrays.stream(cidrs).map(x -> x[0]).toArray(String[]::new));
            awaitCachedIPs((String[]) tc[2]);
            await().atMost(TIMEOUT).until(() -> harness.informers.informerFor(ServiceCIDR.class).getStore().list()
                    .stream().filter(x -> x.getMetadata().getLabels() != null
                            && x.getMetadata().getLabels().containsKey(TEST_LABEL)).count() == cidrs.length);
            ServiceCIDR synced = new ServiceCIDRBuilder().withNewMetadata().withName("default-cidr").endMetadata()
                    .withNewSpec().withCidrs("192.168.0.0/24", "2001:db2::/64").endSpec().build();
            assertThat(c.canDeleteCIDR(synced)).as((String) tc[0]).isEqualTo(tc[3]);
        }
    }

    /** TestController_ipToCidrs and TestController_cidrToCidrs, on the controller's caches. */
    @Test
    void containingAndOverlappingServiceCIDRs() throws Exception {
        ServiceCIDRsController c = controller(false);
        serviceCIDR("default-cidr", "192.168.0.0/24", "2001:db2::/64");
        serviceCIDR("overlapping", "192.168.0.0/24", "2001:db2::/64");
        serviceCIDR("overlapping2", "192.168.0.0/26", "2001:db2::/96");
        serviceCIDR("unrelated", "10.200.0.0/24");
        serviceCIDR("unrelated2", "10.200.0.0/16");
        awaitCached("default-cidr", "overlapping", "overlapping2", "unrelated", "unrelated2");
        Map<String, Set<String>> ipToCidrs = Map.of(
                "192.168.0.23", Set.of("default-cidr", "overlapping", "overlapping2"),
                "192.168.0.0", Set.of(),
                "192.168.0.63", Set.of("default-cidr", "overlapping"),
                "2001:db2::", Set.of(),
                "2001:0db2::ffff:ffff:ffff:ffff", Set.of("default-cidr", "overlapping"));
        ipToCidrs.forEach((ip, want) -> assertThat(c.containingServiceCIDRs(unlabelledManaged(ip))).as(ip)
                .containsExactlyInAnyOrderElementsOf(want));
        // an address not made by the API server's allocator blocks nothing
        IPAddress foreign = unlabelledManaged("192.168.0.23");
        foreign.getMetadata().setLabels(Map.of());
        assertThat(c.containingServiceCIDRs(foreign)).isEmpty();

        assertThat(c.overlappingServiceCIDRs(cached("default-cidr")))
                .containsExactlyInAnyOrder("default-cidr", "overlapping", "overlapping2");
        assertThat(c.overlappingServiceCIDRs(cached("unrelated2"))).containsExactlyInAnyOrder("unrelated", "unrelated2");
    }

    private static IPAddress unlabelledManaged(String ip) {
        return new IPAddressBuilder().withNewMetadata().withName(ip)
                .withLabels(Map.of(ServiceCIDRsController.LABEL_MANAGED_BY, ServiceCIDRsController.IPALLOCATOR))
                .endMetadata().build();
    }

    /** Upstream's addServiceCIDR: a new ServiceCIDR queues the held one it overlaps, which may now go. */
    @Test
    void addedOverlappingServiceCIDRReleasesAHeldDeletion() throws Exception {
        clockOffset.set(Duration.ofMinutes(1));
        controller(true);
        serviceCIDR("held", "192.168.0.0/24");
        ipAddress("192.168.0.1");
        await().atMost(TIMEOUT).until(() -> ready(cached("held")) != null);
        client.network().v1().serviceCIDRs().withName("held").delete();
        await().atMost(TIMEOUT).until(() -> "False".equals(statusOf("held")));
        serviceCIDR("parent", "192.168.0.0/16");
        await().atMost(TIMEOUT).until(() -> get("held") == null);
        assertThat(List.of(get("parent").getMetadata().getFinalizers())).isNotEmpty();
    }
}
