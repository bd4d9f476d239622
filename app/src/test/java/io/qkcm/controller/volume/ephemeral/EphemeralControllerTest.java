package io.qkcm.controller.volume.ephemeral;

import static io.qkcm.testing.TestNamespaces.newNamespace;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import jakarta.inject.Inject;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.VolumeBuilder;
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
 * ephemeral-volume-controller against a real API server, after upstream's controller_test.go table:
 * create (the claim from the template, controlled by the pod; create_total counted), create-with-other-PVC,
 * wrong-PVC-owner (the FailedBinding event, the claim left alone), create-conflict (a refused create counted
 * in create_failures_total and retried), and a deleted claim made again.
 */
@QuarkusTest
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
@TestProfile(ManagerOffProfile.class)
class EphemeralControllerTest {

    private static final Duration WAIT = Duration.ofSeconds(30);

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

    private ControllerHarness<EphemeralController> start() throws InterruptedException {
        return ControllerHarness.create(vertx, EphemeralController.NAME, EphemeralVolumeControllerDescriptor::newController)
                .start();
    }

    /** A pod with the generic ephemeral volume {@code scratch} and a persistentVolumeClaim volume {@code other}. */
    static Pod pod(String ns, String name) {
        return client.pods().inNamespace(ns).resource(new PodBuilder().withNewMetadata().withName(name).endMetadata()
                .withNewSpec().addNewContainer().withName("c").withImage("registry.k8s.io/pause:3.10").endContainer()
                .addToVolumes(new VolumeBuilder().withName("scratch").withNewEphemeral().withNewVolumeClaimTemplate()
                        .withNewMetadata().withLabels(Map.of("app", "scratchy"))
                        .withAnnotations(Map.of("qkcm.test/note", "from-template")).endMetadata()
                        .withNewSpec().withAccessModes("ReadWriteOnce").withStorageClassName("fast").withNewResources()
                        .withRequests(Map.of("storage", new Quantity("2Gi"))).endResources().endSpec()
                        .endVolumeClaimTemplate().endEphemeral().build())
                .addToVolumes(new VolumeBuilder().withName("other").withNewPersistentVolumeClaim().withClaimName("other")
                        .endPersistentVolumeClaim().build())
                .endSpec().build()).create();
    }

    static PersistentVolumeClaim get(String ns, String name) {
        return client.persistentVolumeClaims().inNamespace(ns).withName(name).get();
    }

    static List<Event> events(String ns, String pod, String reason) {
        return client.v1().events().inNamespace(ns).list().getItems().stream()
                .filter(e -> pod.equals(e.getInvolvedObject().getName()) && reason.equals(e.getReason())).toList();
    }

    @Test
    void theClaimIsMadeFromTheTemplateAndControlledByThePod() throws Exception {
        String ns = newNamespace(client, "eph-create");
        try (var c = start()) {
            Pod pod = pod(ns, "web");
            await().atMost(WAIT).until(() -> get(ns, "web-scratch") != null);
            PersistentVolumeClaim pvc = get(ns, "web-scratch");
            assertThat(pvc.getMetadata().getOwnerReferences()).singleElement().satisfies(ref -> {
                assertThat(ref.getApiVersion()).isEqualTo("v1");
                assertThat(ref.getKind()).isEqualTo("Pod");
                assertThat(ref.getName()).isEqualTo("web");
                assertThat(ref.getUid()).isEqualTo(pod.getMetadata().getUid());
                assertThat(ref.getController()).isTrue();
                assertThat(ref.getBlockOwnerDeletion()).isTrue();
            });
            assertThat(pvc.getMetadata().getLabels()).containsExactlyEntriesOf(Map.of("app", "scratchy"));
            assertThat(pvc.getMetadata().getAnnotations()).containsEntry("qkcm.test/note", "from-template");
            assertThat(pvc.getSpec().getStorageClassName()).isEqualTo("fast");
            assertThat(pvc.getSpec().getResources().getRequests().get("storage")).isEqualTo(new Quantity("2Gi"));
            // the persistentVolumeClaim volume is not the controller's to make
            assertThat(get(ns, "other")).isNull();
            assertThat(c.controller.metrics().createAttempts()).isEqualTo(1);
            assertThat(c.controller.metrics().createFailures()).isZero();

            // a deleted claim is made again (a new object) for the pod still using it
            String firstUid = pvc.getMetadata().getUid();
            client.persistentVolumeClaims().inNamespace(ns).withName("web-scratch").delete();
            client.persistentVolumeClaims().inNamespace(ns).withName("web-scratch").edit(p -> {
                p.getMetadata().setFinalizers(List.of());
                return p;
            });
            await().atMost(WAIT).until(() -> {
                PersistentVolumeClaim again = get(ns, "web-scratch");
                return again != null && !again.getMetadata().getUid().equals(firstUid);
            });
            assertThat(c.controller.metrics().createAttempts()).isEqualTo(2);
        } finally {
            forceDelete(ns, "web");
        }
    }

    @Test
    void aClaimOfThatNameNotOwnedByThePodIsReportedAndLeftAlone() throws Exception {
        String ns = newNamespace(client, "eph-conflict");
        try (var c = start()) {
            PersistentVolumeClaim foreign = client.persistentVolumeClaims().inNamespace(ns).resource(
                    new PersistentVolumeClaimBuilder().withNewMetadata().withName("web-scratch").endMetadata().withNewSpec()
                            .withAccessModes("ReadWriteOnce").withNewResources()
                            .withRequests(Map.of("storage", new Quantity("1Gi"))).endResources().endSpec().build())
                    .create();
            pod(ns, "web");
            await().atMost(WAIT).until(() -> !events(ns, "web", "FailedBinding").isEmpty());
            Event event = events(ns, "web", "FailedBinding").get(0);
            assertThat(event.getType()).isEqualTo("Warning");
            assertThat(event.getMessage()).isEqualTo("ephemeral volume scratch: PVC " + ns
                    + "/web-scratch was not created for pod " + ns + "/web (pod is not owner)");
            assertThat(event.getSource().getComponent()).isEqualTo("ephemeral_volume");
            assertThat(event.getInvolvedObject().getKind()).isEqualTo("Pod");

            PersistentVolumeClaim after = get(ns, "web-scratch");
            assertThat(after.getMetadata().getUid()).isEqualTo(foreign.getMetadata().getUid());
            assertThat(after.getMetadata().getOwnerReferences()).isNullOrEmpty();
            assertThat(c.controller.metrics().createAttempts()).isZero();
        } finally {
            forceDelete(ns, "web");
        }
    }

    @Test
    void aRefusedCreateIsCountedAndReported() throws Exception {
        String ns = newNamespace(client, "eph-refused");
        pod(ns, "web");
        // no namespace controller runs: the namespace stays Terminating, and the API server refuses new
        // content in it; the controller sees the pod only then
        client.namespaces().withName(ns).delete();
        await().atMost(WAIT).until(() -> client.namespaces().withName(ns).get().getMetadata().getDeletionTimestamp() != null);
        try (var c = start()) {
            // (its FailedBinding event is refused too, in a terminating namespace)
            await().atMost(WAIT).until(() -> c.controller.metrics().createFailures() >= 2);
            assertThat(c.controller.metrics().createAttempts()).isEqualTo(c.controller.metrics().createFailures());
            assertThat(get(ns, "web-scratch")).isNull();
        } finally {
            forceDelete(ns, "web");
        }
    }

    /** Pods with ephemeral volumes are not left behind for the next test's controller (its metrics count them). */
    static void forceDelete(String ns, String pod) {
        client.pods().inNamespace(ns).withName(pod).withGracePeriod(0).delete();
        await().atMost(WAIT).until(() -> client.pods().inNamespace(ns).withName(pod).get() == null);
    }

    static OwnerReference controllerRef(PersistentVolumeClaim pvc) {
        return pvc.getMetadata().getOwnerReferences().stream().filter(r -> Boolean.TRUE.equals(r.getController()))
                .findFirst().orElse(null);
    }
}
