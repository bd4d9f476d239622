package io.qkcm.controller.storageversionmigrator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

import jakarta.inject.Inject;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.storagemigration.v1alpha1.MigrationCondition;
import io.fabric8.kubernetes.api.model.storagemigration.v1alpha1.StorageVersionMigration;
import io.fabric8.kubernetes.api.model.storagemigration.v1alpha1.StorageVersionMigrationBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.qkcm.testing.AuditLog;
import io.qkcm.testing.ControllerHarness;
import io.qkcm.testing.ManagerOffProfile;
import io.qkcm.testing.QueueProbe;
import io.qkcm.testing.RealApiServer;
import io.qkcm.testing.RealApiServerResource;
import io.qkcm.testing.TestNamespaces;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.vertx.core.Vertx;

/**
 * storage-version-migrator-controller against a real API server serving storagemigration.k8s.io/v1alpha1
 * (its own, with an audit log): the resourceVersion recorded, every object written back by the controller
 * with a server-side apply and the conditions Running then Succeeded; a resource discovery does not serve
 * Failed at once; a resource the garbage collector has no monitor of retried for a minute, then Failed; and
 * upstream's start conditions (client-go's InformerResourceVersion gate, the garbage collector).
 */
@QuarkusTest
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
@TestProfile(ManagerOffProfile.class)
class SVMControllerTest {

    private static final Duration WAIT = Duration.ofSeconds(30);

    @Inject
    Vertx vertx;

    static RealApiServer server;
    static AuditLog audit;
    static KubernetesClient client;

    static final class TestClock extends Clock {
        final AtomicReference<Instant> now = new AtomicReference<>(Instant.now());

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return now.get();
        }
    }

    @BeforeAll
    static void setUp() throws IOException {
        Path dir = Files.createTempDirectory("qkcm-svm");
        Path policy = dir.resolve("audit-policy.yaml");
        Files.writeString(policy, """
                apiVersion: audit.k8s.io/v1
                kind: Policy
                omitStages: ["RequestReceived"]
                rules:
                - level: Metadata
                """);
        Path log = dir.resolve("audit.log");
        server = RealApiServer.withFlags(List.of("--runtime-config=storagemigration.k8s.io/v1alpha1=true",
                "--feature-gates=StorageVersionMigrator=true", "--audit-policy-file=" + policy,
                "--audit-log-path=" + log, "--audit-log-mode=blocking", "--audit-log-format=json"));
        audit = new AuditLog(log);
        client = server.newClient();
    }

    @AfterAll
    static void tearDown() {
        client.close();
    }

    private ControllerHarness<SVMController> start(Clock clock) throws InterruptedException {
        return ControllerHarness.create(vertx, SVMController.NAME, SVMController.NAME,
                Map.of("qkcm.kubeconfig", server.kubeconfig().toString()),
                context -> StorageVersionMigratorControllerDescriptor.newController(context, clock),
                c -> List.of(c.resourceVersionController())).start();
    }

    private static StorageVersionMigration migrate(String name, String group, String version, String resource) {
        return client.resources(StorageVersionMigration.class).resource(new StorageVersionMigrationBuilder()
                .withNewMetadata().withName(name).endMetadata().withNewSpec().withNewResource().withGroup(group)
                .withVersion(version).withResource(resource).endResource().endSpec().build()).create();
    }

    private static StorageVersionMigration get(String name) {
        return client.resources(StorageVersionMigration.class).withName(name).get();
    }

    private static MigrationCondition condition(StorageVersionMigration svm, String type) {
        if (svm == null || svm.getStatus() == null || svm.getStatus().getConditions() == null) {
            return null;
        }
        return svm.getStatus().getConditions().stream().filter(c -> type.equals(c.getType())).findFirst().orElse(null);
    }

    @Test
    void everyObjectIsWrittenBackAtTheRecordedResourceVersionAndTheMigrationSucceeds() throws Exception {
        String ns = TestNamespaces.newNamespace(client, "svm");
        for (int i = 0; i < 3; i++) {
            client.configMaps().inNamespace(ns).resource(new ConfigMapBuilder().withNewMetadata().withName("cm-" + i)
                    .endMetadata().addToData("k", "v" + i).build()).create();
        }
        String before = client.configMaps().inNamespace(ns).withName("cm-0").get().getMetadata().getResourceVersion();
        try (var h = start(Clock.systemUTC())) {
            migrate("configmaps-migration", "", "v1", "configmaps");
            await().atMost(WAIT).until(() -> condition(get("configmaps-migration"), "Succeeded") != null);
        }
        StorageVersionMigration svm = get("configmaps-migration");
        long recorded = Long.parseLong(svm.getStatus().getResourceVersion());
        assertThat(recorded).isGreaterThanOrEqualTo(Long.parseLong(before));
        MigrationCondition running = condition(svm, "Running");
        MigrationCondition succeeded = condition(svm, "Succeeded");
        assertThat(running.getStatus()).isEqualTo("False");
        assertThat(running.getReason()).isEqualTo("StorageVersionMigrationInProgress");
        assertThat(succeeded.getStatus()).isEqualTo("True");
        assertThat(succeeded.getReason()).isEqualTo("StorageVersionMigrationSucceeded");
        assertThat(condition(svm, "Failed")).isNull();
        // each object got one apply patch from the controller's client
        await().atMost(WAIT).untilAsserted(() -> {
            List<AuditLog.Entry> patches = audit.entries(e -> "patch".equals(e.verb()) && "configmaps".equals(e.resource())
                    && ns.equals(e.namespace()) && e.userAgent() != null && e.userAgent().endsWith("/" + SVMController.NAME));
            assertThat(patches).extracting(AuditLog.Entry::name).containsExactlyInAnyOrder("cm-0", "cm-1", "cm-2");
            assertThat(patches).allSatisfy(e -> {
                assertThat(e.code()).isEqualTo(200);
                assertThat(e.uri()).contains("fieldManager=" + SVMController.NAME);
            });
        });
        // the data is unchanged
        assertThat(client.configMaps().inNamespace(ns).withName("cm-1").get().getData()).isEqualTo(Map.of("k", "v1"));
    }

    @Test
    void aResourceDiscoveryDoesNotServeFailsWithoutAResourceVersion() throws Exception {
        try (var h = start(Clock.systemUTC())) {
            migrate("no-such-resource", "example.com", "v1", "widgets");
            await().atMost(WAIT).until(() -> condition(get("no-such-resource"), "Failed") != null);
        }
        StorageVersionMigration svm = get("no-such-resource");
        MigrationCondition failed = condition(svm, "Failed");
        assertThat(failed.getStatus()).isEqualTo("True");
        assertThat(failed.getReason()).isEqualTo("StorageVersionMigrationFailed");
        assertThat(failed.getMessage()).isEqualTo("resource does not exist in discovery");
        assertThat(svm.getStatus().getResourceVersion()).isNullOrEmpty();
        assertThat(condition(svm, "Running")).isNull();
    }

    @Test
    void aResourceTheGarbageCollectorDoesNotMonitorFailsAMinuteAfterTheMigrationWasCreated() throws Exception {
        TestClock clock = new TestClock();
        try (var h = start(clock)) {
            // events are ignored by the garbage collector: it keeps no monitor of them
            migrate("events-migration", "", "v1", "events");
            await().atMost(WAIT).until(() -> {
                StorageVersionMigration svm = get("events-migration");
                return svm.getStatus() != null && svm.getStatus().getResourceVersion() != null;
            });
            // the migrator has synced it several times, each an error that requeues it
            QueueProbe probe = QueueProbe.of(h.context.metrics(), SVMController.NAME);
            await().atMost(WAIT).until(() -> probe.processed() >= 4);
            assertThat(condition(get("events-migration"), "Failed")).isNull();
            assertThat(condition(get("events-migration"), "Running")).isNull();

            clock.now.set(Instant.now().plus(Duration.ofSeconds(61)));
            await().atMost(WAIT).until(() -> condition(get("events-migration"), "Failed") != null);
        }
        MigrationCondition failed = condition(get("events-migration"), "Failed");
        assertThat(failed.getMessage()).isEqualTo("resource not found");
        assertThat(failed.getReason()).isEqualTo("StorageVersionMigrationFailed");
        assertThat(condition(get("events-migration"), "Running")).isNull();
    }

    @Test
    void aFinishedMigrationIsLeftAlone() throws Exception {
        StorageVersionMigration done = migrate("already-done", "", "v1", "configmaps");
        MigrationConditions.set(done, MigrationConditions.SUCCEEDED, MigrationConditions.SUCCEEDED_REASON, "",
                Clock.systemUTC());
        client.resources(StorageVersionMigration.class).resource(done).updateStatus();
        try (var h = start(Clock.systemUTC())) {
            // a later migration is processed by the one resource-version worker, so the earlier one has been too
            migrate("after-done", "example.com", "v1", "widgets");
            await().atMost(WAIT).until(() -> condition(get("after-done"), "Failed") != null);
        }
        StorageVersionMigration svm = get("already-done");
        assertThat(svm.getStatus().getResourceVersion()).isNullOrEmpty();
        assertThat(condition(svm, "Running")).isNull();
    }

    @Test
    void upstreamsStartConditions() throws Exception {
        try (var h = ControllerHarness.create(vertx, SVMController.NAME, SVMController.NAME,
                Map.of("qkcm.kubeconfig", server.kubeconfig().toString(), "qkcm.feature-gates", "StorageVersionMigrator=true"),
                context -> StorageVersionMigratorControllerDescriptor.newController(context, Clock.systemUTC()))) {
            // client-go's InformerResourceVersion is off by default: not started
            assertThat(StorageVersionMigratorControllerDescriptor.start(h.context)).isNull();
        }
        try (var h = ControllerHarness.create(vertx, SVMController.NAME, SVMController.NAME,
                Map.of("qkcm.kubeconfig", server.kubeconfig().toString(),
                        "qkcm.feature-gates", "StorageVersionMigrator=true,InformerResourceVersion=true",
                        "qkcm.enable-garbage-collector", "false"),
                context -> StorageVersionMigratorControllerDescriptor.newController(context, Clock.systemUTC()))) {
            assertThatThrownBy(() -> StorageVersionMigratorControllerDescriptor.start(h.context))
                    .hasMessage("storage version migrator requires garbage collector");
        }
    }
}
