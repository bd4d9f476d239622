package io.qkcm.controller.resourcequota;

import static io.qkcm.testing.TestNamespaces.newNamespace;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.Map;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.ResourceQuota;
import io.fabric8.kubernetes.api.model.ResourceQuotaBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinitionBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.MixedOperation;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceList;
import io.qkcm.controller.garbagecollector.GarbageCollector;
import io.qkcm.runtime.informers.GroupVersionResource;
import io.qkcm.runtime.informers.MetadataInformers;
import io.qkcm.runtime.informers.MetadataInformers.MetadataInformer;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.testing.ControllerHarness;
import io.qkcm.testing.ManagerOffProfile;
import io.qkcm.testing.RealApiServer;
import io.qkcm.testing.RealApiServerResource;
import io.qkcm.testing.TestOperators;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.vertx.core.Vertx;

/**
 * {@code count/<resource>.<group>} of a custom resource, which no typed informer of the process serves:
 * the quota controller monitors it on the process's metadata informer of the type, the one the garbage
 * collector's monitor uses (upstream's informerfactory, one watch per type), so a delete lowers
 * status.used at once, with --resource-quota-sync-period an hour away. The garbage collector stopping
 * its monitor leaves the informer running for the quota controller; the quota controller's discovery
 * dropping the type (the CRD deleted) ends the last use and the informer with it.
 */
@QuarkusTest
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
@TestProfile(ManagerOffProfile.class)
class CustomResourceQuotaTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final String GROUP = "rq.qkcm.io";

    @Inject
    Vertx vertx;

    @Test
    void customResourceCountIsReplenishedFromTheMetadataInformerTheGarbageCollectorShares() throws Exception {
        String suffix = Long.toString(System.nanoTime(), 36);
        String plural = "widgets" + suffix;
        String kind = "Widget" + suffix;
        GroupVersionResource gvr = new GroupVersionResource(GROUP, "v1", plural);
        String count = "count/" + plural + "." + GROUP;
        try (KubernetesClient client = RealApiServer.get().newClient()) {
            CustomResourceDefinition crd = crd(client, plural, kind);
            ControllerHarness<ResourceQuotaController> harness = null;
            GarbageCollector gc = null;
            try {
                harness = ControllerHarness.create(vertx, ResourceQuotaController.NAME,
                        Map.of("qkcm.resource-quota-sync-period", "1h",
                                "qkcm.internal.resourcequota.discovery-period", "2s"),
                        ResourceQuotaControllerDescriptor::newController).start();
                ResourceQuotaController controller = harness.controller;
                MetadataInformers metadata = harness.informers.metadata();
                assertThat(harness.context.metadataInformers()).isSameAs(metadata);
                // the garbage collector of the same process: its own client and context, the same informers
                ControllerContext gcContext = new ControllerContext(GarbageCollector.NAME,
                        harness.clients.forController("generic-garbage-collector"), harness.informers,
                        harness.events.recorder(GarbageCollector.NAME), harness.options, harness.delayer,
                        TestOperators.create());
                gc = new GarbageCollector(gcContext, 1);
                gc.start();
                GarbageCollector collector = gc;

                // both monitor the type, through one informer: two uses, two handlers, one watch
                await().atMost(Duration.ofSeconds(90)).untilAsserted(() -> {
                    assertThat(collector.monitoredResources()).contains(gvr);
                    assertThat(controller.quotaMonitor().monitorInformers()).containsEntry(gvr, "metadata");
                });
                MetadataInformer informer = metadata.existing(gvr).orElseThrow();
                assertThat(informer.uses()).isEqualTo(2);
                assertThat(informer.handlerCount()).isEqualTo(2);
                assertThat(informer.kind()).isEqualTo(kind);
                await().atMost(TIMEOUT).until(informer::hasSynced);

                String ns = newNamespace(client, "rq-cr");
                var widgets = widgets(client, plural, kind).inNamespace(ns);
                client.resourceQuotas().inNamespace(ns).resource(new ResourceQuotaBuilder().withNewMetadata()
                        .withName("q1").endMetadata().withNewSpec().withHard(Map.of(count, new Quantity("5"))).endSpec()
                        .build()).create();
                awaitUsed(client, ns, count, "0");
                widgets.resource(widget(plural, kind, "a")).create();
                widgets.resource(widget(plural, kind, "b")).create();
                widgets.resource(widget(plural, kind, "c")).create();
                awaitUsed(client, ns, count, "3");

                // a delete reaches the quota through the monitor, not the resync an hour away
                widgets.withName("a").delete();
                awaitUsed(client, ns, count, "2");

                // the garbage collector stops its monitors: its use ends, the quota controller's goes on
                gc.shutdown(Duration.ofSeconds(5));
                gc = null;
                assertThat(informer.stopped()).isFalse();
                assertThat(informer.uses()).isEqualTo(1);
                assertThat(informer.handlerCount()).isEqualTo(1);
                assertThat(metadata.existing(gvr)).containsSame(informer);
                widgets.withName("b").delete();
                awaitUsed(client, ns, count, "1");

                // the type goes away: the quota controller's discovery removes its monitor, the last use
                client.apiextensions().v1().customResourceDefinitions().withName(crd.getMetadata().getName()).delete();
                await().atMost(TIMEOUT).untilAsserted(() -> {
                    assertThat(controller.quotaMonitor().monitorInformers()).doesNotContainKey(gvr);
                    assertThat(informer.stopped()).isTrue();
                    assertThat(metadata.existing(gvr)).isEmpty();
                });
            } finally {
                if (gc != null) {
                    gc.shutdown(Duration.ZERO);
                }
                if (harness != null) {
                    harness.close();
                }
                client.apiextensions().v1().customResourceDefinitions().withName(crd.getMetadata().getName()).delete();
            }
        }
    }

    /**
     * A controller built after the quota controller asks for a typed informer of a type the quota
     * controller's first discovery put on a metadata informer (the manager builds every controller, then
     * starts them): at its start the quota controller hands the type over to the typed informer before its
     * metadata informer ever starts, so the type is never watched twice.
     */
    @Test
    void typeWithATypedInformerAskedForBeforeStartIsNeverWatchedByAMetadataInformer() throws Exception {
        GroupVersionResource statefulSets = new GroupVersionResource("apps", "v1", "statefulsets");
        try (ControllerHarness<ResourceQuotaController> harness = ControllerHarness.create(vertx,
                ResourceQuotaController.NAME, Map.of("qkcm.resource-quota-sync-period", "1h",
                        "qkcm.internal.resourcequota.discovery-period", "2s"),
                ResourceQuotaControllerDescriptor::newController)) {
            ResourceQuotaController controller = harness.controller;
            assertThat(controller.quotaMonitor().monitorInformers()).containsEntry(statefulSets, "metadata");
            MetadataInformer metadataInformer = harness.informers.metadata().existing(statefulSets).orElseThrow();
            assertThat(metadataInformer.started()).isFalse();

            // as the statefulset controller does while it is built
            harness.informers.informerFor(io.fabric8.kubernetes.api.model.apps.StatefulSet.class);
            harness.start();

            // the quota controller starts once its Operator has started
            await().atMost(TIMEOUT).untilAsserted(() -> assertThat(controller.quotaMonitor().monitorInformers())
                    .containsEntry(statefulSets, "typed"));
            assertThat(metadataInformer.started()).as("the metadata informer never watched").isFalse();
            assertThat(metadataInformer.stopped()).isTrue();
            assertThat(harness.informers.metadata().existing(statefulSets)).isEmpty();
        }
    }

    private static CustomResourceDefinition crd(KubernetesClient client, String plural, String kind) {
        CustomResourceDefinition crd = new CustomResourceDefinitionBuilder().withNewMetadata()
                .withName(plural + "." + GROUP).endMetadata().withNewSpec().withGroup(GROUP).withScope("Namespaced")
                .withNewNames().withPlural(plural).withSingular(plural.substring(0, plural.length() - 1))
                .withKind(kind).endNames()
                .addNewVersion().withName("v1").withServed(true).withStorage(true).withNewSchema()
                .withNewOpenAPIV3Schema().withType("object").withXKubernetesPreserveUnknownFields(true)
                .endOpenAPIV3Schema().endSchema().endVersion().endSpec().build();
        client.apiextensions().v1().customResourceDefinitions().resource(crd).create();
        await().atMost(TIMEOUT).until(() -> {
            CustomResourceDefinition c = client.apiextensions().v1().customResourceDefinitions()
                    .withName(crd.getMetadata().getName()).get();
            return c.getStatus() != null && c.getStatus().getConditions().stream()
                    .anyMatch(x -> x.getType().equals("Established") && x.getStatus().equals("True"));
        });
        return crd;
    }

    private static MixedOperation<GenericKubernetesResource, GenericKubernetesResourceList, Resource<GenericKubernetesResource>> widgets(
            KubernetesClient client, String plural, String kind) {
        return client.genericKubernetesResources(new ResourceDefinitionContext.Builder().withGroup(GROUP)
                .withVersion("v1").withPlural(plural).withKind(kind).withNamespaced(true).build());
    }

    private static GenericKubernetesResource widget(String plural, String kind, String name) {
        GenericKubernetesResource g = new GenericKubernetesResource();
        g.setApiVersion(GROUP + "/v1");
        g.setKind(kind);
        g.setMetadata(new ObjectMetaBuilder().withName(name).build());
        return g;
    }

    private static void awaitUsed(KubernetesClient client, String ns, String resource, String expected) {
        await().atMost(TIMEOUT).untilAsserted(() -> {
            ResourceQuota q = client.resourceQuotas().inNamespace(ns).withName("q1").get();
            assertThat(q.getStatus()).isNotNull();
            assertThat(q.getStatus().getUsed()).isNotNull();
            assertThat(q.getStatus().getUsed().get(resource)).hasToString(expected);
        });
    }
}
