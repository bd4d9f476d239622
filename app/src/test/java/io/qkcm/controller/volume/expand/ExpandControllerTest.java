package io.qkcm.controller.volume.expand;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Consumer;

import jakarta.inject.Inject;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimStatusBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeSpecBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.storage.StorageClassBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.qkcm.testing.ControllerHarness;
import io.qkcm.testing.ManagerOffProfile;
import io.qkcm.testing.QueueProbe;
import io.qkcm.testing.RealApiServer;
import io.qkcm.testing.RealApiServerResource;
import io.qkcm.testing.TestNamespaces;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.vertx.core.Vertx;

/**
 * persistentvolume-expander-controller against a real API server, after upstream's expand_controller_test.go
 * TestSyncHandler: a CSI volume without a migration path only gets the "waiting for an external controller"
 * event; an in-tree (aws-ebs, migrated) one gets the CSI driver's name in the storage-resizer annotation and
 * the migration event; a claim not asking for more gets nothing until its request grows.
 */
@QuarkusTest
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
@TestProfile(ManagerOffProfile.class)
class ExpandControllerTest {

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

    private ControllerHarness<ExpandController> start() throws InterruptedException {
        return ControllerHarness.create(vertx, ExpandController.NAME, "expand-controller", Map.of(),
                ExpandControllerDescriptor::newController).start();
    }

    static String unique(String prefix) {
        return prefix + "-" + UUID.randomUUID().toString().substring(0, 8);
    }

    static String expandableClass() {
        String name = unique("expandable");
        client.storage().v1().storageClasses().resource(new StorageClassBuilder().withNewMetadata().withName(name)
                .endMetadata().withProvisioner("example.com/none").withAllowVolumeExpansion(true).build()).create();
        return name;
    }

    /** A claim asking {@code request}, bound to a new PV (source set by {@code source}) of {@code capacity}. */
    static PersistentVolumeClaim boundClaim(String ns, String storageClass, String request, String capacity,
            Consumer<PersistentVolumeSpecBuilder> source) {
        String pvName = unique("pv");
        PersistentVolumeClaim pvc = client.persistentVolumeClaims().inNamespace(ns).resource(new PersistentVolumeClaimBuilder()
                .withNewMetadata().withName(unique("claim")).endMetadata().withNewSpec().withAccessModes("ReadWriteOnce")
                .withStorageClassName(storageClass).withVolumeName(pvName).withNewResources()
                .withRequests(Map.of("storage", new Quantity(request))).endResources().endSpec().build()).create();
        PersistentVolumeSpecBuilder spec = new PersistentVolumeSpecBuilder().withCapacity(Map.of("storage", new Quantity(capacity)))
                .withAccessModes("ReadWriteOnce").withStorageClassName(storageClass).withNewClaimRef().withNamespace(ns)
                .withName(pvc.getMetadata().getName()).withUid(pvc.getMetadata().getUid()).endClaimRef();
        source.accept(spec);
        client.persistentVolumes().resource(new PersistentVolumeBuilder().withNewMetadata().withName(pvName).endMetadata()
                .withSpec(spec.build()).build()).create();
        pvc.setStatus(new PersistentVolumeClaimStatusBuilder().withPhase("Bound").withAccessModes("ReadWriteOnce")
                .withCapacity(Map.of("storage", new Quantity(capacity))).build());
        return client.persistentVolumeClaims().inNamespace(ns).resource(pvc).updateStatus();
    }

    static Consumer<PersistentVolumeSpecBuilder> csi(String driver) {
        return s -> s.withNewCsi().withDriver(driver).withVolumeHandle(unique("h")).endCsi();
    }

    static List<Event> events(String ns, String claim) {
        return client.v1().events().inNamespace(ns).list().getItems().stream()
                .filter(e -> claim.equals(e.getInvolvedObject().getName())).toList();
    }

    static boolean hasEvent(String ns, String claim, String type, String message) {
        return events(ns, claim).stream().anyMatch(e -> ExpandController.EXTERNAL_EXPANDING.equals(e.getReason())
                && type.equals(e.getType()) && message.equals(e.getMessage())
                && ExpandController.COMPONENT.equals(e.getSource().getComponent()));
    }

    static Map<String, String> annotations(String ns, String claim) {
        Map<String, String> a = client.persistentVolumeClaims().inNamespace(ns).withName(claim).get().getMetadata().getAnnotations();
        return a == null ? Map.of() : a;
    }

    /** "for csi plugin without migration path": the event only, no annotation. */
    @Test
    void aCsiVolumeWaitsForItsExternalResizer() throws Exception {
        String ns = TestNamespaces.newNamespace(client, "expand-csi");
        String sc = expandableClass();
        try (var c = start()) {
            PersistentVolumeClaim pvc = boundClaim(ns, sc, "2Gi", "1Gi", csi("com.csi.ceph"));
            String name = pvc.getMetadata().getName();
            await().atMost(WAIT).until(() -> hasEvent(ns, name, "Normal", "waiting for an external controller to expand this PVC"));
            assertThat(annotations(ns, name)).doesNotContainKey(ExpandController.VOLUME_RESIZER_KEY);
        }
    }

    /**
     * A FlexVolume PV: upstream's expand controller initialises its plugins with no dynamic prober, so no flex
     * driver is found by FindExpandablePluginBySpec and the claim waits for an external controller (Normal
     * event); the claim gets no resizer annotation and nothing is marked in progress.
     */
    @Test
    void aFlexVolumeWaitsForAnExternalController() throws Exception {
        String ns = TestNamespaces.newNamespace(client, "expand-flex");
        String sc = expandableClass();
        try (var c = start()) {
            PersistentVolumeClaim pvc = boundClaim(ns, sc, "2Gi", "1Gi",
                    s -> s.withNewFlexVolume().withDriver("example.com/lvm").withFsType("ext4").endFlexVolume());
            String name = pvc.getMetadata().getName();
            await().atMost(WAIT).until(() -> hasEvent(ns, name, "Normal", "waiting for an external controller to expand this PVC"));
            PersistentVolumeClaim now = client.persistentVolumeClaims().inNamespace(ns).withName(name).get();
            assertThat(annotations(ns, name)).doesNotContainKey(ExpandController.VOLUME_RESIZER_KEY);
            assertThat(now.getStatus().getConditions()).isNullOrEmpty();
            assertThat(now.getStatus().getAllocatedResourceStatuses()).isNullOrEmpty();
        }
    }

    /** "when pvc and pv has everything for in-tree plugin": aws-ebs is migrated to ebs.csi.aws.com. */
    @Test
    void aMigratedInTreeVolumeGetsTheCsiResizerAnnotation() throws Exception {
        String ns = TestNamespaces.newNamespace(client, "expand-ebs");
        String sc = expandableClass();
        try (var c = start()) {
            PersistentVolumeClaim pvc = boundClaim(ns, sc, "2Gi", "1Gi",
                    s -> s.withNewAwsElasticBlockStore().withVolumeID("vol-0123").endAwsElasticBlockStore());
            String name = pvc.getMetadata().getName();
            await().atMost(WAIT).until(() -> "ebs.csi.aws.com".equals(annotations(ns, name).get(ExpandController.VOLUME_RESIZER_KEY)));
            await().atMost(WAIT).until(() -> hasEvent(ns, name, "Normal",
                    "CSI migration enabled for kubernetes.io/aws-ebs; waiting for external resizer to expand the pvc"));
        }
    }

    /** A claim whose request does not exceed its capacity is left alone; growing the request hands it over. */
    @Test
    void onlyAGrownRequestIsHandedOver() throws Exception {
        String ns = TestNamespaces.newNamespace(client, "expand-grow");
        String sc = expandableClass();
        try (var c = start()) {
            QueueProbe queue = QueueProbe.of(c.context.metrics(), ExpandController.QUEUE);
            QueueProbe.Mark before = queue.mark();
            PersistentVolumeClaim pvc = boundClaim(ns, sc, "1Gi", "1Gi", csi("com.csi.grow"));
            String name = pvc.getMetadata().getName();
            // the bound claim was queued and synced, and wrote nothing
            queue.awaitProcessedSince(before, () -> ExpandController.isBound(
                    c.controller.cachedClaim(ns + "/" + name)), WAIT);
            assertThat(events(ns, name)).isEmpty();

            client.persistentVolumeClaims().inNamespace(ns).withName(name).edit(p -> {
                p.getSpec().getResources().setRequests(Map.of("storage", new Quantity("3Gi")));
                return p;
            });
            await().atMost(WAIT).until(() -> hasEvent(ns, name, "Normal", "waiting for an external controller to expand this PVC"));
        }
    }

    @Test
    void quantitiesCompareAsResourceQuantityCmp() {
        assertThat(ExpandController.compare(new Quantity("1Gi"), new Quantity("1024Mi"))).isZero();
        assertThat(ExpandController.compare(new Quantity("2G"), new Quantity("1Gi"))).isPositive();
        assertThat(ExpandController.compare(null, new Quantity("1"))).isNegative();
        assertThat(ExpandController.compare(new Quantity("0"), null)).isZero();
    }
}
