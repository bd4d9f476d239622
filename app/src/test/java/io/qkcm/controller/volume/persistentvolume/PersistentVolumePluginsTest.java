package io.qkcm.controller.volume.persistentvolume;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static io.qkcm.controller.volume.persistentvolume.VolumeObjects.*;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import jakarta.inject.Inject;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolume;
import io.fabric8.kubernetes.api.model.PersistentVolumeBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.storage.StorageClassBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.qkcm.testing.Conflicts;
import io.qkcm.testing.ControllerHarness;
import io.qkcm.testing.ManagerOffProfile;
import io.qkcm.testing.RealApiServerResource;
import io.qkcm.testing.TestKubelet;
import io.qkcm.testing.TestNamespaces;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.vertx.core.Vertx;

/**
 * The binder's in-tree volume plugins and metrics against a real API server: the host-path and NFS
 * recycler pods (driven to Succeeded / Failed by {@link TestKubelet}, there being no kubelet), the
 * host-path deleter and provisioner (directories on this machine, under /tmp as upstream requires),
 * and the pv_collector, volume_operation_total_* and retroactive_storageclass_* series.
 */
@QuarkusTest
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
@TestProfile(ManagerOffProfile.class)
class PersistentVolumePluginsTest {

    private static final Duration WAIT = Duration.ofSeconds(30);

    @Inject
    Vertx vertx;

    static KubernetesClient client;

    @BeforeAll
    static void setUp() {
        client = VolumeObjects.client();
    }


    private ControllerHarness<PersistentVolumeController> start(Map<String, String> flags) throws InterruptedException {
        Map<String, String> config = new HashMap<>();
        config.put("qkcm.pvclaimbinder-sync-period", "1s");
        flags.forEach((k, v) -> config.put("qkcm." + k, v));
        return ControllerHarness.create(vertx, PersistentVolumeController.NAME, "persistent-volume-binder", config,
                PersistentVolumeBinderControllerDescriptor::newController, c -> List.of(c.claimReconciler())).start();
    }

    static PersistentVolumeBuilder volumeBuilder(String name, String size, String cls, String policy) {
        return new PersistentVolumeBuilder().withNewMetadata().withName(name).endMetadata().withNewSpec()
                .withCapacity(Map.of("storage", new Quantity(size))).withAccessModes("ReadWriteOnce")
                .withPersistentVolumeReclaimPolicy(policy).withStorageClassName(cls).endSpec();
    }

    static PersistentVolumeClaim createClaim(String ns, String name, String size, String cls) {
        return client.persistentVolumeClaims().inNamespace(ns).resource(new PersistentVolumeClaimBuilder().withNewMetadata()
                .withName(name).endMetadata().withNewSpec().withAccessModes("ReadWriteOnce").withNewResources()
                .addToRequests("storage", new Quantity(size)).endResources().withStorageClassName(cls).endSpec().build())
                .create();
    }

    /** A volume bound to a claim of {@code ns}, then released by the claim's deletion. */
    private PersistentVolume bindAndRelease(String ns, PersistentVolumeBuilder volume, String cls) {
        PersistentVolume pv = client.persistentVolumes().resource(volume.build()).create();
        String name = pv.getMetadata().getName();
        createClaim(ns, "data", pv.getSpec().getCapacity().get("storage").toString(), cls);
        await().atMost(WAIT).until(() -> "Bound".equals(phase(volume(name)))
                && "Bound".equals(StorageHelpers.claimPhase(claim(ns, "data"))));
        deleteClaim(ns, "data");
        return pv;
    }

    private static Pod recyclerPod(String pvName) {
        return client.pods().inNamespace("default").withName("recycler-for-" + pvName).get();
    }

    // ---- recyclers ----

    @Test
    void aReleasedHostPathVolumeIsScrubbedByARecyclerPodAndMadeAvailable() throws Exception {
        String s = suffix();
        String ns = TestNamespaces.newNamespace(client, "pvp-recycle");
        String cls = "pvp-recycle-" + s;
        String pv = "pvp-recycle-" + s;
        TestKubelet kubelet = new TestKubelet(client);
        try (var c = start(Map.of("pv-recycler-minimum-timeout-hostpath", "60", "pv-recycler-timeout-increment-hostpath",
                "30"))) {
            bindAndRelease(ns, volumeBuilder(pv, "3Gi", cls, "Recycle").editSpec().withNewHostPath()
                    .withPath("/tmp/pvp-recycle-" + s).endHostPath().endSpec(), cls);
            await().atMost(WAIT).until(() -> recyclerPod(pv) != null);
            Pod pod = recyclerPod(pv);
            // the default template, its volume swapped for the volume's source, the deadline 30 s per whole Gi
            assertThat(pod.getSpec().getVolumes()).hasSize(1);
            assertThat(pod.getSpec().getVolumes().get(0).getName()).isEqualTo("vol");
            assertThat(pod.getSpec().getVolumes().get(0).getHostPath().getPath()).isEqualTo("/tmp/pvp-recycle-" + s);
            assertThat(pod.getSpec().getActiveDeadlineSeconds()).isEqualTo(90L);
            assertThat(pod.getSpec().getRestartPolicy()).isEqualTo("Never");
            assertThat(pod.getSpec().getContainers().get(0).getName()).isEqualTo("pv-recycler");
            assertThat(pod.getSpec().getContainers().get(0).getVolumeMounts().get(0).getMountPath()).isEqualTo("/scrub");
            // the events about the pod are relayed to the volume
            client.v1().events().inNamespace("default").resource(new EventBuilder().withNewMetadata()
                    .withName("recycler-for-" + pv + ".1").withNamespace("default").endMetadata().withNewInvolvedObject()
                    .withKind("Pod").withNamespace("default").withName("recycler-for-" + pv)
                    .withUid(pod.getMetadata().getUid()).endInvolvedObject().withType("Normal").withReason("Pulled")
                    .withMessage("Container image pulled").withNewSource().withComponent("kubelet").endSource().build())
                    .create();
            await().atMost(WAIT).until(() -> !events("default", pv, "RecyclerPod").isEmpty());
            assertThat(events("default", pv, "RecyclerPod").get(0).getMessage()).isEqualTo("Recycler pod: Container image pulled");

            kubelet.succeeded(pod);
            await().atMost(WAIT).until(() -> "Available".equals(phase(volume(pv))));
            PersistentVolume recycled = volume(pv);
            // bound by the controller: the claimRef is gone, the volume can be bound again
            assertThat(recycled.getSpec().getClaimRef()).isNull();
            await().atMost(WAIT).until(() -> !events("default", pv, "VolumeRecycled").isEmpty());
            assertThat(events("default", pv, "VolumeRecycled")).extracting(Event::getMessage).containsExactly("Volume recycled");
            // the recycler pod is deleted afterwards
            await().atMost(WAIT).until(() -> recyclerPod(pv) == null);
        } finally {
            deleteVolume(pv);
        }
    }

    @Test
    void aFailedNfsRecyclerPodFailsTheVolume() throws Exception {
        String s = suffix();
        String ns = TestNamespaces.newNamespace(client, "pvp-nfs");
        String cls = "pvp-nfs-" + s;
        String pv = "pvp-nfs-" + s;
        TestKubelet kubelet = new TestKubelet(client);
        try (var c = start(Map.of())) {
            bindAndRelease(ns, volumeBuilder(pv, "1Gi", cls, "Recycle").editSpec().withNewNfs().withServer("nfs.example.com")
                    .withPath("/exports/" + s).endNfs().endSpec(), cls);
            await().atMost(WAIT).until(() -> recyclerPod(pv) != null);
            Pod pod = recyclerPod(pv);
            assertThat(pod.getSpec().getVolumes().get(0).getNfs().getServer()).isEqualTo("nfs.example.com");
            assertThat(pod.getSpec().getVolumes().get(0).getNfs().getPath()).isEqualTo("/exports/" + s);
            // --pv-recycler-minimum-timeout-nfs's default, more than 30 s (the increment's default) per Gi
            assertThat(pod.getSpec().getActiveDeadlineSeconds()).isEqualTo(300L);

            kubelet.failed(pod);
            await().atMost(WAIT).until(() -> "Failed".equals(phase(volume(pv))));
            String message = "Recycle failed: failed to recycle volume: pod failed, pod.Status.Message unknown";
            assertThat(volume(pv).getStatus().getMessage()).isEqualTo(message);
            await().atMost(WAIT).until(() -> events("default", pv, "VolumeFailedRecycle").stream()
                    .anyMatch(e -> "Warning".equals(e.getType()) && message.equals(e.getMessage())));
            // the failed pod is deleted (the next sync tries again with a new one)
            await().atMost(WAIT).until(() -> {
                Pod p = recyclerPod(pv);
                return p == null || !p.getMetadata().getUid().equals(pod.getMetadata().getUid());
            });
            // a Retain policy stops the retries
            Conflicts.retry(() -> client.persistentVolumes().withName(pv).edit(v -> {
                v.getSpec().setPersistentVolumeReclaimPolicy("Retain");
                return v;
            }));
        } finally {
            deleteVolume(pv);
            Pod left = recyclerPod(pv);
            if (left != null) {
                new TestKubelet(client).failed(left);
                client.pods().inNamespace("default").withName("recycler-for-" + pv).delete();
            }
        }
    }

    // ---- host-path deleter and provisioner ----

    @Test
    void aReleasedHostPathVolumeUnderTmpIsDeletedWithItsDirectory() throws Exception {
        String s = suffix();
        String ns = TestNamespaces.newNamespace(client, "pvp-delete");
        String cls = "pvp-delete-" + s;
        String pv = "pvp-delete-" + s;
        Path dir = Files.createTempDirectory(Path.of("/tmp"), "pvp-delete-");
        Files.writeString(dir.resolve("data"), "x");
        try (var c = start(Map.of())) {
            bindAndRelease(ns, volumeBuilder(pv, "1Gi", cls, "Delete").editSpec().withNewHostPath()
                    .withPath(dir.toString()).endHostPath().endSpec(), cls);
            // the directory goes, then the volume object (its pv-protection finalizer is the pv-protection
            // controller's, not running here)
            await().atMost(WAIT).until(() -> !Files.exists(dir));
            await().atMost(WAIT).until(() -> volume(pv) == null || volume(pv).getMetadata().getDeletionTimestamp() != null);
            releaseVolumeProtection(pv);
            await().atMost(WAIT).until(() -> volume(pv) == null);
            // volume_operation_total_seconds: the deletion's end-to-end latency, once the volume is gone
            await().atMost(WAIT).until(() -> operationSeconds(c, "kubernetes.io/host-path", "delete") != null);
            assertThat(storageOperation(c, "kubernetes.io/host-path", "volume_delete", "success")).isNotNull();
        } finally {
            deleteVolume(pv);
        }
    }

    @Test
    void aHostPathVolumeOutsideTmpIsNotDeletedAndFails() throws Exception {
        String s = suffix();
        String ns = TestNamespaces.newNamespace(client, "pvp-refuse");
        String cls = "pvp-refuse-" + s;
        String pv = "pvp-refuse-" + s;
        try (var c = start(Map.of())) {
            double errorsBefore = operationErrors(c, "kubernetes.io/host-path", "delete");
            bindAndRelease(ns, volumeBuilder(pv, "1Gi", cls, "Delete").editSpec().withNewHostPath()
                    .withPath("/var/lib/pvp-" + s).endHostPath().endSpec(), cls);
            String message = "host_path deleter only supports /tmp/.+ but received provided /var/lib/pvp-" + s;
            await().atMost(WAIT).until(() -> "Failed".equals(phase(volume(pv))));
            assertThat(volume(pv).getStatus().getMessage()).isEqualTo(message);
            await().atMost(WAIT).until(() -> !events("default", pv, "VolumeFailedDelete").isEmpty());
            assertThat(events("default", pv, "VolumeFailedDelete")).extracting(Event::getMessage).contains(message);
            await().atMost(WAIT).until(() -> operationErrors(c, "kubernetes.io/host-path", "delete") > errorsBefore);
        } finally {
            deleteVolume(pv);
        }
    }

    @Test
    void theHostPathProvisionerMakesADirectoryUnderTmpAndItsVolumeIsDeletedWithIt() throws Exception {
        String s = suffix();
        String ns = TestNamespaces.newNamespace(client, "pvp-prov");
        String cls = "pvp-prov-" + s;
        client.storage().v1().storageClasses().resource(new StorageClassBuilder().withNewMetadata().withName(cls)
                .endMetadata().withProvisioner("kubernetes.io/host-path").withReclaimPolicy("Delete").build()).create();
        String pv = null;
        try (var c = start(Map.of("enable-hostpath-provisioner", "true"))) {
            PersistentVolumeClaim created = createClaim(ns, "data", "1Gi", cls);
            pv = "pvc-" + created.getMetadata().getUid();
            String name = pv;
            await().atMost(WAIT).until(() -> "Bound".equals(StorageHelpers.claimPhase(claim(ns, "data"))));
            PersistentVolume provisioned = volume(name);
            String path = provisioned.getSpec().getHostPath().getPath();
            assertThat(path).matches("/tmp/hostpath_pv/[0-9a-f-]{36}");
            assertThat(Files.isDirectory(Path.of(path))).isTrue();
            assertThat(provisioned.getMetadata().getAnnotations())
                    .containsEntry("pv.kubernetes.io/provisioned-by", "kubernetes.io/host-path")
                    .containsEntry("pv.kubernetes.io/bound-by-controller", "yes")
                    .containsEntry("kubernetes.io/createdby", "hostpath-dynamic-provisioner");
            assertThat(provisioned.getMetadata().getFinalizers()).contains("kubernetes.io/pv-controller");
            assertThat(provisioned.getSpec().getClaimRef().getUid()).isEqualTo(created.getMetadata().getUid());
            assertThat(provisioned.getSpec().getStorageClassName()).isEqualTo(cls);
            assertThat(provisioned.getSpec().getPersistentVolumeReclaimPolicy()).isEqualTo("Delete");
            assertThat(provisioned.getSpec().getCapacity().get("storage")).isEqualTo(new Quantity("1Gi"));
            await().atMost(WAIT).until(() -> !events(ns, "data", "ProvisioningSucceeded").isEmpty());
            assertThat(events(ns, "data", "ProvisioningSucceeded")).extracting(Event::getMessage)
                    .containsExactly("Successfully provisioned volume " + name + " using kubernetes.io/host-path");
            assertThat(claim(ns, "data").getMetadata().getAnnotations())
                    .containsEntry("volume.kubernetes.io/storage-provisioner", "kubernetes.io/host-path");
            // the end of the provisioning is the binding
            await().atMost(WAIT).until(() -> operationSeconds(c, "kubernetes.io/host-path", "provision") != null);
            assertThat(storageOperation(c, "kubernetes.io/host-path", "volume_provision", "success")).isNotNull();

            // Delete: the directory goes, the in-tree finalizer is removed, the volume is deleted
            deleteClaim(ns, "data");
            await().atMost(WAIT).until(() -> !Files.exists(Path.of(path)));
            await().atMost(WAIT).until(() -> volume(name) == null || !StorageHelpers.list(volume(name).getMetadata()
                    .getFinalizers()).contains("kubernetes.io/pv-controller"));
            releaseVolumeProtection(name);
            await().atMost(WAIT).until(() -> volume(name) == null);
        } finally {
            if (pv != null) {
                deleteVolume(pv);
            }
            client.storage().v1().storageClasses().withName(cls).delete();
        }
    }

    @Test
    void withoutTheFlagTheHostPathProvisionerRefuses() throws Exception {
        String s = suffix();
        String ns = TestNamespaces.newNamespace(client, "pvp-noprov");
        String cls = "pvp-noprov-" + s;
        client.storage().v1().storageClasses().resource(new StorageClassBuilder().withNewMetadata().withName(cls)
                .endMetadata().withProvisioner("kubernetes.io/host-path").build()).create();
        try (var c = start(Map.of())) {
            double errorsBefore = operationErrors(c, "kubernetes.io/host-path", "provision");
            createClaim(ns, "data", "1Gi", cls);
            await().atMost(WAIT).until(() -> !events(ns, "data", "ProvisioningFailed").isEmpty());
            assertThat(events(ns, "data", "ProvisioningFailed").get(0).getMessage())
                    .isEqualTo("Failed to create provisioner: provisioning in volume plugin \"kubernetes.io/host-path\" is disabled");
            await().atMost(WAIT).until(() -> operationErrors(c, "kubernetes.io/host-path", "provision") > errorsBefore);
            assertThat(StorageHelpers.claimPhase(claim(ns, "data"))).isEqualTo("Pending");
        } finally {
            client.storage().v1().storageClasses().withName(cls).delete();
        }
    }

    // ---- metrics ----

    @Test
    void thePvCollectorCountsVolumesAndClaims() throws Exception {
        String s = suffix();
        String ns = TestNamespaces.newNamespace(client, "pvp-metrics");
        String cls = "pvp-metrics-" + s;
        String bound = "pvp-m-bound-" + s;
        String free = "pvp-m-free-" + s;
        String nfs = "pvp-m-nfs-" + s;
        try (var c = start(Map.of())) {
            client.persistentVolumes().resource(volumeBuilder(bound, "1Gi", cls, "Retain").editSpec().withNewHostPath()
                    .withPath("/tmp/" + bound).endHostPath().endSpec().build()).create();
            client.persistentVolumes().resource(volumeBuilder(free, "5Gi", cls, "Retain").editSpec().withNewHostPath()
                    .withPath("/tmp/" + free).endHostPath().endSpec().build()).create();
            client.persistentVolumes().resource(volumeBuilder(nfs, "5Gi", cls + "-nfs", "Retain").editSpec().withNewNfs()
                    .withServer("nfs.example.com").withPath("/x").endNfs().endSpec().build()).create();
            createClaim(ns, "data", "1Gi", cls);
            createClaim(ns, "huge", "100Ti", cls);
            await().atMost(WAIT).until(() -> "Bound".equals(phase(volume(bound))));
            await().atMost(WAIT).until(() -> Objects.equals(gauge(c, BinderMetrics.BOUND_PV, "storage_class", cls), 1.0)
                    && Objects.equals(gauge(c, BinderMetrics.UNBOUND_PV, "storage_class", cls), 1.0)
                    && Objects.equals(gauge(c, BinderMetrics.UNBOUND_PV, "storage_class", cls + "-nfs"), 1.0));
            await().atMost(WAIT).until(() -> Objects.equals(pvcGauge(c, BinderMetrics.BOUND_PVC, ns, cls), 1.0)
                    && Objects.equals(pvcGauge(c, BinderMetrics.UNBOUND_PVC, ns, cls), 1.0));
            assertThat(c.context.metrics().find(BinderMetrics.TOTAL_PV).tag("plugin_name", "kubernetes.io/nfs")
                    .tag("volume_mode", "Filesystem").gauge().value()).isGreaterThanOrEqualTo(1.0);
            assertThat(c.context.metrics().find(BinderMetrics.TOTAL_PV).tag("plugin_name", "kubernetes.io/host-path")
                    .tag("volume_mode", "Filesystem").gauge().value()).isGreaterThanOrEqualTo(2.0);

            // a deleted claim leaves the count: its row goes
            deleteClaim(ns, "huge");
            await().atMost(WAIT).until(() -> pvcGauge(c, BinderMetrics.UNBOUND_PVC, ns, cls) == null);
        } finally {
            deleteVolume(bound);
            deleteVolume(free);
            deleteVolume(nfs);
        }
    }

    @Test
    void aDefaultClassGivenToAClaimRetroactivelyIsCounted() throws Exception {
        String s = suffix();
        String ns = TestNamespaces.newNamespace(client, "pvp-retro");
        String cls = "pvp-retro-" + s;
        try (var c = start(Map.of())) {
            Counter total = c.context.metrics().find(BinderMetrics.RETROACTIVE).counter();
            double before = total == null ? 0 : total.count();
            double errorsBefore = c.context.metrics().find(BinderMetrics.RETROACTIVE_ERRORS).counter().count();
            // a claim without a class, made while no class is the default
            client.persistentVolumeClaims().inNamespace(ns).resource(new PersistentVolumeClaimBuilder().withNewMetadata()
                    .withName("data").endMetadata().withNewSpec().withAccessModes("ReadWriteOnce").withNewResources()
                    .addToRequests("storage", new Quantity("1Gi")).endResources().endSpec().build()).create();
            try {
                client.storage().v1().storageClasses().resource(new StorageClassBuilder().withNewMetadata().withName(cls)
                        .withAnnotations(Map.of("storageclass.kubernetes.io/is-default-class", "true")).endMetadata()
                        .withProvisioner("example.com/none").build()).create();
                await().atMost(WAIT).until(() -> cls.equals(claim(ns, "data").getSpec().getStorageClassName()));
                await().atMost(WAIT).until(() -> c.context.metrics().find(BinderMetrics.RETROACTIVE).counter() != null
                        && c.context.metrics().find(BinderMetrics.RETROACTIVE).counter().count() > before);
                // a successful assignment is no error
                assertThat(c.context.metrics().find(BinderMetrics.RETROACTIVE_ERRORS).counter().count()).isEqualTo(errorsBefore);
            } finally {
                client.storage().v1().storageClasses().withName(cls).delete();
            }
        }
    }

    // ---- the Portworx deleter ----

    /** The binder of the descriptor, its Portworx deleter's local API on {@code port}. */
    private ControllerHarness<PersistentVolumeController> startWithPortworxPort(int port) throws InterruptedException {
        return ControllerHarness.create(vertx, PersistentVolumeController.NAME, "persistent-volume-binder",
                Map.of(), context -> new PersistentVolumeController(context, Duration.ofSeconds(1), true,
                        InTreePlugins.of(60, 30, "", 300, 30, "", false).withPortworxLocalPort(port)),
                c -> List.of(c.claimReconciler())).start();
    }

    private static int freePort() throws java.io.IOException {
        try (var socket = new java.net.ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    /**
     * A Portworx (openstorage) REST API on this host: versions answer, DELETE of a volume answers
     * {@code deleteAnswer}; the requests it got are recorded.
     */
    private static com.sun.net.httpserver.HttpServer portworxApi(int port, String deleteAnswer, List<String> requests)
            throws java.io.IOException {
        var server = com.sun.net.httpserver.HttpServer.create(new java.net.InetSocketAddress("127.0.0.1", port), 0);
        server.createContext("/", exchange -> {
            String path = exchange.getRequestURI().getPath();
            requests.add(exchange.getRequestMethod() + " " + path);
            String body = path.equals("/v1/osd-volumes/versions") ? "[\"v1\"]" : deleteAnswer;
            byte[] bytes = body.getBytes(java.nio.charset.StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(200, bytes.length);
            exchange.getResponseBody().write(bytes);
            exchange.close();
        });
        server.start();
        return server;
    }

    /**
     * A static Portworx PV (not provisioned, so not migrated to pxd.portworx.com) with the Delete policy is
     * deleted by the in-tree Portworx plugin: with no Portworx API on this host and no
     * kube-system/portworx-service, the deletion fails with the Service lookup's error, the volume is Failed with
     * VolumeFailedDelete, and the metrics name the plugin.
     */
    @Test
    void aStaticPortworxVolumeWithoutPortworxFailsItsDeletion() throws Exception {
        String s = suffix();
        String ns = TestNamespaces.newNamespace(client, "pvp-pxfail");
        String cls = "pvp-pxfail-" + s;
        String pv = "pvp-pxfail-" + s;
        try (var c = startWithPortworxPort(freePort())) {
            bindAndRelease(ns, volumeBuilder(pv, "1Gi", cls, "Delete").editSpec().withNewPortworxVolume()
                    .withVolumeID("px-" + s).endPortworxVolume().endSpec(), cls);
            String message = "services \"portworx-service\" not found";
            await().atMost(WAIT).until(() -> "Failed".equals(phase(volume(pv))));
            assertThat(volume(pv).getStatus().getMessage()).isEqualTo(message);
            assertThat(volume(pv).getMetadata().getAnnotations()).doesNotContainKey("pv.kubernetes.io/migrated-to");
            await().atMost(WAIT).until(() -> !events("default", pv, "VolumeFailedDelete").isEmpty());
            assertThat(events("default", pv, "VolumeFailedDelete")).extracting(Event::getMessage).contains(message);
            await().atMost(WAIT).until(() -> operationErrors(c, PortworxDeleter.PLUGIN_NAME, "delete") >= 1);
            assertThat(storageOperation(c, PortworxDeleter.PLUGIN_NAME, "volume_delete", "fail-unknown")).isNotNull();
            await().atMost(WAIT).until(() -> c.context.metrics().find(BinderMetrics.TOTAL_PV)
                    .tag("plugin_name", PortworxDeleter.PLUGIN_NAME).gauge() != null);
        } finally {
            deleteVolume(pv);
        }
    }

    /**
     * With a Portworx API answering on this host, the volume is deleted there ({@code DELETE
     * /v1/osd-volumes/<volumeID>} after the versions check) and then the PV object; an answer carrying an
     * error fails the volume with that error.
     */
    @Test
    void aStaticPortworxVolumeIsDeletedThroughThePortworxApi() throws Exception {
        String s = suffix();
        String ns = TestNamespaces.newNamespace(client, "pvp-px");
        String cls = "pvp-px-" + s;
        String pv = "pvp-px-" + s;
        String busy = "pvp-pxbusy-" + s;
        int port = freePort();
        List<String> requests = java.util.Collections.synchronizedList(new java.util.ArrayList<>());
        var server = portworxApi(port, "{\"error\": \"\"}", requests);
        try (var c = startWithPortworxPort(port)) {
            bindAndRelease(ns, volumeBuilder(pv, "1Gi", cls, "Delete").editSpec().withNewPortworxVolume()
                    .withVolumeID("px-" + s).endPortworxVolume().endSpec(), cls);
            await().atMost(WAIT).until(() -> requests.contains("DELETE /v1/osd-volumes/px-" + s));
            assertThat(requests).contains("GET /v1/osd-volumes/versions");
            await().atMost(WAIT).until(() -> volume(pv) == null || volume(pv).getMetadata().getDeletionTimestamp() != null);
            releaseVolumeProtection(pv);
            await().atMost(WAIT).until(() -> volume(pv) == null);
            assertThat(storageOperation(c, PortworxDeleter.PLUGIN_NAME, "volume_delete", "success")).isNotNull();
        } finally {
            server.stop(0);
            deleteVolume(pv);
        }
        var refusing = portworxApi(port, "{\"error\": \"volume px-busy is attached\"}", requests);
        try (var c = startWithPortworxPort(port)) {
            bindAndRelease(ns, volumeBuilder(busy, "1Gi", cls, "Delete").editSpec().withNewPortworxVolume()
                    .withVolumeID("px-busy").endPortworxVolume().endSpec(), cls);
            await().atMost(WAIT).until(() -> "Failed".equals(phase(volume(busy))));
            assertThat(volume(busy).getStatus().getMessage()).isEqualTo("volume px-busy is attached");
        } finally {
            refusing.stop(0);
            deleteVolume(busy);
        }
    }

    private static Double gauge(ControllerHarness<PersistentVolumeController> c, String name, String tag, String value) {
        Gauge g = c.context.metrics().find(name).tag(tag, value).gauge();
        return g == null || Double.isNaN(g.value()) ? null : g.value();
    }

    private static Double pvcGauge(ControllerHarness<PersistentVolumeController> c, String name, String ns, String cls) {
        Gauge g = c.context.metrics().find(name).tag("namespace", ns).tag("storage_class", cls)
                .tag("volume_attributes_class", "").gauge();
        return g == null || Double.isNaN(g.value()) ? null : g.value();
    }

    private static DistributionSummary operationSeconds(ControllerHarness<PersistentVolumeController> c, String plugin,
            String operation) {
        return c.context.metrics().find(BinderMetrics.OPERATION_SECONDS).tag("plugin_name", plugin)
                .tag("operation_name", operation).summary();
    }

    private static DistributionSummary storageOperation(ControllerHarness<PersistentVolumeController> c, String plugin,
            String operation, String status) {
        return c.context.metrics().find(BinderMetrics.STORAGE_OPERATION_SECONDS).tag("volume_plugin", plugin)
                .tag("operation_name", operation).tag("status", status).summary();
    }

    private static double operationErrors(ControllerHarness<PersistentVolumeController> c, String plugin, String operation) {
        Counter counter = c.context.metrics().find(BinderMetrics.OPERATION_ERRORS).tag("plugin_name", plugin)
                .tag("operation_name", operation).counter();
        return counter == null ? 0 : counter.count();
    }
}
