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

    // ---- EqualIgnoreHash: upstream's TestEqualIgnoreHash table ----------------------------------

    static io.fabric8.kubernetes.api.model.PodTemplateSpec template(String name, String nodeName,
            Map<String, String> annotations, Map<String, String> labels) {
        return new io.fabric8.kubernetes.api.model.PodTemplateSpecBuilder().withNewMetadata().withName(name)
                .withAnnotations(annotations).withLabels(labels).endMetadata().withNewSpec().withNodeName(nodeName)
                .endSpec().build();
    }

    @Test
    void equalIgnoreHashComparesTemplatesWithoutThePodTemplateHashAndChangesNeither() {
        String hash = DeploymentUtil.DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY;
        Object[][] cases = {
            {"Same spec, same labels", template("foo", "foo-node", Map.of(), Map.of(hash, "value-1", "something", "else")),
                template("foo", "foo-node", Map.of(), Map.of(hash, "value-1", "something", "else")), true},
            {"Same spec, only pod-template-hash label value is different",
                template("foo", "foo-node", Map.of(), Map.of(hash, "value-1", "something", "else")),
                template("foo", "foo-node", Map.of(), Map.of(hash, "value-2", "something", "else")), true},
            {"Same spec, the former doesn't have pod-template-hash label",
                template("foo", "foo-node", Map.of(), Map.of("something", "else")),
                template("foo", "foo-node", Map.of(), Map.of(hash, "value-2", "something", "else")), true},
            {"Same spec, the label is different, the former doesn't have pod-template-hash label, same number of labels",
                template("foo", "foo-node", Map.of(), Map.of("something", "else")),
                template("foo", "foo-node", Map.of(), Map.of(hash, "value-2")), false},
            {"Same spec, the label is different, the latter doesn't have pod-template-hash label, same number of labels",
                template("foo", "foo-node", Map.of(), Map.of(hash, "value-1")),
                template("foo", "foo-node", Map.of(), Map.of("something", "else")), false},
            {"Same spec, the label is different, and the pod-template-hash label value is the same",
                template("foo", "foo-node", Map.of(), Map.of(hash, "value-1")),
                template("foo", "foo-node", Map.of(), Map.of(hash, "value-1", "something", "else")), false},
            {"Different spec, same labels",
                template("foo", "foo-node", Map.of("former", "value"), Map.of(hash, "value-1", "something", "else")),
                template("foo", "foo-node", Map.of("latter", "value"), Map.of(hash, "value-1", "something", "else")), false},
            {"Different spec, different pod-template-hash label value",
                template("foo-1", "foo-node", Map.of(), Map.of(hash, "value-1", "something", "else")),
                template("foo-2", "foo-node", Map.of(), Map.of(hash, "value-2", "something", "else")), false},
            {"Different spec, the former doesn't have pod-template-hash label",
                template("foo-1", "foo-node-1", Map.of(), Map.of("something", "else")),
                template("foo-2", "foo-node-2", Map.of(), Map.of(hash, "value-2", "something", "else")), false},
            {"Different spec, different labels", template("foo", "foo-node-1", Map.of(), Map.of("something", "else")),
                template("foo", "foo-node-2", Map.of(), Map.of("nothing", "else")), false},
            // not in upstream's table: only the hash label against none (Go's emptied map equals a nil one)
            {"Same spec, the pod-template-hash label is the only label, the latter has none",
                template("foo", "foo-node", Map.of(), Map.of(hash, "value-1")),
                template("foo", "foo-node", Map.of(), Map.of()), true},
        };
        for (Object[] c : cases) {
            var former = (io.fabric8.kubernetes.api.model.PodTemplateSpec) c[1];
            var latter = (io.fabric8.kubernetes.api.model.PodTemplateSpec) c[2];
            var formerLabels = Map.copyOf(former.getMetadata().getLabels());
            var latterLabels = Map.copyOf(latter.getMetadata().getLabels());
            assertThat(DeploymentUtil.equalIgnoreHash(former, latter)).as("%s", c[0]).isEqualTo(c[3]);
            assertThat(DeploymentUtil.equalIgnoreHash(latter, former)).as("%s (reverse order)", c[0]).isEqualTo(c[3]);
            assertThat(former.getMetadata().getLabels()).as("%s: labels unchanged", c[0]).isEqualTo(formerLabels);
            assertThat(latter.getMetadata().getLabels()).as("%s: labels unchanged", c[0]).isEqualTo(latterLabels);
        }
    }

    // ---- one rendering of the Deployment's template per sync -------------------------------------

    static Deployment withTemplate(String uid, long generation, io.fabric8.kubernetes.api.model.PodTemplateSpec t) {
        return new DeploymentBuilder().withNewMetadata().withName("d").withUid(uid).withGeneration(generation)
                .endMetadata().withNewSpec().withTemplate(t).endSpec().build();
    }

    static ReplicaSet rsWithTemplate(String name, io.fabric8.kubernetes.api.model.PodTemplateSpec t) {
        return new ReplicaSetBuilder().withNewMetadata().withName(name).withCreationTimestamp("2026-01-01T00:00:00Z")
                .endMetadata().withNewSpec().withTemplate(t).endSpec().build();
    }

    @Test
    void aSyncRendersItsDeploymentsTemplateOncePerGenerationAndOnlyTheTemplateItBeganWith() {
        var a = rsWithTemplate("a", template("foo", "node-a", Map.of(), Map.of("app", "x")));
        var b = rsWithTemplate("b", template("foo", "node-b", Map.of(), Map.of("app", "x")));
        Deployment d = withTemplate("uid-render", 1, template("foo", "node-a", Map.of(), Map.of("app", "x")));
        try (var rendering = DeploymentUtil.SyncRendering.open(d)) {
            assertThat(DeploymentUtil.findNewReplicaSet(d, new ArrayList<>(List.of(a, b)))).isSameAs(a);
            // changed in place within the sync (nothing in the controller does): the sync keeps its rendering,
            // which is what shows that it is rendered once
            d.getSpec().getTemplate().getSpec().setNodeName("node-b");
            assertThat(DeploymentUtil.findNewReplicaSet(d, new ArrayList<>(List.of(a, b)))).isSameAs(a);
            // a rollback replaces the template with another object: rendered anew
            d.getSpec().setTemplate(template("foo", "node-b", Map.of(), Map.of("app", "x")));
            assertThat(DeploymentUtil.findNewReplicaSet(d, new ArrayList<>(List.of(a, b)))).isSameAs(b);
        }
        // the next sync of the same generation (a fresh copy) reuses the rendering kept by uid and generation
        Deployment sameGeneration = withTemplate("uid-render", 1, template("foo", "node-b", Map.of(), Map.of("app", "x")));
        try (var rendering = DeploymentUtil.SyncRendering.open(sameGeneration)) {
            assertThat(DeploymentUtil.findNewReplicaSet(sameGeneration, new ArrayList<>(List.of(a, b)))).isSameAs(a);
        }
        // a new generation is rendered anew
        Deployment next = withTemplate("uid-render", 2, template("foo", "node-b", Map.of(), Map.of("app", "x")));
        try (var rendering = DeploymentUtil.SyncRendering.open(next)) {
            assertThat(DeploymentUtil.findNewReplicaSet(next, new ArrayList<>(List.of(a, b)))).isSameAs(b);
        }
        // outside a sync nothing is kept
        assertThat(DeploymentUtil.findNewReplicaSet(sameGeneration, new ArrayList<>(List.of(a, b)))).isSameAs(b);
    }

    /**
     * A ReplicaSet's template is rendered once per uid and generation (the API server bumps the generation on every
     * spec change): a status write (a new resourceVersion) reuses the rendering, a spec change is rendered anew.
     */
    @Test
    void aReplicaSetsTemplateIsRenderedOncePerGeneration() {
        Deployment d = withTemplate("uid-d-gen", 1, template("foo", "node-a", Map.of(), Map.of("app", "g")));
        ReplicaSet rs = rsWithTemplate("a", template("foo", "node-a", Map.of(), Map.of("app", "g")));
        rs.getMetadata().setUid("uid-rs-gen");
        rs.getMetadata().setGeneration(1L);
        rs.getMetadata().setResourceVersion("10");
        assertThat(DeploymentUtil.findNewReplicaSet(d, new ArrayList<>(List.of(rs)))).isSameAs(rs);
        // the same generation with another template (never stored by an API server): the rendering of
        // generation 1 answers, which is what shows that it was kept and not rendered again
        ReplicaSet statusWrite = rsWithTemplate("a", template("foo", "node-b", Map.of(), Map.of("app", "g")));
        statusWrite.getMetadata().setUid("uid-rs-gen");
        statusWrite.getMetadata().setGeneration(1L);
        statusWrite.getMetadata().setResourceVersion("11");
        assertThat(DeploymentUtil.findNewReplicaSet(d, new ArrayList<>(List.of(statusWrite)))).isSameAs(statusWrite);
        // a spec change bumps the generation: rendered anew, and it no longer matches
        statusWrite.getMetadata().setGeneration(2L);
        assertThat(DeploymentUtil.findNewReplicaSet(d, new ArrayList<>(List.of(statusWrite)))).isNull();
    }

    // ---- deep copies --------------------------------------------------------------------------

    static final String DEPLOYMENT_JSON = """
            {"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"default","uid":"u1",
             "resourceVersion":"12","generation":3,"labels":{"app":"web"},"finalizers":["f/x"],
             "annotations":{"deployment.kubernetes.io/revision":"2"},"creationTimestamp":"2026-11-26T00:00:00Z",
             "ownerReferences":[{"apiVersion":"v1","kind":"X","name":"o","uid":"u0","controller":true}]},
             "spec":{"replicas":10,"selector":{"matchLabels":{"app":"web"},
               "matchExpressions":[{"key":"tier","operator":"In","values":["fe","be"]}]},
              "strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":"25%","maxUnavailable":1}},
              "template":{"metadata":{"labels":{"app":"web","tier":"fe"},"annotations":{"a":"b"}},
               "spec":{"containers":[{"name":"web","image":"nginx","args":["-g","daemon off;"],
                 "ports":[{"containerPort":80,"protocol":"TCP"}],
                 "env":[{"name":"A","value":"1"},{"name":"B","valueFrom":{"fieldRef":{"fieldPath":"metadata.name"}}}],
                 "resources":{"requests":{"cpu":"100m"},"limits":{"memory":"128Mi"}},
                 "readinessProbe":{"httpGet":{"path":"/","port":80},"periodSeconds":5}}],
                "tolerations":[{"key":"k","operator":"Exists"}],"nodeSelector":{"disk":"ssd"},
                "volumes":[{"name":"v","configMap":{"name":"c","items":[{"key":"k","path":"p"}]}}]}}},
             "status":{"observedGeneration":3,"replicas":10,"collisionCount":1,"conditions":[
               {"type":"Available","status":"True","reason":"MinimumReplicasAvailable","message":"m",
                "lastUpdateTime":"2026-11-26T00:00:00Z","lastTransitionTime":"2026-11-26T00:00:00Z"}]}}
            """;

    @Test
    void deepCopiesShareNothingChangeable() {
        var serialization = new io.fabric8.kubernetes.client.utils.KubernetesSerialization();
        Deployment d = serialization.unmarshal(DEPLOYMENT_JSON, Deployment.class);
        ReplicaSet rs = new ReplicaSetBuilder().withMetadata(d.getMetadata()).withNewSpec()
                .withSelector(d.getSpec().getSelector()).withTemplate(d.getSpec().getTemplate()).endSpec().build();
        List<Object> originals = List.of(d, rs, d.getSpec().getTemplate(), d.getStatus().getConditions().get(0),
                d.getSpec().getSelector());
        List<Object> copies = List.of(io.qkcm.runtime.DeepCopy.of(d), io.qkcm.runtime.DeepCopy.of(rs),
                io.qkcm.runtime.DeepCopy.of(d.getSpec().getTemplate()),
                io.qkcm.runtime.DeepCopy.of(d.getStatus().getConditions().get(0)),
                io.qkcm.runtime.DeepCopy.of(d.getSpec().getSelector()));
        for (int i = 0; i < originals.size(); i++) {
            Object original = originals.get(i);
            Object copy = copies.get(i);
            assertThat(serialization.asJson(copy)).isEqualTo(serialization.asJson(original));
            assertThat(copy).isEqualTo(original);
            java.util.Set<Object> reachable = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
            walk(original, reachable::add);
            List<String> shared = new ArrayList<>();
            walk(copy, o -> {
                if (reachable.contains(o)) {
                    shared.add(o.getClass().getName());
                }
            });
            assertThat(shared).as("changeable objects shared by %s and its copy", original.getClass().getSimpleName())
                    .isEmpty();
        }
        assertThat(io.qkcm.runtime.DeepCopy.of((Deployment) null)).isNull();
    }

    /**
     * Visits every changeable object reachable from {@code o}: model objects, lists and maps. Strings,
     * boxed values, Quantities (never changed in place) and the values of additionalProperties are not
     * visited.
     */
    static void walk(Object o, java.util.function.Consumer<Object> visit) {
        if (o == null || o instanceof String || o instanceof Number || o instanceof Boolean
                || o instanceof io.fabric8.kubernetes.api.model.Quantity) {
            return;
        }
        visit.accept(o);
        if (o instanceof java.util.Collection<?> c) {
            c.forEach(e -> walk(e, visit));
            return;
        }
        if (o instanceof Map<?, ?> m) {
            m.values().forEach(v -> walk(v, visit));
            return;
        }
        assertThat(o.getClass().getName()).as("a model object").startsWith("io.fabric8.kubernetes.api.model");
        for (Class<?> c = o.getClass(); c != Object.class; c = c.getSuperclass()) {
            for (java.lang.reflect.Field f : c.getDeclaredFields()) {
                if (java.lang.reflect.Modifier.isStatic(f.getModifiers())) {
                    continue;
                }
                f.setAccessible(true);
                try {
                    Object v = f.get(o);
                    if (f.getName().equals("additionalProperties")) {
                        if (v != null) {
                            visit.accept(v);
                        }
                    } else {
                        walk(v, visit);
                    }
                } catch (IllegalAccessException e) {
                    throw new AssertionError(e);
                }
            }
        }
    }
}
