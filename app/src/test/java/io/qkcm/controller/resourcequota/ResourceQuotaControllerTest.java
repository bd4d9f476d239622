package io.qkcm.controller.resourcequota;

import static io.qkcm.testing.TestNamespaces.newNamespace;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;

import jakarta.inject.Inject;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.ResourceQuota;
import io.fabric8.kubernetes.api.model.ResourceQuotaBuilder;
import io.fabric8.kubernetes.api.model.ResourceQuotaStatus;
import io.fabric8.kubernetes.api.model.ScopedResourceSelectorRequirementBuilder;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.fabric8.kubernetes.api.model.scheduling.v1.PriorityClassBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.qkcm.testing.ControllerHarness;
import io.qkcm.testing.ManagerOffProfile;
import io.qkcm.testing.RealApiServer;
import io.qkcm.testing.RealApiServerResource;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.vertx.core.Vertx;

/**
 * resourcequota-controller against a real API server, built by its descriptor with
 * --resource-quota-sync-period=1h: every change of status.used below that the API server's own quota
 * admission does not make (it charges creations only) is the controller's recalculation or its
 * replenishment, never the periodic resync. Mirrors resource_quota_controller_test.go's
 * TestSyncResourceQuota cases (usage, scopes, scope selectors, spec changes, unchanged status) with
 * real objects, and shows the API server's admission refusing pods once the quota is full.
 */
@QuarkusTest
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
@TestProfile(ManagerOffProfile.class)
class ResourceQuotaControllerTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    @Inject
    Vertx vertx;

    static KubernetesClient client;
    static ControllerHarness<ResourceQuotaController> harness;

    @BeforeAll
    static void setUp() {
        client = RealApiServer.get().newClient();
    }

    @AfterAll
    static void tearDown() {
        if (harness != null) {
            harness.close();
        }
        client.close();
    }

    private synchronized ResourceQuotaController controller() throws InterruptedException {
        if (harness == null) {
            harness = ControllerHarness.create(vertx, ResourceQuotaController.NAME,
                    Map.of("qkcm.resource-quota-sync-period", "1h", "qkcm.internal.resourcequota.discovery-period", "2s"),
                    ResourceQuotaControllerDescriptor::newController).start();
        }
        return harness.controller;
    }

    private static Map<String, Quantity> hard(String... kv) {
        Map<String, Quantity> m = new TreeMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put(kv[i], new Quantity(kv[i + 1]));
        }
        return m;
    }

    /** {@code kubectl create quota <name> --hard=...}. */
    private static ResourceQuota createQuota(String ns, String name, Map<String, Quantity> hard, String... scopes) {
        return client.resourceQuotas().inNamespace(ns).resource(new ResourceQuotaBuilder().withNewMetadata().withName(name)
                .endMetadata().withNewSpec().withHard(hard).withScopes(scopes).endSpec().build()).create();
    }

    private static Pod pod(String ns, String name, String cpu) {
        PodBuilder b = new PodBuilder().withNewMetadata().withName(name).endMetadata().withNewSpec()
                .addNewContainer().withName("c").withImage("registry.k8s.io/pause:3.10").withNewResources()
                .endResources().endContainer().endSpec();
        Pod p = b.build();
        if (cpu != null) {
            p.getSpec().getContainers().get(0).getResources().setRequests(Map.of("cpu", new Quantity(cpu)));
        }
        return client.pods().inNamespace(ns).resource(p).create();
    }

    private static void setPhase(String ns, String name, String phase) {
        Pod p = client.pods().inNamespace(ns).withName(name).get();
        p.getStatus().setPhase(phase);
        client.pods().inNamespace(ns).resource(p).updateStatus();
    }

    private static ResourceQuotaStatus status(String ns, String name) {
        ResourceQuota q = client.resourceQuotas().inNamespace(ns).withName(name).get();
        return q.getStatus();
    }

    /** status.used as strings (what the API server stores), or null before the first status. */
    private static Map<String, String> used(String ns, String name) {
        ResourceQuotaStatus s = status(ns, name);
        if (s == null || s.getUsed() == null) {
            return null;
        }
        Map<String, String> out = new TreeMap<>();
        s.getUsed().forEach((k, v) -> out.put(k, v.toString()));
        return out;
    }

    private static Map<String, String> strings(String... kv) {
        Map<String, String> m = new TreeMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put(kv[i], kv[i + 1]);
        }
        return m;
    }

    private static void awaitUsed(String ns, String name, Map<String, String> expected) {
        await().atMost(TIMEOUT).untilAsserted(() -> assertThat(used(ns, name)).isEqualTo(expected));
    }

    /**
     * {@code kubectl create quota q1 --hard=pods=100,requests.cpu=1}: status.hard mirrors the spec, and
     * status.used counts the namespace's pods, a terminal pod not counted (TestSyncResourceQuota "pods").
     */
    @Test
    void createdQuotaGetsItsUsageCounted() throws Exception {
        controller();
        String ns = newNamespace(client, "rq-usage");
        pod(ns, "running", "100m");
        pod(ns, "done", "500m");
        setPhase(ns, "done", "Succeeded");
        createQuota(ns, "q1", hard("pods", "100", "requests.cpu", "1"));

        awaitUsed(ns, "q1", strings("pods", "1", "requests.cpu", "100m"));
        Map<String, String> statusHard = new TreeMap<>();
        status(ns, "q1").getHard().forEach((k, v) -> statusHard.put(k, v.toString()));
        assertThat(statusHard).isEqualTo(strings("pods", "100", "requests.cpu", "1"));
    }

    /** Deleting a pod requeues the namespace's quota (replenishment); the resync is an hour away. */
    @Test
    void deletingAPodReplenishesTheQuota() throws Exception {
        controller();
        String ns = newNamespace(client, "rq-delete");
        pod(ns, "a", "200m");
        pod(ns, "b", "300m");
        createQuota(ns, "q1", hard("pods", "10", "requests.cpu", "2", "count/pods", "10"));
        awaitUsed(ns, "q1", strings("pods", "2", "requests.cpu", "500m", "count/pods", "2"));

        client.pods().inNamespace(ns).withName("a").withGracePeriod(0).delete();
        awaitUsed(ns, "q1", strings("pods", "1", "requests.cpu", "300m", "count/pods", "1"));
    }

    /**
     * The ResourceClaim evaluator (DynamicResourceAllocation, on in v1.34): count/resourceclaims.resource.k8s.io
     * and devices per device class, as the API server stores the claims (ExactCount defaulted to 1); deleting a
     * claim replenishes at once through the claim informer the resourceclaim-controller shares.
     */
    @Test
    void resourceClaimsCountByDeviceClass() throws Exception {
        controller();
        String ns = newNamespace(client, "rq-claims");
        createQuota(ns, "q1", hard("count/resourceclaims.resource.k8s.io", "5", "gpu.deviceclass.resource.k8s.io/devices", "10",
                "tpu.deviceclass.resource.k8s.io/devices", "40"));
        awaitUsed(ns, "q1", strings("count/resourceclaims.resource.k8s.io", "0", "gpu.deviceclass.resource.k8s.io/devices", "0",
                "tpu.deviceclass.resource.k8s.io/devices", "0"));

        io.qkcm.controller.util.resource.ResourceClaim one = new io.qkcm.controller.util.resource.ResourceClaim();
        one.setMetadata(new io.fabric8.kubernetes.api.model.ObjectMetaBuilder().withName("one").build());
        one.setSpec(new io.fabric8.kubernetes.api.model.resource.v1beta2.ResourceClaimSpecBuilder().withNewDevices()
                .addNewRequest().withName("a").withNewExactly().withDeviceClassName("gpu").endExactly().endRequest()
                .addNewRequest().withName("b").withNewExactly().withDeviceClassName("gpu").withAllocationMode("ExactCount")
                .withCount(3L).endExactly().endRequest().endDevices().build());
        io.qkcm.controller.util.resource.ResourceClaim two = new io.qkcm.controller.util.resource.ResourceClaim();
        two.setMetadata(new io.fabric8.kubernetes.api.model.ObjectMetaBuilder().withName("two").build());
        two.setSpec(new io.fabric8.kubernetes.api.model.resource.v1beta2.ResourceClaimSpecBuilder().withNewDevices()
                .addNewRequest().withName("a").addNewFirstAvailable().withName("x").withDeviceClassName("tpu")
                .withAllocationMode("All").endFirstAvailable().addNewFirstAvailable().withName("y").withDeviceClassName("gpu")
                .withAllocationMode("ExactCount").withCount(2L).endFirstAvailable().endRequest().endDevices().build());
        client.resources(io.qkcm.controller.util.resource.ResourceClaim.class).inNamespace(ns).resource(one).create();
        client.resources(io.qkcm.controller.util.resource.ResourceClaim.class).inNamespace(ns).resource(two).create();
        // admission charges the creates; the controller's recount must agree with it
        controller().enqueueAll();
        awaitUsed(ns, "q1", strings("count/resourceclaims.resource.k8s.io", "2", "gpu.deviceclass.resource.k8s.io/devices", "6",
                "tpu.deviceclass.resource.k8s.io/devices", "32"));

        client.resources(io.qkcm.controller.util.resource.ResourceClaim.class).inNamespace(ns).withName("two").delete();
        awaitUsed(ns, "q1", strings("count/resourceclaims.resource.k8s.io", "1", "gpu.deviceclass.resource.k8s.io/devices", "4",
                "tpu.deviceclass.resource.k8s.io/devices", "0"));
    }

    /** A pod that reaches a terminal phase stops counting (upstream's update filter), count/pods keeps it. */
    @Test
    void podTurningTerminalReplenishesTheQuota() throws Exception {
        controller();
        String ns = newNamespace(client, "rq-terminal");
        pod(ns, "a", "200m");
        pod(ns, "b", "300m");
        createQuota(ns, "q1", hard("pods", "10", "requests.cpu", "2", "count/pods", "10"));
        awaitUsed(ns, "q1", strings("pods", "2", "requests.cpu", "500m", "count/pods", "2"));

        setPhase(ns, "a", "Failed");
        awaitUsed(ns, "q1", strings("pods", "1", "requests.cpu", "300m", "count/pods", "2"));
    }

    /** Terminating, NotTerminating, BestEffort, NotBestEffort, PriorityClass and CrossNamespacePodAffinity. */
    @Test
    void scopesAndScopeSelectors() throws Exception {
        controller();
        String ns = newNamespace(client, "rq-scopes");
        String high = ns + "-high";
        client.resource(new PriorityClassBuilder().withNewMetadata().withName(high).endMetadata().withValue(1000).build())
                .create();
        try {
            pod(ns, "burstable", "100m");
            pod(ns, "besteffort", null);
            Pod terminating = new PodBuilder().withNewMetadata().withName("terminating").endMetadata().withNewSpec()
                    .withActiveDeadlineSeconds(600L).addNewContainer().withName("c").withImage("i").endContainer().endSpec()
                    .build();
            client.pods().inNamespace(ns).resource(terminating).create();
            Pod prioritized = new PodBuilder().withNewMetadata().withName("prioritized").endMetadata().withNewSpec()
                    .withPriorityClassName(high).addNewContainer().withName("c").withImage("i").endContainer().endSpec()
                    .build();
            client.pods().inNamespace(ns).resource(prioritized).create();
            Pod crossNamespace = new PodBuilder().withNewMetadata().withName("cross").endMetadata().withNewSpec()
                    .withNewAffinity().withNewPodAffinity().addNewRequiredDuringSchedulingIgnoredDuringExecution()
                    .withTopologyKey("kubernetes.io/hostname").withNamespaces("other").withNewLabelSelector().endLabelSelector()
                    .endRequiredDuringSchedulingIgnoredDuringExecution().endPodAffinity().endAffinity()
                    .addNewContainer().withName("c").withImage("i").endContainer().endSpec().build();
            client.pods().inNamespace(ns).resource(crossNamespace).create();

            createQuota(ns, "best-effort", hard("pods", "10"), "BestEffort");
            createQuota(ns, "not-best-effort", hard("pods", "10", "requests.cpu", "1"), "NotBestEffort");
            createQuota(ns, "terminating", hard("pods", "10"), "Terminating");
            createQuota(ns, "not-terminating", hard("pods", "10"), "NotTerminating");
            createQuota(ns, "cross-namespace", hard("pods", "10"), "CrossNamespacePodAffinity");
            client.resourceQuotas().inNamespace(ns).resource(new ResourceQuotaBuilder().withNewMetadata()
                    .withName("priority").endMetadata().withNewSpec().withHard(hard("pods", "10")).withNewScopeSelector()
                    .withMatchExpressions(new ScopedResourceSelectorRequirementBuilder().withScopeName("PriorityClass")
                            .withOperator("In").withValues(high).build())
                    .endScopeSelector().endSpec().build()).create();
            client.resourceQuotas().inNamespace(ns).resource(new ResourceQuotaBuilder().withNewMetadata()
                    .withName("no-priority").endMetadata().withNewSpec().withHard(hard("pods", "10"))
                    .withNewScopeSelector().withMatchExpressions(new ScopedResourceSelectorRequirementBuilder()
                            .withScopeName("PriorityClass").withOperator("DoesNotExist").build())
                    .endScopeSelector().endSpec().build()).create();

            awaitUsed(ns, "best-effort", strings("pods", "4"));
            awaitUsed(ns, "not-best-effort", strings("pods", "1", "requests.cpu", "100m"));
            awaitUsed(ns, "terminating", strings("pods", "1"));
            awaitUsed(ns, "not-terminating", strings("pods", "4"));
            awaitUsed(ns, "cross-namespace", strings("pods", "1"));
            awaitUsed(ns, "priority", strings("pods", "1"));
            awaitUsed(ns, "no-priority", strings("pods", "4"));

            // the terminating pod's deletion reaches only the quotas whose scope it matched
            client.pods().inNamespace(ns).withName("terminating").withGracePeriod(0).delete();
            awaitUsed(ns, "terminating", strings("pods", "0"));
            awaitUsed(ns, "best-effort", strings("pods", "3"));
        } finally {
            client.resource(new PriorityClassBuilder().withNewMetadata().withName(high).endMetadata().withValue(1000).build())
                    .delete();
        }
    }

    /**
     * A resource no evaluator knows stays in status.hard, with no usage (upstream masks used to what it
     * computed); the known ones are counted.
     */
    @Test
    void unknownResourceIsCarriedIntoStatusWithoutUsage() throws Exception {
        controller();
        String ns = newNamespace(client, "rq-unknown");
        createQuota(ns, "q1", hard("pods", "5", "example.com/unknown", "3", "count/widgets.example.com", "2"));
        awaitUsed(ns, "q1", strings("pods", "0"));
        Map<String, String> statusHard = new TreeMap<>();
        status(ns, "q1").getHard().forEach((k, v) -> statusHard.put(k, v.toString()));
        assertThat(statusHard).isEqualTo(strings("pods", "5", "example.com/unknown", "3", "count/widgets.example.com", "2"));
    }

    /**
     * Object counts of the other evaluators, for objects created before the quota (so the counts are
     * the controller's, not admission's): services with node ports and load balancers, secrets,
     * replication controllers, the quota itself, claims by storage class, and count/<resource>.<group>
     * of a type found by discovery (deployments.apps).
     */
    @Test
    void objectCountsAndOtherEvaluators() throws Exception {
        controller();
        String ns = newNamespace(client, "rq-counts");
        client.services().inNamespace(ns).resource(new io.fabric8.kubernetes.api.model.ServiceBuilder().withNewMetadata()
                .withName("np").endMetadata().withNewSpec().withType("NodePort").addNewPort().withName("a").withPort(80).endPort()
                .addNewPort().withName("b").withPort(81).endPort().endSpec().build()).create();
        client.services().inNamespace(ns).resource(new io.fabric8.kubernetes.api.model.ServiceBuilder().withNewMetadata()
                .withName("lb").endMetadata().withNewSpec().withType("LoadBalancer").addNewPort().withPort(80).endPort()
                .endSpec().build()).create();
        client.services().inNamespace(ns).resource(new io.fabric8.kubernetes.api.model.ServiceBuilder().withNewMetadata()
                .withName("cip").endMetadata().withNewSpec().addNewPort().withPort(80).endPort().endSpec().build()).create();
        client.secrets().inNamespace(ns).resource(new io.fabric8.kubernetes.api.model.SecretBuilder().withNewMetadata()
                .withName("s").endMetadata().build()).create();
        client.persistentVolumeClaims().inNamespace(ns).resource(new io.fabric8.kubernetes.api.model
                .PersistentVolumeClaimBuilder().withNewMetadata().withName("gold-claim").endMetadata().withNewSpec()
                .withAccessModes("ReadWriteOnce").withStorageClassName("gold").withNewResources()
                .addToRequests("storage", new Quantity("1Gi")).endResources().endSpec().build()).create();
        client.persistentVolumeClaims().inNamespace(ns).resource(new io.fabric8.kubernetes.api.model
                .PersistentVolumeClaimBuilder().withNewMetadata().withName("plain-claim").endMetadata().withNewSpec()
                .withAccessModes("ReadWriteOnce").withStorageClassName("").withNewResources()
                .addToRequests("storage", new Quantity("512Mi")).endResources().endSpec().build()).create();
        client.apps().deployments().inNamespace(ns).resource(new DeploymentBuilder().withNewMetadata().withName("d")
                .endMetadata().withNewSpec().withReplicas(0).withNewSelector().addToMatchLabels("app", "d").endSelector()
                .withNewTemplate().withNewMetadata().addToLabels("app", "d").endMetadata().withNewSpec().addNewContainer()
                .withName("c").withImage("i").endContainer().endSpec().endTemplate().endSpec().build()).create();

        createQuota(ns, "q1", hard("services", "10", "services.nodeports", "10", "services.loadbalancers", "10",
                "count/services", "10", "secrets", "10", "count/secrets", "10", "resourcequotas", "10",
                "replicationcontrollers", "10", "persistentvolumeclaims", "10", "requests.storage", "10Gi",
                "gold.storageclass.storage.k8s.io/requests.storage", "5Gi",
                "gold.storageclass.storage.k8s.io/persistentvolumeclaims", "5", "count/deployments.apps", "5"));
        awaitUsed(ns, "q1", strings("services", "3", "services.nodeports", "3", "services.loadbalancers", "1",
                "count/services", "3", "secrets", "1", "count/secrets", "1", "resourcequotas", "1",
                "replicationcontrollers", "0", "persistentvolumeclaims", "2", "requests.storage", "1536Mi",
                "gold.storageclass.storage.k8s.io/requests.storage", "1Gi",
                "gold.storageclass.storage.k8s.io/persistentvolumeclaims", "1", "count/deployments.apps", "1"));

        // a service losing its node ports is a relevant update: the quota is recalculated
        var np = client.services().inNamespace(ns).withName("np").get();
        np.getSpec().setType("ClusterIP");
        np.getSpec().getPorts().forEach(p -> p.setNodePort(null));
        client.services().inNamespace(ns).resource(np).update();
        awaitUsed(ns, "q1", strings("services", "3", "services.nodeports", "1", "services.loadbalancers", "1",
                "count/services", "3", "secrets", "1", "count/secrets", "1", "resourcequotas", "1",
                "replicationcontrollers", "0", "persistentvolumeclaims", "2", "requests.storage", "1536Mi",
                "gold.storageclass.storage.k8s.io/requests.storage", "1Gi",
                "gold.storageclass.storage.k8s.io/persistentvolumeclaims", "1", "count/deployments.apps", "1"));
    }

    /** A change of spec.hard goes to status.hard at once (TestSyncResourceQuota "quota-spec-hard-updated"). */
    @Test
    void specHardChangeReachesStatus() throws Exception {
        controller();
        String ns = newNamespace(client, "rq-spec");
        createQuota(ns, "q1", hard("cpu", "3"));
        awaitUsed(ns, "q1", strings("cpu", "0"));
        ResourceQuota q = client.resourceQuotas().inNamespace(ns).withName("q1").get();
        q.getSpec().setHard(hard("cpu", "4", "pods", "7"));
        client.resourceQuotas().inNamespace(ns).resource(q).update();
        await().atMost(TIMEOUT).untilAsserted(() -> {
            Map<String, String> statusHard = new TreeMap<>();
            status(ns, "q1").getHard().forEach((k, v) -> statusHard.put(k, v.toString()));
            assertThat(statusHard).isEqualTo(strings("cpu", "4", "pods", "7"));
            assertThat(used(ns, "q1")).isEqualTo(strings("cpu", "0", "pods", "0"));
        });
    }

    /**
     * Status is written only when it changed (upstream's equality check): a sync of a quota whose usage
     * is up to date sends nothing, which shows as no conflict for a copy older than the server's (a
     * write of it would be refused); a wrong status.used is corrected by a later sync.
     */
    @Test
    void statusWrittenOnlyWhenChanged() throws Exception {
        ResourceQuotaController controller = controller();
        String ns = newNamespace(client, "rq-unchanged");
        pod(ns, "a", "250m");
        createQuota(ns, "q1", hard("pods", "10", "requests.cpu", "1"));
        awaitUsed(ns, "q1", strings("pods", "1", "requests.cpu", "250m"));
        ResourceQuota stale = client.resourceQuotas().inNamespace(ns).withName("q1").get();
        ResourceQuota relabeled = client.resourceQuotas().inNamespace(ns).withName("q1")
                .edit(q -> new ResourceQuotaBuilder(q).editMetadata().addToLabels("touched", "yes").endMetadata().build());
        String rv = relabeled.getMetadata().getResourceVersion();
        controller.syncResourceQuota(stale);
        assertThat(client.resourceQuotas().inNamespace(ns).withName("q1").get().getMetadata().getResourceVersion())
                .isEqualTo(rv);

        // a status.used that is wrong (say, written by a stale controller) is rewritten by the next sync, once
        // the rise has settled (a rise looks like admission's charge: AdmissionCharges; the sync requeues the quota)
        relabeled.getStatus().setUsed(hard("pods", "7", "requests.cpu", "900m"));
        ResourceQuota wrong = client.resourceQuotas().inNamespace(ns).resource(relabeled).updateStatus();
        assertThat(used(ns, "q1")).isEqualTo(strings("pods", "7", "requests.cpu", "900m"));
        controller.syncResourceQuota(wrong);
        awaitUsed(ns, "q1", strings("pods", "1", "requests.cpu", "250m"));
    }

    /**
     * The real effect: once the controller has written status, the API server's quota admission refuses
     * a pod over the quota; after a deletion is replenished, a pod fits again.
     */
    @Test
    void admissionRefusesPodsOverTheQuota() throws Exception {
        controller();
        String ns = newNamespace(client, "rq-admission");
        createQuota(ns, "q1", hard("pods", "2", "requests.cpu", "1"));
        awaitUsed(ns, "q1", strings("pods", "0", "requests.cpu", "0"));
        pod(ns, "a", "400m");
        pod(ns, "b", "400m");
        assertThatThrownBy(() -> pod(ns, "c", "100m")).isInstanceOfSatisfying(KubernetesClientException.class, e -> {
            assertThat(e.getCode()).isEqualTo(403);
            assertThat(e.getMessage()).contains("exceeded quota: q1");
        });

        client.pods().inNamespace(ns).withName("a").withGracePeriod(0).delete();
        awaitUsed(ns, "q1", strings("pods", "1", "requests.cpu", "400m"));
        pod(ns, "c", "100m");
        awaitUsed(ns, "q1", strings("pods", "2", "requests.cpu", "500m"));
    }

    /**
     * The controller found deployments.apps by discovery and counts it from the process's metadata
     * informer of the type (no shared typed informer serves it in this process).
     */
    @Test
    void discoveredResourcesHaveObjectCountEvaluators() throws Exception {
        ResourceQuotaController controller = controller();
        var deployments = new io.qkcm.controller.resourcequota.quota.GroupResource("apps", "deployments");
        assertThat(controller.registry().get(deployments)).isNotNull();
        assertThat(controller.registry().get(new io.qkcm.controller.resourcequota.quota.GroupResource("", "events")))
                .isNull();
        var deploymentsV1 = new io.qkcm.runtime.informers.GroupVersionResource("apps", "v1", "deployments");
        assertThat(controller.quotaMonitor().monitorInformers())
                .containsEntry(new io.qkcm.runtime.informers.GroupVersionResource("", "v1", "pods"), "typed")
                .containsEntry(deploymentsV1, "metadata");
        assertThat(harness.informers.metadata().existing(deploymentsV1)).hasValueSatisfying(i -> {
            assertThat(i.kind()).isEqualTo("Deployment");
            assertThat(i.started()).isTrue();
        });
        assertThat(controller.registry().list().size()).isGreaterThan(7);
    }

    /**
     * A discovered type on the process's metadata informer is handed over to the process's shared typed
     * informer once some controller asks for one (here the test, as the ReplicaSet controller would), and
     * the metadata informer, which no one else uses here, stops: one watch per type. Its deletes replenish
     * at once, with the resync an hour away.
     */
    @Test
    void listedResourceIsHandedOverToASharedInformer() throws Exception {
        ResourceQuotaController controller = controller();
        var replicaSets = new io.qkcm.runtime.informers.GroupVersionResource("apps", "v1", "replicasets");
        harness.informers.informerFor(io.fabric8.kubernetes.api.model.apps.ReplicaSet.class);
        await().atMost(TIMEOUT).untilAsserted(() -> assertThat(controller.quotaMonitor().monitorInformers())
                .containsEntry(replicaSets, "typed"));
        assertThat(harness.informers.metadata().existing(replicaSets)).isEmpty();

        String ns = newNamespace(client, "rq-handover");
        client.apps().replicaSets().inNamespace(ns).resource(new io.fabric8.kubernetes.api.model.apps.ReplicaSetBuilder()
                .withNewMetadata().withName("rs").endMetadata().withNewSpec().withReplicas(0).withNewSelector()
                .addToMatchLabels("app", "rs").endSelector().withNewTemplate().withNewMetadata().addToLabels("app", "rs")
                .endMetadata().withNewSpec().addNewContainer().withName("c").withImage("i").endContainer().endSpec()
                .endTemplate().endSpec().build()).create();
        createQuota(ns, "q1", hard("count/replicasets.apps", "5"));
        awaitUsed(ns, "q1", strings("count/replicasets.apps", "1"));
        client.apps().replicaSets().inNamespace(ns).withName("rs").delete();
        awaitUsed(ns, "q1", strings("count/replicasets.apps", "0"));
    }
}
