package io.qkcm.controller.volume.persistentvolume;

import static io.qkcm.controller.volume.persistentvolume.BinderWorld.claim;
import static io.qkcm.controller.volume.persistentvolume.BinderWorld.vol;
import static io.qkcm.controller.volume.persistentvolume.StorageHelpers.ANN_BIND_COMPLETED;
import static io.qkcm.controller.volume.persistentvolume.StorageHelpers.ANN_BOUND_BY_CONTROLLER;
import static io.qkcm.controller.volume.persistentvolume.StorageHelpers.ANN_BETA_STORAGE_PROVISIONER;
import static io.qkcm.controller.volume.persistentvolume.StorageHelpers.ANN_DYNAMICALLY_PROVISIONED;
import static io.qkcm.controller.volume.persistentvolume.StorageHelpers.ANN_MIGRATED_TO;
import static io.qkcm.controller.volume.persistentvolume.StorageHelpers.ANN_SELECTED_NODE;
import static io.qkcm.controller.volume.persistentvolume.StorageHelpers.ANN_STORAGE_PROVISIONER;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.stream.Stream;

import jakarta.inject.Inject;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.storage.StorageClass;
import io.fabric8.kubernetes.api.model.storage.StorageClassBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.qkcm.controller.volume.persistentvolume.BinderWorld.Clm;
import io.qkcm.controller.volume.persistentvolume.BinderWorld.Vol;
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
 * Upstream's binder_test.go, provision_test.go, delete_test.go and recycle_test.go tables against a
 * real API server: each case's volumes and claims are created as upstream's framework builds them
 * (claims' UIDs are the server's, upstream's symbols mapped to them), the binder's own stores get
 * them (except a claim upstream keeps out of the local store), one {@code syncClaim} of the first
 * claim or {@code syncVolume} of the first volume runs, and the objects on the server must then be
 * upstream's expected ones, with upstream's events. Reclaim operations run in the background as
 * upstream's do, so the expected state is awaited.
 */
@QuarkusTest
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
@TestProfile(ManagerOffProfile.class)
class PersistentVolumeBinderTableTest {

    static final String RETAIN = "Retain";
    static final String DELETE = "Delete";
    static final String RECYCLE = "Recycle";
    static final String AVAILABLE = "Available";
    static final String BOUND = "Bound";
    static final String RELEASED = "Released";
    static final String FAILED = "Failed";
    static final String PENDING = "Pending";
    static final String LOST = "Lost";

    static final String CLASS_EMPTY = "";
    // no StorageClass object has these names, as in upstream's tests
    static final String CLASS_GOLD = "pvb-gold";
    static final String CLASS_SILVER = "pvb-silver";
    static final String CLASS_WAIT = "pvb-wait";
    static final String CLASS_EXTERNAL = "pvb-external";
    static final String CLASS_IN_TREE = "pvb-in-tree";
    static final String CLASS_MIGRATED = "pvb-migrated";
    static final String EXTERNAL_PROVISIONER = "vendor.example.com/my-volume";

    static final Map<String, String> LABELS = Map.of("foo", "true", "bar", "false");

    enum Sync {
        CLAIM, VOLUME
    }

    record Case(String name, List<Vol> initialVolumes, List<Vol> expectedVolumes, List<Clm> initialClaims,
            List<Clm> expectedClaims, List<String> events, Sync sync, boolean error) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Case claimCase(String name, List<Vol> iv, List<Vol> ev, List<Clm> ic, List<Clm> ec, List<String> events) {
        return new Case(name, iv, ev, ic, ec, events, Sync.CLAIM, false);
    }

    static Case volumeCase(String name, List<Vol> iv, List<Vol> ev, List<Clm> ic, List<Clm> ec, List<String> events) {
        return new Case(name, iv, ev, ic, ec, events, Sync.VOLUME, false);
    }

    static final List<String> NO_EVENTS = List.of();

    static Stream<Case> cases() {
        List<Case> t = new ArrayList<>();
        // [1] the user did not ask for a specific volume
        t.add(claimCase("1-1 - successful bind",
                List.of(vol("volume1-1", "1Gi", "", "", AVAILABLE, RETAIN, CLASS_EMPTY)),
                List.of(vol("volume1-1", "1Gi", "uid1-1", "claim1-1", BOUND, RETAIN, CLASS_EMPTY, ANN_BOUND_BY_CONTROLLER)),
                List.of(claim("claim1-1", "uid1-1", "1Gi", "", PENDING, null)),
                List.of(claim("claim1-1", "uid1-1", "1Gi", "volume1-1", BOUND, null, ANN_BOUND_BY_CONTROLLER,
                        ANN_BIND_COMPLETED)),
                NO_EVENTS));
        t.add(claimCase("1-2 - noop",
                List.of(vol("volume1-2", "1Gi", "", "", AVAILABLE, RETAIN, CLASS_EMPTY)),
                List.of(vol("volume1-2", "1Gi", "", "", AVAILABLE, RETAIN, CLASS_EMPTY)),
                List.of(claim("claim1-2", "uid1-2", "10Gi", "", PENDING, null)),
                List.of(claim("claim1-2", "uid1-2", "10Gi", "", PENDING, null)),
                List.of("Normal FailedBinding")));
        t.add(claimCase("1-3 - reset to Pending",
                List.of(vol("volume1-3", "1Gi", "", "", AVAILABLE, RETAIN, CLASS_EMPTY)),
                List.of(vol("volume1-3", "1Gi", "", "", AVAILABLE, RETAIN, CLASS_EMPTY)),
                List.of(claim("claim1-3", "uid1-3", "10Gi", "", BOUND, null)),
                List.of(claim("claim1-3", "uid1-3", "10Gi", "", PENDING, null)),
                List.of("Normal FailedBinding")));
        t.add(claimCase("1-4 - smallest volume",
                List.of(vol("volume1-4_1", "10Gi", "", "", AVAILABLE, RETAIN, CLASS_EMPTY),
                        vol("volume1-4_2", "1Gi", "", "", AVAILABLE, RETAIN, CLASS_EMPTY)),
                List.of(vol("volume1-4_1", "10Gi", "", "", AVAILABLE, RETAIN, CLASS_EMPTY),
                        vol("volume1-4_2", "1Gi", "uid1-4", "claim1-4", BOUND, RETAIN, CLASS_EMPTY, ANN_BOUND_BY_CONTROLLER)),
                List.of(claim("claim1-4", "uid1-4", "1Gi", "", PENDING, null)),
                List.of(claim("claim1-4", "uid1-4", "1Gi", "volume1-4_2", BOUND, null, ANN_BOUND_BY_CONTROLLER,
                        ANN_BIND_COMPLETED)),
                NO_EVENTS));
        t.add(claimCase("1-5 - prebound volume by name - success",
                List.of(vol("volume1-5_1", "10Gi", "", "claim1-5", AVAILABLE, RETAIN, CLASS_EMPTY),
                        vol("volume1-5_2", "1Gi", "", "", AVAILABLE, RETAIN, CLASS_EMPTY)),
                List.of(vol("volume1-5_1", "10Gi", "uid1-5", "claim1-5", BOUND, RETAIN, CLASS_EMPTY),
                        vol("volume1-5_2", "1Gi", "", "", AVAILABLE, RETAIN, CLASS_EMPTY)),
                List.of(claim("claim1-5", "uid1-5", "1Gi", "", PENDING, null)),
                List.of(claim("claim1-5", "uid1-5", "1Gi", "volume1-5_1", BOUND, null, ANN_BOUND_BY_CONTROLLER,
                        ANN_BIND_COMPLETED).withCapacity("10Gi")),
                NO_EVENTS));
        t.add(claimCase("1-6 - prebound volume by UID - success",
                List.of(vol("volume1-6_1", "10Gi", "uid1-6", "claim1-6", AVAILABLE, RETAIN, CLASS_EMPTY),
                        vol("volume1-6_2", "1Gi", "", "", AVAILABLE, RETAIN, CLASS_EMPTY)),
                List.of(vol("volume1-6_1", "10Gi", "uid1-6", "claim1-6", BOUND, RETAIN, CLASS_EMPTY),
                        vol("volume1-6_2", "1Gi", "", "", AVAILABLE, RETAIN, CLASS_EMPTY)),
                List.of(claim("claim1-6", "uid1-6", "1Gi", "", PENDING, null)),
                List.of(claim("claim1-6", "uid1-6", "1Gi", "volume1-6_1", BOUND, null, ANN_BOUND_BY_CONTROLLER,
                        ANN_BIND_COMPLETED).withCapacity("10Gi")),
                NO_EVENTS));
        t.add(claimCase("1-7 - prebound volume to different claim",
                List.of(vol("volume1-7", "10Gi", "uid1-777", "claim1-7", AVAILABLE, RETAIN, CLASS_EMPTY)),
                List.of(vol("volume1-7", "10Gi", "uid1-777", "claim1-7", AVAILABLE, RETAIN, CLASS_EMPTY)),
                List.of(claim("claim1-7", "uid1-7", "1Gi", "", PENDING, null)),
                List.of(claim("claim1-7", "uid1-7", "1Gi", "", PENDING, null)),
                List.of("Normal FailedBinding")));
        t.add(claimCase("1-8 - complete bind after crash - PV bound",
                List.of(vol("volume1-8", "1Gi", "uid1-8", "claim1-8", AVAILABLE, RETAIN, CLASS_EMPTY, ANN_BOUND_BY_CONTROLLER)),
                List.of(vol("volume1-8", "1Gi", "uid1-8", "claim1-8", BOUND, RETAIN, CLASS_EMPTY, ANN_BOUND_BY_CONTROLLER)),
                List.of(claim("claim1-8", "uid1-8", "1Gi", "", PENDING, null)),
                List.of(claim("claim1-8", "uid1-8", "1Gi", "volume1-8", BOUND, null, ANN_BOUND_BY_CONTROLLER,
                        ANN_BIND_COMPLETED)),
                NO_EVENTS));
        t.add(claimCase("1-9 - complete bind after crash - PV status saved",
                List.of(vol("volume1-9", "1Gi", "uid1-9", "claim1-9", BOUND, RETAIN, CLASS_EMPTY, ANN_BOUND_BY_CONTROLLER)),
                List.of(vol("volume1-9", "1Gi", "uid1-9", "claim1-9", BOUND, RETAIN, CLASS_EMPTY, ANN_BOUND_BY_CONTROLLER)),
                List.of(claim("claim1-9", "uid1-9", "1Gi", "", PENDING, null)),
                List.of(claim("claim1-9", "uid1-9", "1Gi", "volume1-9", BOUND, null, ANN_BOUND_BY_CONTROLLER,
                        ANN_BIND_COMPLETED)),
                NO_EVENTS));
        t.add(claimCase("1-10 - complete bind after crash - PVC bound",
                List.of(vol("volume1-10", "1Gi", "uid1-10", "claim1-10", BOUND, RETAIN, CLASS_EMPTY, ANN_BOUND_BY_CONTROLLER)),
                List.of(vol("volume1-10", "1Gi", "uid1-10", "claim1-10", BOUND, RETAIN, CLASS_EMPTY, ANN_BOUND_BY_CONTROLLER)),
                List.of(claim("claim1-10", "uid1-10", "1Gi", "volume1-10", PENDING, null, ANN_BOUND_BY_CONTROLLER,
                        ANN_BIND_COMPLETED)),
                List.of(claim("claim1-10", "uid1-10", "1Gi", "volume1-10", BOUND, null, ANN_BOUND_BY_CONTROLLER,
                        ANN_BIND_COMPLETED)),
                NO_EVENTS));
        t.add(claimCase("1-11 - bind when selector matches",
                List.of(vol("volume1-1", "1Gi", "", "", AVAILABLE, RETAIN, CLASS_EMPTY).withLabels(LABELS)),
                List.of(vol("volume1-1", "1Gi", "uid1-1", "claim1-1", BOUND, RETAIN, CLASS_EMPTY, ANN_BOUND_BY_CONTROLLER)
                        .withLabels(LABELS)),
                List.of(claim("claim1-1", "uid1-1", "1Gi", "", PENDING, null).withSelector(LABELS)),
                List.of(claim("claim1-1", "uid1-1", "1Gi", "volume1-1", BOUND, null, ANN_BOUND_BY_CONTROLLER,
                        ANN_BIND_COMPLETED).withSelector(LABELS)),
                NO_EVENTS));
        t.add(claimCase("1-12 - do not bind when selector does not match",
                List.of(vol("volume1-1", "1Gi", "", "", AVAILABLE, RETAIN, CLASS_EMPTY)),
                List.of(vol("volume1-1", "1Gi", "", "", AVAILABLE, RETAIN, CLASS_EMPTY)),
                List.of(claim("claim1-1", "uid1-1", "1Gi", "", PENDING, null).withSelector(LABELS)),
                List.of(claim("claim1-1", "uid1-1", "1Gi", "", PENDING, null).withSelector(LABELS)),
                List.of("Normal FailedBinding")));
        t.add(claimCase("1-13 - delayed binding",
                List.of(vol("volume1-1", "1Gi", "", "", AVAILABLE, RETAIN, CLASS_WAIT)),
                List.of(vol("volume1-1", "1Gi", "", "", AVAILABLE, RETAIN, CLASS_WAIT)),
                List.of(claim("claim1-1", "uid1-1", "1Gi", "", PENDING, CLASS_WAIT)),
                List.of(claim("claim1-1", "uid1-1", "1Gi", "", PENDING, CLASS_WAIT)),
                List.of("Normal WaitForFirstConsumer")));
        t.add(claimCase("1-14 - successful prebound PV",
                List.of(vol("volume1-1", "1Gi", "", "claim1-1", AVAILABLE, RETAIN, CLASS_WAIT)),
                List.of(vol("volume1-1", "1Gi", "uid1-1", "claim1-1", BOUND, RETAIN, CLASS_WAIT)),
                List.of(claim("claim1-1", "uid1-1", "1Gi", "", PENDING, CLASS_WAIT)),
                List.of(claim("claim1-1", "uid1-1", "1Gi", "volume1-1", BOUND, CLASS_WAIT, ANN_BOUND_BY_CONTROLLER,
                        ANN_BIND_COMPLETED)),
                NO_EVENTS));
        t.add(claimCase("1-15 - successful prebound PVC",
                List.of(vol("volume1-15_1", "10Gi", "", "", AVAILABLE, RETAIN, CLASS_EMPTY),
                        vol("volume1-15_2", "1Gi", "", "", AVAILABLE, RETAIN, CLASS_EMPTY)),
                List.of(vol("volume1-15_1", "10Gi", "uid1-15", "claim1-15", BOUND, RETAIN, CLASS_EMPTY,
                        ANN_BOUND_BY_CONTROLLER), vol("volume1-15_2", "1Gi", "", "", AVAILABLE, RETAIN, CLASS_EMPTY)),
                List.of(claim("claim1-15", "uid1-15", "1Gi", "volume1-15_1", PENDING, null)),
                List.of(claim("claim1-15", "uid1-15", "1Gi", "volume1-15_1", BOUND, null, ANN_BIND_COMPLETED)
                        .withCapacity("10Gi")),
                NO_EVENTS));
        t.add(claimCase("1-16 - successful prebound PVC (different access modes)",
                List.of(vol("volume1-16", "1Gi", "", "", AVAILABLE, RETAIN, CLASS_EMPTY)),
                List.of(vol("volume1-16", "1Gi", "", "", AVAILABLE, RETAIN, CLASS_EMPTY)),
                List.of(claim("claim1-16", "uid1-16", "1Gi", "volume1-16", PENDING, null).withModes(List.of("ReadWriteMany"))),
                List.of(claim("claim1-16", "uid1-16", "1Gi", "volume1-16", PENDING, null).withModes(List.of("ReadWriteMany"))),
                List.of("Warning VolumeMismatch")));
        t.add(claimCase("1-17 - skip non-available PV if it's not pre-bind",
                List.of(vol("volume1-17-pending", "1Gi", "", "", PENDING, RETAIN, CLASS_EMPTY),
                        vol("volume1-17-failed", "1Gi", "", "", FAILED, RETAIN, CLASS_EMPTY),
                        vol("volume1-17-released", "1Gi", "", "", RELEASED, RETAIN, CLASS_EMPTY)),
                List.of(vol("volume1-17-pending", "1Gi", "", "", PENDING, RETAIN, CLASS_EMPTY),
                        vol("volume1-17-failed", "1Gi", "", "", FAILED, RETAIN, CLASS_EMPTY),
                        vol("volume1-17-released", "1Gi", "", "", RELEASED, RETAIN, CLASS_EMPTY)),
                List.of(claim("claim1-17", "uid1-17", "1Gi", "", PENDING, null)),
                List.of(claim("claim1-17", "uid1-17", "1Gi", "", PENDING, null)),
                List.of("Normal FailedBinding")));
        t.add(claimCase("1-18 - successful pre-bound PV to PVC provisioning",
                List.of(vol("volume1-18", "1Gi", "uid1-18", "claim1-18", AVAILABLE, RETAIN, CLASS_WAIT)),
                List.of(vol("volume1-18", "1Gi", "uid1-18", "claim1-18", BOUND, RETAIN, CLASS_WAIT)),
                List.of(claim("claim1-18", "uid1-18", "1Gi", "", PENDING, CLASS_WAIT).withAnnotation(ANN_SELECTED_NODE, "node1")),
                List.of(claim("claim1-18", "uid1-18", "1Gi", "volume1-18", BOUND, CLASS_WAIT, ANN_BOUND_BY_CONTROLLER,
                        ANN_BIND_COMPLETED).withAnnotation(ANN_SELECTED_NODE, "node1")),
                NO_EVENTS));
        // [2] the user asked for a specific volume
        t.add(claimCase("2-1 - claim prebound to non-existing volume - noop",
                List.of(), List.of(),
                List.of(claim("claim2-1", "uid2-1", "10Gi", "volume2-1", PENDING, null)),
                List.of(claim("claim2-1", "uid2-1", "10Gi", "volume2-1", PENDING, null)),
                NO_EVENTS));
        t.add(claimCase("2-2 - claim prebound to non-existing volume - reset status",
                List.of(), List.of(),
                List.of(claim("claim2-2", "uid2-2", "10Gi", "volume2-2", BOUND, null)),
                List.of(claim("claim2-2", "uid2-2", "10Gi", "volume2-2", PENDING, null)),
                NO_EVENTS));
        t.add(claimCase("2-3 - claim prebound to unbound volume",
                List.of(vol("volume2-3", "1Gi", "", "", AVAILABLE, RETAIN, CLASS_EMPTY)),
                List.of(vol("volume2-3", "1Gi", "uid2-3", "claim2-3", BOUND, RETAIN, CLASS_EMPTY, ANN_BOUND_BY_CONTROLLER)),
                List.of(claim("claim2-3", "uid2-3", "1Gi", "volume2-3", PENDING, null)),
                List.of(claim("claim2-3", "uid2-3", "1Gi", "volume2-3", BOUND, null, ANN_BIND_COMPLETED)),
                NO_EVENTS));
        t.add(claimCase("2-4 - claim prebound to prebound volume by name",
                List.of(vol("volume2-4", "1Gi", "", "claim2-4", AVAILABLE, RETAIN, CLASS_EMPTY)),
                List.of(vol("volume2-4", "1Gi", "uid2-4", "claim2-4", BOUND, RETAIN, CLASS_EMPTY)),
                List.of(claim("claim2-4", "uid2-4", "1Gi", "volume2-4", PENDING, null)),
                List.of(claim("claim2-4", "uid2-4", "1Gi", "volume2-4", BOUND, null, ANN_BIND_COMPLETED)),
                NO_EVENTS));
        t.add(claimCase("2-5 - claim prebound to prebound volume by UID",
                List.of(vol("volume2-5", "1Gi", "uid2-5", "claim2-5", AVAILABLE, RETAIN, CLASS_EMPTY)),
                List.of(vol("volume2-5", "1Gi", "uid2-5", "claim2-5", BOUND, RETAIN, CLASS_EMPTY)),
                List.of(claim("claim2-5", "uid2-5", "1Gi", "volume2-5", PENDING, null)),
                List.of(claim("claim2-5", "uid2-5", "1Gi", "volume2-5", BOUND, null, ANN_BIND_COMPLETED)),
                NO_EVENTS));
        t.add(claimCase("2-6 - claim prebound to already bound volume",
                List.of(vol("volume2-6", "1Gi", "uid2-6_1", "claim2-6_1", BOUND, RETAIN, CLASS_EMPTY)),
                List.of(vol("volume2-6", "1Gi", "uid2-6_1", "claim2-6_1", BOUND, RETAIN, CLASS_EMPTY)),
                List.of(claim("claim2-6", "uid2-6", "1Gi", "volume2-6", BOUND, null)),
                List.of(claim("claim2-6", "uid2-6", "1Gi", "volume2-6", PENDING, null)),
                List.of("Warning FailedBinding")));
        t.add(new Case("2-7 - claim bound by controller to already bound volume",
                List.of(vol("volume2-7", "1Gi", "uid2-7_1", "claim2-7_1", BOUND, RETAIN, CLASS_EMPTY)),
                List.of(vol("volume2-7", "1Gi", "uid2-7_1", "claim2-7_1", BOUND, RETAIN, CLASS_EMPTY)),
                List.of(claim("claim2-7", "uid2-7", "1Gi", "volume2-7", BOUND, null, ANN_BOUND_BY_CONTROLLER)),
                List.of(claim("claim2-7", "uid2-7", "1Gi", "volume2-7", BOUND, null, ANN_BOUND_BY_CONTROLLER)),
                List.of("Warning FailedBinding"), Sync.CLAIM, true));
        t.add(claimCase("2-8 - claim prebound to unbound volume that does not match the selector",
                List.of(vol("volume2-8", "1Gi", "", "", AVAILABLE, RETAIN, CLASS_EMPTY)),
                List.of(vol("volume2-8", "1Gi", "uid2-8", "claim2-8", BOUND, RETAIN, CLASS_EMPTY, ANN_BOUND_BY_CONTROLLER)),
                List.of(claim("claim2-8", "uid2-8", "1Gi", "volume2-8", PENDING, null).withSelector(LABELS)),
                List.of(claim("claim2-8", "uid2-8", "1Gi", "volume2-8", BOUND, null, ANN_BIND_COMPLETED).withSelector(LABELS)),
                NO_EVENTS));
        t.add(claimCase("2-9 - claim prebound to unbound volume that size is smaller than requested",
                List.of(vol("volume2-9", "1Gi", "", "", AVAILABLE, RETAIN, CLASS_EMPTY)),
                List.of(vol("volume2-9", "1Gi", "", "", AVAILABLE, RETAIN, CLASS_EMPTY)),
                List.of(claim("claim2-9", "uid2-9", "2Gi", "volume2-9", BOUND, null)),
                List.of(claim("claim2-9", "uid2-9", "2Gi", "volume2-9", PENDING, null)),
                List.of("Warning VolumeMismatch")));
        t.add(claimCase("2-10 - claim prebound to unbound volume that class is different",
                List.of(vol("volume2-10", "1Gi", "", "", AVAILABLE, RETAIN, CLASS_GOLD)),
                List.of(vol("volume2-10", "1Gi", "", "", AVAILABLE, RETAIN, CLASS_GOLD)),
                List.of(claim("claim2-10", "uid2-10", "1Gi", "volume2-10", BOUND, null)),
                List.of(claim("claim2-10", "uid2-10", "1Gi", "volume2-10", PENDING, null)),
                List.of("Warning VolumeMismatch")));
        // [3] syncing bound claims
        t.add(claimCase("3-1 - bound claim with missing VolumeName",
                List.of(), List.of(),
                List.of(claim("claim3-1", "uid3-1", "10Gi", "", BOUND, null, ANN_BOUND_BY_CONTROLLER, ANN_BIND_COMPLETED)),
                List.of(claim("claim3-1", "uid3-1", "10Gi", "", LOST, null, ANN_BOUND_BY_CONTROLLER, ANN_BIND_COMPLETED)),
                List.of("Warning ClaimLost")));
        t.add(claimCase("3-2 - bound claim with missing volume",
                List.of(), List.of(),
                List.of(claim("claim3-2", "uid3-2", "10Gi", "volume3-2", BOUND, null, ANN_BOUND_BY_CONTROLLER,
                        ANN_BIND_COMPLETED)),
                List.of(claim("claim3-2", "uid3-2", "10Gi", "volume3-2", LOST, null, ANN_BOUND_BY_CONTROLLER,
                        ANN_BIND_COMPLETED)),
                List.of("Warning ClaimLost")));
        t.add(claimCase("3-3 - bound claim with unbound volume",
                List.of(vol("volume3-3", "10Gi", "", "", AVAILABLE, RETAIN, CLASS_EMPTY)),
                List.of(vol("volume3-3", "10Gi", "uid3-3", "claim3-3", BOUND, RETAIN, CLASS_EMPTY, ANN_BOUND_BY_CONTROLLER)),
                List.of(claim("claim3-3", "uid3-3", "10Gi", "volume3-3", PENDING, null, ANN_BOUND_BY_CONTROLLER,
                        ANN_BIND_COMPLETED)),
                List.of(claim("claim3-3", "uid3-3", "10Gi", "volume3-3", BOUND, null, ANN_BOUND_BY_CONTROLLER,
                        ANN_BIND_COMPLETED)),
                NO_EVENTS));
        t.add(claimCase("3-4 - bound claim with prebound volume",
                List.of(vol("volume3-4", "10Gi", "claim3-4-x", "claim3-4", AVAILABLE, RETAIN, CLASS_EMPTY)),
                List.of(vol("volume3-4", "10Gi", "claim3-4-x", "claim3-4", AVAILABLE, RETAIN, CLASS_EMPTY)),
                List.of(claim("claim3-4", "uid3-4", "10Gi", "volume3-4", PENDING, null, ANN_BOUND_BY_CONTROLLER,
                        ANN_BIND_COMPLETED)),
                List.of(claim("claim3-4", "uid3-4", "10Gi", "volume3-4", LOST, null, ANN_BOUND_BY_CONTROLLER,
                        ANN_BIND_COMPLETED)),
                List.of("Warning ClaimMisbound")));
        t.add(claimCase("3-5 - bound claim with bound volume",
                List.of(vol("volume3-5", "10Gi", "uid3-5", "claim3-5", AVAILABLE, RETAIN, CLASS_EMPTY)),
                List.of(vol("volume3-5", "10Gi", "uid3-5", "claim3-5", BOUND, RETAIN, CLASS_EMPTY)),
                List.of(claim("claim3-5", "uid3-5", "10Gi", "volume3-5", PENDING, null, ANN_BIND_COMPLETED)),
                List.of(claim("claim3-5", "uid3-5", "10Gi", "volume3-5", BOUND, null, ANN_BIND_COMPLETED)),
                NO_EVENTS));
        t.add(claimCase("3-6 - bound claim with bound volume",
                List.of(vol("volume3-6", "10Gi", "uid3-6-x", "claim3-6-x", AVAILABLE, RETAIN, CLASS_EMPTY)),
                List.of(vol("volume3-6", "10Gi", "uid3-6-x", "claim3-6-x", AVAILABLE, RETAIN, CLASS_EMPTY)),
                List.of(claim("claim3-6", "uid3-6", "10Gi", "volume3-6", PENDING, null, ANN_BIND_COMPLETED)),
                List.of(claim("claim3-6", "uid3-6", "10Gi", "volume3-6", LOST, null, ANN_BIND_COMPLETED)),
                List.of("Warning ClaimMisbound")));
        t.add(claimCase("3-7 - bound claim with unbound volume where selector doesn't match",
                List.of(vol("volume3-3", "10Gi", "", "", AVAILABLE, RETAIN, CLASS_EMPTY)),
                List.of(vol("volume3-3", "10Gi", "uid3-3", "claim3-3", BOUND, RETAIN, CLASS_EMPTY, ANN_BOUND_BY_CONTROLLER)),
                List.of(claim("claim3-3", "uid3-3", "10Gi", "volume3-3", PENDING, null, ANN_BOUND_BY_CONTROLLER,
                        ANN_BIND_COMPLETED).withSelector(LABELS)),
                List.of(claim("claim3-3", "uid3-3", "10Gi", "volume3-3", BOUND, null, ANN_BOUND_BY_CONTROLLER,
                        ANN_BIND_COMPLETED).withSelector(LABELS)),
                NO_EVENTS));
        // [4] syncVolume
        t.add(volumeCase("4-1 - pending volume",
                List.of(vol("volume4-1", "10Gi", "", "", PENDING, RETAIN, CLASS_EMPTY)),
                List.of(vol("volume4-1", "10Gi", "", "", AVAILABLE, RETAIN, CLASS_EMPTY)),
                List.of(), List.of(), NO_EVENTS));
        t.add(volumeCase("4-2 - pending prebound volume",
                List.of(vol("volume4-2", "10Gi", "", "claim4-2", PENDING, RETAIN, CLASS_EMPTY)),
                List.of(vol("volume4-2", "10Gi", "", "claim4-2", AVAILABLE, RETAIN, CLASS_EMPTY)),
                List.of(), List.of(), NO_EVENTS));
        t.add(volumeCase("4-3 - bound volume with missing claim",
                List.of(vol("volume4-3", "10Gi", "uid4-3", "claim4-3", BOUND, RETAIN, CLASS_EMPTY)),
                List.of(vol("volume4-3", "10Gi", "uid4-3", "claim4-3", RELEASED, RETAIN, CLASS_EMPTY)),
                List.of(), List.of(), NO_EVENTS));
        t.add(volumeCase("4-4 - volume bound to claim with different UID",
                List.of(vol("volume4-4", "10Gi", "uid4-4", "claim4-4", BOUND, RETAIN, CLASS_EMPTY)),
                List.of(vol("volume4-4", "10Gi", "uid4-4", "claim4-4", RELEASED, RETAIN, CLASS_EMPTY)),
                List.of(claim("claim4-4", "uid4-4-x", "10Gi", "volume4-4", BOUND, null, ANN_BIND_COMPLETED)),
                List.of(claim("claim4-4", "uid4-4-x", "10Gi", "volume4-4", BOUND, null, ANN_BIND_COMPLETED)),
                NO_EVENTS));
        t.add(volumeCase("4-5 - volume bound by controller to unbound claim",
                List.of(vol("volume4-5", "10Gi", "uid4-5", "claim4-5", BOUND, RETAIN, CLASS_EMPTY, ANN_BOUND_BY_CONTROLLER)),
                List.of(vol("volume4-5", "10Gi", "uid4-5", "claim4-5", BOUND, RETAIN, CLASS_EMPTY, ANN_BOUND_BY_CONTROLLER)),
                List.of(claim("claim4-5", "uid4-5", "10Gi", "", PENDING, null)),
                List.of(claim("claim4-5", "uid4-5", "10Gi", "", PENDING, null)),
                NO_EVENTS));
        t.add(volumeCase("4-5 - volume bound by user to bound claim",
                List.of(vol("volume4-5", "10Gi", "uid4-5", "claim4-5", BOUND, RETAIN, CLASS_EMPTY)),
                List.of(vol("volume4-5", "10Gi", "uid4-5", "claim4-5", BOUND, RETAIN, CLASS_EMPTY)),
                List.of(claim("claim4-5", "uid4-5", "10Gi", "", PENDING, null)),
                List.of(claim("claim4-5", "uid4-5", "10Gi", "", PENDING, null)),
                NO_EVENTS));
        t.add(volumeCase("4-6 - volume bound by to bound claim",
                List.of(vol("volume4-6", "10Gi", "uid4-6", "claim4-6", AVAILABLE, RETAIN, CLASS_EMPTY)),
                List.of(vol("volume4-6", "10Gi", "uid4-6", "claim4-6", BOUND, RETAIN, CLASS_EMPTY)),
                List.of(claim("claim4-6", "uid4-6", "10Gi", "volume4-6", BOUND, null)),
                List.of(claim("claim4-6", "uid4-6", "10Gi", "volume4-6", BOUND, null)),
                NO_EVENTS));
        t.add(volumeCase("4-7 - volume bound by controller to claim bound somewhere else",
                List.of(vol("volume4-7", "10Gi", "uid4-7", "claim4-7", BOUND, RETAIN, CLASS_EMPTY, ANN_BOUND_BY_CONTROLLER)),
                List.of(vol("volume4-7", "10Gi", "", "", AVAILABLE, RETAIN, CLASS_EMPTY)),
                List.of(claim("claim4-7", "uid4-7", "10Gi", "volume4-7-x", BOUND, null)),
                List.of(claim("claim4-7", "uid4-7", "10Gi", "volume4-7-x", BOUND, null)),
                NO_EVENTS));
        t.add(volumeCase("4-8 - volume bound by user to claim bound somewhere else",
                List.of(vol("volume4-8", "10Gi", "uid4-8", "claim4-8", BOUND, RETAIN, CLASS_EMPTY)),
                List.of(vol("volume4-8", "10Gi", "", "claim4-8", AVAILABLE, RETAIN, CLASS_EMPTY)),
                List.of(claim("claim4-8", "uid4-8", "10Gi", "volume4-8-x", BOUND, null)),
                List.of(claim("claim4-8", "uid4-8", "10Gi", "volume4-8-x", BOUND, null)),
                NO_EVENTS));
        t.add(volumeCase("4-9 - volume bound to bound claim, with PersistentVolumeReclaimDelete",
                List.of(vol("volume4-9", "10Gi", "uid4-9", "claim4-9", AVAILABLE, DELETE, CLASS_EMPTY)),
                List.of(vol("volume4-9", "10Gi", "uid4-9", "claim4-9", BOUND, DELETE, CLASS_EMPTY)),
                List.of(claim("claim4-9", "uid4-9", "10Gi", "volume4-9", BOUND, null)),
                List.of(claim("claim4-9", "uid4-9", "10Gi", "volume4-9", BOUND, null)),
                NO_EVENTS));
        t.add(volumeCase("4-10 - volume bound to missing claim",
                List.of(vol("volume4-10", "10Gi", "uid4-10", "claim4-10", AVAILABLE, DELETE, CLASS_EMPTY)),
                List.of(vol("volume4-10", "10Gi", "uid4-10", "claim4-10", FAILED, DELETE, CLASS_EMPTY)
                        .withMessage("error getting deleter volume plugin for volume \"%s\": no volume plugin matched")),
                List.of(), List.of(), List.of("Warning VolumeFailedDelete")));
        t.add(volumeCase("4-11 - volume bound to unknown claim",
                List.of(vol("volume4-11", "10Gi", "uid4-11", "claim4-11", AVAILABLE, DELETE, CLASS_EMPTY)),
                List.of(vol("volume4-11", "10Gi", "uid4-11", "claim4-11", BOUND, DELETE, CLASS_EMPTY)),
                List.of(claim("claim4-11", "uid4-11", "10Gi", "volume4-11", BOUND, null).outOfLocalStore()),
                List.of(claim("claim4-11", "uid4-11", "10Gi", "volume4-11", BOUND, null)),
                NO_EVENTS));
        // [13] classes
        t.add(claimCase("13-1 - binding to class",
                List.of(vol("volume13-1-1", "1Gi", "", "", AVAILABLE, RETAIN, CLASS_EMPTY),
                        vol("volume13-1-2", "10Gi", "", "", AVAILABLE, RETAIN, CLASS_GOLD)),
                List.of(vol("volume13-1-1", "1Gi", "", "", AVAILABLE, RETAIN, CLASS_EMPTY),
                        vol("volume13-1-2", "10Gi", "uid13-1", "claim13-1", BOUND, RETAIN, CLASS_GOLD, ANN_BOUND_BY_CONTROLLER)),
                List.of(claim("claim13-1", "uid13-1", "1Gi", "", PENDING, CLASS_GOLD)),
                List.of(claim("claim13-1", "uid13-1", "1Gi", "volume13-1-2", BOUND, CLASS_GOLD, ANN_BOUND_BY_CONTROLLER,
                        ANN_BIND_COMPLETED).withCapacity("10Gi")),
                NO_EVENTS));
        t.add(claimCase("13-2 - binding without a class",
                List.of(vol("volume13-2-1", "1Gi", "", "", AVAILABLE, RETAIN, CLASS_GOLD),
                        vol("volume13-2-2", "10Gi", "", "", AVAILABLE, RETAIN, CLASS_EMPTY)),
                List.of(vol("volume13-2-1", "1Gi", "", "", AVAILABLE, RETAIN, CLASS_GOLD),
                        vol("volume13-2-2", "10Gi", "uid13-2", "claim13-2", BOUND, RETAIN, CLASS_EMPTY, ANN_BOUND_BY_CONTROLLER)),
                List.of(claim("claim13-2", "uid13-2", "1Gi", "", PENDING, null)),
                List.of(claim("claim13-2", "uid13-2", "1Gi", "volume13-2-2", BOUND, null, ANN_BOUND_BY_CONTROLLER,
                        ANN_BIND_COMPLETED).withCapacity("10Gi")),
                NO_EVENTS));
        t.add(claimCase("13-3 - binding to specific a class",
                List.of(vol("volume13-3-1", "1Gi", "", "", AVAILABLE, RETAIN, CLASS_SILVER),
                        vol("volume13-3-2", "10Gi", "", "", AVAILABLE, RETAIN, CLASS_GOLD)),
                List.of(vol("volume13-3-1", "1Gi", "", "", AVAILABLE, RETAIN, CLASS_SILVER),
                        vol("volume13-3-2", "10Gi", "uid13-3", "claim13-3", BOUND, RETAIN, CLASS_GOLD, ANN_BOUND_BY_CONTROLLER)),
                List.of(claim("claim13-3", "uid13-3", "1Gi", "", PENDING, CLASS_GOLD)),
                List.of(claim("claim13-3", "uid13-3", "1Gi", "volume13-3-2", BOUND, CLASS_GOLD, ANN_BOUND_BY_CONTROLLER,
                        ANN_BIND_COMPLETED).withCapacity("10Gi")),
                NO_EVENTS));
        t.add(claimCase("13-4 - empty class",
                List.of(vol("volume13-4", "1Gi", "", "", AVAILABLE, RETAIN, CLASS_EMPTY)),
                List.of(vol("volume13-4", "1Gi", "uid13-4", "claim13-4", BOUND, RETAIN, CLASS_EMPTY, ANN_BOUND_BY_CONTROLLER)),
                List.of(claim("claim13-4", "uid13-4", "1Gi", "", PENDING, CLASS_EMPTY)),
                List.of(claim("claim13-4", "uid13-4", "1Gi", "volume13-4", BOUND, CLASS_EMPTY, ANN_BOUND_BY_CONTROLLER,
                        ANN_BIND_COMPLETED)),
                NO_EVENTS));
        // [14] volume modes
        t.add(claimCase("14-1 - binding to volumeMode block",
                List.of(vol("volume14-1", "10Gi", "", "", AVAILABLE, RETAIN, CLASS_EMPTY).withMode("Block")),
                List.of(vol("volume14-1", "10Gi", "uid14-1", "claim14-1", BOUND, RETAIN, CLASS_EMPTY, ANN_BOUND_BY_CONTROLLER)
                        .withMode("Block")),
                List.of(claim("claim14-1", "uid14-1", "10Gi", "", PENDING, null).withMode("Block")),
                List.of(claim("claim14-1", "uid14-1", "10Gi", "volume14-1", BOUND, null, ANN_BOUND_BY_CONTROLLER,
                        ANN_BIND_COMPLETED).withMode("Block")),
                NO_EVENTS));
        t.add(claimCase("14-3 - do not bind pv volumeMode filesystem and pvc volumeMode block",
                List.of(vol("volume14-3", "10Gi", "", "", AVAILABLE, RETAIN, CLASS_EMPTY)),
                List.of(vol("volume14-3", "10Gi", "", "", AVAILABLE, RETAIN, CLASS_EMPTY)),
                List.of(claim("claim14-3", "uid14-3", "10Gi", "", PENDING, null).withMode("Block")),
                List.of(claim("claim14-3", "uid14-3", "10Gi", "", PENDING, null).withMode("Block")),
                List.of("Normal FailedBinding")));
        t.add(claimCase("14-5 - do not bind when matching class but not volumeMode",
                List.of(vol("volume14-5", "10Gi", "", "", AVAILABLE, RETAIN, CLASS_GOLD)),
                List.of(vol("volume14-5", "10Gi", "", "", AVAILABLE, RETAIN, CLASS_GOLD)),
                List.of(claim("claim14-5", "uid14-5", "10Gi", "", PENDING, CLASS_GOLD).withMode("Block")),
                List.of(claim("claim14-5", "uid14-5", "10Gi", "", PENDING, CLASS_GOLD).withMode("Block")),
                List.of("Warning ProvisioningFailed")));
        t.add(claimCase("14-5-2 - do not bind when pvc is prebound to pv with matching volumeModes but class does not match",
                List.of(vol("volume14-5-2", "10Gi", "", "", AVAILABLE, RETAIN, CLASS_GOLD)),
                List.of(vol("volume14-5-2", "10Gi", "", "", AVAILABLE, RETAIN, CLASS_GOLD)),
                List.of(claim("claim14-5-2", "uid14-5-2", "10Gi", "volume14-5-2", PENDING, CLASS_SILVER)),
                List.of(claim("claim14-5-2", "uid14-5-2", "10Gi", "volume14-5-2", PENDING, CLASS_SILVER)),
                List.of("Warning VolumeMismatch")));
        t.add(claimCase("14-8-1 - do not bind when pvc is prebound to pv with mismatching volumeModes",
                List.of(vol("volume14-8-1", "10Gi", "", "claim14-8-1", AVAILABLE, RETAIN, CLASS_EMPTY).withMode("Block")),
                List.of(vol("volume14-8-1", "10Gi", "", "claim14-8-1", AVAILABLE, RETAIN, CLASS_EMPTY).withMode("Block")),
                List.of(claim("claim14-8-1", "uid14-8-1", "10Gi", "", PENDING, null)),
                List.of(claim("claim14-8-1", "uid14-8-1", "10Gi", "", PENDING, null)),
                List.of("Normal FailedBinding")));
        t.add(volumeCase("14-13 - output warning when pv is prebound to pvc with different volumeModes",
                List.of(vol("volume14-13", "10Gi", "uid14-13", "claim14-13", AVAILABLE, RETAIN, CLASS_EMPTY,
                        ANN_BOUND_BY_CONTROLLER)),
                List.of(vol("volume14-13", "10Gi", "uid14-13", "claim14-13", AVAILABLE, RETAIN, CLASS_EMPTY,
                        ANN_BOUND_BY_CONTROLLER)),
                List.of(claim("claim14-13", "uid14-13", "10Gi", "", PENDING, null).withMode("Block")),
                List.of(claim("claim14-13", "uid14-13", "10Gi", "", PENDING, null).withMode("Block")),
                List.of("Warning VolumeMismatch")));
        // provision_test.go: the hand-off to provisioners
        t.add(claimCase("11-1 (external) - provision to an external provisioner",
                List.of(), List.of(),
                List.of(claim("claim11-1", "uid11-1", "1Gi", "", PENDING, CLASS_EXTERNAL)),
                List.of(claim("claim11-1", "uid11-1", "1Gi", "", PENDING, CLASS_EXTERNAL)
                        .withAnnotation(ANN_STORAGE_PROVISIONER, EXTERNAL_PROVISIONER)
                        .withAnnotation(ANN_BETA_STORAGE_PROVISIONER, EXTERNAL_PROVISIONER)),
                List.of("Normal ExternalProvisioning")));
        t.add(claimCase("11-2 (migrated) - an in-tree provisioner migrated to CSI is handed to its driver",
                List.of(), List.of(),
                List.of(claim("claim11-2", "uid11-2", "1Gi", "", PENDING, CLASS_MIGRATED)),
                List.of(claim("claim11-2", "uid11-2", "1Gi", "", PENDING, CLASS_MIGRATED)
                        .withAnnotation(ANN_STORAGE_PROVISIONER, "ebs.csi.aws.com")
                        // the claim names the CSI driver, which is not itself migrated: no migrated-to
                        // (upstream's 11-21 sees one only through its mock, which calls every plugin migrated)
                        .withAnnotation(ANN_BETA_STORAGE_PROVISIONER, "ebs.csi.aws.com")),
                List.of("Normal ExternalProvisioning")));
        t.add(claimCase("11-2b (migrated) - a claim annotated for a migrated in-tree provisioner gets migrated-to",
                List.of(), List.of(),
                List.of(claim("claim11-2b", "uid11-2b", "1Gi", "", PENDING, CLASS_MIGRATED)
                        .withAnnotation(ANN_STORAGE_PROVISIONER, "kubernetes.io/aws-ebs")),
                List.of(claim("claim11-2b", "uid11-2b", "1Gi", "", PENDING, CLASS_MIGRATED)
                        .withAnnotation(ANN_STORAGE_PROVISIONER, "ebs.csi.aws.com")
                        .withAnnotation(ANN_BETA_STORAGE_PROVISIONER, "ebs.csi.aws.com")),
                List.of("Normal ExternalProvisioning")));
        t.add(claimCase("11-3 (in-tree) - an in-tree provisioner without a plugin fails",
                List.of(), List.of(),
                List.of(claim("claim11-3", "uid11-3", "1Gi", "", PENDING, CLASS_IN_TREE)),
                List.of(claim("claim11-3", "uid11-3", "1Gi", "", PENDING, CLASS_IN_TREE)),
                List.of("Warning ProvisioningFailed")));
        t.add(claimCase("11-4 (wait) - a WaitForFirstConsumer claim with a selected node is provisioned",
                List.of(), List.of(),
                List.of(claim("claim11-4", "uid11-4", "1Gi", "", PENDING, CLASS_WAIT).withAnnotation(ANN_SELECTED_NODE,
                        "node1")),
                List.of(claim("claim11-4", "uid11-4", "1Gi", "", PENDING, CLASS_WAIT).withAnnotation(ANN_SELECTED_NODE, "node1")
                        .withAnnotation(ANN_STORAGE_PROVISIONER, EXTERNAL_PROVISIONER)
                        .withAnnotation(ANN_BETA_STORAGE_PROVISIONER, EXTERNAL_PROVISIONER)),
                List.of("Normal ExternalProvisioning")));
        // delete_test.go
        t.add(volumeCase("8-1 - successful delete by an external deleter is left to it",
                List.of(vol("volume8-1", "1Gi", "uid8-1", "claim8-1", BOUND, DELETE, CLASS_EMPTY, ANN_DYNAMICALLY_PROVISIONED)),
                List.of(vol("volume8-1", "1Gi", "uid8-1", "claim8-1", RELEASED, DELETE, CLASS_EMPTY,
                        ANN_DYNAMICALLY_PROVISIONED)),
                List.of(), List.of(), NO_EVENTS));
        t.add(volumeCase("8-2 - delete of a volume no deleter handles fails",
                List.of(vol("volume8-2", "1Gi", "uid8-2", "claim8-2", BOUND, DELETE, CLASS_EMPTY)),
                List.of(vol("volume8-2", "1Gi", "uid8-2", "claim8-2", FAILED, DELETE, CLASS_EMPTY)
                        .withMessage("error getting deleter volume plugin for volume \"%s\": no volume plugin matched")),
                List.of(), List.of(), List.of("Warning VolumeFailedDelete")));
        t.add(volumeCase("8-3 - delete of a volume bound to a claim bound elsewhere",
                List.of(vol("volume8-3", "1Gi", "uid8-3", "claim8-3", BOUND, DELETE, CLASS_EMPTY, ANN_DYNAMICALLY_PROVISIONED)),
                List.of(vol("volume8-3", "1Gi", "uid8-3", "claim8-3", RELEASED, DELETE, CLASS_EMPTY,
                        ANN_DYNAMICALLY_PROVISIONED)),
                List.of(claim("claim8-3", "uid8-3", "1Gi", "volume8-3-x", BOUND, null)),
                List.of(claim("claim8-3", "uid8-3", "1Gi", "volume8-3-x", BOUND, null)),
                NO_EVENTS));
        // recycle_test.go
        t.add(volumeCase("6-1 - recycle of a volume no recycler handles fails",
                List.of(vol("volume6-1", "1Gi", "uid6-1", "claim6-1", BOUND, RECYCLE, CLASS_EMPTY)),
                List.of(vol("volume6-1", "1Gi", "uid6-1", "claim6-1", FAILED, RECYCLE, CLASS_EMPTY)
                        .withMessage("No recycler plugin found for the volume!")),
                List.of(), List.of(), List.of("Warning VolumeFailedRecycle")));
        return t.stream();
    }

    @Inject
    Vertx vertx;

    static KubernetesClient client;
    static ControllerHarness<PersistentVolumeController> harness;
    static ExecutorService operations;

    @BeforeAll
    static void setUp() {
        client = RealApiServer.get().newClient();
        operations = Executors.newCachedThreadPool();
        storageClass(CLASS_WAIT, EXTERNAL_PROVISIONER, "WaitForFirstConsumer");
        storageClass(CLASS_EXTERNAL, EXTERNAL_PROVISIONER, "Immediate");
        storageClass(CLASS_IN_TREE, "kubernetes.io/unknown-plugin", "Immediate");
        storageClass(CLASS_MIGRATED, "kubernetes.io/aws-ebs", "Immediate");
    }

    static void storageClass(String name, String provisioner, String mode) {
        if (client.storage().v1().storageClasses().withName(name).get() == null) {
            client.storage().v1().storageClasses().resource(new StorageClassBuilder().withNewMetadata().withName(name)
                    .endMetadata().withProvisioner(provisioner).withVolumeBindingMode(mode).build()).create();
        }
    }

    @AfterAll
    static void tearDown() {
        if (harness != null) {
            harness.close();
        }
        operations.shutdownNow();
        client.close();
    }

    private ControllerHarness<PersistentVolumeController> harness() throws InterruptedException {
        if (harness == null) {
            harness = ControllerHarness.create(vertx, PersistentVolumeController.NAME, "persistent-volume-binder", Map.of(),
                    PersistentVolumeBinderControllerDescriptor::newController).startInformers();
        }
        return harness;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void binderTable(Case c) throws Exception {
        ControllerHarness<PersistentVolumeController> h = harness();
        await().atMost(Duration.ofSeconds(10)).until(() -> h.informers.informerFor(StorageClass.class).getStore()
                .getByKey(CLASS_MIGRATED) != null);
        BinderWorld w = new BinderWorld(client, TestNamespaces.newNamespace(client, "pvb"));
        try {
            List<PersistentVolumeClaim> claims = w.createClaims(c.initialClaims());
            List<PersistentVolume> volumes = w.createVolumes(c.initialVolumes());
            List<String> queued = new CopyOnWriteArrayList<>();
            PersistentVolumeBinder binder = new PersistentVolumeBinder(client,
                    h.events.recorder(PersistentVolumeBinder.EVENT_SOURCE), h.informers.informerFor(PersistentVolume.class),
                    h.informers.informerFor(PersistentVolumeClaim.class), h.informers.informerFor(StorageClass.class),
                    h.informers.informerFor(Pod.class), h.informers.informerFor(io.fabric8.kubernetes.api.model.Node.class),
                    new Operations(operations, System::nanoTime), InTreePlugins.of(60, 30, "", 300, 30, "", false),
                    new BinderMetrics(new io.micrometer.core.instrument.simple.SimpleMeterRegistry(), System::nanoTime),
                    true, true);
            binder.setQueues(new PersistentVolumeBinder.Queues() {
                @Override
                public void addClaim(String key) {
                    queued.add("claim " + key);
                }

                @Override
                public void addVolume(String name) {
                    queued.add("volume " + name);
                }
            });
            volumes.forEach(binder::storeVolumeUpdate);
            for (int i = 0; i < claims.size(); i++) {
                if (!c.initialClaims().get(i).skipLocalStore()) {
                    binder.storeClaimUpdate(claims.get(i));
                }
            }
            Exception error = null;
            try {
                if (c.sync() == Sync.CLAIM) {
                    binder.syncClaim(claims.get(0));
                } else {
                    binder.syncVolume(volumes.get(0));
                }
            } catch (Exception e) {
                error = e;
            }
            if (c.error()) {
                assertThat(error).as("the sync's error").isNotNull();
            } else if (error != null) {
                throw error;
            }
            await().atMost(Duration.ofSeconds(15)).untilAsserted(() -> {
                for (Vol v : c.expectedVolumes()) {
                    assertVolume(w, v);
                }
                for (Clm e : c.expectedClaims()) {
                    assertClaim(w, e);
                }
            });
            if (!c.events().isEmpty()) {
                await().atMost(Duration.ofSeconds(15)).untilAsserted(() -> assertThat(w.events())
                        .containsAll(c.events()));
            }
        } finally {
            w.deleteVolumes();
        }
    }

    static void assertVolume(BinderWorld w, Vol expected) {
        PersistentVolume actual = w.volume(expected.name());
        assertThat(actual).as(expected.name()).isNotNull();
        String name = actual.getMetadata().getName();
        assertThat(StorageHelpers.volumePhase(actual)).as(name + " phase").isEqualTo(expected.phase());
        if (expected.claim().isEmpty()) {
            assertThat(actual.getSpec().getClaimRef()).as(name + " claimRef").isNull();
        } else {
            assertThat(actual.getSpec().getClaimRef()).as(name + " claimRef").isNotNull();
            assertThat(actual.getSpec().getClaimRef().getName()).as(name + " claimRef.name")
                    .isEqualTo(BinderWorld.claimName(expected.claim()));
            assertThat(StorageHelpers.refUid(actual.getSpec().getClaimRef())).as(name + " claimRef.uid")
                    .isEqualTo(w.realUid(expected.uid()));
        }
        Map<String, String> annotations = new LinkedHashMap<>();
        for (String a : expected.annotations()) {
            annotations.put(a, ANN_DYNAMICALLY_PROVISIONED.equals(a) ? "mock.example.com/provisioner" : "yes");
        }
        assertThat(StorageHelpers.annotations(actual)).as(name + " annotations").isEqualTo(annotations);
        if (expected.message() != null) {
            assertThat(actual.getStatus().getMessage()).as(name + " message")
                    .isEqualTo(expected.message().replace("%s", name));
        }
    }

    static void assertClaim(BinderWorld w, Clm expected) {
        PersistentVolumeClaim actual = w.claim(expected.name());
        assertThat(actual).as(expected.name()).isNotNull();
        String name = actual.getMetadata().getName();
        assertThat(StorageHelpers.claimPhase(actual)).as(name + " phase").isEqualTo(expected.phase());
        assertThat(StorageHelpers.volumeName(actual)).as(name + " volumeName")
                .isEqualTo(w.volumeName(expected.volumeName()));
        Map<String, String> annotations = new LinkedHashMap<>();
        for (String a : expected.annotations()) {
            annotations.put(a, "yes");
        }
        annotations.putAll(expected.extra());
        assertThat(StorageHelpers.annotations(actual)).as(name + " annotations").isEqualTo(annotations);
        if ("Bound".equals(expected.phase())) {
            assertThat(actual.getStatus().getAccessModes()).as(name + " status.accessModes")
                    .isEqualTo(BinderWorld.MODES);
            assertThat(StorageHelpers.amount(actual.getStatus().getCapacity().get("storage"))).as(name + " capacity")
                    .isEqualByComparingTo(StorageHelpers.amount(new io.fabric8.kubernetes.api.model.Quantity(
                            expected.expectedCapacity())));
        } else {
            assertThat(StorageHelpers.list(actual.getStatus().getAccessModes())).as(name + " status.accessModes")
                    .isEmpty();
        }
    }
}
