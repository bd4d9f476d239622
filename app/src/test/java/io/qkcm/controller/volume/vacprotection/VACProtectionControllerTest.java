package io.qkcm.controller.volume.vacprotection;

import static io.qkcm.testing.TestNamespaces.newNamespace;
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

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
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
 * volumeattributesclass-protection-controller against a real API server (storage.k8s.io/v1), after
 * upstream's vac_protection_controller_test.go: the finalizer is added; a deleted class named by a PV
 * or a PVC keeps it until neither names it. "Kept" is asserted after a class deleted later (the one
 * worker takes them in order) is gone.
 */
@QuarkusTest
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
@TestProfile(ManagerOffProfile.class)
class VACProtectionControllerTest {

    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final String FINALIZER = VACProtectionController.VAC_PROTECTION_FINALIZER;

    @Inject
    Vertx vertx;

    static KubernetesClient client;

    @BeforeAll
    static void setUp() {
        client = RealApiServer.get().newClient();
        client.getKubernetesSerialization().registerKubernetesResource(VolumeAttributesClass.class);
    }

    @AfterAll
    static void tearDown() {
        client.close();
    }

    static String vac(String prefix) {
        String name = prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
        VolumeAttributesClass vac = new VolumeAttributesClass();
        vac.setMetadata(new ObjectMetaBuilder().withName(name).build());
        vac.setDriverName("csi.example.com");
        vac.setParameters(Map.of("iops", "3000"));
        client.resources(VolumeAttributesClass.class).resource(vac).create();
        return name;
    }

    static VolumeAttributesClass get(String name) {
        return client.resources(VolumeAttributesClass.class).withName(name).get();
    }

    static boolean hasFinalizer(String name) {
        VolumeAttributesClass vac = get(name);
        return vac != null && vac.getMetadata().getFinalizers() != null && vac.getMetadata().getFinalizers().contains(FINALIZER);
    }

    static void deleteAnUnusedClassAndSeeItGo() {
        String unused = vac("vacp-unused");
        await().atMost(WAIT).until(() -> hasFinalizer(unused));
        client.resources(VolumeAttributesClass.class).withName(unused).delete();
        await().atMost(WAIT).until(() -> get(unused) == null);
    }

    static void assertKept(String name) {
        VolumeAttributesClass kept = get(name);
        assertThat(kept.getMetadata().getDeletionTimestamp()).isNotNull();
        assertThat(kept.getMetadata().getFinalizers()).contains(FINALIZER);
    }

    @Test
    void aDeletedClassIsKeptWhileAPVOrAPVCNamesIt() throws Exception {
        String ns = newNamespace(client, "vacp");
        try (var c = ControllerHarness.create(vertx, VACProtectionController.NAME,
                VolumeAttributesClassProtectionControllerDescriptor::newController).start()) {
            String name = vac("vacp-gold");
            await().atMost(WAIT).until(() -> hasFinalizer(name));
            // taken away: put back
            client.resources(VolumeAttributesClass.class).withName(name).edit(v -> {
                v.getMetadata().setFinalizers(List.of());
                return v;
            });
            await().atMost(WAIT).until(() -> hasFinalizer(name));

            String pv = "vacp-pv-" + UUID.randomUUID().toString().substring(0, 8);
            client.persistentVolumes().resource(new PersistentVolumeBuilder().withNewMetadata().withName(pv).endMetadata()
                    .withNewSpec().withCapacity(Map.of("storage", new Quantity("1Gi"))).withAccessModes("ReadWriteOnce")
                    .withVolumeAttributesClassName(name).withNewCsi().withDriver("csi.example.com").withVolumeHandle(pv)
                    .endCsi().endSpec().build()).create();
            client.persistentVolumeClaims().inNamespace(ns).resource(new PersistentVolumeClaimBuilder().withNewMetadata()
                    .withName("claim").endMetadata().withNewSpec().withAccessModes("ReadWriteOnce")
                    .withVolumeAttributesClassName(name).withNewResources()
                    .withRequests(Map.of("storage", new Quantity("1Gi"))).endResources().endSpec().build()).create();

            client.resources(VolumeAttributesClass.class).withName(name).delete();
            deleteAnUnusedClassAndSeeItGo();
            assertKept(name);

            // the PV goes (its own protection finalizer taken away, no PV protection runs): the PVC still names it
            client.persistentVolumes().withName(pv).delete();
            client.persistentVolumes().withName(pv).edit(p -> {
                p.getMetadata().setFinalizers(List.of());
                return p;
            });
            await().atMost(WAIT).until(() -> client.persistentVolumes().withName(pv).get() == null);
            deleteAnUnusedClassAndSeeItGo();
            assertKept(name);

            client.persistentVolumeClaims().inNamespace(ns).withName("claim").delete();
            client.persistentVolumeClaims().inNamespace(ns).withName("claim").edit(p -> {
                p.getMetadata().setFinalizers(List.of());
                return p;
            });
            await().atMost(WAIT).until(() -> get(name) == null);
        }
    }
}
