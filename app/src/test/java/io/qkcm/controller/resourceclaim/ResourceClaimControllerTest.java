package io.qkcm.controller.resourceclaim;

import static io.qkcm.testing.TestNamespaces.newNamespace;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import jakarta.inject.Inject;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodResourceClaimStatus;
import io.fabric8.kubernetes.api.model.resource.v1beta2.ResourceClaimSpec;
import io.fabric8.kubernetes.api.model.resource.v1beta2.ResourceClaimSpecBuilder;
import io.fabric8.kubernetes.api.model.resource.v1beta2.ResourceClaimStatusBuilder;
import io.fabric8.kubernetes.api.model.resource.v1beta2.ResourceClaimTemplateSpecBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.qkcm.controller.util.resource.ResourceClaim;
import io.qkcm.controller.resourceclaim.api.ResourceClaimTemplate;
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
 * resourceclaim-controller against a real API server (resource.k8s.io/v1), after upstream's
 * controller_test.go: a claim from the pod's template (generateName, owner, annotation, the pod's
 * resourceClaimStatuses) deleted when the pod is done; a missing template reported on the pod; a
 * reservation of a pod that is gone dropped and an allocated claim reserved for the scheduled pod using
 * it; a create whose answer was lost never repeated.
 */
@QuarkusTest
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
@TestProfile(ManagerOffProfile.class)
class ResourceClaimControllerTest {

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

    private ControllerHarness<ResourceClaimController> start() throws InterruptedException {
        ControllerHarness<ResourceClaimController> h = ControllerHarness.create(vertx, ResourceClaimController.NAME,
                "resource-claim-controller", Map.of(), ResourceClaimControllerDescriptor::newController);
        return h.start();
    }

    static ResourceClaimSpec spec() {
        return new ResourceClaimSpecBuilder().withNewDevices().addNewRequest().withName("req").withNewExactly()
                .withDeviceClassName("gpu.example.com").endExactly().endRequest().endDevices().build();
    }

    static void template(String ns, String name) {
        ResourceClaimTemplate t = new ResourceClaimTemplate();
        t.setMetadata(new ObjectMetaBuilder().withName(name).withNamespace(ns).build());
        t.setSpec(new ResourceClaimTemplateSpecBuilder().withNewMetadata().withLabels(Map.of("team", "ml")).endMetadata()
                .withSpec(spec()).build());
        client.resources(ResourceClaimTemplate.class).inNamespace(ns).resource(t).create();
    }

    /** A pod whose claim {@code gpu} comes from {@code template} (or names claim {@code claimName}). */
    static Pod pod(String ns, String name, String template, String claimName, String node) {
        return client.pods().inNamespace(ns).resource(new PodBuilder().withNewMetadata().withName(name).endMetadata()
                .withNewSpec().withNodeName(node).addNewResourceClaim().withName("gpu").withResourceClaimTemplateName(template)
                .withResourceClaimName(claimName).endResourceClaim().addNewContainer().withName("c")
                .withImage("registry.k8s.io/pause:3.10").withNewResources().addNewClaim().withName("gpu").endClaim()
                .endResources().endContainer().endSpec().build()).create();
    }

    static List<ResourceClaim> claims(String ns) {
        return client.resources(ResourceClaim.class).inNamespace(ns).list().getItems();
    }

    static List<Event> events(String ns, String pod, String reason) {
        return client.v1().events().inNamespace(ns).list().getItems().stream()
                .filter(e -> pod.equals(e.getInvolvedObject().getName()) && reason.equals(e.getReason())).toList();
    }

    static Pod getPod(String ns, String name) {
        return client.pods().inNamespace(ns).withName(name).get();
    }

    @Test
    void aClaimFromTheTemplateIsRecordedInThePodAndDeletedWhenThePodIsDone() throws Exception {
        String ns = newNamespace(client, "rc-tmpl");
        try (var c = start()) {
            template(ns, "gpu-template");
            Pod pod = pod(ns, "web", "gpu-template", null, null);
            await().atMost(WAIT).until(() -> {
                Pod p = getPod(ns, "web");
                return p.getStatus().getResourceClaimStatuses() != null && !p.getStatus().getResourceClaimStatuses().isEmpty();
            });
            List<ResourceClaim> made = claims(ns);
            assertThat(made).hasSize(1);
            ResourceClaim claim = made.get(0);
            assertThat(claim.getMetadata().getGenerateName()).isEqualTo("web-gpu-");
            assertThat(claim.getMetadata().getName()).startsWith("web-gpu-").hasSize("web-gpu-".length() + 5);
            assertThat(claim.getMetadata().getAnnotations()).containsEntry("resource.kubernetes.io/pod-claim-name", "gpu");
            assertThat(claim.getMetadata().getLabels()).containsEntry("team", "ml");
            assertThat(claim.getMetadata().getOwnerReferences()).singleElement().satisfies(ref -> {
                assertThat(ref.getKind()).isEqualTo("Pod");
                assertThat(ref.getApiVersion()).isEqualTo("v1");
                assertThat(ref.getUid()).isEqualTo(pod.getMetadata().getUid());
                assertThat(ref.getController()).isTrue();
                assertThat(ref.getBlockOwnerDeletion()).isTrue();
            });
            assertThat(claim.getSpec().getDevices().getRequests().get(0).getExactly().getDeviceClassName())
                    .isEqualTo("gpu.example.com");
            List<PodResourceClaimStatus> statuses = getPod(ns, "web").getStatus().getResourceClaimStatuses();
            assertThat(statuses).singleElement().satisfies(s -> {
                assertThat(s.getName()).isEqualTo("gpu");
                assertThat(s.getResourceClaimName()).isEqualTo(claim.getMetadata().getName());
            });
            assertThat(getPod(ns, "web").getMetadata().getManagedFields()).anySatisfy(
                    f -> assertThat(f.getManager()).isEqualTo("ResourceClaimController"));
            assertThat(c.controller.metrics().counter("success", "false").count()).isEqualTo(1);
            // resourceclaim_controller_resource_claims counts the cached claims (other tests' included)
            Long withClaim = c.controller.metrics().resourceClaims("false", "false");
            assertThat(withClaim).isNotNull().isPositive();

            // the pod ran to completion: its generated claim is deleted
            new TestKubelet(client).succeeded(getPod(ns, "web"));
            await().atMost(WAIT).until(() -> claims(ns).isEmpty());
            await().atMost(WAIT).until(() -> {
                Long now = c.controller.metrics().resourceClaims("false", "false");
                return (now == null ? 0 : now) == withClaim - 1;
            });
            assertThat(c.controller.metrics().counter("success", "false").count()).isEqualTo(1);
            // the claim's deletion enqueues its pod's claims, never the finished pod: syncing it would make the
            // claim its status names again (upstream's enqueuePod returns once the pod needs no claims)
            io.qkcm.testing.QueueProbe probe = io.qkcm.testing.QueueProbe.of(c.context.metrics(),
                    ResourceClaimController.QUEUE);
            long adds = probe.adds();
            c.controller.enqueuePod(getPod(ns, "web"), false);
            // one add, its claim's key (claim:<ns>/<claim>, same queue as upstream's), not the pod's
            assertThat(probe.adds()).isEqualTo(adds + 1);
            await().during(Duration.ofSeconds(2)).atMost(WAIT).until(() -> claims(ns).isEmpty());
        }
    }

    @Test
    void aMissingTemplateIsReportedOnThePod() throws Exception {
        String ns = newNamespace(client, "rc-missing");
        try (var c = start()) {
            pod(ns, "web", "missing", null, null);
            await().atMost(WAIT).until(() -> !events(ns, "web", "FailedResourceClaimCreation").isEmpty());
            Event event = events(ns, "web", "FailedResourceClaimCreation").get(0);
            assertThat(event.getType()).isEqualTo("Warning");
            assertThat(event.getMessage()).isEqualTo("PodResourceClaim gpu: resource claim template \"missing\": "
                    + "resourceclaimtemplate.resource.k8s.io \"missing\" not found");
            assertThat(event.getSource().getComponent()).isEqualTo("resource_claim");
            assertThat(claims(ns)).isEmpty();

            // the template arrives: the claim follows (the pod is retried with backoff)
            template(ns, "missing");
            await().atMost(WAIT).until(() -> claims(ns).size() == 1);
        } finally {
            client.pods().inNamespace(ns).withName("web").withGracePeriod(0).delete();
        }
    }

    /**
     * Upstream's resourceclaim.Features: with DRAAdminAccess or DRAPrioritizedList off (--feature-gates), a
     * template using what the gate guards makes no claim; the pod gets the reason. The gates are on by
     * default in v1.34, as the other tests run.
     */
    @Test
    void templatesUsingADisabledGatesFieldsMakeNoClaim() throws Exception {
        String ns = newNamespace(client, "rc-gates");
        ResourceClaimTemplate admin = new ResourceClaimTemplate();
        admin.setMetadata(new ObjectMetaBuilder().withName("admin").withNamespace(ns).build());
        admin.setSpec(new ResourceClaimTemplateSpecBuilder().withSpec(new ResourceClaimSpecBuilder().withNewDevices()
                .addNewRequest().withName("req").withNewExactly().withDeviceClassName("gpu.example.com").withAdminAccess(true)
                .endExactly().endRequest().endDevices().build()).build());
        ResourceClaimTemplate prioritized = new ResourceClaimTemplate();
        prioritized.setMetadata(new ObjectMetaBuilder().withName("prioritized").withNamespace(ns).build());
        prioritized.setSpec(new ResourceClaimTemplateSpecBuilder().withSpec(new ResourceClaimSpecBuilder().withNewDevices()
                .addNewRequest().withName("req").addNewFirstAvailable().withName("big").withDeviceClassName("gpu.example.com")
                .endFirstAvailable().addNewFirstAvailable().withName("small").withDeviceClassName("gpu.example.com")
                .endFirstAvailable().endRequest().endDevices().build()).build());
        assertThat(ResourceClaimController.needsAdminAccess(admin)).isTrue();
        assertThat(ResourceClaimController.hasPrioritizedList(admin)).isFalse();
        assertThat(ResourceClaimController.hasPrioritizedList(prioritized)).isTrue();
        // the API server refuses an admin-access template outside a namespace labelled for it: only the
        // prioritized one is created; the admin-access check is pinned on the template above
        client.resources(ResourceClaimTemplate.class).inNamespace(ns).resource(prioritized).create();
        try (var c = ControllerHarness.create(vertx, ResourceClaimController.NAME, "resource-claim-controller", Map.of(),
                context -> new ResourceClaimController(context, 2, new ResourceClaimController.Features(false, false))).start()) {
            pod(ns, "web", "prioritized", null, null);
            await().atMost(WAIT).until(() -> !events(ns, "web", "FailedResourceClaimCreation").isEmpty());
            assertThat(events(ns, "web", "FailedResourceClaimCreation").get(0).getMessage()).isEqualTo("PodResourceClaim gpu: "
                    + "template includes a prioritized list of subrequests, but the feature is disabled");
            assertThat(claims(ns)).isEmpty();
        } finally {
            client.pods().inNamespace(ns).withName("web").withGracePeriod(0).delete();
        }
        // with the gates on (v1.34's default) the same template makes its claim
        try (var c = start()) {
            pod(ns, "web2", "prioritized", null, null);
            await().atMost(WAIT).until(() -> claims(ns).size() == 1);
        } finally {
            client.pods().inNamespace(ns).withName("web2").withGracePeriod(0).delete();
        }
    }

    @Test
    void aReservationOfAGonePodIsDroppedAndTheScheduledUserIsReserved() throws Exception {
        String ns = newNamespace(client, "rc-reserve");
        try (var c = start()) {
            ResourceClaim claim = new ResourceClaim();
            claim.setMetadata(new ObjectMetaBuilder().withName("shared").withNamespace(ns).build());
            claim.setSpec(spec());
            claim = client.resources(ResourceClaim.class).inNamespace(ns).resource(claim).create();
            String ghostUid = UUID.randomUUID().toString();
            claim.setStatus(new ResourceClaimStatusBuilder().withNewAllocation().withNewDevices().addNewResult()
                    .withRequest("req").withDriver("gpu.example.com").withPool("pool").withDevice("dev-0").endResult()
                    .endDevices().endAllocation().addNewReservedFor().withResource("pods").withName("ghost")
                    .withUid(ghostUid).endReservedFor().build());
            client.resources(ResourceClaim.class).inNamespace(ns).resource(claim).updateStatus();

            Pod user = pod(ns, "user", null, "shared", "test-node");
            await().atMost(WAIT).untilAsserted(() -> assertThat(client.resources(ResourceClaim.class).inNamespace(ns)
                    .withName("shared").get().getStatus().getReservedFor())
                    .extracting(r -> r.getUid()).containsExactly(user.getMetadata().getUid()));
            ResourceClaim after = client.resources(ResourceClaim.class).inNamespace(ns).withName("shared").get();
            assertThat(after.getStatus().getAllocation()).isNotNull();
            assertThat(after.getMetadata().getDeletionTimestamp()).isNull();
            // the ghost's reservation was dropped by a claim key, the user's made by a pod key: one queue, as upstream
            assertThat(c.context.queues()).containsExactly(ResourceClaimController.QUEUE);
            assertThat(((io.qkcm.runtime.josdk.OperatorController) c.running).workerCount()).isEqualTo(50);
        } finally {
            client.pods().inNamespace(ns).withName("user").withGracePeriod(0).delete();
        }
    }

    /**
     * The create's answer was lost and the cache has not seen the claim it made: the next sync lists the
     * claims from the API server, finds it and records it in the pod's status instead of creating a
     * second one from generateName.
     */
    @Test
    void aCreateWhoseAnswerWasLostIsNotRepeated() throws Exception {
        String ns = newNamespace(client, "rc-lost");
        URI apiServer = URI.create(client.getConfiguration().getMasterUrl());
        try (StallingProxy proxy = new StallingProxy(apiServer)) {
            Path via = LosingPodControl.kubeconfigVia(proxy, client, "rc-lost");
            try (var c = ControllerHarness.withInformersVia(vertx, ResourceClaimController.NAME, via,
                    ResourceClaimControllerDescriptor::newController).startInformers()) {
                template(ns, "gpu-template");
                Pod pod = pod(ns, "web", "gpu-template", null, null);
                await().atMost(WAIT).until(() -> c.informers.informerFor(Pod.class).getStore().getByKey(ns + "/web") != null
                        && c.informers.informerFor(ResourceClaimTemplate.class).getStore()
                                .getByKey(ns + "/gpu-template") != null);
                proxy.stall();
                // what the lost create made: a claim only the API server knows
                ResourceClaim made = new ResourceClaim();
                made.setMetadata(new ObjectMetaBuilder().withGenerateName("web-gpu-").withNamespace(ns)
                        .withAnnotations(Map.of("resource.kubernetes.io/pod-claim-name", "gpu"))
                        .withOwnerReferences(new OwnerReferenceBuilder().withApiVersion("v1").withKind("Pod").withName("web")
                                .withUid(pod.getMetadata().getUid()).withController(true).withBlockOwnerDeletion(true).build())
                        .build());
                made.setSpec(spec());
                made = client.resources(ResourceClaim.class).inNamespace(ns).resource(made).create();
                c.controller.created().markUncertain(pod.getMetadata().getUid());

                c.controller.sync(ns + "/web");
                assertThat(claims(ns)).extracting(r -> r.getMetadata().getName()).containsExactly(made.getMetadata().getName());
                assertThat(getPod(ns, "web").getStatus().getResourceClaimStatuses()).singleElement()
                        .satisfies(s -> assertThat(s.getResourceClaimName()).isEqualTo(claims(ns).get(0).getMetadata().getName()));
                // once settled, a later sync on the same stale cache still knows the claim
                c.controller.sync(ns + "/web");
                assertThat(claims(ns)).hasSize(1);
                proxy.resume();
            } finally {
                client.pods().inNamespace(ns).withName("web").withGracePeriod(0).delete();
            }
        }
    }
}
