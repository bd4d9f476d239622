package io.qkcm.controller.volume.selinuxwarning;

import static io.qkcm.testing.TestNamespaces.newNamespace;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.Map;

import jakarta.inject.Inject;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.qkcm.controller.volume.common.FlexDriver;
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
 * FlexVolume drivers in selinux-warning-controller against a real API server, each driver a real shell script
 * in a temporary --flex-volume-plugin-dir probed by the controller's own prober (as startSELinuxWarningController
 * passes GetDynamicPluginProber): a flex volume is its driver's plugin's volume ({@code <vendor>/<driver>/<name>},
 * the driver asked getvolumename with the volume's options), and as a flex driver never mounts with an SELinux
 * context every pod uses it Recursive with no label, so different levels and policies do not conflict
 * (syncVolume's "Volume does not support SELinux context mount" path); a volume whose driver is not installed
 * has no plugin and is skipped, until a driver installed while the controller runs is probed; a failing
 * getvolumename fails the pod's sync, which is retried.
 */
@QuarkusTest
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
@TestProfile(ManagerOffProfile.class)
class SELinuxWarningFlexVolumeTest {

    private static final Duration WAIT = Duration.ofSeconds(30);

    @Inject
    Vertx vertx;

    static KubernetesClient client;

    /** A fresh directory per test (@TempDir is not injected into Quarkus tests). */
    Path tmp;

    @BeforeAll
    static void setUp() {
        client = RealApiServer.get().newClient();
    }

    @AfterAll
    static void tearDown() {
        client.close();
    }

    @BeforeEach
    void tempDir() throws java.io.IOException {
        tmp = Files.createTempDirectory("flex-selinux");
    }

    @AfterEach
    void removeTempDir() throws java.io.IOException {
        try (var files = Files.walk(tmp)) {
            files.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
        }
    }

    private Path pluginDir() {
        return tmp.resolve("exec");
    }

    private ControllerHarness<SELinuxWarningController> start() throws InterruptedException {
        return ControllerHarness.create(vertx, SELinuxWarningController.NAME,
                context -> new SELinuxWarningController(context, true, pluginDir())).start();
    }

    private FlexDriver driver(String vendor, String name) {
        return FlexDriver.of(pluginDir(), vendor, name, tmp.resolve("work-" + name)).answer("init",
                "{\"status\": \"Success\", \"capabilities\": {\"attach\": false}}");
    }

    static Volume flexVolume(String name, String driver) {
        return new VolumeBuilder().withName(name).withNewFlexVolume().withDriver(driver).withFsType("ext4")
                .withOptions(Map.of("volumeID", "vol-" + name)).endFlexVolume().build();
    }

    static void pod(String ns, String name, Volume volume, String level, String changePolicy) {
        client.pods().inNamespace(ns).resource(new PodBuilder().withNewMetadata().withName(name).endMetadata()
                .withNewSpec().withNewSecurityContext().withNewSeLinuxOptions().withLevel(level).endSeLinuxOptions()
                .withSeLinuxChangePolicy(changePolicy).endSecurityContext().addToVolumes(volume).addNewContainer()
                .withName("c").withImage("registry.k8s.io/pause:3.10").addNewVolumeMount().withName(volume.getName())
                .withMountPath("/data").endVolumeMount().endContainer().endSpec().build()).create();
    }

    @Test
    void aFlexVolumeIsItsDriversAndIsUsedRecursiveWithNoLabelSoLevelsDoNotConflict() throws Exception {
        String ns = newNamespace(client, "selinux-flex");
        FlexDriver d = driver("example.com", "flexdrv").install();
        pod(ns, "pod1", flexVolume("data", d.name()), "s0:c1,c2", null);
        pod(ns, "pod2", flexVolume("data", d.name()), "s0:c98,c99", null);
        pod(ns, "pod3", flexVolume("data", d.name()), "s0:c5,c6", "Recursive");
        try (var h = start()) {
            // GetVolumeName: the driver is asked, answers "Not supported", and the volume's name is the spec's
            await().atMost(WAIT).until(() -> h.controller.labelCache().podsOfVolume("example.com/flexdrv/data").size() == 3);
            assertThat(h.controller.labelCache().podsOfVolume("example.com/flexdrv/data")).containsExactlyInAnyOrder(
                    ns + "/pod1  Recursive", ns + "/pod2  Recursive", ns + "/pod3  Recursive");
            // (the API server is shared: other tests' pods may conflict in their own namespaces)
            assertThat(h.controller.labelCache().conflicts()).noneMatch(c -> c.pod().namespace().equals(ns));
            assertThat(d.calls("init")).hasSize(1);
            assertThat(d.calls("getvolumename")).first().isEqualTo("getvolumename {\"kubernetes.io/fsType\":\"ext4\","
                    + "\"kubernetes.io/pvOrVolumeName\":\"data\",\"kubernetes.io/readwrite\":\"rw\",\"volumeID\":\"vol-data\"}");
            // no CSI driver: nothing to re-sync when a CSIDriver changes
            assertThat(h.controller.labelCache().podsForCSIDriver("")).filteredOn(p -> p.namespace().equals(ns)).hasSize(3);
        }
    }

    @Test
    void aFlexPersistentVolumeIsNamedByThePVAndCarriesTheClaimsReadOnly() throws Exception {
        String ns = newNamespace(client, "selinux-flex-pv");
        FlexDriver d = driver("example.com", "flexpv").answer("getvolumename",
                "{\"status\": \"Success\", \"volumeName\": \"not-used\"}").install();
        String pvName = ns + "-pv";
        PersistentVolumeClaim pvc = client.persistentVolumeClaims().inNamespace(ns).resource(new PersistentVolumeClaimBuilder()
                .withNewMetadata().withName("claim").endMetadata().withNewSpec().withAccessModes("ReadWriteOnce")
                .withVolumeName(pvName).withStorageClassName("").withNewResources()
                .withRequests(Map.of("storage", new Quantity("1Gi"))).endResources().endSpec().build()).create();
        client.persistentVolumes().resource(new PersistentVolumeBuilder().withNewMetadata().withName(pvName).endMetadata()
                .withNewSpec().withCapacity(Map.of("storage", new Quantity("1Gi"))).withAccessModes("ReadWriteOnce")
                .withStorageClassName("").withNewFlexVolume().withDriver(d.name()).withFsType("xfs").endFlexVolume()
                .withNewClaimRef().withNamespace(ns).withName("claim").withUid(pvc.getMetadata().getUid()).endClaimRef()
                .endSpec().build()).create();
        pvc.setStatus(new io.fabric8.kubernetes.api.model.PersistentVolumeClaimStatusBuilder().withPhase("Bound").build());
        client.persistentVolumeClaims().inNamespace(ns).resource(pvc).updateStatus();
        pod(ns, "pod1", new VolumeBuilder().withName("vol").withNewPersistentVolumeClaim().withClaimName("claim")
                .withReadOnly(true).endPersistentVolumeClaim().build(), "s0:c1,c2", null);
        try (var h = start()) {
            await().atMost(WAIT).until(() -> h.controller.labelCache().podsOfVolume("example.com/flexpv/" + pvName)
                    .size() == 1);
            assertThat(h.controller.labelCache().podsOfVolume("example.com/flexpv/" + pvName))
                    .containsExactly(ns + "/pod1  Recursive");
            assertThat(d.calls("getvolumename")).first().isEqualTo("getvolumename {\"kubernetes.io/fsType\":\"xfs\","
                    + "\"kubernetes.io/pvOrVolumeName\":\"" + pvName + "\",\"kubernetes.io/readwrite\":\"ro\"}");
        }
    }

    @Test
    void aVolumeOfAnUnknownDriverIsSkippedUntilTheDriverIsInstalled() throws Exception {
        String ns = newNamespace(client, "selinux-flex-late");
        FlexDriver other = driver("example.com", "present").install();
        FlexDriver late = driver("example.com", "late");
        pod(ns, "pod1", flexVolume("data", late.name()), "s0:c1,c2", null);
        pod(ns, "marker", flexVolume("m", other.name()), "s0:c1,c2", null);
        try (var h = start()) {
            // the marker's volume is in the cache, so pod1 has been synced too: its volume had no plugin
            await().atMost(WAIT).until(() -> h.controller.labelCache().podsOfVolume("example.com/present/m").size() == 1);
            QueueProbe queue = QueueProbe.of(h.context.metrics(), SELinuxWarningController.QUEUE);
            await().atMost(WAIT).until(() -> queue.processed() >= 2);
            queue.awaitIdle(WAIT);
            assertThat(h.controller.labelCache().podsOfVolume("example.com/late/data")).isEmpty();
            assertThat(late.calls()).isEmpty();

            // installed while the controller runs: the next lookup probes it
            late.install();
            pod(ns, "pod2", flexVolume("data", late.name()), "s0:c98,c99", null);
            await().atMost(WAIT).until(() -> h.controller.labelCache().podsOfVolume("example.com/late/data").size() == 1);
            assertThat(h.controller.labelCache().podsOfVolume("example.com/late/data")).containsExactly(ns + "/pod2  Recursive");
            assertThat(late.calls("init")).hasSize(1);
        }
    }

    @Test
    void aFailingGetVolumeNameFailsTheSyncWhichIsRetried() throws Exception {
        String ns = newNamespace(client, "selinux-flex-fail");
        FlexDriver d = driver("example.com", "broken").answer("getvolumename",
                "{\"status\": \"Failure\", \"message\": \"backend down\"}", 1).install();
        pod(ns, "pod1", flexVolume("data", d.name()), "s0:c1,c2", null);
        try (var h = start()) {
            // an error: the pod is queued again with the rate limiter's backoff and the driver asked again
            await().atMost(WAIT).until(() -> d.calls("getvolumename").size() >= 3);
            assertThat(h.controller.labelCache().podsOfVolume("example.com/broken/data")).isEmpty();

            // the answer changes outside the plugin directory (no re-probe): the next retry succeeds
            d.answer("getvolumename", "{\"status\": \"Success\"}");
            await().atMost(WAIT).until(() -> h.controller.labelCache().podsOfVolume("example.com/broken/data").size() == 1);
        }
    }
}
