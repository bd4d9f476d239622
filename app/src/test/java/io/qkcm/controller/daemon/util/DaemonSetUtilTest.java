package io.qkcm.controller.daemon.util;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Affinity;
import io.fabric8.kubernetes.api.model.AffinityBuilder;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.NodeSelectorTermBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.PodTemplateSpecBuilder;
import io.fabric8.kubernetes.api.model.Toleration;
import io.fabric8.kubernetes.api.model.TolerationBuilder;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.DaemonSetBuilder;

/** Upstream's daemonset_util_test.go tables, plus the daemon tolerations and the surge/unavailable math. */
class DaemonSetUtilTest {

    private static Pod pod(Map<String, String> labels) {
        return new PodBuilder().withNewMetadata().withName("p").withNamespace("ns").withLabels(labels).endMetadata()
                .withNewSpec().endSpec().build();
    }

    // TestIsPodUpdated
    @Test
    void isPodUpdated() {
        String hash = "55555";
        Map<String, String> labels = Map.of("name", "simple-daemon", "type", "production");
        record Case(String name, Long templateGeneration, Pod pod, String hash, boolean isUpdated) {
        }
        List<Case> cases = List.of(
                new Case("templateGeneration and hash both match", 12345L,
                        pod(Map.of("pod-template-generation", "12345", "controller-revision-hash", hash)), hash, true),
                new Case("templateGeneration matches, hash doesn't", 12345L,
                        pod(Map.of("pod-template-generation", "12345", "controller-revision-hash", hash + "123")), hash,
                        true),
                new Case("templateGeneration matches, no hash label, has hash", 12345L,
                        pod(Map.of("pod-template-generation", "12345")), hash, true),
                new Case("templateGeneration matches, no hash label, no hash", 12345L,
                        pod(Map.of("pod-template-generation", "12345")), "", true),
                new Case("templateGeneration matches, has hash label, no hash", 12345L,
                        pod(Map.of("pod-template-generation", "12345", "controller-revision-hash", hash)), "", true),
                new Case("templateGeneration doesn't match, hash does", 12345L + 2,
                        pod(Map.of("pod-template-generation", "12345", "controller-revision-hash", hash)), hash, true),
                new Case("templateGeneration and hash don't match", 12345L + 2,
                        pod(Map.of("pod-template-generation", "12345", "controller-revision-hash", hash + "123")), hash,
                        false),
                new Case("empty labels, no hash", 12345L, pod(Map.of()), "", false),
                new Case("empty labels", 12345L, pod(Map.of()), hash, false),
                new Case("no labels", 12345L, new PodBuilder().withNewMetadata().endMetadata().build(), hash, false),
                new Case("nil templateGeneration", null,
                        pod(Map.of("pod-template-generation", "12345", "controller-revision-hash", hash)), hash, true),
                new Case("nil templateGeneration and hash mismatch", null,
                        pod(Map.of("pod-template-generation", "12345", "controller-revision-hash", "other")), hash, false));
        for (Case c : cases) {
            assertThat(DaemonSetUtil.isPodUpdated(c.pod(), c.hash(), c.templateGeneration())).as(c.name())
                    .isEqualTo(c.isUpdated());
        }
        assertThat(labels).isNotEmpty();
    }

    // TestCreatePodTemplate
    @Test
    void createPodTemplate() {
        record Case(Long templateGeneration, String hash, Map<String, String> expectedLabels) {
        }
        List<Case> cases = new ArrayList<>();
        cases.add(new Case(null, "", Map.of()));
        cases.add(new Case(1L, "", Map.of("pod-template-generation", "1")));
        cases.add(new Case(2L, "3242341807", Map.of("pod-template-generation", "2", "controller-revision-hash", "3242341807")));
        cases.add(new Case(3L, "", Map.of("pod-template-generation", "3")));
        for (Case c : cases) {
            PodTemplateSpec template = new PodTemplateSpecBuilder().withNewSpec().endSpec().build();
            PodTemplateSpec pt = DaemonSetUtil.createPodTemplate(template, c.templateGeneration(), c.hash());
            assertThat(pt.getMetadata().getLabels()).isEqualTo(c.expectedLabels());
            // the input is left alone
            assertThat(template.getSpec().getTolerations()).isNullOrEmpty();
            assertThat(pt.getSpec().getTolerations()).hasSize(6);
        }
    }

    private static Toleration tol(String key, String op, String effect) {
        return new TolerationBuilder().withKey(key).withOperator(op).withEffect(effect).build();
    }

    @Test
    void addOrUpdateDaemonPodTolerationsAddsUpstreamsSetInOrder() {
        PodSpec spec = new PodSpec();
        DaemonSetUtil.addOrUpdateDaemonPodTolerations(spec);
        assertThat(spec.getTolerations()).containsExactly(
                tol("node.kubernetes.io/not-ready", "Exists", "NoExecute"),
                tol("node.kubernetes.io/unreachable", "Exists", "NoExecute"),
                tol("node.kubernetes.io/disk-pressure", "Exists", "NoSchedule"),
                tol("node.kubernetes.io/memory-pressure", "Exists", "NoSchedule"),
                tol("node.kubernetes.io/pid-pressure", "Exists", "NoSchedule"),
                tol("node.kubernetes.io/unschedulable", "Exists", "NoSchedule"));

        PodSpec hostNetwork = new PodSpec();
        hostNetwork.setHostNetwork(true);
        DaemonSetUtil.addOrUpdateDaemonPodTolerations(hostNetwork);
        assertThat(hostNetwork.getTolerations()).hasSize(7)
                .last().isEqualTo(tol("node.kubernetes.io/network-unavailable", "Exists", "NoSchedule"));

        // idempotent
        DaemonSetUtil.addOrUpdateDaemonPodTolerations(spec);
        assertThat(spec.getTolerations()).hasSize(6);
    }

    @Test
    void addOrUpdateTolerationReplacesAMatchingOneWithDifferentSecondsInPlace() {
        PodSpec spec = new PodSpec();
        Toleration user = new TolerationBuilder().withKey("node.kubernetes.io/not-ready").withOperator("Exists")
                .withEffect("NoExecute").withTolerationSeconds(300L).build();
        Toleration other = tol("dedicated", "Exists", "NoSchedule");
        spec.setTolerations(new ArrayList<>(List.of(other, user)));
        DaemonSetUtil.addOrUpdateDaemonPodTolerations(spec);
        // the user's bounded toleration becomes the unbounded one, at the same position
        assertThat(spec.getTolerations().get(0)).isEqualTo(other);
        assertThat(spec.getTolerations().get(1)).isEqualTo(tol("node.kubernetes.io/not-ready", "Exists", "NoExecute"));
        assertThat(spec.getTolerations()).hasSize(7);
        // a toleration with a value does not match (key, effect, operator, value) and is kept
        PodSpec spec2 = new PodSpec();
        Toleration equalOp = new TolerationBuilder().withKey("node.kubernetes.io/unschedulable").withOperator("Equal")
                .withValue("x").withEffect("NoSchedule").build();
        spec2.setTolerations(new ArrayList<>(List.of(equalOp)));
        DaemonSetUtil.addOrUpdateDaemonPodTolerations(spec2);
        assertThat(spec2.getTolerations()).hasSize(7).first().isEqualTo(equalOp);
    }

    // TestReplaceDaemonSetPodNodeNameNodeAffinity
    @Test
    void replaceDaemonSetPodNodeNameNodeAffinity() {
        Affinity expected = new AffinityBuilder().withNewNodeAffinity().withNewRequiredDuringSchedulingIgnoredDuringExecution()
                .withNodeSelectorTerms(new NodeSelectorTermBuilder().addNewMatchField().withKey("metadata.name")
                        .withOperator("In").withValues("host_1").endMatchField().build())
                .endRequiredDuringSchedulingIgnoredDuringExecution().endNodeAffinity().build();
        // nil affinity
        assertThat(DaemonSetUtil.replaceDaemonSetPodNodeNameNodeAffinity(null, "host_1")).isEqualTo(expected);
        // affinity without node affinity: pod affinity kept
        Affinity podAff = new AffinityBuilder().withNewPodAffinity().endPodAffinity().build();
        Affinity r = DaemonSetUtil.replaceDaemonSetPodNodeNameNodeAffinity(podAff, "host_1");
        assertThat(r.getPodAffinity()).isNotNull();
        assertThat(r.getNodeAffinity()).isEqualTo(expected.getNodeAffinity());
        // required terms on labels and fields are replaced by the one metadata.name term; preferred kept
        Affinity full = new AffinityBuilder().withNewNodeAffinity().withNewRequiredDuringSchedulingIgnoredDuringExecution()
                .withNodeSelectorTerms(new NodeSelectorTermBuilder().addNewMatchExpression().withKey("hostname")
                        .withOperator("In").withValues("host_1").endMatchExpression().build(),
                        new NodeSelectorTermBuilder().addNewMatchField().withKey("metadata.name").withOperator("In")
                                .withValues("host_2").endMatchField().build())
                .endRequiredDuringSchedulingIgnoredDuringExecution()
                .addNewPreferredDuringSchedulingIgnoredDuringExecution().withWeight(10).withNewPreference()
                .addNewMatchExpression().withKey("zone").withOperator("In").withValues("a").endMatchExpression()
                .endPreference().endPreferredDuringSchedulingIgnoredDuringExecution().endNodeAffinity().build();
        r = DaemonSetUtil.replaceDaemonSetPodNodeNameNodeAffinity(full, "host_1");
        assertThat(r.getNodeAffinity().getRequiredDuringSchedulingIgnoredDuringExecution())
                .isEqualTo(expected.getNodeAffinity().getRequiredDuringSchedulingIgnoredDuringExecution());
        assertThat(r.getNodeAffinity().getPreferredDuringSchedulingIgnoredDuringExecution()).hasSize(1);
    }

    // TestGetTargetNodeName
    @Test
    void getTargetNodeName() throws Exception {
        Pod withNodeName = new PodBuilder().withNewMetadata().withName("pod1").withNamespace("default").endMetadata()
                .withNewSpec().withNodeName("node-1").endSpec().build();
        assertThat(DaemonSetUtil.getTargetNodeName(withNodeName)).isEqualTo("node-1");
        Pod withAffinity = new PodBuilder().withNewMetadata().withName("pod2").withNamespace("default").endMetadata()
                .withNewSpec().withAffinity(DaemonSetUtil.replaceDaemonSetPodNodeNameNodeAffinity(null, "node-2"))
                .endSpec().build();
        assertThat(DaemonSetUtil.getTargetNodeName(withAffinity)).isEqualTo("node-2");
        Pod notUnique = new PodBuilder().withNewMetadata().withName("pod3").withNamespace("default").endMetadata()
                .withNewSpec().withAffinity(new AffinityBuilder().withNewNodeAffinity()
                        .withNewRequiredDuringSchedulingIgnoredDuringExecution()
                        .withNodeSelectorTerms(new NodeSelectorTermBuilder().addNewMatchField().withKey("metadata.name")
                                .withOperator("In").withValues("node-2", "node-3").endMatchField().build())
                        .endRequiredDuringSchedulingIgnoredDuringExecution().endNodeAffinity().build())
                .endSpec().build();
        assertThatThrownBy(() -> DaemonSetUtil.getTargetNodeName(notUnique))
                .hasMessage("the matchFields value of 'metadata.name' is not unique for pod default/pod3");
        Pod none = new PodBuilder().withNewMetadata().withName("pod4").withNamespace("default").endMetadata()
                .withNewSpec().endSpec().build();
        assertThatThrownBy(() -> DaemonSetUtil.getTargetNodeName(none)).hasMessage(
                "no spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution for pod default/pod4");
    }

    private static DaemonSet ds(String type, IntOrString maxUnavailable, IntOrString maxSurge) {
        return new DaemonSetBuilder().withNewMetadata().withName("x").withNamespace("ns").endMetadata().withNewSpec()
                .withNewUpdateStrategy().withType(type).withNewRollingUpdate().withMaxUnavailable(maxUnavailable)
                .withMaxSurge(maxSurge).endRollingUpdate().endUpdateStrategy().endSpec().build();
    }

    @Test
    void surgeAndUnavailableCountsScaleUpAndIgnoreOnDelete() throws Exception {
        assertThat(DaemonSetUtil.unavailableCount(ds("RollingUpdate", new IntOrString("50%"), null), 3)).isEqualTo(2);
        assertThat(DaemonSetUtil.unavailableCount(ds("RollingUpdate", new IntOrString(1), null), 3)).isEqualTo(1);
        assertThat(DaemonSetUtil.surgeCount(ds("RollingUpdate", new IntOrString(0), new IntOrString("10%")), 11))
                .isEqualTo(2);
        assertThat(DaemonSetUtil.surgeCount(ds("RollingUpdate", new IntOrString(0), null), 11)).isZero();
        assertThat(DaemonSetUtil.surgeCount(ds("OnDelete", new IntOrString(0), new IntOrString(3)), 11)).isZero();
        assertThat(DaemonSetUtil.unavailableCount(ds("OnDelete", new IntOrString(2), null), 11)).isZero();
        assertThat(DaemonSetUtil.allowsSurge(ds("RollingUpdate", new IntOrString(0), new IntOrString("1%")))).isTrue();
        assertThat(DaemonSetUtil.allowsSurge(ds("RollingUpdate", new IntOrString(1), new IntOrString(0)))).isFalse();
        assertThatThrownBy(() -> DaemonSetUtil.unavailableCount(ds("RollingUpdate", new IntOrString("x"), null), 3))
                .hasMessage("invalid value for IntOrString: invalid type: string is not a percentage");
    }

    @Test
    void templateGenerationFromTheDeprecatedAnnotation() throws Exception {
        DaemonSet ds = new DaemonSetBuilder().withNewMetadata().withName("x")
                .addToAnnotations("deprecated.daemonset.template.generation", "7").endMetadata().build();
        assertThat(DaemonSetUtil.getTemplateGeneration(ds)).isEqualTo(7L);
        ds.getMetadata().getAnnotations().put("deprecated.daemonset.template.generation", "seven");
        assertThatThrownBy(() -> DaemonSetUtil.getTemplateGeneration(ds)).isInstanceOf(DaemonSetUtil.ParseException.class);
        assertThat(DaemonSetUtil.templateGenerationOrNull(ds)).isNull();
        ds.getMetadata().setAnnotations(null);
        assertThat(DaemonSetUtil.getTemplateGeneration(ds)).isNull();
    }

    @Test
    void podTemplatesForNodesNeverShareTheTemplatesAffinity() {
        Affinity affinity = new AffinityBuilder().withNewNodeAffinity().withNewRequiredDuringSchedulingIgnoredDuringExecution()
                .withNodeSelectorTerms(new NodeSelectorTermBuilder().addNewMatchExpression().withKey("zone")
                        .withOperator("In").withValues("a").endMatchExpression().build())
                .endRequiredDuringSchedulingIgnoredDuringExecution().endNodeAffinity().build();
        PodTemplateSpec template = new PodTemplateSpecBuilder().withNewSpec().withAffinity(affinity).endSpec().build();
        PodTemplateSpec created = DaemonSetUtil.createPodTemplate(template, 1L, "h");
        PodTemplateSpec perNode = new PodTemplateSpecBuilder(created).build();
        perNode.getSpec().setAffinity(
                DaemonSetUtil.replaceDaemonSetPodNodeNameNodeAffinity(perNode.getSpec().getAffinity(), "node-1"));
        assertThat(perNode.getSpec().getAffinity().getNodeAffinity().getRequiredDuringSchedulingIgnoredDuringExecution()
                .getNodeSelectorTerms().get(0).getMatchFields()).hasSize(1);
        // the DaemonSet's template and the shared per-sync template are untouched
        for (PodTemplateSpec t : List.of(template, created)) {
            assertThat(t.getSpec().getAffinity().getNodeAffinity().getRequiredDuringSchedulingIgnoredDuringExecution()
                    .getNodeSelectorTerms()).singleElement().satisfies(term -> {
                        assertThat(term.getMatchExpressions()).hasSize(1);
                        assertThat(term.getMatchFields()).isNullOrEmpty();
                    });
        }
    }
}
