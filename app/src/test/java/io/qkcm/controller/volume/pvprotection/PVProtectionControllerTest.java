package io.qkcm.controller.volume.pvprotection;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import jakarta.inject.Inject;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.qkcm.testing.ControllerHarness;
import io.qkcm.testing.ManagerOffProfile;
import io.qkcm.testing.RealApiServer;
import io.qkcm.testing.RealApiServerResource;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.vertx.core.Vertx;

/**
 * persistentvolume-protection-controller against a real API server, after upstream's
 * pv_protection_controller_test.go: a PV without the finalizer gets it; a deleted PV loses it unless
 * Bound, and a Bound one loses it once it is no longer Bound. "Kept" is asserted after a PV deleted
 * later (the one worker takes them in order) is gone.
 */
@QuarkusTest
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
@TestProfile(ManagerOffProfile.class)
class PVProtectionControllerTest {

    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final String FINALIZER = PVProtectionController.PV_PROTECTION_FINALIZER;

    @Inject
    Vertx vertx;

    static KubernetesClient client;

    @BeforeAll
    static void setUp() {
        client = RealApiServer.get().newClient();
    }

    @AfterAll
    static void tearDown() {
        client.close();
    }

    private ControllerHarness<PVProtectionController> start() throws InterruptedException {
        return ControllerHarness.create(vertx, PVProtectionController.NAME,
                PersistentVolumeProtectionControllerDescriptor::newController).start();
    }

    static String pv(String prefix) {
        String name = prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
        client.persistentVolumes().resource(new PersistentVolumeBuilder().withNewMetadata().withName(name).endMetadata()
                .withNewSpec().withCapacity(Map.of("storage", new Quantity("1Gi"))).withAccessModes("ReadWriteOnce")
                .withNewHostPath().withPath("/tmp/" + name).endHostPath().endSpec().build()).create();
        return name;
    }

    static PersistentVolume get(String name) {
        return client.persistentVolumes().withName(name).get();
    }

    static void phase(String name, String phase) {
        PersistentVolume pv = get(name);
        pv.getStatus().setPhase(phase);
        client.persistentVolumes().resource(pv).updateStatus();
    }

    static boolean hasFinalizer(String name) {
        PersistentVolume pv = get(name);
        return pv != null && pv.getMetadata().getFinalizers().contains(FINALIZER);
    }

    @Test
    void aPVWithoutTheFinalizerGetsIt() throws Exception {
        try (var c = start()) {
            String name = pv("pvp-add");
            await().atMost(WAIT).until(() -> hasFinalizer(name));
            client.persistentVolumes().withName(name).edit(p -> {
                p.getMetadata().setFinalizers(List.of());
                return p;
            });
            await().atMost(WAIT).until(() -> hasFinalizer(name));
            client.persistentVolumes().withName(name).delete();
            await().atMost(WAIT).until(() -> get(name) == null);
        }
    }

    @Test
    void aBoundPVKeepsItsFinalizerUntilItIsNoLongerBound() throws Exception {
        try (var c = start()) {
            String bound = pv("pvp-bound");
            String available = pv("pvp-available");
            await().atMost(WAIT).until(() -> hasFinalizer(bound) && hasFinalizer(available));
            phase(bound, "Bound");
            phase(available, "Available");
            client.persistentVolumes().withName(bound).delete();
            client.persistentVolumes().withName(available).delete();
            await().atMost(WAIT).until(() -> get(available) == null);
            PersistentVolume kept = get(bound);
            assertThat(kept.getMetadata().getDeletionTimestamp()).isNotNull();
            assertThat(kept.getMetadata().getFinalizers()).contains(FINALIZER);

            phase(bound, "Released");
            await().atMost(WAIT).until(() -> get(bound) == null);
        }
    }
}
