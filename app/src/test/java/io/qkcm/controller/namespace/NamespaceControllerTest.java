package io.qkcm.controller.namespace;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.NamespaceCondition;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.PodTemplateSpecBuilder;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinitionBuilder;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.fabric8.kubernetes.api.model.apps.ReplicaSetBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.qkcm.testing.RealApiServer;
import io.qkcm.testing.RealApiServerResource;
import io.qkcm.testing.TestKubelet;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;

/** namespace-controller against a real API server: deleting a namespace removes all of its content. */
@QuarkusTest
@TestProfile(NamespaceLifecycleProfile.class)
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
class NamespaceControllerTest {

    private static final ResourceDefinitionContext WIDGETS = new ResourceDefinitionContext.Builder()
            .withGroup("nstest.qkcm.io").withVersion("v1").withPlural("widgets").withKind("Widget")
            .withNamespaced(true).build();

    @Test
    void deletingANamespaceDeletesItsContentPodsFirstThenFinalizes() {
        try (KubernetesClient client = RealApiServer.get().newClient()) {
            ensureWidgetCrd(client);
            String ns = "ns-delete-" + System.nanoTime();
            client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build())
                    .create();

            Map<String, String> labels = Map.of("app", "web");
            PodTemplateSpec template = new PodTemplateSpecBuilder().withNewMetadata().withLabels(labels).endMetadata()
                    .withNewSpec().addNewContainer().withName("c").withImage("nginx").endContainer().endSpec().build();
            client.apps().deployments().inNamespace(ns).resource(new DeploymentBuilder().withNewMetadata()
                    .withName("web").endMetadata().withNewSpec().withReplicas(1).withNewSelector()
                    .withMatchLabels(labels).endSelector().withTemplate(template).endSpec().build()).create();
            client.apps().replicaSets().inNamespace(ns).resource(new ReplicaSetBuilder().withNewMetadata()
                    .withName("web-1").endMetadata().withNewSpec().withReplicas(1).withNewSelector()
                    .withMatchLabels(labels).endSelector().withTemplate(template).endSpec().build()).create();
            client.configMaps().inNamespace(ns).resource(new ConfigMapBuilder().withNewMetadata().withName("cfg")
                    .endMetadata().withData(Map.of("k", "v")).build()).create();
            client.secrets().inNamespace(ns).resource(new SecretBuilder().withNewMetadata().withName("sec")
                    .endMetadata().withStringData(Map.of("k", "v")).build()).create();
            client.genericKubernetesResources(WIDGETS).inNamespace(ns).resource(new GenericKubernetesResourceBuilder()
                    .withApiVersion("nstest.qkcm.io/v1").withKind("Widget").withNewMetadata().withName("w1")
                    .endMetadata().addToAdditionalProperties("spec", Map.of("size", 3)).build()).create();
            TestKubelet kubelet = new TestKubelet(client);
            for (int i = 0; i < 2; i++) {
                Pod pod = client.pods().inNamespace(ns).resource(new PodBuilder().withNewMetadata()
                        .withName("web-" + i).withLabels(labels).endMetadata().withNewSpec()
                        .withTerminationGracePeriodSeconds(4L).addNewContainer().withName("c").withImage("nginx")
                        .endContainer().endSpec().build()).create();
                kubelet.runningAndReady(pod);
            }

            client.namespaces().withName(ns).delete();

            // pods bound to a node terminate gracefully: the controller marks them and waits for them
            await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
                List<Pod> pods = client.pods().inNamespace(ns).list().getItems();
                assertThat(pods).hasSize(2)
                        .allSatisfy(p -> assertThat(p.getMetadata().getDeletionTimestamp()).isNotNull());
            });
            Namespace terminating = client.namespaces().withName(ns).get();
            assertThat(terminating.getStatus().getPhase()).isEqualTo("Terminating");
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
                List<NamespaceCondition> conditions = client.namespaces().withName(ns).get().getStatus()
                        .getConditions();
                assertThat(conditions).extracting(NamespaceCondition::getType).contains(
                        "NamespaceDeletionDiscoveryFailure", "NamespaceDeletionGroupVersionParsingFailure",
                        "NamespaceDeletionContentFailure", "NamespaceContentRemaining",
                        "NamespaceFinalizersRemaining");
                assertThat(conditions).filteredOn(c -> c.getType().equals("NamespaceDeletionDiscoveryFailure"))
                        .singleElement().satisfies(c -> {
                            assertThat(c.getStatus()).isEqualTo("False");
                            assertThat(c.getReason()).isEqualTo("ResourcesDiscovered");
                        });
            });
            // ordered deletion: nothing else goes while pods remain
            assertThat(client.configMaps().inNamespace(ns).withName("cfg").get()).isNotNull();
            assertThat(client.namespaces().withName(ns).get().getSpec().getFinalizers()).contains("kubernetes");

            // the kubelet has stopped the containers: it removes the pods for good
            for (Pod p : client.pods().inNamespace(ns).list().getItems()) {
                client.pods().inNamespace(ns).withName(p.getMetadata().getName()).withGracePeriod(0).delete();
            }

            await().atMost(Duration.ofSeconds(90)).untilAsserted(
                    () -> assertThat(client.namespaces().withName(ns).get()).isNull());
            // nothing is left behind in storage
            assertThat(client.pods().inNamespace(ns).list().getItems()).isEmpty();
            assertThat(client.configMaps().inNamespace(ns).list().getItems()).isEmpty();
            assertThat(client.secrets().inNamespace(ns).list().getItems()).isEmpty();
            assertThat(client.serviceAccounts().inNamespace(ns).list().getItems()).isEmpty();
            assertThat(client.apps().deployments().inNamespace(ns).list().getItems()).isEmpty();
            assertThat(client.apps().replicaSets().inNamespace(ns).list().getItems()).isEmpty();
            assertThat(client.genericKubernetesResources(WIDGETS).inNamespace(ns).list().getItems()).isEmpty();
        }
    }

    @Test
    void aFinalizerOnContentIsReportedAndWaitedFor() {
        try (KubernetesClient client = RealApiServer.get().newClient()) {
            ensureWidgetCrd(client);
            String ns = "ns-finalizer-" + System.nanoTime();
            client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build())
                    .create();
            GenericKubernetesResource held = client.genericKubernetesResources(WIDGETS).inNamespace(ns)
                    .resource(new GenericKubernetesResourceBuilder().withApiVersion("nstest.qkcm.io/v1")
                            .withKind("Widget").withNewMetadata().withName("held")
                            .withFinalizers("example.com/hold").endMetadata().build())
                    .create();
            assertThat(held.getMetadata().getFinalizers()).contains("example.com/hold");

            client.namespaces().withName(ns).delete();

            await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
                List<NamespaceCondition> conditions = client.namespaces().withName(ns).get().getStatus()
                        .getConditions();
                assertThat(conditions).filteredOn(c -> c.getType().equals("NamespaceContentRemaining"))
                        .singleElement().satisfies(c -> {
                            assertThat(c.getStatus()).isEqualTo("True");
                            assertThat(c.getReason()).isEqualTo("SomeResourcesRemain");
                            assertThat(c.getMessage())
                                    .isEqualTo("Some resources are remaining: widgets.nstest.qkcm.io has 1 resource instances");
                        });
                assertThat(conditions).filteredOn(c -> c.getType().equals("NamespaceFinalizersRemaining"))
                        .singleElement().satisfies(c -> {
                            assertThat(c.getStatus()).isEqualTo("True");
                            assertThat(c.getReason()).isEqualTo("SomeFinalizersRemain");
                            assertThat(c.getMessage()).isEqualTo(
                                    "Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances");
                        });
            });
            assertThat(client.namespaces().withName(ns).get().getSpec().getFinalizers()).contains("kubernetes");

            // the finalizer's owner lets go
            client.genericKubernetesResources(WIDGETS).inNamespace(ns).withName("held").edit(w -> {
                w.getMetadata().setFinalizers(List.of());
                return w;
            });
            await().atMost(Duration.ofSeconds(60)).untilAsserted(
                    () -> assertThat(client.namespaces().withName(ns).get()).isNull());
        }
    }

    @Test
    void aDiscoveryFailureLeavesAConditionAndNeverFinalizesEarly() {
        ResourceDefinitionContext apiServices = new ResourceDefinitionContext.Builder()
                .withGroup("apiregistration.k8s.io").withVersion("v1").withPlural("apiservices")
                .withKind("APIService").withNamespaced(false).build();
        String apiService = "v1alpha1.broken.nstest.qkcm.io";
        try (KubernetesClient client = RealApiServer.get().newClient()) {
            String ns = "ns-discovery-" + System.nanoTime();
            client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build())
                    .create();
            client.configMaps().inNamespace(ns).resource(new ConfigMapBuilder().withNewMetadata().withName("cfg")
                    .endMetadata().withData(Map.of("k", "v")).build()).create();
            // an aggregated API whose backend does not exist: its group cannot be discovered
            client.genericKubernetesResources(apiServices).resource(new GenericKubernetesResourceBuilder()
                    .withApiVersion("apiregistration.k8s.io/v1").withKind("APIService").withNewMetadata()
                    .withName(apiService).endMetadata()
                    .addToAdditionalProperties("spec", Map.of("group", "broken.nstest.qkcm.io", "version", "v1alpha1",
                            "groupPriorityMinimum", 1000, "versionPriority", 15, "insecureSkipTLSVerify", true,
                            "service", Map.of("namespace", "default", "name", "does-not-exist", "port", 443)))
                    .build()).create();
            try {
                client.namespaces().withName(ns).delete();
                await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
                    List<NamespaceCondition> conditions = client.namespaces().withName(ns).get().getStatus()
                            .getConditions();
                    assertThat(conditions).filteredOn(c -> c.getType().equals("NamespaceDeletionDiscoveryFailure"))
                            .singleElement().satisfies(c -> {
                                assertThat(c.getStatus()).isEqualTo("True");
                                assertThat(c.getReason()).isEqualTo("DiscoveryFailed");
                                assertThat(c.getMessage()).startsWith("Discovery failed for some groups, 1 failing: "
                                        + "unable to retrieve the complete list of server APIs: "
                                        + "broken.nstest.qkcm.io/v1alpha1: ");
                            });
                    // what could be discovered is deleted all the same
                    assertThat(client.configMaps().inNamespace(ns).withName("cfg").get()).isNull();
                });
                // but the namespace is not finalized while part of the API is unknown
                assertThat(client.namespaces().withName(ns).get().getSpec().getFinalizers()).contains("kubernetes");
            } finally {
                client.genericKubernetesResources(apiServices).withName(apiService).delete();
            }
            await().atMost(Duration.ofSeconds(90)).untilAsserted(
                    () -> assertThat(client.namespaces().withName(ns).get()).isNull());
        }
    }

    static void ensureWidgetCrd(KubernetesClient client) {
        String name = "widgets.nstest.qkcm.io";
        if (client.apiextensions().v1().customResourceDefinitions().withName(name).get() == null) {
            CustomResourceDefinition crd = new CustomResourceDefinitionBuilder().withNewMetadata().withName(name)
                    .endMetadata().withNewSpec().withGroup("nstest.qkcm.io").withScope("Namespaced").withNewNames()
                    .withPlural("widgets").withSingular("widget").withKind("Widget").withListKind("WidgetList")
                    .endNames().addNewVersion().withName("v1").withServed(true).withStorage(true).withNewSchema()
                    .withNewOpenAPIV3Schema().withType("object").withXKubernetesPreserveUnknownFields(true)
                    .endOpenAPIV3Schema().endSchema().endVersion().endSpec().build();
            try {
                client.apiextensions().v1().customResourceDefinitions().resource(crd).create();
            } catch (io.fabric8.kubernetes.client.KubernetesClientException e) {
                if (e.getCode() != 409) {
                    throw e;
                }
            }
        }
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            CustomResourceDefinition crd = client.apiextensions().v1().customResourceDefinitions().withName(name).get();
            assertThat(crd.getStatus().getConditions())
                    .anySatisfy(c -> {
                        assertThat(c.getType()).isEqualTo("Established");
                        assertThat(c.getStatus()).isEqualTo("True");
                    });
            // served: listing works
            client.genericKubernetesResources(WIDGETS).inAnyNamespace().list();
        });
    }
}
