package io.qkcm.controller.volume.persistentvolume;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static io.qkcm.controller.volume.persistentvolume.VolumeObjects.*;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.ObjectReference;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.storage.StorageClassBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.qkcm.testing.ControllerHarness;
import io.qkcm.testing.ManagerOffProfile;
import io.qkcm.testing.RealApiServer;
import io.qkcm.testing.RealApiServerResource;
import io.qkcm.testing.Repository;
import io.qkcm.testing.TestNamespaces;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.vertx.core.Vertx;

/**
 * persistentvolume-binder-controller running against a real API server: static binding and release,
 * claims no volume can satisfy, two claims pre-bound to one volume, a stale claimRef UID,
 * WaitForFirstConsumer with the selected node set by the test (as the scheduler sets it), and the
 * hand-off to a real external provisioner (hack/provisioner, sig-storage-lib-external-provisioner),
 * which acts only on the claims the binder annotated for it and whose PVs the binder then binds.
 * The resync period is 1 s, so a test that needs a resync does not wait 15 s.
 */
@QuarkusTest
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
@TestProfile(ManagerOffProfile.class)
class PersistentVolumeControllerTest {

    private static final Duration WAIT = Duration.ofSeconds(30);

    @Inject
    Vertx vertx;

    static KubernetesClient client;

    @BeforeAll
    static void setUp() {
        client = VolumeObjects.client();
    }


    private ControllerHarness<PersistentVolumeController> start() throws InterruptedException {
        return ControllerHarness.create(vertx, PersistentVolumeController.NAME, "persistent-volume-binder",
                Map.of("qkcm.pvclaimbinder-sync-period", "1s"), PersistentVolumeBinderControllerDescriptor::newController,
                c -> List.of(c.claimReconciler())).start();
    }

    static PersistentVolume createVolume(String name, String size, String cls, ObjectReference claimRef,
            Map<String, String> annotations, String policy) {
        return client.persistentVolumes().resource(new PersistentVolumeBuilder().withNewMetadata().withName(name)
                .withAnnotations(annotations).endMetadata().withNewSpec()
                .withCapacity(Map.of("storage", new Quantity(size))).withAccessModes("ReadWriteOnce")
                .withPersistentVolumeReclaimPolicy(policy).withStorageClassName(cls).withClaimRef(claimRef)
                .withNewHostPath().withPath("/tmp/" + name).endHostPath().endSpec().build()).create();
    }

    static PersistentVolumeClaim createClaim(String ns, String name, String size, String cls, String volumeName,
            Map<String, String> annotations) {
        return client.persistentVolumeClaims().inNamespace(ns).resource(new PersistentVolumeClaimBuilder().withNewMetadata()
                .withName(name).withAnnotations(annotations).endMetadata().withNewSpec().withAccessModes("ReadWriteOnce")
                .withNewResources().addToRequests("storage", new Quantity(size)).endResources().withStorageClassName(cls)
                .withVolumeName(volumeName).endSpec().build()).create();
    }

    @Test
    void anAvailableVolumeIsBoundToAMatchingClaimAndReleasedWhenTheClaimIsDeleted() throws Exception {
        String s = suffix();
        String ns = TestNamespaces.newNamespace(client, "pvb-static");
        String small = "pvb-small-" + s;
        String large = "pvb-large-" + s;
        // a class of this test's own (no StorageClass object is needed for static binding): volumes other
        // tests leave in the shared API server can never be a better match than this test's
        String cls = "pvb-static-" + s;
        try (var c = start()) {
            createVolume(large, "10Gi", cls, null, null, "Retain");
            createVolume(small, "2Gi", cls, null, null, "Retain");
            await().atMost(WAIT).until(() -> "Available".equals(phase(volume(small))) && "Available".equals(phase(volume(large))));

            createClaim(ns, "data", "1Gi", cls, null, null);
            await().atMost(WAIT).until(() -> "Bound".equals(phase(claim(ns, "data"))));
            PersistentVolumeClaim bound = claim(ns, "data");
            // the smallest volume that satisfies the claim
            assertThat(bound.getSpec().getVolumeName()).isEqualTo(small);
            assertThat(bound.getMetadata().getAnnotations()).containsEntry("pv.kubernetes.io/bind-completed", "yes")
                    .containsEntry("pv.kubernetes.io/bound-by-controller", "yes");
            assertThat(bound.getStatus().getCapacity().get("storage")).isEqualTo(new Quantity("2Gi"));
            assertThat(bound.getStatus().getAccessModes()).containsExactly("ReadWriteOnce");
            await().atMost(WAIT).until(() -> "Bound".equals(phase(volume(small))));
            PersistentVolume pv = volume(small);
            assertThat(pv.getSpec().getClaimRef().getName()).isEqualTo("data");
            assertThat(pv.getSpec().getClaimRef().getUid()).isEqualTo(bound.getMetadata().getUid());
            assertThat(pv.getMetadata().getAnnotations()).containsEntry("pv.kubernetes.io/bound-by-controller", "yes");
            assertThat(phase(volume(large))).isEqualTo("Available");

            deleteClaim(ns, "data");
            // Retain: the volume keeps its claimRef and is Released, never bound again by itself
            await().atMost(WAIT).until(() -> "Released".equals(phase(volume(small))));
            assertThat(volume(small).getSpec().getClaimRef().getUid()).isEqualTo(bound.getMetadata().getUid());
        } finally {
            deleteVolume(small);
            deleteVolume(large);
        }
    }

    @Test
    void aClaimNoVolumeSatisfiesGetsFailedBindingAtEachResyncWithoutWrites() throws Exception {
        String ns = TestNamespaces.newNamespace(client, "pvb-none");
        try (var c = start()) {
            createClaim(ns, "huge", "100Ti", "", null, null);
            await().atMost(WAIT).until(() -> !events(ns, "huge", "FailedBinding").isEmpty());
            Event e = events(ns, "huge", "FailedBinding").get(0);
            assertThat(e.getType()).isEqualTo("Normal");
            assertThat(e.getMessage()).isEqualTo("no persistent volumes available for this claim and no storage class is set");
            assertThat(e.getSource().getComponent()).isEqualTo("persistentvolume-controller");
            String resourceVersion = claim(ns, "huge").getMetadata().getResourceVersion();
            // the resync (1 s here) looks at the claim again: the event repeats, the claim is not written
            await().atMost(WAIT).until(() -> events(ns, "huge", "FailedBinding").stream()
                    .mapToInt(ev -> ev.getCount() == null ? 1 : ev.getCount()).sum() >= 3);
            assertThat(claim(ns, "huge").getMetadata().getResourceVersion()).isEqualTo(resourceVersion);
            assertThat(phase(claim(ns, "huge"))).isEqualTo("Pending");
        }
    }

    @Test
    void twoClaimsPreBoundToOneVolumeBindOnlyOne() throws Exception {
        String s = suffix();
        String ns = TestNamespaces.newNamespace(client, "pvb-two");
        String pv = "pvb-shared-" + s;
        // a class of its own: an unbound classless claim another test left behind would match the free volume
        // as well as "first" does, and whichever claim syncs first gets it (as upstream's binder would)
        String cls = "pvb-two-" + s;
        try (var c = start()) {
            createVolume(pv, "1Gi", cls, null, null, "Retain");
            createClaim(ns, "first", "1Gi", cls, pv, null);
            await().atMost(WAIT).until(() -> "Bound".equals(phase(claim(ns, "first"))));
            createClaim(ns, "second", "1Gi", cls, pv, null);
            await().atMost(WAIT).until(() -> !events(ns, "second", "FailedBinding").isEmpty());
            Event e = events(ns, "second", "FailedBinding").get(0);
            assertThat(e.getType()).isEqualTo("Warning");
            assertThat(e.getMessage()).isEqualTo("volume \"" + pv + "\" already bound to a different claim.");
            assertThat(phase(claim(ns, "second"))).isEqualTo("Pending");
            assertThat(claim(ns, "second").getMetadata().getAnnotations()).doesNotContainKey("pv.kubernetes.io/bind-completed");
            assertThat(volume(pv).getSpec().getClaimRef().getName()).isEqualTo("first");
            assertThat(phase(claim(ns, "first"))).isEqualTo("Bound");
        } finally {
            deleteVolume(pv);
        }
    }

    @Test
    void aVolumeWhoseClaimRefUIDIsStaleIsReleasedAndItsBoundClaimIsMisbound() throws Exception {
        String s = suffix();
        String ns = TestNamespaces.newNamespace(client, "pvb-stale");
        String pv = "pvb-stale-" + s;
        try (var c = start()) {
            ObjectReference stale = new ObjectReference();
            stale.setKind("PersistentVolumeClaim");
            stale.setApiVersion("v1");
            stale.setNamespace(ns);
            stale.setName("reused");
            stale.setUid(UUID.randomUUID().toString());
            createVolume(pv, "1Gi", "", stale, Map.of("pv.kubernetes.io/bound-by-controller", "yes"), "Retain");
            // a claim of the same name, created after the one the volume was bound to, thinks it is bound
            createClaim(ns, "reused", "1Gi", "", pv, Map.of("pv.kubernetes.io/bind-completed", "yes"));
            await().atMost(WAIT).until(() -> "Released".equals(phase(volume(pv))));
            await().atMost(WAIT).until(() -> "Lost".equals(phase(claim(ns, "reused"))));
            await().atMost(WAIT).until(() -> !events(ns, "reused", "ClaimMisbound").isEmpty());
            assertThat(events(ns, "reused", "ClaimMisbound").get(0).getMessage())
                    .isEqualTo("Two claims are bound to the same volume, this one is bound incorrectly");
            // the volume keeps the old claim's UID: nothing rebinds it to the new claim
            assertThat(volume(pv).getSpec().getClaimRef().getUid()).isEqualTo(stale.getUid());
        } finally {
            deleteVolume(pv);
        }
    }

    @Test
    void waitForFirstConsumerWaitsForTheSelectedNodeThenHandsTheClaimToItsProvisioner() throws Exception {
        String s = suffix();
        String ns = TestNamespaces.newNamespace(client, "pvb-wffc");
        String cls = "pvb-wffc-" + s;
        String provisioner = "example.com/wffc-" + s;
        String pv = "pvc-manual-" + s;
        client.storage().v1().storageClasses().resource(new StorageClassBuilder().withNewMetadata().withName(cls)
                .endMetadata().withProvisioner(provisioner).withVolumeBindingMode("WaitForFirstConsumer").build()).create();
        try (var c = start()) {
            createClaim(ns, "late", "1Gi", cls, null, null);
            await().atMost(WAIT).until(() -> !events(ns, "late", "WaitForFirstConsumer").isEmpty());
            assertThat(events(ns, "late", "WaitForFirstConsumer").get(0).getMessage())
                    .isEqualTo("waiting for first consumer to be created before binding");
            assertThat(phase(claim(ns, "late"))).isEqualTo("Pending");

            // a consumer not scheduled yet
            client.pods().inNamespace(ns).resource(new PodBuilder().withNewMetadata().withName("consumer").endMetadata()
                    .withNewSpec().addNewContainer().withName("c").withImage("busybox").endContainer().addNewVolume()
                    .withName("data").withNewPersistentVolumeClaim().withClaimName("late").endPersistentVolumeClaim()
                    .endVolume().endSpec().build()).create();
            await().atMost(WAIT).until(() -> !events(ns, "late", "WaitForPodScheduled").isEmpty());
            assertThat(events(ns, "late", "WaitForPodScheduled").get(0).getMessage())
                    .isEqualTo("waiting for pod consumer to be scheduled");
            assertThat(StorageHelpers.annotations(claim(ns, "late")))
                    .doesNotContainKey(StorageHelpers.ANN_STORAGE_PROVISIONER);

            // the scheduler picks a node
            client.persistentVolumeClaims().inNamespace(ns).withName("late").edit(p -> {
                p.getMetadata().getAnnotations().put(StorageHelpers.ANN_SELECTED_NODE, "node-a");
                return p;
            });
            await().atMost(WAIT).until(() -> provisioner.equals(
                    StorageHelpers.annotations(claim(ns, "late")).get(StorageHelpers.ANN_STORAGE_PROVISIONER)));
            assertThat(StorageHelpers.annotations(claim(ns, "late")))
                    .containsEntry(StorageHelpers.ANN_BETA_STORAGE_PROVISIONER, provisioner);
            await().atMost(WAIT).until(() -> !events(ns, "late", "ExternalProvisioning").isEmpty());
            Event handOff = events(ns, "late", "ExternalProvisioning").get(0);
            assertThat(handOff.getType()).isEqualTo("Normal");
            assertThat(handOff.getMessage()).isEqualTo("Waiting for a volume to be created either by the external provisioner '"
                    + provisioner + "' or manually by the system administrator. If volume creation is delayed, please verify"
                    + " that the provisioner is running and correctly registered.");

            // the provisioner's volume, pre-bound to the claim by UID
            PersistentVolumeClaim late = claim(ns, "late");
            ObjectReference ref = StorageHelpers.claimReference(late);
            createVolume(pv, "1Gi", cls, ref, Map.of(StorageHelpers.ANN_DYNAMICALLY_PROVISIONED, provisioner), "Delete");
            await().atMost(WAIT).until(() -> "Bound".equals(phase(claim(ns, "late"))));
            assertThat(claim(ns, "late").getSpec().getVolumeName()).isEqualTo(pv);
            await().atMost(WAIT).until(() -> "Bound".equals(phase(volume(pv))));
        } finally {
            deleteVolume(pv);
            client.storage().v1().storageClasses().withName(cls).delete();
        }
    }

    @Test
    void aClaimWithoutAClassGetsTheDefaultClassRetroactivelyAndIsHandedToItsProvisioner() throws Exception {
        String s = suffix();
        String ns = TestNamespaces.newNamespace(client, "pvb-default");
        String cls = "pvb-default-" + s;
        String provisioner = "example.com/default-" + s;
        try (var c = start()) {
            // created while no class is the default: the API server's admission leaves its class unset
            client.persistentVolumeClaims().inNamespace(ns).resource(new PersistentVolumeClaimBuilder().withNewMetadata()
                    .withName("classless").endMetadata().withNewSpec().withAccessModes("ReadWriteOnce").withNewResources()
                    .addToRequests("storage", new Quantity("1Gi")).endResources().endSpec().build()).create();
            await().atMost(WAIT).until(() -> !events(ns, "classless", "FailedBinding").isEmpty());
            assertThat(claim(ns, "classless").getSpec().getStorageClassName()).isNull();

            client.storage().v1().storageClasses().resource(new StorageClassBuilder().withNewMetadata().withName(cls)
                    .withAnnotations(Map.of("storageclass.kubernetes.io/is-default-class", "true")).endMetadata()
                    .withProvisioner(provisioner).withVolumeBindingMode("Immediate").build()).create();
            // the next resync assigns the default class, and the claim goes to the class's provisioner
            await().atMost(WAIT).until(() -> cls.equals(claim(ns, "classless").getSpec().getStorageClassName()));
            await().atMost(WAIT).until(() -> provisioner.equals(
                    StorageHelpers.annotations(claim(ns, "classless")).get(StorageHelpers.ANN_STORAGE_PROVISIONER)));
        } finally {
            // no other test may see a default class
            client.storage().v1().storageClasses().withName(cls).delete();
        }
    }

    /** hack/install-provisioner.sh's binary, when it has been built. */
    static Path provisionerBinary() throws Exception {
        Process p = new ProcessBuilder("bash", Repository.ROOT.resolve("hack/install-provisioner.sh").toString(),
                "--print-path").redirectErrorStream(true).start();
        String path = new String(p.getInputStream().readAllBytes()).trim();
        p.waitFor();
        return Path.of(path);
    }

    @Test
    void aRealExternalProvisionerProvisionsTheClaimsHandedToItAndTheBinderBindsItsVolumes() throws Exception {
        Path binary = provisionerBinary();
        Assumptions.assumeTrue(Files.isExecutable(binary), "hack/install-provisioner.sh has not been run: " + binary);
        String s = suffix();
        String ns = TestNamespaces.newNamespace(client, "pvb-ext");
        String provisionerName = "qkcm.io/hostpath-" + s;
        String immediate = "pvb-ext-" + s;
        String wffc = "pvb-ext-wffc-" + s;
        Path baseDir = Files.createTempDirectory("qkcm-hostpath-");
        client.storage().v1().storageClasses().resource(new StorageClassBuilder().withNewMetadata().withName(immediate)
                .endMetadata().withProvisioner(provisionerName).withReclaimPolicy("Delete")
                .withVolumeBindingMode("Immediate").build()).create();
        client.storage().v1().storageClasses().resource(new StorageClassBuilder().withNewMetadata().withName(wffc)
                .endMetadata().withProvisioner(provisionerName).withReclaimPolicy("Retain")
                .withVolumeBindingMode("WaitForFirstConsumer").build()).create();
        Process provisioner = new ProcessBuilder(binary.toString(), "--kubeconfig",
                RealApiServer.get().kubeconfig().toString(), "--provisioner-name", provisionerName, "--base-dir",
                baseDir.toString()).redirectErrorStream(true)
                .redirectOutput(Files.createTempFile("qkcm-provisioner-", ".log").toFile()).start();
        String immediatePV = null;
        String wffcPV = null;
        try (var c = start()) {
            createClaim(ns, "now", "1Gi", immediate, null, null);
            await().atMost(WAIT).until(() -> "Bound".equals(phase(claim(ns, "now"))));
            PersistentVolumeClaim now = claim(ns, "now");
            immediatePV = now.getSpec().getVolumeName();
            assertThat(immediatePV).isEqualTo("pvc-" + now.getMetadata().getUid());
            assertThat(now.getMetadata().getAnnotations()).containsEntry(StorageHelpers.ANN_STORAGE_PROVISIONER, provisionerName)
                    .containsEntry(StorageHelpers.ANN_BETA_STORAGE_PROVISIONER, provisionerName)
                    .containsEntry(StorageHelpers.ANN_BIND_COMPLETED, "yes");
            // the recorder writes events asynchronously: the claim can be Bound before its event is stored
            await().atMost(WAIT).until(() -> !events(ns, "now", "ExternalProvisioning").isEmpty());
            String boundPV = immediatePV;
            await().atMost(WAIT).until(() -> "Bound".equals(phase(volume(boundPV))));
            assertThat(volume(boundPV).getMetadata().getAnnotations())
                    .containsEntry(StorageHelpers.ANN_DYNAMICALLY_PROVISIONED, provisionerName);
            assertThat(baseDir.resolve(boundPV)).isDirectory();

            // WaitForFirstConsumer: nothing is provisioned until the scheduler's annotation
            createClaim(ns, "later", "1Gi", wffc, null, null);
            await().atMost(WAIT).until(() -> !events(ns, "later", "WaitForFirstConsumer").isEmpty());
            assertThat(StorageHelpers.annotations(claim(ns, "later"))).doesNotContainKey(StorageHelpers.ANN_STORAGE_PROVISIONER);
            client.persistentVolumeClaims().inNamespace(ns).withName("later").edit(p -> {
                p.getMetadata().getAnnotations().put(StorageHelpers.ANN_SELECTED_NODE, "node-b");
                return p;
            });
            await().atMost(WAIT).until(() -> "Bound".equals(phase(claim(ns, "later"))));
            wffcPV = claim(ns, "later").getSpec().getVolumeName();
            assertThat(wffcPV).isEqualTo("pvc-" + claim(ns, "later").getMetadata().getUid());

            // Delete: the binder releases the volume and leaves its deletion to the provisioner
            deleteClaim(ns, "now");
            await().atMost(WAIT).until(() -> "Released".equals(phase(volume(boundPV))));
            // deleted by the provisioner (its pv-protection finalizer, which no controller here removes, keeps it)
            await().atMost(WAIT).until(() -> volume(boundPV) == null
                    || volume(boundPV).getMetadata().getDeletionTimestamp() != null);
            assertThat(baseDir.resolve(boundPV)).doesNotExist();
            assertThat(client.v1().events().inNamespace("default").list().getItems().stream()
                    .filter(e -> boundPV.equals(e.getInvolvedObject().getName()))
                    .map(Event::getReason)).doesNotContain("VolumeFailedDelete");
        } finally {
            provisioner.destroy();
            provisioner.waitFor();
            if (immediatePV != null) {
                deleteVolume(immediatePV);
            }
            if (wffcPV != null) {
                deleteVolume(wffcPV);
            }
            client.storage().v1().storageClasses().withName(immediate).delete();
            client.storage().v1().storageClasses().withName(wffc).delete();
        }
    }
}
