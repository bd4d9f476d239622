package io.qkcm.controller.resourcequota;

import static io.qkcm.testing.TestNamespaces.newNamespace;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.inject.Inject;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.ResourceQuota;
import io.fabric8.kubernetes.api.model.ResourceQuotaBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.qkcm.testing.ControllerHarness;
import io.qkcm.testing.ManagerOffProfile;
import io.qkcm.testing.RealApiServer;
import io.qkcm.testing.RealApiServerResource;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.vertx.core.Vertx;

/**
 * The API server's quota admission charges a create to status.used before the object is stored; a
 * recalculation from a cache that has not yet seen that object must not write the lower count back,
 * or the next create is admitted over the limit. Configmaps are created by several clients at once,
 * round after round, while the controller recalculates every 20ms: never more than the hard count
 * may exist.
 */
@QuarkusTest
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
@TestProfile(ManagerOffProfile.class)
class QuotaAdmissionRaceTest {

    private static final int HARD = 5;
    private static final int ROUNDS = 12;
    private static final int CLIENTS = 6;

    @Inject
    Vertx vertx;

    static KubernetesClient client;
    static ControllerHarness<ResourceQuotaController> harness;

    @BeforeAll
    static void setUp() {
        client = RealApiServer.get().newClient();
    }

    @AfterAll
    static void tearDown() {
        if (harness != null) {
            harness.close();
        }
        client.close();
    }

    @Test
    void createsRacingTheResyncNeverExceedTheHardCount() throws Exception {
        harness = ControllerHarness.create(vertx, ResourceQuotaController.NAME,
                Map.of("qkcm.resource-quota-sync-period", "20ms", "qkcm.concurrent-resource-quota-syncs", "2"),
                ResourceQuotaControllerDescriptor::newController).start();
        String ns = newNamespace(client, "quota-race");
        int existing = client.configMaps().inNamespace(ns).list().getItems().size();
        client.resourceQuotas().inNamespace(ns).resource(new ResourceQuotaBuilder().withNewMetadata().withName("q")
                .endMetadata().withNewSpec().withHard(Map.of("count/configmaps", new Quantity(String.valueOf(existing + HARD))))
                .endSpec().build()).create();
        await().atMost(Duration.ofSeconds(60)).until(() -> usedConfigMaps(ns) == existing);

        ExecutorService pool = Executors.newFixedThreadPool(CLIENTS);
        try {
            for (int round = 0; round < ROUNDS; round++) {
                int r = round;
                AtomicInteger created = new AtomicInteger();
                List<Future<?>> clients = new ArrayList<>();
                for (int c = 0; c < CLIENTS; c++) {
                    int id = c;
                    clients.add(pool.submit(() -> {
                        // each client keeps creating until the quota refuses it twice in a row
                        int refused = 0;
                        for (int i = 0; refused < 2 && i < 4 * HARD; i++) {
                            try {
                                client.configMaps().inNamespace(ns).resource(new ConfigMapBuilder().withNewMetadata()
                                        .withName("cm-" + r + "-" + id + "-" + i).addToLabels("race", "true").endMetadata()
                                        .build()).create();
                                created.incrementAndGet();
                                refused = 0;
                            } catch (KubernetesClientException e) {
                                if (e.getCode() != 403) {
                                    throw e;
                                }
                                refused++;
                            }
                        }
                        return null;
                    }));
                }
                for (Future<?> f : clients) {
                    f.get();
                }
                int present = client.configMaps().inNamespace(ns).withLabel("race", "true").list().getItems().size();
                assertThat(present).as("configmaps admitted in round %d (quota %d)", r, HARD).isLessThanOrEqualTo(HARD);
                assertThat(created.get()).as("creates admitted in round %d", r).isEqualTo(present);
                // free the quota: the controller's recalculation brings used back down
                client.configMaps().inNamespace(ns).withLabel("race", "true").delete();
                await().atMost(Duration.ofSeconds(60))
                        .until(() -> client.configMaps().inNamespace(ns).withLabel("race", "true").list().getItems().isEmpty()
                                && usedConfigMaps(ns) == existing);
            }
        } finally {
            pool.shutdownNow();
        }
    }

    private static int usedConfigMaps(String ns) {
        ResourceQuota q = client.resourceQuotas().inNamespace(ns).withName("q").get();
        if (q.getStatus() == null || q.getStatus().getUsed() == null || !q.getStatus().getUsed().containsKey("count/configmaps")) {
            return -1;
        }
        return Integer.parseInt(q.getStatus().getUsed().get("count/configmaps").toString());
    }
}
