package io.qkcm.controller.podautoscaler;

import static io.qkcm.testing.TestNamespaces.newNamespace;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.fabric8.kubernetes.api.model.autoscaling.v2.HorizontalPodAutoscaler;
import io.fabric8.kubernetes.api.model.autoscaling.v2.HorizontalPodAutoscalerBuilder;
import io.fabric8.kubernetes.api.model.autoscaling.v2.HorizontalPodAutoscalerCondition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.qkcm.testing.RealApiServer;
import io.qkcm.testing.RealApiServerResource;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;

/**
 * horizontal-pod-autoscaler-controller against a real API server that serves no metrics API: the paths
 * that need no metrics (upstream's TestConditionFailedGetScale, TestMinReplicas/TestMaxReplicas-style
 * clamping, TestZeroReplicas, TestConditionFailedGetMetrics): scale subresource reads and writes of a
 * Deployment, status, conditions and events. No deployment controller runs: the scale is the
 * Deployment's spec.replicas.
 */
@QuarkusTest
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
@TestProfile(HorizontalControllerTest.Profile.class)
class HorizontalControllerTest {

    public static class Profile implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("qkcm.controllers", "horizontal-pod-autoscaler-controller",
                    "qkcm.horizontal-pod-autoscaler-sync-period", "1s");
        }
    }

    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    static KubernetesClient client;

    @jakarta.inject.Inject
    io.micrometer.core.instrument.MeterRegistry registry;

    @BeforeAll
    static void setUp() {
        client = RealApiServer.get().newClient();
    }

    @AfterAll
    static void tearDown() {
        client.close();
    }

    static Deployment deployment(String ns, String name, int replicas) {
        Deployment d = new DeploymentBuilder().withNewMetadata().withName(name).withNamespace(ns).endMetadata()
                .withNewSpec().withReplicas(replicas).withNewSelector().addToMatchLabels("app", name).endSelector()
                .withNewTemplate().withNewMetadata().addToLabels("app", name).endMetadata().withNewSpec()
                .addNewContainer().withName("main").withImage("registry.k8s.io/pause:3.10").withNewResources()
                .addToRequests("cpu", new io.fabric8.kubernetes.api.model.Quantity("100m")).endResources().endContainer()
                .endSpec().endTemplate().endSpec().build();
        return client.apps().deployments().inNamespace(ns).resource(d).create();
    }

    static HorizontalPodAutoscaler hpa(String ns, String name, String apiVersion, String kind, String target, int min,
            int max, boolean cpuMetric) {
        HorizontalPodAutoscalerBuilder b = new HorizontalPodAutoscalerBuilder().withNewMetadata().withName(name)
                .withNamespace(ns).endMetadata().withNewSpec().withNewScaleTargetRef().withApiVersion(apiVersion)
                .withKind(kind).withName(target).endScaleTargetRef().withMinReplicas(min).withMaxReplicas(max).endSpec();
        if (cpuMetric) {
            b.editSpec().addNewMetric().withType("Resource").withNewResource().withName("cpu").withNewTarget()
                    .withType("Utilization").withAverageUtilization(50).endTarget().endResource().endMetric().endSpec();
        }
        return client.autoscaling().v2().horizontalPodAutoscalers().inNamespace(ns).resource(b.build()).create();
    }

    static HorizontalPodAutoscaler get(String ns, String name) {
        return client.autoscaling().v2().horizontalPodAutoscalers().inNamespace(ns).withName(name).get();
    }

    static Optional<HorizontalPodAutoscalerCondition> condition(String ns, String name, String type) {
        HorizontalPodAutoscaler hpa = get(ns, name);
        if (hpa.getStatus() == null || hpa.getStatus().getConditions() == null) {
            return Optional.empty();
        }
        return hpa.getStatus().getConditions().stream().filter(c -> type.equals(c.getType())).findFirst();
    }

    static List<Event> events(String ns, String hpa, String reason) {
        return client.v1().events().inNamespace(ns).list().getItems().stream()
                .filter(e -> hpa.equals(e.getInvolvedObject().getName()) && reason.equals(e.getReason())).toList();
    }

    static int replicas(String ns, String name) {
        return client.apps().deployments().inNamespace(ns).withName(name).get().getSpec().getReplicas();
    }

    @Test
    void aMissingTargetIsFailedGetScale() {
        String ns = newNamespace(client, "hpa-missing");
        hpa(ns, "h", "apps/v1", "Deployment", "nowhere", 1, 5, true);
        await().atMost(TIMEOUT).until(() -> condition(ns, "h", "AbleToScale").isPresent());
        HorizontalPodAutoscalerCondition c = condition(ns, "h", "AbleToScale").orElseThrow();
        assertThat(c.getStatus()).isEqualTo("False");
        assertThat(c.getReason()).isEqualTo("FailedGetScale");
        assertThat(c.getMessage()).isEqualTo(
                "the HPA controller was unable to get the target's current scale: deployments.apps \"nowhere\" not found");
        await().atMost(TIMEOUT).until(() -> !events(ns, "h", "FailedGetScale").isEmpty());
        Event e = events(ns, "h", "FailedGetScale").get(0);
        assertThat(e.getType()).isEqualTo("Warning");
        assertThat(e.getMessage()).isEqualTo("deployments.apps \"nowhere\" not found");
        assertThat(e.getSource().getComponent()).isEqualTo("horizontal-pod-autoscaler");

        // once the target exists the next sync gets its scale
        deployment(ns, "nowhere", 2);
        await().atMost(TIMEOUT).until(() -> "True".equals(condition(ns, "h", "AbleToScale").orElseThrow().getStatus()));
    }

    @Test
    void aKindWithoutResourceIsFailedGetScale() {
        String ns = newNamespace(client, "hpa-kind");
        hpa(ns, "h", "apps/v1", "Nothing", "x", 1, 5, true);
        await().atMost(TIMEOUT).until(() -> !events(ns, "h", "FailedGetScale").isEmpty());
        assertThat(events(ns, "h", "FailedGetScale").get(0).getMessage())
                .isEqualTo("no matches for kind \"Nothing\" in group \"apps\"");
        assertThat(condition(ns, "h", "AbleToScale").orElseThrow().getReason()).isEqualTo("FailedGetScale");
    }

    @Test
    void replicasOutsideMinAndMaxAreClampedWithoutMetrics() {
        String ns = newNamespace(client, "hpa-clamp");
        deployment(ns, "low", 1);
        deployment(ns, "high", 8);
        hpa(ns, "low", "apps/v1", "Deployment", "low", 3, 5, true);
        hpa(ns, "high", "apps/v1", "Deployment", "high", 1, 5, true);

        await().atMost(TIMEOUT).until(() -> replicas(ns, "low") == 3 && replicas(ns, "high") == 5);
        assertThat(registry.find("horizontal.pod.autoscaler.controller.reconciliations")
                .tags("action", "scale_up", "error", "none").counter().count()).isPositive();
        assertThat(registry.find("horizontal.pod.autoscaler.controller.reconciliations")
                .tags("action", "scale_down", "error", "none").counter().count()).isPositive();
        await().atMost(TIMEOUT).until(() -> !events(ns, "low", "SuccessfulRescale").isEmpty()
                && !events(ns, "high", "SuccessfulRescale").isEmpty());
        assertThat(events(ns, "low", "SuccessfulRescale").get(0).getMessage())
                .isEqualTo("New size: 3; reason: Current number of replicas below Spec.MinReplicas");
        assertThat(events(ns, "high", "SuccessfulRescale").get(0).getMessage())
                .isEqualTo("New size: 5; reason: Current number of replicas above Spec.MaxReplicas");
        await().atMost(TIMEOUT).until(() -> get(ns, "high").getStatus() != null
                && get(ns, "high").getStatus().getLastScaleTime() != null);
        HorizontalPodAutoscaler high = get(ns, "high");
        // the status of the sync that rescaled: current 8, desired 5
        assertThat(high.getStatus().getDesiredReplicas()).isIn(5);
        assertThat(high.getStatus().getCurrentReplicas()).isIn(8, 5);

        // within bounds now, the metric is needed: the API server serves no metrics API
        await().atMost(TIMEOUT).until(() -> condition(ns, "low", "ScalingActive").isPresent());
        HorizontalPodAutoscalerCondition active = condition(ns, "low", "ScalingActive").orElseThrow();
        assertThat(active.getStatus()).isEqualTo("False");
        assertThat(active.getReason()).isEqualTo("FailedGetResourceMetric");
        assertThat(active.getMessage()).startsWith("the HPA was unable to compute the replica count: failed to get cpu "
                + "utilization: unable to get metrics for resource cpu: unable to fetch metrics from resource metrics API: ");
        assertThat(replicas(ns, "low")).isEqualTo(3);
        assertThat(get(ns, "low").getStatus().getCurrentReplicas()).isEqualTo(3);
    }

    @Test
    void aFailedMetricsFetchIsEventedAndKeepsTheScale() {
        String ns = newNamespace(client, "hpa-nometrics");
        deployment(ns, "d", 2);
        hpa(ns, "h", "apps/v1", "Deployment", "d", 1, 5, true);
        await().atMost(TIMEOUT).until(() -> !events(ns, "h", "FailedComputeMetricsReplicas").isEmpty()
                && !events(ns, "h", "FailedGetResourceMetric").isEmpty());
        String cause = events(ns, "h", "FailedGetResourceMetric").get(0).getMessage();
        // no API serves metrics.k8s.io: the API server's plain 404, as client-go words it
        assertThat(cause).isEqualTo("failed to get cpu utilization: unable to get metrics for resource cpu: unable to fetch "
                + "metrics from resource metrics API: the server could not find the requested resource (get pods.metrics.k8s.io)");
        assertThat(events(ns, "h", "FailedComputeMetricsReplicas").get(0).getMessage())
                .isEqualTo("invalid metrics (1 invalid out of 1), first error is: failed to get cpu resource metric value: "
                        + cause);
        await().atMost(TIMEOUT).until(() -> condition(ns, "h", "ScalingActive").isPresent());
        assertThat(condition(ns, "h", "AbleToScale").orElseThrow().getReason()).isEqualTo("SucceededGetScale");
        assertThat(condition(ns, "h", "ScalingActive").orElseThrow().getReason()).isEqualTo("FailedGetResourceMetric");
        assertThat(get(ns, "h").getStatus().getCurrentReplicas()).isEqualTo(2);
        assertThat(get(ns, "h").getStatus().getLastScaleTime()).isNull();
        assertThat(replicas(ns, "d")).isEqualTo(2);
        assertThat(events(ns, "h", "SuccessfulRescale")).isEmpty();
        // upstream's monitor: the failed metric computation and the failed reconciliation are counted
        assertThat(registry.find("horizontal.pod.autoscaler.controller.metric.computation")
                .tags("action", "none", "error", "internal", "metric_type", "Resource").counter()).isNotNull();
        assertThat(registry.find("horizontal.pod.autoscaler.controller.reconciliations")
                .tags("action", "none", "error", "internal").counter().count()).isPositive();
    }

    @Test
    void twoHpasSelectingTheSamePodsAreAmbiguous() {
        // TestConditionAmbiguousSelectorWhenFullSelectorOverlapBetweenHPAs
        String ns = newNamespace(client, "hpa-ambiguous");
        client.serviceAccounts().inNamespace(ns).resource(new io.fabric8.kubernetes.api.model.ServiceAccountBuilder()
                .withNewMetadata().withName("default").endMetadata().build()).create();
        deployment(ns, "one", 1);
        client.pods().inNamespace(ns).resource(new io.fabric8.kubernetes.api.model.PodBuilder().withNewMetadata()
                .withName("shared").addToLabels("app", "one").endMetadata().withNewSpec()
                .withAutomountServiceAccountToken(false).addNewContainer().withName("main")
                .withImage("registry.k8s.io/pause:3.10").endContainer().endSpec().build()).create();
        hpa(ns, "h1", "apps/v1", "Deployment", "one", 1, 5, true);
        // a second HPA of the same target: the same selector
        hpa(ns, "h2", "apps/v1", "Deployment", "one", 1, 5, true);

        await().atMost(TIMEOUT).until(() -> !events(ns, "h1", "AmbiguousSelector").isEmpty()
                || !events(ns, "h2", "AmbiguousSelector").isEmpty());
        String hpa = events(ns, "h1", "AmbiguousSelector").isEmpty() ? "h2" : "h1";
        String message = "pods by selector app=one are controlled by multiple HPAs: [" + ns + "/h1 " + ns + "/h2]";
        assertThat(events(ns, hpa, "AmbiguousSelector").get(0).getMessage()).isEqualTo(message);
        await().atMost(TIMEOUT).until(() -> condition(ns, hpa, "ScalingActive")
                .filter(c -> "AmbiguousSelector".equals(c.getReason())).isPresent());
        assertThat(condition(ns, hpa, "ScalingActive").orElseThrow().getStatus()).isEqualTo("False");
        assertThat(condition(ns, hpa, "ScalingActive").orElseThrow().getMessage()).isEqualTo(message);
    }

    @Test
    void aTargetScaledToZeroDisablesScaling() {
        String ns = newNamespace(client, "hpa-zero");
        deployment(ns, "d", 0);
        hpa(ns, "h", "apps/v1", "Deployment", "d", 1, 5, true);
        await().atMost(TIMEOUT).until(() -> condition(ns, "h", "ScalingActive").isPresent());
        HorizontalPodAutoscalerCondition c = condition(ns, "h", "ScalingActive").orElseThrow();
        assertThat(c.getStatus()).isEqualTo("False");
        assertThat(c.getReason()).isEqualTo("ScalingDisabled");
        assertThat(c.getMessage()).isEqualTo("scaling is disabled since the replica count of the target is zero");
        assertThat(get(ns, "h").getStatus().getDesiredReplicas()).isZero();
        assertThat(replicas(ns, "d")).isZero();
        assertThat(events(ns, "h", "SuccessfulRescale")).isEmpty();
    }
}
