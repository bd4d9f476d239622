package io.qkcm.controller.volume.pvcprotection;

import static io.qkcm.testing.TestNamespaces.newNamespace;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import jakarta.inject.Inject;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.VolumeBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.qkcm.testing.ControllerHarness;
import io.qkcm.testing.LosingPodControl;
import io.qkcm.testing.ManagerOffProfile;
import io.qkcm.testing.RealApiServer;
import io.qkcm.testing.RealApiServerResource;
import io.qkcm.testing.StallingProxy;
import io.qkcm.testing.TestKubelet;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.vertx.core.Vertx;

/**
 * persistentvolumeclaim-protection-controller against a real API server, after upstream's
 * pvc_protection_controller_test.go table: the finalizer is added to a PVC without it; a deleted PVC
 * keeps it while a scheduled pod uses it (a finished pod that is not deleted included, and a pod the
 * informer has not seen yet, found by the live list) and loses it once the pod goes, is unscheduled,
 * or — for a generic ephemeral volume's claim — is shut down or does not own the claim.
 *
 * <p>"Not removed" is asserted after a positive signal: an unused PVC of the same namespace, deleted
 * after the one in use, is gone. The namespace worker takes a namespace's PVCs in the order they were
 * queued, so by then the PVC in use has been decided on.
 */
@QuarkusTest
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
@TestProfile(ManagerOffProfile.class)
class PVCProtectionControllerTest {

    private static final Duration WAIT = Duration.ofSeconds(30);
    private static final String FINALIZER = PVCProtectionController.PVC_PROTECTION_FINALIZER;

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

    private ControllerHarness<PVCProtectionController> start() throws InterruptedException {
        return ControllerHarness.create(vertx, PVCProtectionController.NAME,
                PersistentVolumeClaimProtectionControllerDescriptor::newController).start();
    }

    static PersistentVolumeClaim pvc(String ns, String name) {
        PersistentVolumeClaim created = client.persistentVolumeClaims().inNamespace(ns).resource(new PersistentVolumeClaimBuilder()
                .withNewMetadata().withName(name).endMetadata().withNewSpec().withAccessModes("ReadWriteOnce")
                .withNewResources().withRequests(Map.of("storage", new Quantity("1Gi"))).endResources().endSpec().build())
                .create();
        return created;
    }

    static PersistentVolumeClaim get(String ns, String name) {
        return client.persistentVolumeClaims().inNamespace(ns).withName(name).get();
    }

    /** A pod using claim {@code claim}; scheduled to a node when {@code node} is not null. */
    static Pod podWithPVC(String ns, String name, String claim, String node) {
        return client.pods().inNamespace(ns).resource(new PodBuilder().withNewMetadata().withName(name).endMetadata()
                .withNewSpec().withNodeName(node).addNewContainer().withName("c").withImage("registry.k8s.io/pause:3.10")
                .endContainer().addNewVolume().withName("data").withNewPersistentVolumeClaim().withClaimName(claim)
                .endPersistentVolumeClaim().endVolume().endSpec().build()).create();
    }

    static void delete(String ns, String pvc) {
        client.persistentVolumeClaims().inNamespace(ns).withName(pvc).delete();
    }

    static void forceDelete(Pod pod) {
        client.pods().inNamespace(pod.getMetadata().getNamespace()).withName(pod.getMetadata().getName())
                .withGracePeriod(0).delete();
    }

    /** The positive signal: an unused PVC deleted after the ones under test is gone. */
    static void deleteAnUnusedPVCAndSeeItGo(String ns) {
        pvc(ns, "unused");
        await().atMost(WAIT).until(() -> get(ns, "unused").getMetadata().getFinalizers().contains(FINALIZER));
        delete(ns, "unused");
        await().atMost(WAIT).until(() -> get(ns, "unused") == null);
    }

    static void assertKept(String ns, String name) {
        PersistentVolumeClaim kept = get(ns, name);
        assertThat(kept).as(name).isNotNull();
        assertThat(kept.getMetadata().getDeletionTimestamp()).isNotNull();
        assertThat(kept.getMetadata().getFinalizers()).contains(FINALIZER);
    }

    @Test
    void aPVCWithoutTheFinalizerGetsIt() throws Exception {
        String ns = newNamespace(client, "pvcp-add");
        try (var c = start()) {
            pvc(ns, "claim");
            await().atMost(WAIT).until(() -> get(ns, "claim").getMetadata().getFinalizers().contains(FINALIZER));
            // taken away (the admission plugin adds it only on create): the controller puts it back
            client.persistentVolumeClaims().inNamespace(ns).withName("claim").edit(p -> {
                p.getMetadata().setFinalizers(List.of());
                return p;
            });
            await().atMost(WAIT).until(() -> get(ns, "claim").getMetadata().getFinalizers().contains(FINALIZER));
        }
    }

    @Test
    void aDeletedPVCInUseByAScheduledPodIsKeptUntilThePodGoes() throws Exception {
        String ns = newNamespace(client, "pvcp-use");
        try (var c = start()) {
            pvc(ns, "data");
            pvc(ns, "unrelated");
            Pod pod = podWithPVC(ns, "user", "data", "test-node");
            await().atMost(WAIT).until(() -> get(ns, "data").getMetadata().getFinalizers().contains(FINALIZER));
            delete(ns, "data");
            deleteAnUnusedPVCAndSeeItGo(ns);
            assertKept(ns, "data");
            // a deleted PVC no pod names is freed, though another pod (with another PVC) runs
            delete(ns, "unrelated");
            await().atMost(WAIT).until(() -> get(ns, "unrelated") == null);
            assertKept(ns, "data");

            forceDelete(pod);
            await().atMost(WAIT).until(() -> get(ns, "data") == null);
        }
    }

    @Test
    void aFinishedPodThatIsNotDeletedStillKeepsThePVC() throws Exception {
        String ns = newNamespace(client, "pvcp-done");
        try (var c = start()) {
            pvc(ns, "data");
            Pod pod = podWithPVC(ns, "user", "data", null);
            new TestKubelet(client).succeeded(pod);
            await().atMost(WAIT).until(() -> get(ns, "data").getMetadata().getFinalizers().contains(FINALIZER));
            delete(ns, "data");
            deleteAnUnusedPVCAndSeeItGo(ns);
            assertKept(ns, "data");
            forceDelete(pod);
            await().atMost(WAIT).until(() -> get(ns, "data") == null);
        }
    }

    @Test
    void anUnscheduledPodDoesNotKeepThePVC() throws Exception {
        String ns = newNamespace(client, "pvcp-unsched");
        try (var c = start()) {
            pvc(ns, "data");
            Pod pod = podWithPVC(ns, "pending", "data", null);
            await().atMost(WAIT).until(() -> get(ns, "data").getMetadata().getFinalizers().contains(FINALIZER));
            delete(ns, "data");
            await().atMost(WAIT).until(() -> get(ns, "data") == null);
            assertThat(client.pods().inNamespace(ns).withName(pod.getMetadata().getName()).get()).isNotNull();
        }
    }

    /** A pod with a generic ephemeral volume {@code scratch}, scheduled, with a finalizer of the test's. */
    static Pod podWithEphemeralVolume(String ns, String name) {
        return client.pods().inNamespace(ns).resource(new PodBuilder().withNewMetadata().withName(name)
                .withFinalizers("qkcm.test/hold").endMetadata().withNewSpec().withNodeName("test-node").addNewContainer()
                .withName("c").withImage("registry.k8s.io/pause:3.10").endContainer()
                .addToVolumes(new VolumeBuilder().withName("scratch").withNewEphemeral().withNewVolumeClaimTemplate()
                        .withNewSpec().withAccessModes("ReadWriteOnce").withNewResources()
                        .withRequests(Map.of("storage", new Quantity("1Gi"))).endResources().endSpec()
                        .endVolumeClaimTemplate().endEphemeral().build())
                .endSpec().build()).create();
    }

    static PersistentVolumeClaim ephemeralClaim(String ns, Pod owner, String name) {
        PersistentVolumeClaimBuilder b = new PersistentVolumeClaimBuilder().withNewMetadata().withName(name).endMetadata()
                .withNewSpec().withAccessModes("ReadWriteOnce").withNewResources()
                .withRequests(Map.of("storage", new Quantity("1Gi"))).endResources().endSpec();
        if (owner != null) {
            b.editMetadata().withOwnerReferences(new OwnerReferenceBuilder().withApiVersion("v1").withKind("Pod")
                    .withName(owner.getMetadata().getName()).withUid(owner.getMetadata().getUid()).withController(true)
                    .withBlockOwnerDeletion(true).build()).endMetadata();
        }
        return client.persistentVolumeClaims().inNamespace(ns).resource(b.build()).create();
    }

    static void release(Pod pod) {
        client.pods().inNamespace(pod.getMetadata().getNamespace()).withName(pod.getMetadata().getName()).edit(p -> {
            p.getMetadata().setFinalizers(List.of());
            return p;
        });
    }

    @Test
    void anEphemeralVolumesClaimIsKeptWhileItsPodOwnsItAndIsNotShutDown() throws Exception {
        String ns = newNamespace(client, "pvcp-eph");
        try (var c = start()) {
            Pod owner = podWithEphemeralVolume(ns, "owner");
            Pod stranger = podWithEphemeralVolume(ns, "stranger");
            ephemeralClaim(ns, owner, "owner-scratch");
            // named as stranger's claim, but not made for it: not in use
            ephemeralClaim(ns, null, "stranger-scratch");
            await().atMost(WAIT).until(() -> get(ns, "owner-scratch").getMetadata().getFinalizers().contains(FINALIZER)
                    && get(ns, "stranger-scratch").getMetadata().getFinalizers().contains(FINALIZER));
            delete(ns, "owner-scratch");
            delete(ns, "stranger-scratch");
            await().atMost(WAIT).until(() -> get(ns, "stranger-scratch") == null);
            deleteAnUnusedPVCAndSeeItGo(ns);
            assertKept(ns, "owner-scratch");

            // deleted with grace period 0 (the kubelet is done with it), held by a finalizer: shut down
            client.pods().inNamespace(ns).withName("owner").withGracePeriod(0).delete();
            await().atMost(WAIT).until(() -> get(ns, "owner-scratch") == null);
            assertThat(client.pods().inNamespace(ns).withName("owner").get().getMetadata().getDeletionGracePeriodSeconds())
                    .isZero();
            release(owner);
            release(stranger);
            // no pod with an ephemeral volume is left for other tests' controllers
            forceDelete(stranger);
        }
    }

    /**
     * Upstream's "pod with the PVC exists but is not in the Informer's cache yet": the cache is held
     * back (its watches stalled) after it saw the PVC's deletion, so only the live list finds the pod.
     */
    @Test
    void aPodTheCacheHasNotSeenIsFoundByTheLiveList() throws Exception {
        String ns = newNamespace(client, "pvcp-live");
        URI apiServer = URI.create(client.getConfiguration().getMasterUrl());
        try (StallingProxy proxy = new StallingProxy(apiServer)) {
            Path via = LosingPodControl.kubeconfigVia(proxy, client, "pvcp-live");
            // informers only: processPVC is driven by hand
            try (var c = ControllerHarness.withInformersVia(vertx, PVCProtectionController.NAME, via,
                    PersistentVolumeClaimProtectionControllerDescriptor::newController).startInformers()) {
                var pvcCache = c.informers.informerFor(PersistentVolumeClaim.class).getStore();
                var podCache = c.informers.informerFor(Pod.class).getStore();
                pvc(ns, "data");
                delete(ns, "data");
                await().atMost(WAIT).until(() -> {
                    PersistentVolumeClaim cached = pvcCache.getByKey(ns + "/data");
                    return cached != null && cached.getMetadata().getDeletionTimestamp() != null;
                });
                proxy.stall();
                Pod pod = podWithPVC(ns, "user", "data", "test-node");
                assertThat(podCache.getByKey(ns + "/user")).isNull();

                c.controller.processPVC(ns, "data", new PVCProtectionController.LazyLivePodList());
                assertKept(ns, "data");

                forceDelete(pod);
                c.controller.processPVC(ns, "data", new PVCProtectionController.LazyLivePodList());
                assertThat(get(ns, "data")).isNull();
                proxy.resume();
            }
        }
    }
}
