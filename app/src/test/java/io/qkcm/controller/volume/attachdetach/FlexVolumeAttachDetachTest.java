package io.qkcm.controller.volume.attachdetach;

import static io.qkcm.controller.volume.attachdetach.AttachDetachControllerTest.deletePod;
import static io.qkcm.controller.volume.attachdetach.AttachDetachControllerTest.hasEvent;
import static io.qkcm.controller.volume.attachdetach.AttachDetachControllerTest.node;
import static io.qkcm.controller.volume.attachdetach.AttachDetachControllerTest.operations;
import static io.qkcm.controller.volume.attachdetach.AttachDetachControllerTest.passes;
import static io.qkcm.controller.volume.attachdetach.AttachDetachControllerTest.pod;
import static io.qkcm.controller.volume.attachdetach.AttachDetachControllerTest.unique;
import static io.qkcm.controller.volume.attachdetach.AttachDetachControllerTest.volumesAttached;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import jakarta.inject.Inject;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.AttachedVolume;
import io.fabric8.kubernetes.api.model.AttachedVolumeBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeBuilder;
import io.qkcm.controller.volume.common.FlexDriver;
import io.qkcm.testing.ControllerHarness;
import io.qkcm.testing.ManagerOffProfile;
import io.qkcm.testing.RealApiServer;
import io.qkcm.testing.RealApiServerResource;
import io.qkcm.testing.TestNamespaces;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.vertx.core.Vertx;

/**
 * FlexVolume drivers in persistentvolume-attach-detach-controller against a real API server, each driver a
 * real shell script in a temporary --flex-volume-plugin-dir that logs its calls: a driver installed while the
 * controller runs is probed and attaches an inline volume and a PV (node.status.volumesAttached under
 * {@code <vendor>/<driver>/<name>} with the driver's device path), then detaches them when the pod goes; a
 * failing attach is upstream's FailedAttachVolume event and is retried with the operation backoff (500 ms
 * doubling, on the test's clock) rather than at every reconciler pass; a driver whose init says
 * {@code attach: false} is not attachable; and a flex volume known only from node status is detached by the
 * name its unique name carries.
 */
@QuarkusTest
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
@TestProfile(ManagerOffProfile.class)
class FlexVolumeAttachDetachTest {

    private static final Duration WAIT = Duration.ofSeconds(30);

    @Inject
    Vertx vertx;

    /** A fresh directory per test (@TempDir is not injected into Quarkus tests). */
    Path tmp;

    @BeforeEach
    void tempDir() throws java.io.IOException {
        tmp = java.nio.file.Files.createTempDirectory("flex-adc");
    }

    @AfterEach
    void removeTempDir() throws java.io.IOException {
        try (var files = java.nio.file.Files.walk(tmp)) {
            files.sorted(java.util.Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
        }
    }

    private final AttachDetachControllerTest.MutableClock clock = new AttachDetachControllerTest.MutableClock();

    @BeforeAll
    static void setUp() {
        AttachDetachControllerTest.client = RealApiServer.get().newClient();
    }

    @AfterAll
    static void tearDown() {
        AttachDetachControllerTest.client.close();
    }

    private Path pluginDir() {
        return tmp.resolve("exec");
    }

    private ControllerHarness<AttachDetachController> start() throws InterruptedException {
        return ControllerHarness.create(vertx, AttachDetachController.NAME, "attachdetach-controller", Map.of(),
                context -> new AttachDetachController(context, AttachDetachController.TimerConfig.DEFAULT,
                        Duration.ofMinutes(1), false, false, clock, pluginDir())).start();
    }

    private FlexDriver driver(String vendor, String name) {
        return FlexDriver.of(pluginDir(), vendor, name, tmp.resolve("work-" + name));
    }

    static Volume flexVolume(String name, String driver) {
        return new VolumeBuilder().withName(name).withNewFlexVolume().withDriver(driver).withFsType("ext4")
                .withOptions(Map.of("volumeID", "vol-" + name)).endFlexVolume().build();
    }

    /** A PV with a flex source bound to a new claim in {@code ns}: the claim's name. */
    static String boundFlexClaim(String ns, String pvName, String driver) {
        var client = AttachDetachControllerTest.client;
        String claim = unique("claim");
        PersistentVolumeClaim pvc = client.persistentVolumeClaims().inNamespace(ns).resource(new PersistentVolumeClaimBuilder()
                .withNewMetadata().withName(claim).endMetadata().withNewSpec().withAccessModes("ReadWriteOnce")
                .withVolumeName(pvName).withNewResources().withRequests(Map.of("storage", new Quantity("1Gi"))).endResources()
                .endSpec().build()).create();
        client.persistentVolumes().resource(new PersistentVolumeBuilder().withNewMetadata().withName(pvName).endMetadata()
                .withNewSpec().withCapacity(Map.of("storage", new Quantity("1Gi"))).withAccessModes("ReadWriteOnce")
                .withNewFlexVolume().withDriver(driver).withFsType("xfs").endFlexVolume()
                .withNewClaimRef().withNamespace(ns).withName(claim).withUid(pvc.getMetadata().getUid()).endClaimRef()
                .endSpec().build()).create();
        pvc.setStatus(new io.fabric8.kubernetes.api.model.PersistentVolumeClaimStatusBuilder().withPhase("Bound")
                .withAccessModes("ReadWriteOnce").withCapacity(Map.of("storage", new Quantity("1Gi"))).build());
        client.persistentVolumeClaims().inNamespace(ns).resource(pvc).updateStatus();
        return claim;
    }

    static List<AttachedVolume> attachedVolumes(String nodeName) {
        var status = AttachDetachControllerTest.client.nodes().withName(nodeName).get().getStatus();
        return status == null || status.getVolumesAttached() == null ? List.of() : status.getVolumesAttached();
    }

    @Test
    void aDriverProbedWhileRunningAttachesAndDetachesInlineAndPersistentVolumes() throws Exception {
        String ns = TestNamespaces.newNamespace(AttachDetachControllerTest.client, "adc-flex");
        String nodeName = node(true, true);
        String pvName = unique("pv");
        try (var c = start()) {
            // installed after the controller's first probe: found through the watch on the plugin directory
            assertThat(c.controller.volumePlugins().flexPluginByName("example.com/lvm")).isNull();
            FlexDriver d = driver("example.com", "lvm").answer("init", "{\"status\": \"Success\", \"capabilities\": {\"attach\": true}}")
                    .answer("attach", "{\"status\": \"Success\", \"device\": \"/dev/flex0\"}")
                    .answer("detach", "{\"status\": \"Success\"}").install();
            String claim = boundFlexClaim(ns, pvName, d.name());
            await().atMost(WAIT).until(() -> c.controller.volumePlugins().flexPluginByName("example.com/lvm") != null);
            assertThat(d.calls("init")).isNotEmpty();
            Pod pod = pod(ns, nodeName, flexVolume("data", d.name()),
                    AttachDetachControllerTest.claimVolume("pvdata", claim));
            String inlineName = "example.com/lvm/data";
            String pvUniqueName = "example.com/lvm/" + pvName;
            await().atMost(WAIT).until(() -> volumesAttached(nodeName).size() == 2);
            assertThat(attachedVolumes(nodeName)).extracting(AttachedVolume::getName, AttachedVolume::getDevicePath)
                    .containsExactlyInAnyOrder(org.assertj.core.groups.Tuple.tuple(inlineName, "/dev/flex0"),
                            org.assertj.core.groups.Tuple.tuple(pvUniqueName, "/dev/flex0"));
            assertThat(d.calls("attach")).containsExactlyInAnyOrder(
                    "attach {\"kubernetes.io/fsType\":\"ext4\",\"kubernetes.io/pvOrVolumeName\":\"data\",\"kubernetes.io/readwrite\":\"rw\",\"volumeID\":\"vol-data\"} "
                            + nodeName,
                    "attach {\"kubernetes.io/fsType\":\"xfs\",\"kubernetes.io/pvOrVolumeName\":\"" + pvName
                            + "\",\"kubernetes.io/readwrite\":\"rw\"} " + nodeName);
            await().atMost(WAIT).until(() -> hasEvent(ns, pod.getMetadata().getName(), "SuccessfulAttachVolume",
                    "AttachVolume.Attach succeeded for volume \"data\" "));
            assertThat(operations(c, "example.com/lvm", "volume_attach", "success")).isEqualTo(2);

            // the pod goes and the node does not use the volumes: the driver detaches them by their volume names
            deletePod(pod);
            await().atMost(WAIT).until(() -> volumesAttached(nodeName).isEmpty());
            await().atMost(WAIT).until(() -> d.calls("detach").size() == 2);
            assertThat(d.calls("detach")).containsExactlyInAnyOrder("detach data " + nodeName,
                    "detach " + pvName + " " + nodeName);
            assertThat(operations(c, "example.com/lvm", "volume_detach", "success")).isEqualTo(2);
        }
    }

    @Test
    void aFailingAttachIsAnEventAndIsRetriedWithBackoff() throws Exception {
        String ns = TestNamespaces.newNamespace(AttachDetachControllerTest.client, "adc-flex-fail");
        String nodeName = node(true, true);
        FlexDriver d = driver("example.com", "busy").answer("init", "{\"status\": \"Success\"}")
                .answer("attach", "{\"status\": \"Failure\", \"message\": \"disk is busy\"}", 1).install();
        try (var c = start()) {
            Pod pod = pod(ns, nodeName, flexVolume("data", d.name()));
            await().atMost(WAIT).until(() -> hasEvent(ns, pod.getMetadata().getName(), "FailedAttachVolume",
                    "AttachVolume.Attach failed for volume \"data\" : attach command failed, status: Failure, reason: disk is busy"));
            await().atMost(WAIT).until(() -> operations(c, "example.com/busy", "volume_attach", "fail-unknown") == 1);
            // the clock stands still: many reconciler passes, no second call
            passes(c.controller, 10);
            assertThat(d.calls("attach")).hasSize(1);
            clock.advance(Duration.ofMillis(500));
            await().atMost(WAIT).until(() -> d.calls("attach").size() == 2);
            await().atMost(WAIT).until(() -> operations(c, "example.com/busy", "volume_attach", "fail-unknown") == 2);
            // now 1 s
            clock.advance(Duration.ofMillis(500));
            passes(c.controller, 10);
            assertThat(d.calls("attach")).hasSize(2);
            // the driver recovers: the next retry attaches
            d.answer("attach", "{\"status\": \"Success\", \"device\": \"/dev/flex1\"}");
            clock.advance(Duration.ofMillis(500));
            await().atMost(WAIT).until(() -> volumesAttached(nodeName).contains("example.com/busy/data"));
            assertThat(d.calls("attach")).hasSize(3);
        }
    }

    /**
     * The reconciler's periodic sync (every --attach-detach-reconcile-sync-period, here a minute on the test's
     * clock) asks the driver isattached; a volume it says is no longer attached is marked detached and, as its
     * pod still needs it, attached again.
     */
    @Test
    void theSyncAsksIsAttachedAndReattachesAVolumeTheDriverLost() throws Exception {
        String ns = TestNamespaces.newNamespace(AttachDetachControllerTest.client, "adc-flex-sync");
        String nodeName = node(true, true);
        FlexDriver d = driver("example.com", "lossy").answer("init", "{\"status\": \"Success\"}")
                .answer("attach", "{\"status\": \"Success\", \"device\": \"/dev/flex2\"}")
                .answer("isattached", "{\"status\": \"Success\", \"attached\": true}").install();
        try (var c = start()) {
            pod(ns, nodeName, flexVolume("data", d.name()));
            await().atMost(WAIT).until(() -> volumesAttached(nodeName).contains("example.com/lossy/data"));
            // still attached: nothing changes
            clock.advance(Duration.ofSeconds(61));
            await().atMost(WAIT).until(() -> d.calls("isattached").size() == 1);
            passes(c.controller, 5);
            assertThat(d.calls("attach")).hasSize(1);
            // lost: detached in the actual state, then attached again
            d.answer("isattached", "{\"status\": \"Success\", \"attached\": false}");
            clock.advance(Duration.ofSeconds(61));
            await().atMost(WAIT).until(() -> d.calls("isattached").size() == 2);
            await().atMost(WAIT).until(() -> d.calls("attach").size() == 2);
            assertThat(d.calls("isattached").get(1)).isEqualTo("isattached {\"kubernetes.io/fsType\":\"ext4\","
                    + "\"kubernetes.io/pvOrVolumeName\":\"data\",\"kubernetes.io/readwrite\":\"rw\",\"volumeID\":\"vol-data\"} "
                    + nodeName);
            await().atMost(WAIT).until(() -> volumesAttached(nodeName).contains("example.com/lossy/data"));
        }
    }

    @Test
    void aDriverWithoutAttachIsNotAttachable() throws Exception {
        String ns = TestNamespaces.newNamespace(AttachDetachControllerTest.client, "adc-flex-noattach");
        String nodeName = node(true, true);
        FlexDriver d = driver("example.com", "nfsish").answer("init",
                "{\"status\": \"Success\", \"capabilities\": {\"attach\": false}}").install();
        Volume fc = new VolumeBuilder().withName("fc").withNewFc().withWwids("3600508b400105e210000900000490000").endFc().build();
        try (var c = start()) {
            pod(ns, nodeName, flexVolume("data", d.name()), fc);
            // the fc volume of the same pod is attached: the pod was processed
            await().atMost(WAIT).until(() -> volumesAttached(nodeName).size() == 1);
            passes(c.controller, 5);
            assertThat(volumesAttached(nodeName)).containsExactly("kubernetes.io/fc/[3600508b400105e210000900000490000]");
            assertThat(d.calls()).containsExactly("init");
        }
    }

    @Test
    void aFlexVolumeKnownOnlyFromNodeStatusIsDetachedByItsUniqueName() throws Exception {
        String nodeName = node(true, true);
        FlexDriver d = driver("example.com", "gone").answer("init", "{\"status\": \"Success\"}")
                .answer("detach", "{\"status\": \"Success\"}").install();
        AttachDetachControllerTest.client.nodes().withName(nodeName).editStatus(n -> {
            n.getStatus().setVolumesAttached(List.of(new AttachedVolumeBuilder().withName("example.com/gone/old-vol")
                    .withDevicePath("/dev/flex9").build()));
            return n;
        });
        try (var c = start()) {
            await().atMost(WAIT).until(() -> d.calls("detach").size() == 1);
            assertThat(d.calls("detach")).containsExactly("detach old-vol " + nodeName);
            await().atMost(WAIT).until(() -> volumesAttached(nodeName).isEmpty());
        }
    }
}
