package io.qkcm.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.PodConditionBuilder;
import io.fabric8.kubernetes.api.model.apps.ReplicaSet;
import io.fabric8.kubernetes.api.model.apps.ReplicaSetBuilder;

class SharedContentsTest {

    private static Pod pod(String name, String rsUid, String readySince, String... labels) {
        Map<String, String> l = new LinkedHashMap<>();
        for (int i = 0; i < labels.length; i += 2) {
            l.put(labels[i], labels[i + 1]);
        }
        return new PodBuilder().withNewMetadata().withName(name).withNamespace("ns").withLabels(l)
                .withOwnerReferences(new OwnerReferenceBuilder().withApiVersion("apps/v1").withKind("ReplicaSet")
                        .withName("rs").withUid(rsUid).withController(true).withBlockOwnerDeletion(true).build())
                .endMetadata().withNewStatus().withPhase("Running")
                .withConditions(new PodConditionBuilder().withType("PodScheduled").withStatus("True")
                        .withLastTransitionTime("2026-11-28T06:00:00Z").build(),
                        new PodConditionBuilder().withType("Ready").withStatus("True")
                                .withLastTransitionTime(readySince).build())
                .endStatus().build();
    }

    @Test
    void equalContentsAreOneInstanceAndValuesAreUnchanged() {
        Pod a = pod("a", "uid-shared-1", "2026-11-28T06:00:01Z", "app", "big", "pod-template-hash", "h1");
        Pod b = pod("b", "uid-shared-1", "2026-11-28T06:00:01Z", "app", "big", "pod-template-hash", "h1");
        Pod before = DeepCopy.of(b);
        SharedContents.share(a);
        SharedContents.share(b);
        assertSame(a.getMetadata().getLabels(), b.getMetadata().getLabels());
        assertSame(a.getMetadata().getOwnerReferences(), b.getMetadata().getOwnerReferences());
        assertSame(a.getStatus().getConditions(), b.getStatus().getConditions());
        assertEquals(before, b);
        // the order of the labels is kept (a copy serializes them in it)
        assertEquals(List.of("app", "pod-template-hash"), new ArrayList<>(b.getMetadata().getLabels().keySet()));
    }

    @Test
    void differentContentsAreNotShared() {
        Pod a = pod("a", "uid-diff-1", "2026-11-28T06:00:01Z", "app", "x", "pod-template-hash", "h2");
        Pod b = pod("b", "uid-diff-2", "2026-11-28T06:00:02Z", "app", "y", "pod-template-hash", "h2");
        Pod c = pod("c", "uid-diff-1", "2026-11-28T06:00:01Z", "pod-template-hash", "h2", "app", "x");
        SharedContents.share(a);
        SharedContents.share(b);
        SharedContents.share(c);
        assertNotSame(a.getMetadata().getLabels(), b.getMetadata().getLabels());
        assertEquals(Map.of("app", "y", "pod-template-hash", "h2"), b.getMetadata().getLabels());
        assertNotSame(a.getMetadata().getOwnerReferences(), b.getMetadata().getOwnerReferences());
        assertEquals("uid-diff-2", b.getMetadata().getOwnerReferences().get(0).getUid());
        assertNotSame(a.getStatus().getConditions(), b.getStatus().getConditions());
        assertEquals("2026-11-28T06:00:02Z", b.getStatus().getConditions().get(1).getLastTransitionTime());
        // the same labels in another order stay apart: the order is part of what a copy writes
        assertNotSame(a.getMetadata().getLabels(), c.getMetadata().getLabels());
        assertEquals(List.of("pod-template-hash", "app"), new ArrayList<>(c.getMetadata().getLabels().keySet()));
        assertSame(a.getMetadata().getOwnerReferences(), c.getMetadata().getOwnerReferences());
    }

    @Test
    void aFieldTheModelDoesNotKnowKeepsAnObjectApart() {
        Pod a = pod("a", "uid-extra-1", "2026-11-28T06:00:03Z", "app", "e");
        Pod b = pod("b", "uid-extra-1", "2026-11-28T06:00:03Z", "app", "e");
        b.getMetadata().getOwnerReferences().get(0).setAdditionalProperty("futureField", "v");
        b.getStatus().getConditions().get(0).setAdditionalProperty("futureField", "v");
        SharedContents.share(a);
        SharedContents.share(b);
        assertNotSame(a.getMetadata().getOwnerReferences(), b.getMetadata().getOwnerReferences());
        assertEquals("v", b.getMetadata().getOwnerReferences().get(0).getAdditionalProperties().get("futureField"));
        assertNotSame(a.getStatus().getConditions(), b.getStatus().getConditions());
    }

    @Test
    void sharedCollectionsRefuseChangesInPlaceAndCopiesAreFree() {
        Pod a = pod("a", "uid-ro-1", "2026-11-28T06:00:04Z", "app", "ro");
        SharedContents.share(a);
        assertThrows(UnsupportedOperationException.class, () -> a.getMetadata().getLabels().put("k", "v"));
        assertThrows(UnsupportedOperationException.class,
                () -> a.getMetadata().getOwnerReferences().add(new OwnerReference()));
        assertThrows(UnsupportedOperationException.class, () -> a.getStatus().getConditions().add(new PodCondition()));
        Pod copy = DeepCopy.of(a);
        copy.getMetadata().getLabels().put("k", "v");
        copy.getMetadata().getOwnerReferences().clear();
        copy.getStatus().getConditions().remove(0);
        assertEquals(Map.of("app", "ro"), a.getMetadata().getLabels());
        assertEquals(1, a.getMetadata().getOwnerReferences().size());
        assertEquals(2, a.getStatus().getConditions().size());
    }

    @Test
    void otherKindsShareLabelsAndOwnerReferences() {
        ReplicaSet x = new ReplicaSetBuilder().withNewMetadata().withName("x").addToLabels("app", "rs-kinds")
                .endMetadata().build();
        ReplicaSet y = new ReplicaSetBuilder().withNewMetadata().withName("y").addToLabels("app", "rs-kinds")
                .endMetadata().build();
        SharedContents.share(x);
        SharedContents.share(y);
        assertSame(x.getMetadata().getLabels(), y.getMetadata().getLabels());
        // empty collections are left as they are
        assertEquals(List.of(), y.getMetadata().getOwnerReferences());
    }
}
