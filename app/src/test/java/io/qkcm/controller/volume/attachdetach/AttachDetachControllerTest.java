package io.qkcm.controller.volume.attachdetach;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import jakarta.inject.Inject;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.AttachedVolume;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.NodeConditionBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeBuilder;
import io.fabric8.kubernetes.api.model.storage.CSIDriverBuilder;
import io.fabric8.kubernetes.api.model.storage.VolumeAttachment;
import io.fabric8.kubernetes.api.model.storage.VolumeAttachmentStatusBuilder;
import io.fabric8.kubernetes.api.model.storage.VolumeErrorBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
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
 * persistentvolume-attach-detach-controller against a real API server, after upstream's reconciler_test.go
 * and attach_detach_controller_test.go, with the test in the external attacher's place (it sets
 * VolumeAttachment status.attached) and in the kubelet's (node.status.volumesInUse, the Ready condition).
 * The maximum wait for unmount runs on a clock the test moves.
 */
@QuarkusTest
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
@TestProfile(ManagerOffProfile.class)
class AttachDetachControllerTest {

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

    static final class MutableClock extends Clock {
        private volatile Instant now = Instant.parse("2026-01-01T00:00:00Z");

        void advance(Duration d) {
            now = now.plus(d);
        }

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
            return now;
        }
    }

    private final MutableClock clock = new MutableClock();

    private ControllerHarness<AttachDetachController> start() throws InterruptedException {
        return start(false);
    }

    private ControllerHarness<AttachDetachController> start(boolean disableForceDetachOnTimeout) throws InterruptedException {
        return ControllerHarness.create(vertx, AttachDetachController.NAME, "attachdetach-controller", Map.of(),
                context -> new AttachDetachController(context, AttachDetachController.TimerConfig.DEFAULT,
                        Duration.ofMinutes(1), false, disableForceDetachOnTimeout, clock)).start();
    }

    // --- objects

    static String unique(String prefix) {
        return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    /** A node; {@code managed}: with the controller-managed-attach-detach annotation. */
    static String node(boolean managed, boolean ready) {
        String name = unique("adc-node");
        NodeBuilder b = new NodeBuilder().withNewMetadata().withName(name).endMetadata();
        if (managed) {
            b.editMetadata().withAnnotations(Map.of(AttachDetachController.CONTROLLER_MANAGED_ATTACH_ANNOTATION, "true"))
                    .endMetadata();
        }
        client.nodes().resource(b.build()).create();
        if (ready) {
            client.nodes().withName(name).editStatus(n -> {
                n.getStatus().setConditions(List.of(new NodeConditionBuilder().withType("Ready").withStatus("True")
                        .withReason("KubeletReady").build()));
                return n;
            });
        }
        return name;
    }

    static String driver(Boolean attachRequired) {
        String name = unique("adc") + ".csi.example.com";
        client.storage().v1().csiDrivers().resource(new CSIDriverBuilder().withNewMetadata().withName(name).endMetadata()
                .withNewSpec().withAttachRequired(attachRequired).endSpec().build()).create();
        return name;
    }

    /** A PV with a CSI source bound to a new PVC in {@code ns}: the claim's name. */
    static String boundClaim(String ns, String pvName, String driver, String handle, String accessMode) {
        String claim = unique("claim");
        PersistentVolumeClaim pvc = client.persistentVolumeClaims().inNamespace(ns).resource(new PersistentVolumeClaimBuilder()
                .withNewMetadata().withName(claim).endMetadata().withNewSpec().withAccessModes(accessMode)
                .withVolumeName(pvName).withNewResources().withRequests(Map.of("storage", new Quantity("1Gi"))).endResources()
                .endSpec().build()).create();
        client.persistentVolumes().resource(new PersistentVolumeBuilder().withNewMetadata().withName(pvName).endMetadata()
                .withNewSpec().withCapacity(Map.of("storage", new Quantity("1Gi"))).withAccessModes(accessMode)
                .withNewCsi().withDriver(driver).withVolumeHandle(handle).endCsi()
                .withNewClaimRef().withNamespace(ns).withName(claim).withUid(pvc.getMetadata().getUid()).endClaimRef()
                .endSpec().build()).create();
        pvc.setStatus(new io.fabric8.kubernetes.api.model.PersistentVolumeClaimStatusBuilder().withPhase("Bound")
                .withAccessModes(accessMode).withCapacity(Map.of("storage", new Quantity("1Gi"))).build());
        client.persistentVolumeClaims().inNamespace(ns).resource(pvc).updateStatus();
        return claim;
    }

    /** A PV with an iSCSI source bound to a new PVC in {@code ns}: the claim's name. */
    static String boundIscsiClaim(String ns, String pvName, String targetPortal, String iqn, int lun) {
        String claim = unique("claim");
        PersistentVolumeClaim pvc = client.persistentVolumeClaims().inNamespace(ns).resource(new PersistentVolumeClaimBuilder()
                .withNewMetadata().withName(claim).endMetadata().withNewSpec().withAccessModes("ReadWriteOnce")
                .withVolumeName(pvName).withNewResources().withRequests(Map.of("storage", new Quantity("1Gi"))).endResources()
                .endSpec().build()).create();
        client.persistentVolumes().resource(new PersistentVolumeBuilder().withNewMetadata().withName(pvName).endMetadata()
                .withNewSpec().withCapacity(Map.of("storage", new Quantity("1Gi"))).withAccessModes("ReadWriteOnce")
                .withNewIscsi().withTargetPortal(targetPortal).withIqn(iqn).withLun(lun).endIscsi()
                .withNewClaimRef().withNamespace(ns).withName(claim).withUid(pvc.getMetadata().getUid()).endClaimRef()
                .endSpec().build()).create();
        pvc.setStatus(new io.fabric8.kubernetes.api.model.PersistentVolumeClaimStatusBuilder().withPhase("Bound")
                .withAccessModes("ReadWriteOnce").withCapacity(Map.of("storage", new Quantity("1Gi"))).build());
        client.persistentVolumeClaims().inNamespace(ns).resource(pvc).updateStatus();
        return claim;
    }

    static Volume claimVolume(String name, String claim) {
        return new VolumeBuilder().withName(name).withNewPersistentVolumeClaim().withClaimName(claim).endPersistentVolumeClaim()
                .build();
    }

    static Pod pod(String ns, String nodeName, Volume... volumes) {
        return client.pods().inNamespace(ns).resource(new PodBuilder().withNewMetadata().withName(unique("pod")).endMetadata()
                .withNewSpec().withNodeName(nodeName).addNewContainer().withName("c").withImage("busybox").endContainer()
                .withVolumes(volumes).endSpec().build()).create();
    }

    static VolumeAttachment va(String name) {
        return client.storage().v1().volumeAttachments().withName(name).get();
    }

    static void attached(String vaName) {
        VolumeAttachment va = va(vaName);
        va.setStatus(new VolumeAttachmentStatusBuilder().withAttached(true).build());
        client.storage().v1().volumeAttachments().resource(va).updateStatus();
    }

    static List<String> volumesAttached(String nodeName) {
        Node node = client.nodes().withName(nodeName).get();
        List<String> names = new ArrayList<>();
        if (node.getStatus() != null && node.getStatus().getVolumesAttached() != null) {
            for (AttachedVolume v : node.getStatus().getVolumesAttached()) {
                names.add(v.getName());
            }
        }
        return names;
    }

    static void volumesInUse(String nodeName, String... volumes) {
        client.nodes().withName(nodeName).editStatus(n -> {
            n.getStatus().setVolumesInUse(List.of(volumes));
            return n;
        });
    }

    static List<Event> events(String ns, String podName) {
        return client.v1().events().inNamespace(ns).list().getItems().stream()
                .filter(e -> podName.equals(e.getInvolvedObject().getName())).toList();
    }

    static boolean hasEvent(String ns, String podName, String reason, String message) {
        return events(ns, podName).stream().anyMatch(e -> reason.equals(e.getReason()) && message.equals(e.getMessage())
                && AttachDetachController.COMPONENT.equals(e.getSource().getComponent()));
    }

    static void deletePod(Pod pod) {
        client.pods().inNamespace(pod.getMetadata().getNamespace()).withName(pod.getMetadata().getName())
                .withGracePeriod(0).delete();
    }

    /** Waits for {@code n} more complete reconciler passes (each looks at every attached volume). */
    static void passes(AttachDetachController controller, int n) {
        long target = controller.reconcilerPasses() + n;
        await().atMost(WAIT).until(() -> controller.reconcilerPasses() >= target);
    }

    /** A gauge's value in the controller's registry, null when there is no such series. */
    static Double gauge(ControllerHarness<AttachDetachController> c, String name, String... tags) {
        var g = c.context.metrics().find(name).tags(tags).gauge();
        return g == null ? null : g.value();
    }

    static Double counter(ControllerHarness<AttachDetachController> c, String name, String... tags) {
        var g = c.context.metrics().find(name).tags(tags).counter();
        return g == null ? null : g.count();
    }

    /** How many operations the storage_operation_duration_seconds series with these labels has seen. */
    static long operations(ControllerHarness<AttachDetachController> c, String plugin, String operation, String status) {
        return operations(c, plugin, operation, status, false);
    }

    static long operations(ControllerHarness<AttachDetachController> c, String plugin, String operation, String status,
            boolean migrated) {
        var t = c.context.metrics().find(AttachDetachMetrics.OPERATION_DURATION).tags("volume_plugin", plugin,
                "operation_name", operation, "status", status, "migrated", Boolean.toString(migrated)).timer();
        return t == null ? 0 : t.count();
    }

    // --- tests

    /**
     * reconciler_test.go Test_Run_Positive_OneDesiredVolumeAttach and ...ThenDetachWithUnmountedVolume: a
     * VolumeAttachment named as the CSI attacher names it, node.status.volumesAttached once attached, the
     * SuccessfulAttachVolume event; on pod deletion the volume is kept while the node reports it in use and
     * detached (VolumeAttachment deleted, node status emptied) once it no longer does.
     */
    @Test
    void attachesReportsAndDetachesOnceTheNodeNoLongerUsesTheVolume() throws Exception {
        String ns = TestNamespaces.newNamespace(client, "adc");
        String nodeName = node(true, true);
        String driver = driver(true);
        String pvName = unique("pv");
        String handle = unique("handle");
        String claim = boundClaim(ns, pvName, driver, handle, "ReadWriteOnce");
        String vaName = CsiPlugin.attachmentName(handle, driver, nodeName);
        String uniqueName = "kubernetes.io/csi/" + driver + "^" + handle;
        try (var c = start()) {
            Pod pod = pod(ns, nodeName, claimVolume("data", claim));
            await().atMost(WAIT).until(() -> va(vaName) != null);
            VolumeAttachment va = va(vaName);
            assertThat(va.getSpec().getAttacher()).isEqualTo(driver);
            assertThat(va.getSpec().getNodeName()).isEqualTo(nodeName);
            assertThat(va.getSpec().getSource().getPersistentVolumeName()).isEqualTo(pvName);
            assertThat(va.getSpec().getSource().getInlineVolumeSpec()).isNull();
            assertThat(volumesAttached(nodeName)).isEmpty();

            attached(vaName);
            await().atMost(WAIT).until(() -> volumesAttached(nodeName).equals(List.of(uniqueName)));
            await().atMost(WAIT).until(() -> hasEvent(ns, pod.getMetadata().getName(), "SuccessfulAttachVolume",
                    "AttachVolume.Attach succeeded for volume \"" + pvName + "\" "));
            String plugin = "kubernetes.io/csi:" + driver;
            assertThat(operations(c, plugin, "volume_attach", "success")).isEqualTo(1);
            await().atMost(WAIT).until(() -> Double.valueOf(1).equals(gauge(c, AttachDetachMetrics.TOTAL_VOLUMES,
                    "plugin_name", plugin, "state", "actual_state_of_world"))
                    && Double.valueOf(1).equals(gauge(c, AttachDetachMetrics.TOTAL_VOLUMES, "plugin_name", plugin, "state",
                            "desired_state_of_world"))
                    && Double.valueOf(1).equals(gauge(c, AttachDetachMetrics.IN_USE, "node", nodeName, "volume_plugin", plugin)));

            // the kubelet mounts it, then the pod goes
            volumesInUse(nodeName, uniqueName);
            await().atMost(WAIT).until(() -> c.controller.actualStateOfWorld().getAttachedVolumesForNode(nodeName).stream()
                    .anyMatch(a -> a.mountedByNode()));
            deletePod(pod);
            await().atMost(WAIT).until(() -> c.controller.actualStateOfWorld().getAttachedVolumesForNode(nodeName).stream()
                    .anyMatch(a -> a.detachRequestedTime() != null));
            // past the maximum wait, but the node is Ready: no force detach
            clock.advance(Duration.ofMinutes(7));
            passes(c.controller, 5);
            assertThat(va(vaName)).isNotNull();
            assertThat(volumesAttached(nodeName)).containsExactly(uniqueName);

            volumesInUse(nodeName);
            await().atMost(WAIT).until(() -> va(vaName) == null);
            await().atMost(WAIT).until(() -> volumesAttached(nodeName).isEmpty());
            await().atMost(WAIT).until(() -> c.controller.actualStateOfWorld().getAttachedVolumesForNode(nodeName).isEmpty());
            assertThat(operations(c, plugin, "volume_detach", "success")).isEqualTo(1);
            // as upstream's reconciler counts it: past the maximum wait, the detach skips the safe-to-detach check
            // and is a forced one (reason timeout) though the node was Ready and had unmounted the volume
            assertThat(counter(c, AttachDetachMetrics.FORCED_DETACHES, "reason", "timeout")).isEqualTo(1.0);
            // no volume left in either state, no pod using it: no series
            await().atMost(WAIT).until(() -> gauge(c, AttachDetachMetrics.TOTAL_VOLUMES, "plugin_name", plugin) == null
                    && gauge(c, AttachDetachMetrics.IN_USE, "node", nodeName) == null);
        }
    }

    /**
     * reconciler_test.go Test_Run_OneVolumeDetachOnUnhealthyNode: a volume still in use on a node that is not
     * Ready is detached once maxWaitForUnmountDuration (6 min, on the test's clock) has passed since the
     * detach was first wanted, and not before.
     */
    @Test
    void forceDetachesFromANodeThatIsNotReadyAfterTheMaximumWait() throws Exception {
        String ns = TestNamespaces.newNamespace(client, "adc-force");
        String nodeName = node(true, false);
        String driver = driver(true);
        String handle = unique("handle");
        String claim = boundClaim(ns, unique("pv"), driver, handle, "ReadWriteOnce");
        String vaName = CsiPlugin.attachmentName(handle, driver, nodeName);
        String uniqueName = "kubernetes.io/csi/" + driver + "^" + handle;
        try (var c = start()) {
            Pod pod = pod(ns, nodeName, claimVolume("data", claim));
            await().atMost(WAIT).until(() -> va(vaName) != null);
            attached(vaName);
            await().atMost(WAIT).until(() -> volumesAttached(nodeName).contains(uniqueName));
            volumesInUse(nodeName, uniqueName);
            await().atMost(WAIT).until(() -> c.controller.actualStateOfWorld().getAttachedVolumesForNode(nodeName).stream()
                    .anyMatch(a -> a.mountedByNode()));
            deletePod(pod);
            await().atMost(WAIT).until(() -> c.controller.actualStateOfWorld().getAttachedVolumesForNode(nodeName).stream()
                    .anyMatch(a -> a.detachRequestedTime() != null));
            clock.advance(Duration.ofMinutes(5));
            passes(c.controller, 5);
            assertThat(va(vaName)).isNotNull();
            assertThat(counter(c, AttachDetachMetrics.FORCED_DETACHES, "reason", "timeout")).isNull();
            clock.advance(Duration.ofMinutes(1).plusSeconds(1));
            await().atMost(WAIT).until(() -> va(vaName) == null);
            await().atMost(WAIT).until(() -> volumesAttached(nodeName).isEmpty());
            assertThat(counter(c, AttachDetachMetrics.FORCED_DETACHES, "reason", "timeout")).isEqualTo(1.0);
            assertThat(counter(c, AttachDetachMetrics.FORCED_DETACHES, "reason", "out-of-service")).isNull();
        }
    }

    /** Test_Run_OneVolumeDetachOnUnhealthyNodeWithForceDetachOnUnmountDisabled. */
    @Test
    void noForceDetachWhenDisabled() throws Exception {
        String ns = TestNamespaces.newNamespace(client, "adc-noforce");
        String nodeName = node(true, false);
        String driver = driver(true);
        String handle = unique("handle");
        String claim = boundClaim(ns, unique("pv"), driver, handle, "ReadWriteOnce");
        String vaName = CsiPlugin.attachmentName(handle, driver, nodeName);
        String uniqueName = "kubernetes.io/csi/" + driver + "^" + handle;
        try (var c = start(true)) {
            Pod pod = pod(ns, nodeName, claimVolume("data", claim));
            await().atMost(WAIT).until(() -> va(vaName) != null);
            attached(vaName);
            await().atMost(WAIT).until(() -> volumesAttached(nodeName).contains(uniqueName));
            volumesInUse(nodeName, uniqueName);
            await().atMost(WAIT).until(() -> c.controller.actualStateOfWorld().getAttachedVolumesForNode(nodeName).stream()
                    .anyMatch(a -> a.mountedByNode()));
            deletePod(pod);
            await().atMost(WAIT).until(() -> c.controller.actualStateOfWorld().getAttachedVolumesForNode(nodeName).stream()
                    .anyMatch(a -> a.detachRequestedTime() != null));
            clock.advance(Duration.ofMinutes(10));
            passes(c.controller, 5);
            assertThat(va(vaName)).isNotNull();
            // the out-of-service taint still detaches at once (Test_Run_OneVolumeDetachOnOutOfServiceTaintedNode)
            client.nodes().withName(nodeName).edit(n -> {
                n.getSpec().setTaints(List.of(new io.fabric8.kubernetes.api.model.TaintBuilder()
                        .withKey(Reconciler.TAINT_NODE_OUT_OF_SERVICE).withEffect("NoExecute").build()));
                return n;
            });
            await().atMost(WAIT).until(() -> va(vaName) == null);
            assertThat(counter(c, AttachDetachMetrics.FORCED_DETACHES, "reason", "out-of-service")).isEqualTo(1.0);
            assertThat(counter(c, AttachDetachMetrics.FORCED_DETACHES, "reason", "timeout")).isNull();
        }
    }

    /**
     * The in-tree attachable plugins of ProbeAttachableVolumePlugins, fc and iscsi: their attach and detach do
     * nothing, so no VolumeAttachment is created, but the volumes are attached in the actual state, reported
     * in node.status.volumesAttached under upstream's unique names (hack/golden/csiattachment/volumenames),
     * with the SuccessfulAttachVolume event, and dropped from it once the pod is gone and the node no longer
     * uses them; the operations and the pod's volumes are in the metrics under the plugins' names.
     */
    @Test
    void fcAndIscsiVolumesAreReportedAttachedWithoutAVolumeAttachment() throws Exception {
        String ns = TestNamespaces.newNamespace(client, "adc-intree");
        String nodeName = node(true, true);
        String wwn = "50" + UUID.randomUUID().toString().replace("-", "").substring(0, 14);
        String iqn = "iqn.2001-04.com.example:" + unique("target");
        String claim = boundIscsiClaim(ns, unique("pv"), "10.0.2.15:3260", iqn, 3);
        Volume fc = new VolumeBuilder().withName("fc").withNewFc().withTargetWWNs(wwn, "500a0981991b8dc5").withLun(2)
                .endFc().build();
        String fcName = "kubernetes.io/fc/[" + wwn + " 500a0981991b8dc5]:2";
        String iscsiName = "kubernetes.io/iscsi/10.0.2.15:3260:" + iqn + ":3";
        try (var c = start()) {
            Pod pod = pod(ns, nodeName, fc, claimVolume("data", claim));
            await().atMost(WAIT).until(() -> volumesAttached(nodeName).size() == 2);
            assertThat(volumesAttached(nodeName)).containsExactlyInAnyOrder(fcName, iscsiName);
            assertThat(client.storage().v1().volumeAttachments().list().getItems())
                    .noneMatch(v -> nodeName.equals(v.getSpec().getNodeName()));
            await().atMost(WAIT).until(() -> hasEvent(ns, pod.getMetadata().getName(), "SuccessfulAttachVolume",
                    "AttachVolume.Attach succeeded for volume \"fc\" "));
            assertThat(operations(c, "kubernetes.io/fc", "volume_attach", "success")).isGreaterThanOrEqualTo(1);
            assertThat(operations(c, "kubernetes.io/iscsi", "volume_attach", "success")).isGreaterThanOrEqualTo(1);
            await().atMost(WAIT).until(() -> Double.valueOf(1).equals(gauge(c, AttachDetachMetrics.IN_USE, "node", nodeName,
                    "volume_plugin", "kubernetes.io/fc"))
                    && Double.valueOf(1).equals(gauge(c, AttachDetachMetrics.IN_USE, "node", nodeName, "volume_plugin",
                            "kubernetes.io/iscsi")));

            // in use: kept; then not: detached (nothing to call) and no longer reported
            volumesInUse(nodeName, fcName, iscsiName);
            await().atMost(WAIT).until(() -> c.controller.actualStateOfWorld().getAttachedVolumesForNode(nodeName).stream()
                    .allMatch(a -> a.mountedByNode()));
            deletePod(pod);
            await().atMost(WAIT).until(() -> c.controller.actualStateOfWorld().getAttachedVolumesForNode(nodeName).stream()
                    .allMatch(a -> a.detachRequestedTime() != null));
            passes(c.controller, 5);
            assertThat(volumesAttached(nodeName)).containsExactlyInAnyOrder(fcName, iscsiName);
            volumesInUse(nodeName);
            await().atMost(WAIT).until(() -> volumesAttached(nodeName).isEmpty());
            await().atMost(WAIT).until(() -> c.controller.actualStateOfWorld().getAttachedVolumesForNode(nodeName).isEmpty());
            assertThat(operations(c, "kubernetes.io/fc", "volume_detach", "success")).isEqualTo(1);
            assertThat(operations(c, "kubernetes.io/iscsi", "volume_detach", "success")).isEqualTo(1);
        }
    }

    /**
     * CSI migration (csi-translation-lib, GA and complete for aws-ebs, azure-disk and cinder): an aws-ebs PV is
     * attached through ebs.csi.aws.com — a VolumeAttachment named from the translated handle, its source the
     * PV's name — and an inline cinder volume through cinder.csi.openstack.org with the translated PV's spec
     * as inlineVolumeSpec; both are reported under the CSI unique names, their operations as migrated.
     */
    @Test
    void inTreeVolumesAreAttachedThroughTheirMigratedCsiDriver() throws Exception {
        String ns = TestNamespaces.newNamespace(client, "adc-migrate");
        String nodeName = node(true, true);
        String ebsId = "vol-" + UUID.randomUUID().toString().replace("-", "").substring(0, 17);
        String pvName = unique("pv");
        String claim = unique("claim");
        PersistentVolumeClaim pvc = client.persistentVolumeClaims().inNamespace(ns).resource(new PersistentVolumeClaimBuilder()
                .withNewMetadata().withName(claim).endMetadata().withNewSpec().withAccessModes("ReadWriteOnce")
                .withVolumeName(pvName).withNewResources().withRequests(Map.of("storage", new Quantity("1Gi"))).endResources()
                .endSpec().build()).create();
        client.persistentVolumes().resource(new PersistentVolumeBuilder().withNewMetadata().withName(pvName).endMetadata()
                .withNewSpec().withCapacity(Map.of("storage", new Quantity("1Gi"))).withAccessModes("ReadWriteOnce")
                .withNewAwsElasticBlockStore().withVolumeID("aws://us-east-1a/" + ebsId).withFsType("ext4").endAwsElasticBlockStore()
                .withNewClaimRef().withNamespace(ns).withName(claim).withUid(pvc.getMetadata().getUid()).endClaimRef()
                .endSpec().build()).create();
        pvc.setStatus(new io.fabric8.kubernetes.api.model.PersistentVolumeClaimStatusBuilder().withPhase("Bound")
                .withAccessModes("ReadWriteOnce").withCapacity(Map.of("storage", new Quantity("1Gi"))).build());
        client.persistentVolumeClaims().inNamespace(ns).resource(pvc).updateStatus();
        String cinderId = unique("cinder");
        Volume cinder = new VolumeBuilder().withName("scratch").withNewCinder().withVolumeID(cinderId).endCinder().build();
        String ebsVa = CsiPlugin.attachmentName(ebsId, CsiMigration.AWS_EBS_DRIVER, nodeName);
        String cinderVa = CsiPlugin.attachmentName(cinderId, CsiMigration.CINDER_DRIVER, nodeName);
        try (var c = start()) {
            Pod pod = pod(ns, nodeName, claimVolume("data", claim), cinder);
            await().atMost(WAIT).until(() -> va(ebsVa) != null && va(cinderVa) != null);
            VolumeAttachment ebs = va(ebsVa);
            assertThat(ebs.getSpec().getAttacher()).isEqualTo(CsiMigration.AWS_EBS_DRIVER);
            assertThat(ebs.getSpec().getNodeName()).isEqualTo(nodeName);
            assertThat(ebs.getSpec().getSource().getPersistentVolumeName()).isEqualTo(pvName);
            assertThat(ebs.getSpec().getSource().getInlineVolumeSpec()).isNull();
            VolumeAttachment inline = va(cinderVa);
            assertThat(inline.getSpec().getAttacher()).isEqualTo(CsiMigration.CINDER_DRIVER);
            assertThat(inline.getSpec().getSource().getPersistentVolumeName()).isNull();
            var inlineSpec = inline.getSpec().getSource().getInlineVolumeSpec();
            assertThat(inlineSpec.getCsi().getDriver()).isEqualTo(CsiMigration.CINDER_DRIVER);
            assertThat(inlineSpec.getCsi().getVolumeHandle()).isEqualTo(cinderId);
            assertThat(inlineSpec.getAccessModes()).containsExactly("ReadWriteOnce");
            assertThat(inlineSpec.getVolumeMode()).isEqualTo("Filesystem");

            attached(ebsVa);
            attached(cinderVa);
            String ebsName = "kubernetes.io/csi/" + CsiMigration.AWS_EBS_DRIVER + "^" + ebsId;
            String cinderName = "kubernetes.io/csi/" + CsiMigration.CINDER_DRIVER + "^" + cinderId;
            await().atMost(WAIT).until(() -> volumesAttached(nodeName).size() == 2);
            assertThat(volumesAttached(nodeName)).containsExactlyInAnyOrder(ebsName, cinderName);
            // the event names the translated spec: the PV, and the inline volume's translated PV
            await().atMost(WAIT).until(() -> hasEvent(ns, pod.getMetadata().getName(), "SuccessfulAttachVolume",
                    "AttachVolume.Attach succeeded for volume \"" + CsiMigration.CINDER_DRIVER + "-" + cinderId + "\" "));
            assertThat(operations(c, "kubernetes.io/csi:" + CsiMigration.AWS_EBS_DRIVER, "volume_attach", "success", true))
                    .isEqualTo(1);
            assertThat(operations(c, "kubernetes.io/csi:" + CsiMigration.AWS_EBS_DRIVER, "volume_attach", "success", false))
                    .isZero();

            deletePod(pod);
            await().atMost(WAIT).until(() -> va(ebsVa) == null && va(cinderVa) == null);
            await().atMost(WAIT).until(() -> volumesAttached(nodeName).isEmpty());
        }
    }

    /**
     * Portworx's migration is not complete in v1.34 (InTreePluginPortworxUnregister off): its volume is
     * translated, and attached through pxd.portworx.com, only on a node whose CSINode lists
     * kubernetes.io/portworx-volume in storage.alpha.kubernetes.io/migrated-plugins; elsewhere no plugin
     * attaches it. A cinder volume of the same pod (complete migration, no CSINode needed) shows the pod was
     * processed.
     */
    @Test
    void portworxIsMigratedOnlyOnNodesWhoseCsiNodeSaysSo() throws Exception {
        String ns = TestNamespaces.newNamespace(client, "adc-px");
        String migrated = node(true, true);
        String notMigrated = node(true, true);
        for (String[] n : new String[][] { { migrated, "kubernetes.io/gce-pd,kubernetes.io/portworx-volume" },
                { notMigrated, "kubernetes.io/gce-pd" } }) {
            client.storage().v1().csiNodes().resource(new io.fabric8.kubernetes.api.model.storage.CSINodeBuilder()
                    .withNewMetadata().withName(n[0]).withAnnotations(Map.of(CsiMigration.MIGRATED_PLUGINS_ANNOTATION, n[1]))
                    .endMetadata().withNewSpec().withDrivers(List.of()).endSpec().build()).create();
        }
        String pxOnMigrated = unique("px");
        String pxOnOther = unique("px");
        String cinderOnOther = unique("cinder");
        try (var c = start()) {
            pod(ns, migrated, new VolumeBuilder().withName("px").withNewPortworxVolume().withVolumeID(pxOnMigrated)
                    .endPortworxVolume().build());
            pod(ns, notMigrated, new VolumeBuilder().withName("px").withNewPortworxVolume().withVolumeID(pxOnOther)
                    .endPortworxVolume().build(),
                    new VolumeBuilder().withName("c").withNewCinder().withVolumeID(cinderOnOther).endCinder().build());
            String pxVa = CsiPlugin.attachmentName(pxOnMigrated, CsiMigration.PORTWORX_DRIVER, migrated);
            await().atMost(WAIT).until(() -> va(pxVa) != null);
            VolumeAttachment va = va(pxVa);
            assertThat(va.getSpec().getAttacher()).isEqualTo(CsiMigration.PORTWORX_DRIVER);
            assertThat(va.getSpec().getSource().getInlineVolumeSpec().getCsi().getVolumeHandle()).isEqualTo(pxOnMigrated);
            await().atMost(WAIT).until(() -> va(CsiPlugin.attachmentName(cinderOnOther, CsiMigration.CINDER_DRIVER,
                    notMigrated)) != null);
            passes(c.controller, 3);
            assertThat(client.storage().v1().volumeAttachments().list().getItems())
                    .filteredOn(v -> notMigrated.equals(v.getSpec().getNodeName()))
                    .extracting(v -> v.getSpec().getAttacher()).containsExactly(CsiMigration.CINDER_DRIVER);
        }
    }

    /**
     * No VolumeAttachment for a driver whose CSIDriver says attachRequired: false, for an inline (ephemeral)
     * CSI volume, or for a pod on a node without the controller-managed annotation; one for a driver with no
     * CSIDriver object (csi_plugin.go skipAttach). The attachment of the other volume of the same pod (and of
     * a pod on a managed node) is the signal that the pod was processed.
     */
    @Test
    void attachesOnlyWhatUpstreamsCsiPluginAttaches() throws Exception {
        String ns = TestNamespaces.newNamespace(client, "adc-skip");
        String managed = node(true, true);
        String unmanaged = node(false, true);
        String noAttach = driver(false);
        String noCsiDriverObject = unique("absent") + ".csi.example.com";
        String needsAttach = driver(true);
        String skipHandle = unique("h");
        String absentHandle = unique("h");
        String unmanagedHandle = unique("h");
        String skip = boundClaim(ns, unique("pv"), noAttach, skipHandle, "ReadWriteOnce");
        String absent = boundClaim(ns, unique("pv"), noCsiDriverObject, absentHandle, "ReadWriteOnce");
        String onUnmanaged = boundClaim(ns, unique("pv"), needsAttach, unmanagedHandle, "ReadWriteOnce");
        Volume inline = new VolumeBuilder().withName("inline").withNewCsi().withDriver(needsAttach).endCsi().build();
        try (var c = start()) {
            pod(ns, unmanaged, claimVolume("data", onUnmanaged));
            pod(ns, managed, claimVolume("skip", skip), claimVolume("absent", absent), inline);
            await().atMost(WAIT).until(() -> va(CsiPlugin.attachmentName(absentHandle, noCsiDriverObject, managed)) != null);
            // a later pod on the managed node, processed after the unmanaged one was
            String laterHandle = unique("h");
            String later = boundClaim(ns, unique("pv"), needsAttach, laterHandle, "ReadWriteOnce");
            pod(ns, managed, claimVolume("later", later));
            await().atMost(WAIT).until(() -> va(CsiPlugin.attachmentName(laterHandle, needsAttach, managed)) != null);
            List<String> names = client.storage().v1().volumeAttachments().list().getItems().stream()
                    .map(v -> v.getMetadata().getName()).toList();
            assertThat(names).doesNotContain(CsiPlugin.attachmentName(skipHandle, noAttach, managed),
                    CsiPlugin.attachmentName(unmanagedHandle, needsAttach, unmanaged));
            assertThat(client.storage().v1().volumeAttachments().list().getItems())
                    .noneMatch(v -> v.getSpec().getNodeName().equals(unmanaged))
                    .noneMatch(v -> v.getSpec().getAttacher().equals(noAttach));
        }
    }

    /** operation_generator.go: an attach error reported by the attacher is a FailedAttachVolume event on the pod. */
    @Test
    void anAttachErrorIsAFailedAttachVolumeEvent() throws Exception {
        String ns = TestNamespaces.newNamespace(client, "adc-fail");
        String nodeName = node(true, true);
        String driver = driver(true);
        String pvName = unique("pv");
        String handle = unique("handle");
        String claim = boundClaim(ns, pvName, driver, handle, "ReadWriteOnce");
        String vaName = CsiPlugin.attachmentName(handle, driver, nodeName);
        try (var c = start()) {
            Pod pod = pod(ns, nodeName, claimVolume("data", claim));
            await().atMost(WAIT).until(() -> va(vaName) != null);
            VolumeAttachment va = va(vaName);
            va.setStatus(new VolumeAttachmentStatusBuilder().withAttached(false)
                    .withAttachError(new VolumeErrorBuilder().withMessage("rpc error: disk busy").build()).build());
            client.storage().v1().volumeAttachments().resource(va).updateStatus();
            await().atMost(WAIT).until(() -> hasEvent(ns, pod.getMetadata().getName(), "FailedAttachVolume",
                    "AttachVolume.Attach failed for volume \"" + pvName + "\" : rpc error: disk busy"));
            assertThat(volumesAttached(nodeName)).isEmpty();
        }
    }

    /**
     * reconciler_test.go Test_ReportMultiAttachError: a ReadWriteOnce volume attached to one node is not
     * attached to another; the pod there gets one FailedAttachVolume event naming the pod that uses it.
     */
    @Test
    void aReadWriteOnceVolumeAttachedElsewhereIsAMultiAttachError() throws Exception {
        String ns = TestNamespaces.newNamespace(client, "adc-multi");
        String nodeA = node(true, true);
        String nodeB = node(true, true);
        String driver = driver(true);
        String pvName = unique("pv");
        String handle = unique("handle");
        String claim = boundClaim(ns, pvName, driver, handle, "ReadWriteOnce");
        try (var c = start()) {
            Pod first = pod(ns, nodeA, claimVolume("data", claim));
            await().atMost(WAIT).until(() -> va(CsiPlugin.attachmentName(handle, driver, nodeA)) != null);
            attached(CsiPlugin.attachmentName(handle, driver, nodeA));
            await().atMost(WAIT).until(() -> !volumesAttached(nodeA).isEmpty());
            Pod second = pod(ns, nodeB, claimVolume("data", claim));
            await().atMost(WAIT).until(() -> hasEvent(ns, second.getMetadata().getName(), "FailedAttachVolume",
                    "Multi-Attach error for volume \"" + pvName + "\" Volume is already used by pod(s) "
                            + first.getMetadata().getName()));
            assertThat(va(CsiPlugin.attachmentName(handle, driver, nodeB))).isNull();
        }
    }

    static void createAttachedVA(String name, String driver, String nodeName, String pvName) {
        client.storage().v1().volumeAttachments().resource(new io.fabric8.kubernetes.api.model.storage.VolumeAttachmentBuilder()
                .withNewMetadata().withName(name).endMetadata().withNewSpec().withAttacher(driver).withNodeName(nodeName)
                .withNewSource().withPersistentVolumeName(pvName).endSource().endSpec().build()).create();
        attached(name);
    }

    /**
     * attach_detach_controller_test.go's recovery cases: a volume the node reports attached (and whose
     * VolumeAttachment exists) that no pod uses any more is detached after a restart, though the actual
     * state knows it only by name.
     */
    @Test
    void afterARestartAVolumeNoPodUsesIsDetached() throws Exception {
        String nodeName = node(true, true);
        String driver = driver(true);
        String handle = unique("handle");
        String uniqueName = "kubernetes.io/csi/" + driver + "^" + handle;
        String vaName = CsiPlugin.attachmentName(handle, driver, nodeName);
        createAttachedVA(vaName, driver, nodeName, unique("gone-pv"));
        client.nodes().withName(nodeName).editStatus(n -> {
            n.getStatus().setVolumesAttached(List.of(new AttachedVolume("", uniqueName)));
            return n;
        });
        try (var c = start()) {
            await().atMost(WAIT).until(() -> va(vaName) == null);
            await().atMost(WAIT).until(() -> volumesAttached(nodeName).isEmpty());
        }
    }

    /**
     * The other recovery case: a VolumeAttachment already attached for a pod's volume (the node's status lost
     * it) is taken as uncertain, attached again without a new object, and reported in the node's status.
     */
    @Test
    void afterARestartAnExistingAttachmentIsReportedAgain() throws Exception {
        String ns = TestNamespaces.newNamespace(client, "adc-recover");
        String nodeName = node(true, true);
        String driver = driver(true);
        String pvName = unique("pv");
        String handle = unique("handle");
        String claim = boundClaim(ns, pvName, driver, handle, "ReadWriteOnce");
        String vaName = CsiPlugin.attachmentName(handle, driver, nodeName);
        createAttachedVA(vaName, driver, nodeName, pvName);
        String uid = va(vaName).getMetadata().getUid();
        pod(ns, nodeName, claimVolume("data", claim));
        try (var c = start()) {
            await().atMost(WAIT).until(() -> volumesAttached(nodeName).equals(List.of("kubernetes.io/csi/" + driver + "^" + handle)));
            assertThat(va(vaName).getMetadata().getUid()).isEqualTo(uid);
        }
    }
}
