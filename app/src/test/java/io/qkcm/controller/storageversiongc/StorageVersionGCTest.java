package io.qkcm.controller.storageversiongc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.Clock;
import java.util.List;
import java.util.Map;

import jakarta.inject.Inject;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.coordination.v1.LeaseBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.qkcm.testing.AlphaApisApiServer;
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
 * storageversion-garbage-collector-controller against a real API server serving
 * internal.apiserver.k8s.io/v1alpha1, mirroring upstream's gc_controller_test.go. The API server checks the
 * common encoding version against the entries, so the statuses the test writes carry the one upstream's
 * SetCommonEncodingVersion computes (upstream's fake clientset takes any).
 */
@QuarkusTest
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
@TestProfile(ManagerOffProfile.class)
class StorageVersionGCTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    @Inject
    Vertx vertx;

    static RealApiServer server;
    static KubernetesClient client;
    private ControllerHarness<StorageVersionGC> harness;
    private String suffix;

    @BeforeAll
    static void setUpClient() {
        server = AlphaApisApiServer.get();
        client = server.newClient();
    }

    @AfterAll
    static void tearDownClient() {
        client.close();
    }

    @BeforeEach
    void setUp() {
        suffix = Long.toString(System.nanoTime() % 1_000_000_000L);
    }

    @AfterEach
    void tearDown() {
        if (harness != null) {
            harness.close();
        }
    }

    private void startController() throws InterruptedException {
        harness = ControllerHarness.create(vertx, StorageVersionGC.NAME, "storage-version-garbage-collector",
                Map.of("qkcm.kubeconfig", server.kubeconfig().toString()),
                ctx -> new StorageVersionGC(ctx, Clock.systemUTC())).start();
    }

    private String id(int i) {
        return "kube-apiserver-" + i + "-" + suffix;
    }

    /** A live kube-apiserver identity Lease (the API server's own lease GC leaves unexpired ones alone). */
    private Lease lease(int i) {
        return client.leases().inNamespace("kube-system").resource(new LeaseBuilder()
                .withMetadata(new ObjectMetaBuilder().withName(id(i)).withNamespace("kube-system")
                        .withLabels(Map.of("apiserver.kubernetes.io/identity", "kube-apiserver")).build())
                .withNewSpec().withHolderIdentity(id(i)).withLeaseDurationSeconds(3600)
                .withRenewTime(ZonedDateTime.now(ZoneOffset.UTC)).endSpec().build()).create();
    }

    private void deleteLease(int i) {
        client.leases().inNamespace("kube-system").withName(id(i)).delete();
    }

    private static StorageVersion.ServerStorageVersion entry(String id, String encoding, String... decodable) {
        return new StorageVersion.ServerStorageVersion(id, encoding, List.of(decodable));
    }

    private String name() {
        return "k8s.test-" + suffix + ".resources";
    }

    /** Creates the StorageVersion (the API server drops a created object's status) and writes its status. */
    private StorageVersion storageVersion(StorageVersion.ServerStorageVersion... entries) {
        StorageVersion sv = new StorageVersion();
        sv.setMetadata(new ObjectMetaBuilder().withName(name()).build());
        sv = client.resources(StorageVersion.class).resource(sv).create();
        sv.getStatus().storageVersions = new java.util.ArrayList<>(List.of(entries));
        StorageVersionGC.setCommonEncodingVersion(sv, Instant.now());
        return client.resources(StorageVersion.class).resource(sv).updateStatus();
    }

    private StorageVersion get() {
        return client.resources(StorageVersion.class).withName(name()).get();
    }

    private static List<String> ids(StorageVersion sv) {
        return sv.getStatus().storageVersions().stream().map(e -> e.apiServerID).toList();
    }

    @Test
    void storageVersionUpdatedWithAllEncodingVersionsEqualOnLeaseDeletion() throws Exception {
        lease(1);
        lease(2);
        lease(3);
        StorageVersion created = storageVersion(entry(id(1), "v1", "v1"), entry(id(2), "v2", "v2"), entry(id(3), "v2", "v2"));
        assertThat(created.getStatus().commonEncodingVersion).isNull();
        startController();

        deleteLease(1);
        await().atMost(TIMEOUT).until(() -> ids(get()).size() == 2);
        StorageVersion sv = get();
        assertThat(ids(sv)).containsExactly(id(2), id(3));
        assertThat(sv.getStatus().storageVersions()).allSatisfy(e -> {
            assertThat(e.encodingVersion).isEqualTo("v2");
            assertThat(e.decodableVersions).containsExactly("v2");
        });
        assertThat(sv.getStatus().commonEncodingVersion).isEqualTo("v2");
        assertThat(sv.getStatus().conditions).hasSize(1);
        assertThat(sv.getStatus().conditions.get(0).type).isEqualTo("AllEncodingVersionsEqual");
        assertThat(sv.getStatus().conditions.get(0).status).isEqualTo("True");
        assertThat(sv.getStatus().conditions.get(0).reason).isEqualTo("CommonEncodingVersionSet");
    }

    @Test
    void storageVersionWithoutTheDeletedLeasesEntryIsLeftAlone() throws Exception {
        lease(1);
        lease(2);
        lease(3);
        StorageVersion created = storageVersion(entry(id(1), "v1", "v1"), entry(id(3), "v2", "v2"));
        // a second StorageVersion that has the entry: its update shows the deletion was processed
        String withEntry = "k8s.test-" + suffix + "-b.resources";
        StorageVersion other = new StorageVersion();
        other.setMetadata(new ObjectMetaBuilder().withName(withEntry).build());
        other = client.resources(StorageVersion.class).resource(other).create();
        other.getStatus().storageVersions = new java.util.ArrayList<>(List.of(entry(id(2), "v1", "v1"), entry(id(3), "v1", "v1")));
        StorageVersionGC.setCommonEncodingVersion(other, Instant.now());
        client.resources(StorageVersion.class).resource(other).updateStatus();
        startController();
        QueueProbe leases = QueueProbe.of(harness.context.metrics(), StorageVersionGC.LEASE_QUEUE);
        QueueProbe.Mark mark = leases.mark();

        deleteLease(2);
        await().atMost(TIMEOUT).until(() -> ids(client.resources(StorageVersion.class).withName(withEntry).get())
                .equals(List.of(id(3))));
        leases.awaitProcessedSince(mark, TIMEOUT);
        StorageVersion sv = get();
        assertThat(ids(sv)).containsExactly(id(1), id(3));
        assertThat(sv.getStatus().commonEncodingVersion).isNull();
        assertThat(sv.getMetadata().getResourceVersion()).isEqualTo(created.getMetadata().getResourceVersion());
    }

    @Test
    void storageVersionContainsInvalidLeaseID() throws Exception {
        lease(1);
        lease(2);
        lease(3);
        startController();
        // id 4 has no lease: the StorageVersion's add (or update) queues it
        storageVersion(entry(id(1), "v1", "v1"), entry(id(2), "v2", "v2"), entry(id(3), "v2", "v2"),
                entry(id(4), "v2", "v1", "v2"));
        await().atMost(TIMEOUT).until(() -> ids(get()).size() == 3);
        StorageVersion sv = get();
        assertThat(ids(sv)).containsExactly(id(1), id(2), id(3));
        assertThat(sv.getStatus().commonEncodingVersion).isNull();
        assertThat(sv.getStatus().conditions).hasSize(1);
        assertThat(sv.getStatus().conditions.get(0).type).isEqualTo("AllEncodingVersionsEqual");
        assertThat(sv.getStatus().conditions.get(0).status).isEqualTo("False");
        assertThat(sv.getStatus().conditions.get(0).reason).isEqualTo("CommonEncodingVersionUnset");
    }

    @Test
    void leaseWithoutTheIdentityLabelDoesNotCount() throws Exception {
        lease(1);
        // a lease of the entry's name that is not a kube-apiserver identity lease
        client.leases().inNamespace("kube-system").resource(new LeaseBuilder()
                .withMetadata(new ObjectMetaBuilder().withName(id(2)).withNamespace("kube-system").build())
                .withNewSpec().withHolderIdentity(id(2)).endSpec().build()).create();
        startController();
        storageVersion(entry(id(1), "v1", "v1"), entry(id(2), "v1", "v1"));
        await().atMost(TIMEOUT).until(() -> ids(get()).size() == 1);
        assertThat(ids(get())).containsExactly(id(1));
        assertThat(get().getStatus().commonEncodingVersion).isEqualTo("v1");
    }

    @Test
    void storageVersionDeletedOnLeaseDeletion() throws Exception {
        lease(1);
        storageVersion(entry(id(1), "v1", "v1"));
        startController();

        deleteLease(1);
        await().atMost(TIMEOUT).until(() -> get() == null);
    }

    @Test
    void commonEncodingVersionFollowsUpstream() {
        StorageVersion sv = new StorageVersion();
        sv.setMetadata(new ObjectMetaBuilder().withName("a.b").withGeneration(3L).build());
        sv.getStatus().storageVersions = List.of(entry("x", "v1", "v1"), entry("y", "v2", "v2"));
        sv.getStatus().commonEncodingVersion = "v1";
        Instant t0 = Instant.parse("2025-01-01T00:00:00Z");
        StorageVersionGC.setCommonEncodingVersion(sv, t0);
        assertThat(sv.getStatus().commonEncodingVersion).isNull();
        assertThat(sv.getStatus().conditions).singleElement().satisfies(c -> {
            assertThat(c.status).isEqualTo("False");
            assertThat(c.observedGeneration).isEqualTo(3L);
            assertThat(c.lastTransitionTime).isEqualTo("2025-01-01T00:00:00Z");
        });

        // agreeing now: the status flips, its transition time moves
        sv.getStatus().storageVersions = List.of(entry("y", "v2", "v2"));
        StorageVersionGC.setCommonEncodingVersion(sv, t0.plusSeconds(60));
        assertThat(sv.getStatus().commonEncodingVersion).isEqualTo("v2");
        assertThat(sv.getStatus().conditions.get(0).lastTransitionTime).isEqualTo("2025-01-01T00:01:00Z");

        // same common version again: no transition
        StorageVersionGC.setCommonEncodingVersion(sv, t0.plusSeconds(120));
        assertThat(sv.getStatus().conditions.get(0).lastTransitionTime).isEqualTo("2025-01-01T00:01:00Z");

        // another common version: a forced transition although the status stays True
        sv.getStatus().storageVersions = List.of(entry("z", "v3", "v3"));
        StorageVersionGC.setCommonEncodingVersion(sv, t0.plusSeconds(180));
        assertThat(sv.getStatus().commonEncodingVersion).isEqualTo("v3");
        assertThat(sv.getStatus().conditions).singleElement()
                .satisfies(c -> assertThat(c.lastTransitionTime).isEqualTo("2025-01-01T00:03:00Z"));
    }
}
