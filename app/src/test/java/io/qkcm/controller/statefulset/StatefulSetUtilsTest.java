package io.qkcm.controller.statefulset;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.apps.StatefulSetBuilder;
import io.fabric8.kubernetes.api.model.apps.StatefulSetPersistentVolumeClaimRetentionPolicy;
import io.fabric8.kubernetes.api.model.apps.StatefulSetStatus;

/** stateful_set_utils_test.go's tables, ported. */
class StatefulSetUtilsTest {

    static StatefulSet newStatefulSet(int replicas) {
        return new StatefulSetBuilder().withNewMetadata().withName("foo").withNamespace("default").withUid("test")
                .endMetadata().withNewSpec().withReplicas(replicas).withServiceName("governingsvc").withNewSelector()
                .withMatchLabels(Map.of("foo", "bar")).endSelector().withNewTemplate().withNewMetadata()
                .withLabels(Map.of("foo", "bar")).endMetadata().withNewSpec().addNewContainer().withName("nginx")
                .withImage("nginx").addNewVolumeMount().withName("datadir").withMountPath("/tmp/").endVolumeMount()
                .addNewVolumeMount().withName("home").withMountPath("/home").endVolumeMount().endContainer()
                .addNewVolume().withName("home").withNewHostPath().withPath("/tmp/home").endHostPath().endVolume()
                .endSpec().endTemplate()
                .withVolumeClaimTemplates(new PersistentVolumeClaimBuilder().withNewMetadata().withName("datadir")
                        .endMetadata().withNewSpec().withNewResources().addToRequests("storage", new Quantity("1"))
                        .endResources().endSpec().build())
                .withNewUpdateStrategy().withType("RollingUpdate").endUpdateStrategy().endSpec()
                .withNewStatus().endStatus().build();
    }

    static Pod pod(StatefulSet set, int ordinal) {
        return StatefulSetUtils.newStatefulSetPod(set, ordinal, true);
    }

    @Test
    void parentNameAndOrdinal() {
        StatefulSet set = newStatefulSet(3);
        Pod p = pod(set, 1);
        assertThat(StatefulSetUtils.parentNameAndOrdinal(p)).isEqualTo(new StatefulSetUtils.ParentAndOrdinal("foo", 1));
        p.getMetadata().setName("1-bar");
        assertThat(StatefulSetUtils.parentNameAndOrdinal(p)).isEqualTo(new StatefulSetUtils.ParentAndOrdinal("", -1));
        p.getMetadata().setName("a-b-12");
        assertThat(StatefulSetUtils.parentNameAndOrdinal(p)).isEqualTo(new StatefulSetUtils.ParentAndOrdinal("a-b", 12));
        p.getMetadata().setName("big-99999999999");
        assertThat(StatefulSetUtils.parentNameAndOrdinal(p)).isEqualTo(new StatefulSetUtils.ParentAndOrdinal("big", -1));
    }

    @Test
    void claimNamesAndMembership() {
        StatefulSet set = newStatefulSet(3);
        Pod p = pod(set, 1);
        assertThat(StatefulSetUtils.persistentVolumeClaimName(set, set.getSpec().getVolumeClaimTemplates().get(0), 1))
                .isEqualTo("datadir-foo-1");
        assertThat(StatefulSetUtils.isMemberOf(set, p)).isTrue();
        StatefulSet other = newStatefulSet(3);
        other.getMetadata().setName("foo2");
        assertThat(StatefulSetUtils.isMemberOf(other, p)).isFalse();
    }

    @Test
    void identityMatchesAndUpdateIdentity() {
        StatefulSet set = newStatefulSet(3);
        Pod p = pod(set, 1);
        assertThat(StatefulSetUtils.identityMatches(set, p)).isTrue();
        assertThat(p.getMetadata().getLabels()).containsEntry("statefulset.kubernetes.io/pod-name", "foo-1")
                .containsEntry("apps.kubernetes.io/pod-index", "1");
        assertThat(p.getSpec().getHostname()).isEqualTo("foo-1");
        assertThat(p.getSpec().getSubdomain()).isEqualTo("governingsvc");
        Pod bad = new PodBuilder(p).build();
        bad.getMetadata().setName("foo-10");
        assertThat(StatefulSetUtils.identityMatches(set, bad)).isFalse();
        bad = new PodBuilder(p).build();
        bad.getMetadata().setNamespace("other");
        assertThat(StatefulSetUtils.identityMatches(set, bad)).isFalse();
        StatefulSetUtils.updateIdentity(set, bad, true);
        assertThat(StatefulSetUtils.identityMatches(set, bad)).isTrue();
        bad.getMetadata().getLabels().remove("statefulset.kubernetes.io/pod-name");
        assertThat(StatefulSetUtils.identityMatches(set, bad)).isFalse();
        StatefulSetUtils.updateIdentity(set, bad, true);
        assertThat(StatefulSetUtils.identityMatches(set, bad)).isTrue();
    }

    @Test
    void storageMatchesAndUpdateStorage() {
        StatefulSet set = newStatefulSet(3);
        Pod p = pod(set, 1);
        assertThat(StatefulSetUtils.storageMatches(set, p)).isTrue();
        assertThat(p.getSpec().getVolumes()).extracting(v -> v.getName()).containsExactly("datadir", "home");
        p.getSpec().getVolumes().get(0).getPersistentVolumeClaim().setClaimName("wrong");
        assertThat(StatefulSetUtils.storageMatches(set, p)).isFalse();
        StatefulSetUtils.updateStorage(set, p);
        assertThat(StatefulSetUtils.storageMatches(set, p)).isTrue();
        p.getSpec().setVolumes(new ArrayList<>(List.of(p.getSpec().getVolumes().get(1))));
        assertThat(StatefulSetUtils.storageMatches(set, p)).isFalse();
        StatefulSetUtils.updateStorage(set, p);
        assertThat(StatefulSetUtils.storageMatches(set, p)).isTrue();
        assertThat(p.getSpec().getVolumes().get(0).getPersistentVolumeClaim().getReadOnly()).isFalse();
    }

    @Test
    void persistentVolumeClaimsCarryTheSelectorLabels() {
        StatefulSet set = newStatefulSet(3);
        Pod p = pod(set, 2);
        PersistentVolumeClaim c = StatefulSetUtils.persistentVolumeClaims(set, p).get("datadir");
        assertThat(c.getMetadata().getName()).isEqualTo("datadir-foo-2");
        assertThat(c.getMetadata().getNamespace()).isEqualTo("default");
        assertThat(c.getMetadata().getLabels()).isEqualTo(Map.of("foo", "bar"));
        set.getSpec().getVolumeClaimTemplates().get(0).getMetadata().setLabels(Map.of("tier", "db", "foo", "other"));
        c = StatefulSetUtils.persistentVolumeClaims(set, p).get("datadir");
        assertThat(c.getMetadata().getLabels()).isEqualTo(Map.of("tier", "db", "foo", "bar"));
        // the template is not modified
        assertThat(set.getSpec().getVolumeClaimTemplates().get(0).getMetadata().getLabels()).containsEntry("foo", "other");
    }

    @Test
    void retentionPolicyDefaultsToRetain() {
        StatefulSet set = newStatefulSet(1);
        assertThat(StatefulSetUtils.retentionPolicy(set).getWhenDeleted()).isEqualTo("Retain");
        assertThat(StatefulSetUtils.retentionPolicy(set).getWhenScaled()).isEqualTo("Retain");
    }

    private static StatefulSet policySet(String name, String uid, int replicas, String scaled, String deleted) {
        StatefulSet set = newStatefulSet(replicas);
        set.getMetadata().setName(name);
        set.getMetadata().setUid(uid);
        set.getSpec().setPersistentVolumeClaimRetentionPolicy(
                new StatefulSetPersistentVolumeClaimRetentionPolicy(deleted, scaled));
        return set;
    }

    private static Pod namedPod(String name, String uid) {
        return new PodBuilder().withNewMetadata().withName(name).withUid(uid).endMetadata().build();
    }

    private static PersistentVolumeClaim claim(List<OwnerReference> refs) {
        PersistentVolumeClaim c = new PersistentVolumeClaim();
        c.setMetadata(new ObjectMeta());
        c.getMetadata().setName("target-claim");
        c.getMetadata().setOwnerReferences(refs);
        return c;
    }

    @Test
    void isClaimOwnerUpToDate() {
        // name, whenScaled, whenDeleted, needsPodRef, needsSetRef, replicas, ordinal
        Object[][] cases = {
                { "retain", "Retain", "Retain", false, false, 0, 0 },
                { "on SS delete", "Retain", "Delete", false, true, 0, 0 },
                { "on scaledown only, condemned", "Delete", "Retain", true, false, 2, 2 },
                { "on scaledown only, remains", "Delete", "Retain", false, false, 2, 1 },
                { "on both, condemned", "Delete", "Delete", true, false, 2, 2 },
                { "on both, remains", "Delete", "Delete", false, true, 2, 1 },
        };
        for (Object[] tc : cases) {
            for (boolean useOtherRefs : new boolean[] { false, true }) {
                for (boolean setPodRef : new boolean[] { false, true }) {
                    for (boolean setSetRef : new boolean[] { false, true }) {
                        Pod pod = namedPod("pod-" + tc[6], "pod-123");
                        StatefulSet set = policySet("stateful-set", "ss-456", (int) tc[5], (String) tc[1], (String) tc[2]);
                        List<OwnerReference> refs = new ArrayList<>();
                        if (setPodRef) {
                            StatefulSetUtils.addControllerRef(refs, pod, "v1", "Pod");
                        }
                        if (setSetRef) {
                            StatefulSetUtils.addControllerRef(refs, set, "apps/v1", "StatefulSet");
                        }
                        if (useOtherRefs) {
                            refs.add(new OwnerReferenceBuilder().withName("rand1").withApiVersion("v1").withKind("Pod")
                                    .withUid("rand1-uid").build());
                            refs.add(new OwnerReferenceBuilder().withName("rand2").withApiVersion("v1").withKind("Pod")
                                    .withUid("rand2-uid").build());
                        }
                        boolean shouldMatch = setPodRef == (boolean) tc[3] && setSetRef == (boolean) tc[4];
                        assertThat(StatefulSetUtils.isClaimOwnerUpToDate(claim(refs), set, pod))
                                .as("%s pod=%s set=%s others=%s", tc[0], setPodRef, setSetRef, useOtherRefs)
                                .isEqualTo(shouldMatch);
                    }
                }
            }
        }
    }

    @Test
    void updateClaimOwnerRefForSetAndPod() {
        // name, whenScaled, whenDeleted, condemned, needsPodRef, needsSetRef, unexpectedController
        Object[][] cases = {
                { "retain", "Retain", "Retain", false, false, false, false },
                { "delete with set", "Retain", "Delete", false, false, true, false },
                { "delete with scaledown, not condemned", "Delete", "Retain", false, false, false, false },
                { "delete on scaledown, condemned", "Delete", "Retain", true, true, false, false },
                { "delete on both, not condemned", "Delete", "Delete", false, false, true, false },
                { "delete on both, condemned", "Delete", "Delete", true, true, false, false },
                { "unexpected controller", "Delete", "Delete", true, false, false, true },
        };
        for (Object[] tc : cases) {
            for (int variations = 0; variations < 8; variations++) {
                boolean hasPodRef = (variations & 1) != 0;
                boolean hasSetRef = (variations & 2) != 0;
                boolean extraOwner = (variations & 3) != 0;
                StatefulSet set = policySet("ss", "ss-123", 5, (String) tc[1], (String) tc[2]);
                Pod pod = namedPod((boolean) tc[3] ? "pod-8" : "pod-1", "pod-456");
                List<OwnerReference> refs = new ArrayList<>();
                if (hasPodRef) {
                    StatefulSetUtils.addControllerRef(refs, pod, "v1", "Pod");
                }
                if (hasSetRef) {
                    StatefulSetUtils.addControllerRef(refs, set, "apps/v1", "StatefulSet");
                }
                if (extraOwner) {
                    refs.add(new OwnerReferenceBuilder().withApiVersion("custom/v1").withKind("random").withName("random")
                            .withUid("abc").build());
                }
                if ((boolean) tc[6]) {
                    refs.add(new OwnerReferenceBuilder().withApiVersion("custom/v1").withKind("Unknown").withName("unknown")
                            .withUid("xyz").withController(true).build());
                }
                PersistentVolumeClaim c = claim(refs);
                StatefulSetUtils.updateClaimOwnerRefForSetAndPod(c, set, pod);
                assertThat(controls(c, "pod-456")).as("%s pod ref (%d)", tc[0], variations).isEqualTo(tc[4]);
                assertThat(controls(c, "ss-123")).as("%s set ref (%d)", tc[0], variations).isEqualTo(tc[5]);
            }
        }
    }

    private static boolean controls(PersistentVolumeClaim c, String uid) {
        for (OwnerReference r : c.getMetadata().getOwnerReferences()) {
            if (uid.equals(r.getUid())) {
                return Boolean.TRUE.equals(r.getController());
            }
        }
        return false;
    }

    @Test
    void maxUnavailable() {
        Object[][] cases = {
                { null, 10, 1 }, { new IntOrString(3), 10, 3 }, { new IntOrString(3), 0, 3 }, { new IntOrString(0), 0, 1 },
                { new IntOrString("10%"), 25, 2 }, { new IntOrString("100%"), 5, 5 }, { new IntOrString("50%"), 5, 2 },
                { new IntOrString("10%"), 5, 1 }, { new IntOrString("1%"), 0, 1 }, { new IntOrString("0%"), 0, 1 },
        };
        for (Object[] tc : cases) {
            assertThat(StatefulSetUtils.maxUnavailable((IntOrString) tc[0], (int) tc[1])).as("%s of %s", tc[0], tc[1])
                    .isEqualTo(tc[2]);
        }
    }

    @Test
    void newVersionedPodFollowsThePartition() {
        StatefulSet set = newStatefulSet(5);
        set.getSpec().getUpdateStrategy().setRollingUpdate(
                new io.fabric8.kubernetes.api.model.apps.RollingUpdateStatefulSetStrategy(null, 3));
        StatefulSet updateSet = new StatefulSetBuilder(set).build();
        updateSet.getSpec().getTemplate().getSpec().getContainers().get(0).setImage("nginx:2");
        for (int ord = 0; ord < 5; ord++) {
            Pod p = StatefulSetUtils.newVersionedStatefulSetPod(set, updateSet, "cur", "upd", ord, true);
            assertThat(StatefulSetUtils.podRevision(p)).isEqualTo(ord < 3 ? "cur" : "upd");
            assertThat(p.getSpec().getContainers().get(0).getImage()).isEqualTo(ord < 3 ? "nginx" : "nginx:2");
        }
        // without a rollingUpdate: ordinals below status.currentReplicas keep the current revision
        set.getSpec().getUpdateStrategy().setRollingUpdate(null);
        set.getStatus().setCurrentReplicas(2);
        assertThat(StatefulSetUtils.podRevision(StatefulSetUtils.newVersionedStatefulSetPod(set, updateSet, "cur", "upd", 1,
                true))).isEqualTo("cur");
        assertThat(StatefulSetUtils.podRevision(StatefulSetUtils.newVersionedStatefulSetPod(set, updateSet, "cur", "upd", 2,
                true))).isEqualTo("upd");
    }

    @Test
    void completeRollingUpdateAndInconsistentStatus() {
        StatefulSet set = newStatefulSet(3);
        StatefulSetStatus status = new StatefulSetStatus();
        status.setReplicas(3);
        status.setReadyReplicas(3);
        status.setUpdatedReplicas(3);
        status.setCurrentReplicas(1);
        status.setCurrentRevision("a");
        status.setUpdateRevision("b");
        StatefulSetUtils.completeRollingUpdate(set, status);
        assertThat(status.getCurrentRevision()).isEqualTo("b");
        assertThat(status.getCurrentReplicas()).isEqualTo(3);
        assertThat(StatefulSetUtils.inconsistentStatus(set, status)).isTrue();
        set.setStatus(new io.fabric8.kubernetes.api.model.apps.StatefulSetStatusBuilder(status).build());
        assertThat(StatefulSetUtils.inconsistentStatus(set, status)).isFalse();
        // OnDelete never completes by itself
        set.getSpec().getUpdateStrategy().setType("OnDelete");
        StatefulSetStatus onDelete = new StatefulSetStatus();
        onDelete.setReplicas(3);
        onDelete.setReadyReplicas(3);
        onDelete.setUpdatedReplicas(3);
        onDelete.setCurrentRevision("a");
        onDelete.setUpdateRevision("b");
        StatefulSetUtils.completeRollingUpdate(set, onDelete);
        assertThat(onDelete.getCurrentRevision()).isEqualTo("a");
    }
}
