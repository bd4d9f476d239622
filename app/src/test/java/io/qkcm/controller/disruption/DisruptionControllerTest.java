package io.qkcm.controller.disruption;

import static io.qkcm.controller.disruption.DisruptionTestSupport.awaitEvent;
import static io.qkcm.controller.disruption.DisruptionTestSupport.awaitStatus;
import static io.qkcm.controller.disruption.DisruptionTestSupport.controllerRef;
import static io.qkcm.controller.disruption.DisruptionTestSupport.evict;
import static io.qkcm.controller.disruption.DisruptionTestSupport.fooBar;
import static io.qkcm.controller.disruption.DisruptionTestSupport.getPdb;
import static io.qkcm.controller.disruption.DisruptionTestSupport.pdb;
import static io.qkcm.controller.disruption.DisruptionTestSupport.pod;
import static io.qkcm.controller.disruption.DisruptionTestSupport.poke;
import static io.qkcm.controller.disruption.DisruptionTestSupport.setReady;
import static io.qkcm.testing.TestNamespaces.newNamespace;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;


import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConditionBuilder;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.apiextensions.v1.JSONSchemaProps;
import io.fabric8.kubernetes.api.model.apiextensions.v1.JSONSchemaPropsBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.PodTemplateSpecBuilder;
import io.fabric8.kubernetes.api.model.ReplicationController;
import io.fabric8.kubernetes.api.model.ReplicationControllerBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinitionBuilder;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.fabric8.kubernetes.api.model.apps.ReplicaSet;
import io.fabric8.kubernetes.api.model.apps.ReplicaSetBuilder;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.apps.StatefulSetBuilder;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.qkcm.controller.PodStatusPatch;
import io.qkcm.testing.ManagerOffProfile;
import io.qkcm.testing.RealApiServerResource;
import io.qkcm.testing.TestKubelet;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;

/**
 * The disruption controller's PodDisruptionBudget status against a real API server, mirroring upstream's
 * disruption_test.go: integer and percentage minAvailable, maxUnavailable, unmanaged pods, the scale of
 * ReplicationControllers, ReplicaSets, Deployments (through their ReplicaSets), StatefulSets and of any other
 * kind through its scale subresource (a Deployment owning pods directly, a custom resource), and the events
 * and SyncFailed condition of PDBs whose pods' controllers cannot be found. No other controller runs: the
 * test writes pods' readiness, and changes a pod to have its PDB synced again (upstream syncs a PDB on its
 * own and its pods' events only).
 */
@QuarkusTest
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
@TestProfile(ManagerOffProfile.class)
class DisruptionControllerTest extends RunningDisruptionController {


    private static PodTemplateSpec template(Map<String, String> labels) {
        return new PodTemplateSpecBuilder().withNewMetadata().withLabels(labels).endMetadata().withNewSpec()
                .addNewContainer().withName("main").withImage("registry.k8s.io/pause:3.10").endContainer().endSpec()
                .build();
    }

    private static ReplicaSet replicaSet(String ns, String name, int replicas, Map<String, String> labels) {
        return client.apps().replicaSets().inNamespace(ns).resource(new ReplicaSetBuilder().withNewMetadata()
                .withName(name).endMetadata().withNewSpec().withReplicas(replicas).withNewSelector()
                .withMatchLabels(labels).endSelector().withTemplate(template(labels)).endSpec().build()).create();
    }

    private static Deployment deployment(String ns, String name, int replicas, Map<String, String> labels) {
        return client.apps().deployments().inNamespace(ns).resource(new DeploymentBuilder().withNewMetadata()
                .withName(name).endMetadata().withNewSpec().withReplicas(replicas).withNewSelector()
                .withMatchLabels(labels).endSelector().withTemplate(template(labels)).endSpec().build()).create();
    }

    private static ReplicationController replicationController(String ns, String name, int replicas,
            Map<String, String> labels) {
        return client.replicationControllers().inNamespace(ns).resource(new ReplicationControllerBuilder()
                .withNewMetadata().withName(name).endMetadata().withNewSpec().withReplicas(replicas)
                .withSelector(labels).withTemplate(template(labels)).endSpec().build()).create();
    }

    private static StatefulSet statefulSet(String ns, String name, int replicas, Map<String, String> labels) {
        return client.apps().statefulSets().inNamespace(ns).resource(new StatefulSetBuilder().withNewMetadata()
                .withName(name).endMetadata().withNewSpec().withReplicas(replicas).withServiceName(name)
                .withNewSelector().withMatchLabels(labels).endSelector().withTemplate(template(labels)).endSpec()
                .build()).create();
    }

    private static Condition condition(PodDisruptionBudget pdb) {
        return BudgetStatus.findStatusCondition(pdb.getStatus().getConditions(), BudgetStatus.DISRUPTION_ALLOWED);
    }

    /** Waits for the fail-safe status: disruptionsAllowed 0, DisruptionAllowed False/SyncFailed with {@code message}. */
    private static PodDisruptionBudget awaitSyncFailed(String ns, String name, String message) {
        return await().atMost(DisruptionTestSupport.TIMEOUT).until(() -> getPdb(client, ns, name), p -> {
            if (p.getStatus() == null || p.getStatus().getConditions() == null) {
                return false;
            }
            Condition c = condition(p);
            return c != null && "False".equals(c.getStatus()) && "SyncFailed".equals(c.getReason())
                    && message.equals(c.getMessage()) && p.getStatus().getDisruptionsAllowed() == 0;
        });
    }

    // TestNoSelector
    @Test
    void anEmptySelectorMatchesEveryPodAndNoPodsIsReported() {
        String ns = newNamespace(client, "pdb-nosel");
        pdb(client, ns, "foobar", new IntOrString(3), null, Map.of());
        awaitStatus(client, ns, "foobar", 0, 0, 3, 0);
        Event noPods = awaitEvent(client, ns, "NoPods", "foobar");
        assertThat(noPods.getType()).isEqualTo("Normal");
        assertThat(noPods.getMessage()).isEqualTo("No matching pods found");
        assertThat(noPods.getSource().getComponent()).isEqualTo("controllermanager");

        pod(client, ns, "yo-yo-yo", Map.of("other", "label"), null, true);
        awaitStatus(client, ns, "foobar", 0, 1, 3, 1);
    }

    // TestUnavailable
    @Test
    void integerMinAvailableCountsTheSelectedReadyPods() {
        String ns = newNamespace(client, "pdb-unavail");
        pdb(client, ns, "foobar", new IntOrString(3), null, fooBar());
        List<Pod> pods = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            awaitStatus(client, ns, "foobar", 0, i, 3, i);
            pods.add(pod(client, ns, "yo-yo-yo-" + i, fooBar(), null, true));
        }
        PodDisruptionBudget sufficient = awaitStatus(client, ns, "foobar", 1, 4, 3, 4);
        assertThat(condition(sufficient).getStatus()).isEqualTo("True");
        assertThat(condition(sufficient).getReason()).isEqualTo("SufficientPods");
        assertThat(condition(sufficient).getObservedGeneration()).isEqualTo(sufficient.getMetadata().getGeneration());

        // the transition is dated by the controller's clock
        Instant at = Instant.parse("2031-05-06T07:08:09Z");
        clock.set(at);
        setReady(client, pods.get(0), false);
        PodDisruptionBudget insufficient = awaitStatus(client, ns, "foobar", 0, 3, 3, 4);
        assertThat(condition(insufficient).getReason()).isEqualTo("InsufficientPods");
        assertThat(condition(insufficient).getLastTransitionTime()).isEqualTo(PodStatusPatch.metaTime(at));
        assertThat(insufficient.getStatus().getDisruptedPods()).isNullOrEmpty();
    }

    // TestIntegerMaxUnavailable, TestStatusForUnmanagedPod, TestTotalUnmanagedPods
    @Test
    void integerMaxUnavailableAllowsNothingForAnUnmanagedPod() {
        String ns = newNamespace(client, "pdb-maxint");
        pdb(client, ns, "foobar", null, new IntOrString(1), fooBar());
        awaitStatus(client, ns, "foobar", 0, 0, 0, 0);

        pod(client, ns, "naked", fooBar(), null, true);
        PodDisruptionBudget pdb = awaitStatus(client, ns, "foobar", 0, 1, 0, 0);
        assertThat(condition(pdb).getReason()).isEqualTo("InsufficientPods");
        Event unmanaged = awaitEvent(client, ns, "UnmanagedPods", "foobar");
        assertThat(unmanaged.getType()).isEqualTo("Warning");
        assertThat(unmanaged.getMessage()).isEqualTo("Pods selected by this PodDisruptionBudget (selector: "
                + "&LabelSelector{MatchLabels:map[string]string{foo: bar,},MatchExpressions:[]LabelSelectorRequirement{},}) "
                + "were found to be unmanaged. As a result, the status of the PDB cannot be calculated correctly, which "
                + "may result in undefined behavior. To account for these pods please set \".spec.minAvailable\" field "
                + "of the PDB to an integer value.");
    }

    // TestIntegerMaxUnavailableWithScaling, TestPercentageMaxUnavailableWithScaling
    @Test
    void maxUnavailableFollowsTheScaleOfTheReplicaSet() {
        String ns = newNamespace(client, "pdb-maxrs");
        ReplicaSet rs = replicaSet(ns, "foobar", 7, fooBar());
        pdb(client, ns, "int", null, new IntOrString(2), fooBar());
        Pod pod = pod(client, ns, "pod", fooBar(), controllerRef(rs), true);
        awaitStatus(client, ns, "int", 0, 1, 5, 7);
        client.apps().replicaSets().inNamespace(ns).withName("foobar").scale(5);
        poke(client, pod);
        awaitStatus(client, ns, "int", 0, 1, 3, 5);

        String ns2 = newNamespace(client, "pdb-maxpct");
        ReplicaSet rs2 = replicaSet(ns2, "foobar", 7, fooBar());
        pdb(client, ns2, "pct", null, new IntOrString("30%"), fooBar());
        Pod pod2 = pod(client, ns2, "pod", fooBar(), controllerRef(rs2), true);
        // 30% of 7 rounds up to 3 unavailable
        awaitStatus(client, ns2, "pct", 0, 1, 4, 7);
        client.apps().replicaSets().inNamespace(ns2).withName("foobar").scale(3);
        poke(client, pod2);
        awaitStatus(client, ns2, "pct", 0, 1, 2, 3);
    }

    // TestReplicaSet
    @Test
    void aReplicaSetWithoutDeploymentCountsItsOwnScale() {
        String ns = newNamespace(client, "pdb-rs");
        ReplicaSet rs = replicaSet(ns, "foobar", 10, fooBar());
        pdb(client, ns, "foobar", new IntOrString("20%"), null, fooBar());
        pod(client, ns, "pod", fooBar(), controllerRef(rs), true);
        awaitStatus(client, ns, "foobar", 0, 1, 2, 10);
    }

    // TestReplicationController: 34% of 3 rounds up to 2; a rogue pod only adds health
    @Test
    void percentMinAvailableRoundsUpOverAReplicationController() {
        String ns = newNamespace(client, "pdb-rc");
        Map<String, String> labels = Map.of("foo", "bar", "baz", "quux");
        pdb(client, ns, "foobar", new IntOrString("34%"), null, fooBar());
        ReplicationController rc = replicationController(ns, "foobar", 3, labels);
        awaitStatus(client, ns, "foobar", 0, 0, 0, 0);
        for (int i = 0; i < 3; i++) {
            pod(client, ns, "foobar-" + i, labels, controllerRef(rc), true);
            if (i < 2) {
                awaitStatus(client, ns, "foobar", 0, i + 1, 2, 3);
            } else {
                awaitStatus(client, ns, "foobar", 1, 3, 2, 3);
            }
        }
        pod(client, ns, "rogue", fooBar(), null, true);
        awaitStatus(client, ns, "foobar", 2, 4, 2, 3);
    }

    // TestStatefulSetController
    @Test
    void percentMinAvailableOverAStatefulSet() {
        String ns = newNamespace(client, "pdb-ss");
        Map<String, String> labels = Map.of("foo", "bar", "baz", "quux");
        pdb(client, ns, "foobar", new IntOrString("34%"), null, fooBar());
        StatefulSet ss = statefulSet(ns, "foobar", 3, labels);
        awaitStatus(client, ns, "foobar", 0, 0, 0, 0);
        for (int i = 0; i < 3; i++) {
            pod(client, ns, "foobar-" + i, labels, controllerRef(ss), true);
            if (i < 2) {
                awaitStatus(client, ns, "foobar", 0, i + 1, 2, 3);
            } else {
                awaitStatus(client, ns, "foobar", 1, 3, 2, 3);
            }
        }
    }

    /**
     * TestTwoControllers (shortened): a ReplicationController and a Deployment's ReplicaSet add up; the
     * Deployment's scale counts, not its ReplicaSet's (mid-rollout they differ).
     */
    @Test
    void theScalesOfSeveralControllersAddUpAndADeploymentCountsForItsReplicaSet() {
        String ns = newNamespace(client, "pdb-two");
        Map<String, String> rcLabels = Map.of("foo", "bar", "baz", "quux");
        Map<String, String> dLabels = Map.of("foo", "bar", "baz", "quuux");
        pdb(client, ns, "foobar", new IntOrString("28%"), null, fooBar());
        ReplicationController rc = replicationController(ns, "rc", 11, rcLabels);
        for (int i = 0; i < 5; i++) {
            pod(client, ns, "quux-" + i, rcLabels, controllerRef(rc), true);
        }
        // 28% of 11 rounds up to 4
        awaitStatus(client, ns, "foobar", 1, 5, 4, 11);

        Deployment d = deployment(ns, "d", 11, dLabels);
        ReplicaSet rs = client.apps().replicaSets().inNamespace(ns).resource(new ReplicaSetBuilder().withNewMetadata()
                .withName("d-1").withOwnerReferences(controllerRef(d)).endMetadata().withNewSpec().withReplicas(5)
                .withNewSelector().withMatchLabels(dLabels).endSelector().withTemplate(template(dLabels)).endSpec()
                .build()).create();
        for (int i = 0; i < 6; i++) {
            pod(client, ns, "quuux-" + i, dLabels, controllerRef(rs), i > 0);
        }
        // 11 + 11 expected, 28% of 22 rounds up to 7, 10 ready
        awaitStatus(client, ns, "foobar", 3, 10, 7, 22);
    }

    // TestUnsupportedControllerPod: no finder knows the kind
    @Test
    void aPodOfAnUnknownKindOfControllerFailsSafe() throws Exception {
        String ns = newNamespace(client, "pdb-unsup");
        pdb(client, ns, "foobar", new IntOrString("28%"), null, fooBar());
        awaitStatus(client, ns, "foobar", 0, 0, 0, 0);
        Pod naked = pod(client, ns, "naked", fooBar(),
                controllerRef("apps.test.io/v1", "TestWorkload", "fake-controller", "b7329742-8daa-493a-8881-6ca07139172b"),
                true);
        // running: the eviction API lets a pending pod go whatever its budget says
        new TestKubelet(client).runningAndReady(naked);
        String message = "no matches for kind \"TestWorkload\" in version \"apps.test.io/v1\"";
        awaitSyncFailed(ns, "foobar", message);
        Event failed = awaitEvent(client, ns, "CalculateExpectedPodCountFailed", "foobar");
        assertThat(failed.getType()).isEqualTo("Warning");
        assertThat(failed.getMessage()).isEqualTo("Failed to calculate the number of expected pods: " + message);
        // the eviction API refuses while the budget cannot be computed
        assertThat(evict(client, ns, "naked").code()).isEqualTo(429);
    }

    // TestScaleResource: a kind no lister serves is read through its scale subresource
    @Test
    void aDeploymentOwningPodsDirectlyIsReadThroughItsScaleSubresource() {
        String ns = newNamespace(client, "pdb-scale");
        Deployment d = deployment(ns, "custom", 6, fooBar());
        pdb(client, ns, "foobar", null, new IntOrString(3), fooBar());
        for (int i = 0; i < 4; i++) {
            pod(client, ns, "pod-" + i, fooBar(), controllerRef(d), true);
        }
        awaitStatus(client, ns, "foobar", 1, 4, 3, 6);
    }

    // TestScaleFinderNoResource: the target is missing, or its kind has no scale subresource
    @Test
    void aMissingScaleTargetAndAKindWithoutScaleAreReported() {
        String ns = newNamespace(client, "pdb-noscale");
        pdb(client, ns, "missing", new IntOrString("50%"), null, Map.of("app", "missing"));
        pod(client, ns, "orphan", Map.of("app", "missing"),
                controllerRef("apps/v1", "Deployment", "gone", "00000000-0000-0000-0000-000000000001"), true);
        awaitSyncFailed(ns, "missing", "found no controllers for pod \"orphan\"");

        ConfigMap cm = client.configMaps().inNamespace(ns).resource(new ConfigMapBuilder().withNewMetadata()
                .withName("owner").endMetadata().build()).create();
        pdb(client, ns, "noscale", new IntOrString("50%"), null, Map.of("app", "noscale"));
        pod(client, ns, "of-configmap", Map.of("app", "noscale"), controllerRef(cm), true);
        awaitSyncFailed(ns, "noscale", "configmaps does not implement the scale subresource");
        assertThat(awaitEvent(client, ns, "CalculateExpectedPodCountFailed", "noscale").getMessage())
                .isEqualTo("Failed to calculate the number of expected pods: configmaps does not implement the scale "
                        + "subresource");
    }

    /** A custom resource with and one without a scale subresource (the "any other controller" finder). */
    @Test
    void aCustomResourceIsReadThroughItsScaleSubresource() {
        String group = "disruption.qkcm.test";
        String suffix = Long.toString(System.nanoTime() % 1_000_000L, 36);
        CustomResourceDefinition scaled = crd(group, "scalers" + suffix, "Scaler" + suffix, true);
        CustomResourceDefinition plain = crd(group, "plains" + suffix, "Plain" + suffix, false);
        try {
            String ns = newNamespace(client, "pdb-crd");

            GenericKubernetesResource scaler = client.genericKubernetesResources(context(scaled)).inNamespace(ns)
                    .resource(new GenericKubernetesResourceBuilder().withApiVersion(group + "/v1")
                            .withKind(scaled.getSpec().getNames().getKind()).withNewMetadata().withName("workload")
                            .endMetadata().addToAdditionalProperties("spec", Map.of("replicas", 5)).build())
                    .create();
            pdb(client, ns, "scaled", null, new IntOrString(3), Map.of("app", "scaled"));
            List<Pod> pods = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                pods.add(pod(client, ns, "scaled-" + i, Map.of("app", "scaled"), controllerRef(scaler), true));
            }
            // the controller's REST mapper may predate the CRD: it rediscovers on a miss, so a later pod change
            // gets it right (upstream's mapper resets every 30 s)
            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofSeconds(2)).until(() -> {
                PodDisruptionBudget p = getPdb(client, ns, "scaled");
                boolean done = p.getStatus() != null && DisruptionTestSupport.Counts.of(p.getStatus())
                        .equals(new DisruptionTestSupport.Counts(1, 3, 2, 5));
                if (!done) {
                    poke(client, pods.get(0));
                }
                return done;
            });

            GenericKubernetesResource plainObject = client.genericKubernetesResources(context(plain)).inNamespace(ns)
                    .resource(new GenericKubernetesResourceBuilder().withApiVersion(group + "/v1")
                            .withKind(plain.getSpec().getNames().getKind()).withNewMetadata().withName("workload")
                            .endMetadata().build())
                    .create();
            pdb(client, ns, "plain", new IntOrString("50%"), null, Map.of("app", "plain"));
            Pod plainPod = pod(client, ns, "plain-0", Map.of("app", "plain"), controllerRef(plainObject), true);
            String message = plain.getSpec().getNames().getPlural() + "." + group
                    + " does not implement the scale subresource";
            await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofSeconds(2)).until(() -> {
                PodDisruptionBudget p = getPdb(client, ns, "plain");
                Condition c = p.getStatus() == null ? null : condition(p);
                boolean done = c != null && message.equals(c.getMessage()) && "SyncFailed".equals(c.getReason());
                if (!done) {
                    poke(client, plainPod);
                }
                return done;
            });
        } finally {
            client.apiextensions().v1().customResourceDefinitions().resource(scaled).delete();
            client.apiextensions().v1().customResourceDefinitions().resource(plain).delete();
        }
    }

    private static ResourceDefinitionContext context(CustomResourceDefinition crd) {
        return new ResourceDefinitionContext.Builder().withGroup(crd.getSpec().getGroup()).withVersion("v1")
                .withPlural(crd.getSpec().getNames().getPlural()).withKind(crd.getSpec().getNames().getKind())
                .withNamespaced(true).build();
    }

    private static CustomResourceDefinition crd(String group, String plural, String kind, boolean scale) {
        JSONSchemaProps replicas = new JSONSchemaPropsBuilder().withType("object")
                .addToProperties("replicas", new JSONSchemaPropsBuilder().withType("integer").build()).build();
        var version = new CustomResourceDefinitionBuilder().withNewMetadata().withName(plural + "." + group)
                .endMetadata().withNewSpec().withGroup(group).withScope("Namespaced").withNewNames()
                .withPlural(plural).withKind(kind).endNames().addNewVersion().withName("v1").withServed(true)
                .withStorage(true).withNewSchema().withNewOpenAPIV3Schema().withType("object")
                .addToProperties("spec", replicas).addToProperties("status", replicas).endOpenAPIV3Schema()
                .endSchema();
        if (scale) {
            version = version.withNewSubresources().withNewScale().withSpecReplicasPath(".spec.replicas")
                    .withStatusReplicasPath(".status.replicas").endScale().endSubresources();
        }
        CustomResourceDefinition crd = version.endVersion().endSpec().build();
        client.apiextensions().v1().customResourceDefinitions().resource(crd).create();
        return await().atMost(DisruptionTestSupport.TIMEOUT).until(
                () -> client.apiextensions().v1().customResourceDefinitions().withName(plural + "." + group).get(),
                c -> c.getStatus() != null && c.getStatus().getConditions() != null && c.getStatus().getConditions()
                        .stream().anyMatch(x -> "Established".equals(x.getType()) && "True".equals(x.getStatus())));
    }

    // TestKeepExistingPDBConditionDuringSync
    @Test
    void theControllersWritesKeepOtherConditions() {
        String ns = newNamespace(client, "pdb-keep");
        pdb(client, ns, "foobar", new IntOrString(1), null, fooBar());
        PodDisruptionBudget synced = awaitStatus(client, ns, "foobar", 0, 0, 1, 0);
        Condition existing = new ConditionBuilder().withType("ExistingTestCondition").withStatus("True")
                .withReason("Test").withMessage("This is a test condition")
                .withLastTransitionTime(PodStatusPatch.metaTime(Instant.now())).build();
        synced.getStatus().getConditions().add(existing);
        client.policy().v1().podDisruptionBudget().inNamespace(ns).resource(synced).updateStatus();

        pod(client, ns, "p", fooBar(), null, true);
        pod(client, ns, "q", fooBar(), null, true);
        PodDisruptionBudget after = awaitStatus(client, ns, "foobar", 1, 2, 1, 2);
        assertThat(after.getStatus().getConditions()).hasSize(2);
        assertThat(BudgetStatus.findStatusCondition(after.getStatus().getConditions(), "ExistingTestCondition"))
                .isNotNull();
    }

    // getPdbForPod: a pod two budgets select
    @Test
    void aPodSelectedByTwoBudgetsIsReported() {
        String ns = newNamespace(client, "pdb-multi");
        pdb(client, ns, "first", new IntOrString(1), null, fooBar());
        pdb(client, ns, "second", new IntOrString(1), null, Map.of());
        awaitStatus(client, ns, "first", 0, 0, 1, 0);
        awaitStatus(client, ns, "second", 0, 0, 1, 0);
        pod(client, ns, "shared", fooBar(), null, true);
        Event multiple = awaitEvent(client, ns, "MultiplePodDisruptionBudgets", "shared");
        assertThat(multiple.getType()).isEqualTo("Warning");
        assertThat(multiple.getMessage()).matches(
                "Pod \"" + ns + "\"/\"shared\" matches multiple PodDisruptionBudgets.  Chose \"(first|second)\" arbitrarily.");
        assertThat(multiple.getInvolvedObject().getKind()).isEqualTo("Pod");
    }
}
