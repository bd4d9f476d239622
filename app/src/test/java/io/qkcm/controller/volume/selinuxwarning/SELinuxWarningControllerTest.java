package io.qkcm.controller.volume.selinuxwarning;

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

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.storage.CSIDriver;
import io.fabric8.kubernetes.api.model.storage.CSIDriverBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.micrometer.core.instrument.Gauge;
import io.qkcm.testing.ControllerHarness;
import io.qkcm.testing.ManagerOffProfile;
import io.qkcm.testing.RealApiServer;
import io.qkcm.testing.RealApiServerResource;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.vertx.core.Vertx;

/**
 * selinux-warning-controller against a real API server, after upstream's selinux_warning_controller_test.go:
 * two pods using one CSI volume (seLinuxMount on) with different SELinux levels get SELinuxLabelConflict events
 * naming each other (not across namespaces); Recursive against MountOption is a policy conflict (and its empty label a level conflict); a driver
 * without seLinuxMount means Recursive for all (no conflict) until the CSIDriver changes; two labels in one pod
 * are MultipleSELinuxLabels; the conflict gauge follows the cache, a finished pod leaving it; in-tree volumes
 * (a PV and an inline volume) are translated to their CSI drivers' volumes (CSI migration).
 */
@QuarkusTest
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
@TestProfile(ManagerOffProfile.class)
class SELinuxWarningControllerTest {

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

    private ControllerHarness<SELinuxWarningController> start() throws InterruptedException {
        return ControllerHarness.create(vertx, SELinuxWarningController.NAME,
                SELinuxWarningControllerDescriptor::newController).start();
    }

    static String driver(boolean seLinuxMount) {
        String name = "d" + UUID.randomUUID().toString().substring(0, 8) + ".csi.example.com";
        client.storage().v1().csiDrivers().resource(new CSIDriverBuilder().withNewMetadata().withName(name).endMetadata()
                .withNewSpec().withSeLinuxMount(seLinuxMount).endSpec().build()).create();
        return name;
    }

    /** A PVC in {@code ns} bound to a new PV of {@code driver}'s volume {@code handle}. */
    static String boundClaim(String ns, String name, String driver, String handle) {
        PersistentVolumeClaim pvc = client.persistentVolumeClaims().inNamespace(ns).resource(new PersistentVolumeClaimBuilder()
                .withNewMetadata().withName(name).endMetadata().withNewSpec().withAccessModes("ReadWriteOncePod")
                .withNewResources().withRequests(Map.of("storage", new Quantity("1Gi"))).endResources()
                .withVolumeName(ns + "-" + name).withStorageClassName("").endSpec().build()).create();
        client.persistentVolumes().resource(new PersistentVolumeBuilder().withNewMetadata().withName(ns + "-" + name)
                .endMetadata().withNewSpec().withAccessModes("ReadWriteOncePod").withCapacity(Map.of("storage", new Quantity("1Gi")))
                .withNewCsi().withDriver(driver).withVolumeHandle(handle).endCsi().withStorageClassName("")
                .withNewClaimRef().withNamespace(ns).withName(name).withUid(pvc.getMetadata().getUid()).endClaimRef()
                .endSpec().build()).create();
        pvc.setStatus(new io.fabric8.kubernetes.api.model.PersistentVolumeClaimStatusBuilder().withPhase("Bound").build());
        client.persistentVolumeClaims().inNamespace(ns).resource(pvc).updateStatus();
        return name;
    }

    static Pod pod(String ns, String name, String claim, String level, String changePolicy) {
        return client.pods().inNamespace(ns).resource(new PodBuilder().withNewMetadata().withName(name).endMetadata()
                .withNewSpec().withNewSecurityContext().withNewSeLinuxOptions().withLevel(level).endSeLinuxOptions()
                .withSeLinuxChangePolicy(changePolicy).endSecurityContext()
                .addNewVolume().withName("vol").withNewPersistentVolumeClaim().withClaimName(claim).endPersistentVolumeClaim()
                .endVolume().addNewContainer().withName("c").withImage("registry.k8s.io/pause:3.10").addNewVolumeMount()
                .withName("vol").withMountPath("/data").endVolumeMount().endContainer().endSpec().build()).create();
    }

    static List<String> events(String ns, String pod) {
        return client.v1().events().inNamespace(ns).list().getItems().stream()
                .filter(e -> pod.equals(e.getInvolvedObject().getName()))
                .map(e -> e.getType() + " " + e.getReason() + " " + e.getMessage()).toList();
    }

    static List<Event> rawEvents(String ns, String pod) {
        return client.v1().events().inNamespace(ns).list().getItems().stream()
                .filter(e -> pod.equals(e.getInvolvedObject().getName())).toList();
    }

    @Test
    void twoPodsWithDifferentLabelsOnOneVolumeGetConflictEventsNamingEachOther() throws Exception {
        String ns = newNamespace(client, "selinux-label");
        String driver = driver(true);
        String claim = boundClaim(ns, "data", driver, "vol-1");
        pod(ns, "pod1", claim, "s0:c1,c2", null);
        pod(ns, "pod2", claim, "s0:c98,c99", null);
        try (var h = start()) {
            await().atMost(WAIT).untilAsserted(() -> {
                assertThat(events(ns, "pod1")).contains("Normal SELinuxLabelConflict SELinuxLabel \":::s0:c1,c2\" conflicts with pod pod2 that uses the same volume as this pod with SELinuxLabel \":::s0:c98,c99\". If both pods land on the same node, only one of them may access the volume.");
                assertThat(events(ns, "pod2")).contains("Normal SELinuxLabelConflict SELinuxLabel \":::s0:c98,c99\" conflicts with pod pod1 that uses the same volume as this pod with SELinuxLabel \":::s0:c1,c2\". If both pods land on the same node, only one of them may access the volume.");
            });
            assertThat(rawEvents(ns, "pod1").get(0).getSource().getComponent()).isEqualTo("selinux_warning");
            // both use MountOption: no policy conflict
            assertThat(events(ns, "pod1")).noneMatch(e -> e.contains("SELinuxChangePolicyConflict"));
            // the gauge: one row per ordered pair
            await().atMost(WAIT).until(() -> conflictGauges(h, ns).size() == 2);
            Gauge g = h.context.metrics().find(SELinuxWarningMetrics.NAME).tag("pod1_name", "pod1").tag("pod1_namespace", ns)
                    .gauge();
            assertThat(g.getId().getTag("property")).isEqualTo("SELinuxLabel");
            assertThat(g.getId().getTag("pod2_name")).isEqualTo("pod2");
            assertThat(g.getId().getTag("pod1_value")).isEqualTo(":::s0:c1,c2");
            assertThat(g.getId().getTag("pod2_value")).isEqualTo(":::s0:c98,c99");
            assertThat(g.value()).isEqualTo(1.0);

            // a finished pod leaves the cache, and the gauge
            Pod done = client.pods().inNamespace(ns).withName("pod2").get();
            done.getStatus().setPhase("Succeeded");
            client.pods().inNamespace(ns).resource(done).updateStatus();
            await().atMost(WAIT).until(() -> conflictGauges(h, ns).isEmpty());
        }
    }

    private static List<Gauge> conflictGauges(ControllerHarness<SELinuxWarningController> h, String ns) {
        return h.context.metrics().find(SELinuxWarningMetrics.NAME).tag("pod1_namespace", ns).gauges().stream()
                .filter(g -> !Double.isNaN(g.value())).toList();
    }

    @Test
    void recursiveAgainstMountOptionIsAPolicyConflict() throws Exception {
        String ns = newNamespace(client, "selinux-policy");
        String driver = driver(true);
        String claim = boundClaim(ns, "data", driver, "vol-1");
        pod(ns, "pod1", claim, "s0:c1,c2", "Recursive");
        // no policy is MountOption (the API server takes "MountOption" only with its SELinuxMount gate)
        pod(ns, "pod2", claim, "s0:c98,c99", null);
        try (var h = start()) {
            await().atMost(WAIT).untilAsserted(() -> {
                assertThat(events(ns, "pod1")).contains("Normal SELinuxChangePolicyConflict SELinuxChangePolicy \"Recursive\" conflicts with pod pod2 that uses the same volume as this pod with SELinuxChangePolicy \"MountOption\". If both pods land on the same node, only one of them may access the volume.");
                assertThat(events(ns, "pod2")).contains("Normal SELinuxChangePolicyConflict SELinuxChangePolicy \"MountOption\" conflicts with pod pod1 that uses the same volume as this pod with SELinuxChangePolicy \"Recursive\". If both pods land on the same node, only one of them may access the volume.");
            });
            // Recursive mounts with no label, and the translator takes an empty label's empty level as conflicting
            // with any level ("empty string conflicts with level" in upstream's translator test)
            await().atMost(WAIT).untilAsserted(() -> assertThat(events(ns, "pod1")).contains("Normal SELinuxLabelConflict SELinuxLabel \"\" conflicts with pod pod2 that uses the same volume as this pod with SELinuxLabel \":::s0:c98,c99\". If both pods land on the same node, only one of them may access the volume."));
        }
    }

    @Test
    void podsInOtherNamespacesAreNotNamed() throws Exception {
        String ns1 = newNamespace(client, "selinux-ns-a");
        String ns2 = newNamespace(client, "selinux-ns-b");
        String driver = driver(true);
        // two PVs of the same CSI volume: one volume for the controller
        pod(ns1, "pod1", boundClaim(ns1, "data", driver, "shared"), "s0:c1,c2", null);
        pod(ns2, "pod2", boundClaim(ns2, "data", driver, "shared"), "s0:c98,c99", null);
        try (var h = start()) {
            await().atMost(WAIT).untilAsserted(() -> assertThat(events(ns1, "pod1")).contains(
                    "Normal SELinuxLabelConflict SELinuxLabel\":::s0:c1,c2\" conflicts with another pod that uses the same volume as this pod with a different SELinuxLabel. If both pods land on the same node, only one of them may access the volume."));
        }
    }

    @Test
    void aDriverWithoutSELinuxMountConflictsOnlyOnceItsCSIDriverSaysSo() throws Exception {
        String ns = newNamespace(client, "selinux-driver");
        String driver = driver(false);
        String claim = boundClaim(ns, "data", driver, "vol-1");
        pod(ns, "pod1", claim, "s0:c1,c2", null);
        pod(ns, "pod2", claim, "s0:c98,c99", null);
        try (var h = start()) {
            // both pods are in the cache, mounting with Recursive and no label: no conflict
            await().atMost(WAIT).until(() -> h.controller.labelCache().podsForCSIDriver(driver).size() == 2);
            assertThat(events(ns, "pod1")).isEmpty();
            assertThat(events(ns, "pod2")).isEmpty();

            CSIDriver d = client.storage().v1().csiDrivers().withName(driver).get();
            d.getSpec().setSeLinuxMount(true);
            client.storage().v1().csiDrivers().resource(d).update();
            await().atMost(WAIT).untilAsserted(() -> {
                assertThat(events(ns, "pod1")).anyMatch(e -> e.startsWith("Normal SELinuxLabelConflict"));
                assertThat(events(ns, "pod2")).anyMatch(e -> e.startsWith("Normal SELinuxLabelConflict"));
            });
        }
    }

    @Test
    void oneVolumeMountedWithTwoLabelsInOnePodIsAWarning() throws Exception {
        String ns = newNamespace(client, "selinux-multi");
        String claim = boundClaim(ns, "data", driver(true), "vol-1");
        client.pods().inNamespace(ns).resource(new PodBuilder().withNewMetadata().withName("pod1").endMetadata()
                .withNewSpec().addNewVolume().withName("vol").withNewPersistentVolumeClaim().withClaimName(claim)
                .endPersistentVolumeClaim().endVolume()
                .addNewContainer().withName("a").withImage("registry.k8s.io/pause:3.10").withNewSecurityContext()
                .withNewSeLinuxOptions().withLevel("s0:c1,c2").endSeLinuxOptions().endSecurityContext().addNewVolumeMount()
                .withName("vol").withMountPath("/data").endVolumeMount().endContainer()
                .addNewContainer().withName("b").withImage("registry.k8s.io/pause:3.10").withNewSecurityContext()
                .withNewSeLinuxOptions().withLevel("s0:c3,c4").endSeLinuxOptions().endSecurityContext().addNewVolumeMount()
                .withName("vol").withMountPath("/data").endVolumeMount().endContainer().endSpec().build()).create();
        try (var h = start()) {
            await().atMost(WAIT).untilAsserted(() -> assertThat(events(ns, "pod1")).contains(
                    "Warning MultipleSELinuxLabels Volume \"vol\" is mounted twice with different SELinux labels inside this pod"));
        }
    }

    /** The CSIDriver {@code name} with {@code seLinuxMount}, created or updated (a migrated plugin's driver has a fixed name). */
    static void namedDriver(String name, boolean seLinuxMount) {
        CSIDriver existing = client.storage().v1().csiDrivers().withName(name).get();
        if (existing == null) {
            client.storage().v1().csiDrivers().resource(new CSIDriverBuilder().withNewMetadata().withName(name).endMetadata()
                    .withNewSpec().withSeLinuxMount(seLinuxMount).endSpec().build()).create();
        } else {
            existing.getSpec().setSeLinuxMount(seLinuxMount);
            client.storage().v1().csiDrivers().resource(existing).update();
        }
    }

    /** A pod mounting one inline volume {@code vol} of {@code source} at level {@code level}. */
    static Pod inlinePod(String ns, String name, io.fabric8.kubernetes.api.model.Volume source, String level) {
        source.setName("vol");
        return client.pods().inNamespace(ns).resource(new PodBuilder().withNewMetadata().withName(name).endMetadata()
                .withNewSpec().withNewSecurityContext().withNewSeLinuxOptions().withLevel(level).endSeLinuxOptions()
                .endSecurityContext().addToVolumes(source).addNewContainer().withName("c")
                .withImage("registry.k8s.io/pause:3.10").addNewVolumeMount().withName("vol").withMountPath("/data")
                .endVolumeMount().endContainer().endSpec().build()).create();
    }

    /**
     * Upstream's "existing pod with fully bound PVC" (an AWS EBS PV), "existing pod with inline volume" and "existing
     * pod with inline volume and PVC": an in-tree volume is translated to CSI and counts as ebs.csi.aws.com's, the
     * driver's seLinuxMount applying; the PV and the inline volume of one EBS volume are one CSI volume
     * (kubernetes.io/csi/ebs.csi.aws.com^vol-...), so their pods' different levels conflict.
     */
    @Test
    void anInTreeVolumeIsItsCSIDriversVolume() throws Exception {
        String ns = newNamespace(client, "selinux-intree");
        namedDriver("ebs.csi.aws.com", true);
        String volumeID = "vol-" + UUID.randomUUID().toString().substring(0, 8);
        PersistentVolumeClaim pvc = client.persistentVolumeClaims().inNamespace(ns).resource(new PersistentVolumeClaimBuilder()
                .withNewMetadata().withName("data").endMetadata().withNewSpec().withAccessModes("ReadWriteOnce")
                .withNewResources().withRequests(Map.of("storage", new Quantity("1Gi"))).endResources()
                .withVolumeName(ns + "-ebs").withStorageClassName("").endSpec().build()).create();
        client.persistentVolumes().resource(new PersistentVolumeBuilder().withNewMetadata().withName(ns + "-ebs").endMetadata()
                .withNewSpec().withAccessModes("ReadWriteOnce").withCapacity(Map.of("storage", new Quantity("1Gi")))
                .withNewAwsElasticBlockStore().withVolumeID(volumeID).endAwsElasticBlockStore().withStorageClassName("")
                .withNewClaimRef().withNamespace(ns).withName("data").withUid(pvc.getMetadata().getUid()).endClaimRef()
                .endSpec().build()).create();
        pvc.setStatus(new io.fabric8.kubernetes.api.model.PersistentVolumeClaimStatusBuilder().withPhase("Bound").build());
        client.persistentVolumeClaims().inNamespace(ns).resource(pvc).updateStatus();
        pod(ns, "pod1", "data", "s0:c1,c2", null);
        inlinePod(ns, "pod2", new io.fabric8.kubernetes.api.model.VolumeBuilder().withNewAwsElasticBlockStore()
                .withVolumeID(volumeID).endAwsElasticBlockStore().build(), "s0:c98,c99");
        try (var h = start()) {
            await().atMost(WAIT).untilAsserted(() -> {
                assertThat(events(ns, "pod1")).contains("Normal SELinuxLabelConflict SELinuxLabel \":::s0:c1,c2\" conflicts with pod pod2 that uses the same volume as this pod with SELinuxLabel \":::s0:c98,c99\". If both pods land on the same node, only one of them may access the volume.");
                assertThat(events(ns, "pod2")).contains("Normal SELinuxLabelConflict SELinuxLabel \":::s0:c98,c99\" conflicts with pod pod1 that uses the same volume as this pod with SELinuxLabel \":::s0:c1,c2\". If both pods land on the same node, only one of them may access the volume.");
            });
            // the volumes are recorded under the CSI driver, so its CSIDriver's changes reach both pods
            assertThat(h.controller.labelCache().podsForCSIDriver("ebs.csi.aws.com"))
                    .contains(new VolumeCache.PodKey(ns, "pod1"), new VolumeCache.PodKey(ns, "pod2"));
        }
    }

    /**
     * Upstream's "existing pod with fully bound PVC and CSIDriver.SELinuxMount disabled" for migrated inline Cinder
     * volumes: with cinder.csi.openstack.org's seLinuxMount off both pods mount Recursive with no label (no
     * conflict); once its CSIDriver turns seLinuxMount on, the pods are synced again and their levels conflict.
     */
    @Test
    void aMigratedInTreeVolumeFollowsItsCSIDriversSELinuxMount() throws Exception {
        String ns = newNamespace(client, "selinux-intree-driver");
        String driver = "cinder.csi.openstack.org";
        namedDriver(driver, false);
        String volumeID = UUID.randomUUID().toString();
        inlinePod(ns, "pod1", new io.fabric8.kubernetes.api.model.VolumeBuilder().withNewCinder().withVolumeID(volumeID)
                .endCinder().build(), "s0:c1,c2");
        inlinePod(ns, "pod2", new io.fabric8.kubernetes.api.model.VolumeBuilder().withNewCinder().withVolumeID(volumeID)
                .endCinder().build(), "s0:c98,c99");
        try (var h = start()) {
            await().atMost(WAIT).until(() -> h.controller.labelCache().podsForCSIDriver(driver).stream()
                    .filter(p -> p.namespace().equals(ns)).count() == 2);
            assertThat(events(ns, "pod1")).isEmpty();
            assertThat(events(ns, "pod2")).isEmpty();

            namedDriver(driver, true);
            await().atMost(WAIT).untilAsserted(() -> {
                assertThat(events(ns, "pod1")).contains("Normal SELinuxLabelConflict SELinuxLabel \":::s0:c1,c2\" conflicts with pod pod2 that uses the same volume as this pod with SELinuxLabel \":::s0:c98,c99\". If both pods land on the same node, only one of them may access the volume.");
                assertThat(events(ns, "pod2")).anyMatch(e -> e.startsWith("Normal SELinuxLabelConflict"));
            });
        }
    }
}
