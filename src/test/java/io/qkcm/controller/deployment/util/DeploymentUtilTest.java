package io.qkcm.controller.deployment.util;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.fabric8.kubernetes.api.model.apps.DeploymentStatus;
import io.fabric8.kubernetes.api.model.apps.ReplicaSet;
import io.fabric8.kubernetes.api.model.apps.ReplicaSetBuilder;
import io.qkcm.controller.hash.ControllerHash;

/** Pure arithmetic and annotation rules of deployment_util.go, cases from upstream's unit tests. */
class DeploymentUtilTest {

    static Deployment deployment(int replicas, Object surge, Object unavailable) {
        return new DeploymentBuilder().withNewMetadata().withName("d").withAnnotations(Map.of()).endMetadata().withNewSpec()
                .withReplicas(replicas).withNewStrategy().withType("RollingUpdate").withNewRollingUpdate()
                .withMaxSurge(ios(surge)).withMaxUnavailable(ios(unavailable)).endRollingUpdate().endStrategy().endSpec()
                .withNewStatus().endStatus().build();
    }

    static IntOrString ios(Object v) {
        return v instanceof Integer i ? new IntOrString(i) : new IntOrString((String) v);
    }

    static ReplicaSet rs(String name, int replicas, Map<String, String> annotations) {
        return new ReplicaSetBuilder().withNewMetadata().withName(name).withAnnotations(annotations)
                .withCreationTimestamp("2026-01-01T00:00:00Z").endMetadata().withNewSpec().withReplicas(replicas).endSpec()
                .build();
    }

    @Test
    void surgeRoundsUpUnavailableRoundsDownBothZeroMeansOneUnavailable() {
        assertThat(DeploymentUtil.resolveFenceposts(ios("25%"), ios("25%"), 10)).containsExactly(3, 2);
        assertThat(DeploymentUtil.resolveFenceposts(ios("1%"), ios("99%"), 10)).containsExactly(1, 9);
        assertThat(DeploymentUtil.resolveFenceposts(ios(0), ios(0), 10)).containsExactly(0, 1);
        assertThat(DeploymentUtil.resolveFenceposts(ios("0%"), ios("10%"), 5)).containsExactly(0, 1);
        assertThat(DeploymentUtil.resolveFenceposts(ios("0%"), ios("19%"), 5)).containsExactly(0, 1);
        assertThat(DeploymentUtil.resolveFenceposts(null, null, 3)).containsExactly(0, 1);
        assertThat(DeploymentUtil.maxUnavailable(deployment(2, 0, 5))).isEqualTo(2);
        assertThat(DeploymentUtil.maxUnavailable(deployment(0, 1, 1))).isZero();
        assertThat(DeploymentUtil.maxSurge(deployment(4, "25%", "25%"))).isEqualTo(1);
        assertThat(DeploymentUtil.minAvailable(deployment(4, "25%", "25%"))).isEqualTo(3);
    }

    @Test
    void newReplicaSetGrowsWithinSurge() {
        Deployment d = deployment(10, 3, 2);
        ReplicaSet old = rs("old", 10, Map.of());
        ReplicaSet neu = rs("new", 0, Map.of());
        assertThat(DeploymentUtil.newRSNewReplicas(d, List.of(old, neu), neu)).isEqualTo(3);
        old.getSpec().setReplicas(8);
        neu.getSpec().setReplicas(3);
        assertThat(DeploymentUtil.newRSNewReplicas(d, List.of(old, neu), neu)).isEqualTo(5);
    }

    @Test
    void proportionsUseMaxReplicasAnnotationAndGoRounding() {
        Deployment d = deployment(20, 3, 2);
        ReplicaSet old = rs("old", 8, Map.of(DeploymentUtil.MAX_REPLICAS_ANNOTATION, "13"));
        ReplicaSet neu = rs("new", 5, Map.of(DeploymentUtil.MAX_REPLICAS_ANNOTATION, "13"));
        assertThat(DeploymentUtil.replicaSetProportion(old, d, 10, 0)).isEqualTo(6);
        assertThat(DeploymentUtil.replicaSetProportion(neu, d, 10, 6)).isEqualTo(4);
        assertThat(DeploymentUtil.roundToInt32(2.5)).isEqualTo(3);
        assertThat(DeploymentUtil.roundToInt32(-2.5)).isEqualTo(-3);
        assertThat(DeploymentUtil.roundToInt32(-2.4)).isEqualTo(-2);
    }

    @Test
    void revisionHistoryAnnotationAndCopySkipList() {
        Deployment d = deployment(3, 1, 0);
        d.getMetadata().setAnnotations(new java.util.HashMap<>(Map.of("team", "a",
                "kubectl.kubernetes.io/last-applied-configuration", "{}", DeploymentUtil.REVISION_ANNOTATION, "7",
                "deprecated.deployment.rollback.to", "2")));
        ReplicaSet r = rs("r", 0, new java.util.HashMap<>(Map.of(DeploymentUtil.REVISION_ANNOTATION, "2",
                DeploymentUtil.REVISION_HISTORY_ANNOTATION, "1")));
        assertThat(DeploymentUtil.setNewReplicaSetAnnotations(d, r, "5", true, 2000)).isTrue();
        assertThat(r.getMetadata().getAnnotations()).containsEntry("team", "a")
                .containsEntry(DeploymentUtil.REVISION_ANNOTATION, "5")
                .containsEntry(DeploymentUtil.REVISION_HISTORY_ANNOTATION, "1,2")
                .doesNotContainKeys("kubectl.kubernetes.io/last-applied-configuration", "deprecated.deployment.rollback.to")
                .doesNotContainKey(DeploymentUtil.DESIRED_REPLICAS_ANNOTATION);
        ReplicaSet fresh = rs("f", 0, new java.util.HashMap<>());
        DeploymentUtil.setNewReplicaSetAnnotations(d, fresh, "1", false, 2000);
        assertThat(fresh.getMetadata().getAnnotations()).containsEntry(DeploymentUtil.REVISION_ANNOTATION, "1")
                .doesNotContainKey(DeploymentUtil.REVISION_HISTORY_ANNOTATION)
                .containsEntry(DeploymentUtil.DESIRED_REPLICAS_ANNOTATION, "3")
                .containsEntry(DeploymentUtil.MAX_REPLICAS_ANNOTATION, "4");
        // history trimmed from the front to stay within the limit
        ReplicaSet longHistory = rs("l", 0, new java.util.HashMap<>(Map.of(DeploymentUtil.REVISION_ANNOTATION, "9",
                DeploymentUtil.REVISION_HISTORY_ANNOTATION, "1,2,3,4")));
        DeploymentUtil.setNewReplicaSetAnnotations(d, longHistory, "10", true, 8);
        assertThat(longHistory.getMetadata().getAnnotations()).containsEntry(DeploymentUtil.REVISION_HISTORY_ANNOTATION,
                "2,3,4,9");
    }

    @Test
    void lastRevisionAndMaxRevision() {
        List<ReplicaSet> l = new ArrayList<>(List.of(rs("a", 0, Map.of(DeploymentUtil.REVISION_ANNOTATION, "3")),
                rs("b", 0, Map.of(DeploymentUtil.REVISION_ANNOTATION, "7")), rs("c", 0, Map.of())));
        assertThat(DeploymentUtil.maxRevision(l)).isEqualTo(7);
        assertThat(DeploymentUtil.lastRevision(l)).isEqualTo(3);
    }

    @Test
    void conditionsKeepTransitionTimeOnSameStatusAndMoveToTheEnd() {
        DeploymentStatus s = new DeploymentStatus();
        var p = DeploymentUtil.newCondition(java.time.Clock.systemUTC(), "Progressing", "True", "ReplicaSetUpdated", "m");
        p.setLastTransitionTime("2020-01-01T00:00:00Z");
        DeploymentUtil.setCondition(s, p);
        DeploymentUtil.setCondition(s, DeploymentUtil.newCondition(java.time.Clock.systemUTC(), "Available", "True", "MinimumReplicasAvailable", "x"));
        DeploymentUtil.setCondition(s, DeploymentUtil.newCondition(java.time.Clock.systemUTC(), "Progressing", "True", "NewReplicaSetAvailable", "y"));
        assertThat(s.getConditions()).extracting(c -> c.getType()).containsExactly("Available", "Progressing");
        assertThat(s.getConditions().get(1).getLastTransitionTime()).isEqualTo("2020-01-01T00:00:00Z");
    }

    @Test
    void hashAndNames() {
        assertThat(ControllerHash.safeEncodeString("0123456789")).isEqualTo("456789bcdf");
        String longName = "x".repeat(260);
        assertThat(io.qkcm.controller.deployment.SyncAccess.generateReplicaSetName(longName, "abcde12345")).hasSize(253);
    }
}
