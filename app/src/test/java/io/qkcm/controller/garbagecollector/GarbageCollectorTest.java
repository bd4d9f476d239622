package io.qkcm.controller.garbagecollector;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import jakarta.inject.Inject;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.DeletionPropagation;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinitionBuilder;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.fabric8.kubernetes.api.model.apps.ReplicaSet;
import io.fabric8.kubernetes.api.model.apps.ReplicaSetBuilder;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.ClusterRoleBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.qkcm.manager.ControllerManager;
import io.qkcm.runtime.informers.GroupVersionResource;
import io.qkcm.testing.Conflicts;
import io.qkcm.testing.RealApiServer;
import io.qkcm.testing.RealApiServerResource;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;

/**
 * The garbage collector against a real kube-apiserver: cascading deletion in every propagation mode
 * (API and kubectl), mixed owners, dangling owners, UID mismatch, cycles, cluster-scoped owners,
 * custom resources registered after startup, invalid owner namespaces. After each scenario every
 * object the scenario created is checked: none that still has a live owner was deleted.
 */
@QuarkusTest
@TestProfile(GarbageCollectorProfile.class)
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
class GarbageCollectorTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    static KubernetesClient client;

    @Inject
    ControllerManager manager;
    @Inject
    io.micrometer.core.instrument.MeterRegistry registry;

    @BeforeAll
    static void connect() {
        client = RealApiServer.get().newClient();
    }

    @AfterAll
    static void close() {
        client.close();
    }

    GarbageCollector gc() {
        return (GarbageCollector) manager.controllers().stream().filter(c -> c.name().equals(GarbageCollector.NAME))
                .findFirst().orElseThrow();
    }

    // ---- scenario helpers ----

    /** Everything a scenario created, to check afterwards that nothing with a live owner was deleted. */
    final class World {
        final String ns;
        final List<HasMetadata> created = new ArrayList<>();
        /** uids the test itself deleted: the invariant is about what the garbage collector deleted. */
        final java.util.Set<String> deletedByTest = new java.util.HashSet<>();

        World(String prefix) {
            ns = prefix + "-" + Long.toString(System.nanoTime(), 36);
            client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build()).create();
        }

        <T extends HasMetadata> T add(T obj) {
            created.add(obj);
            return obj;
        }

        Deployment deployment(String name) {
            return add(client.apps().deployments().inNamespace(ns).resource(new DeploymentBuilder().withNewMetadata()
                    .withName(name).endMetadata().withNewSpec().withReplicas(2).withNewSelector()
                    .addToMatchLabels("app", name).endSelector().withNewTemplate().withNewMetadata()
                    .addToLabels("app", name).endMetadata().withNewSpec().addNewContainer().withName("c")
                    .withImage("nginx").endContainer().endSpec().endTemplate().endSpec().build()).create());
        }

        ReplicaSet replicaSet(String name, HasMetadata... owners) {
            return add(client.apps().replicaSets().inNamespace(ns).resource(new ReplicaSetBuilder().withNewMetadata()
                    .withName(name).withOwnerReferences(refs(true, owners)).endMetadata().withNewSpec().withReplicas(2)
                    .withNewSelector().addToMatchLabels("rs", name).endSelector().withNewTemplate().withNewMetadata()
                    .addToLabels("rs", name).endMetadata().withNewSpec().addNewContainer().withName("c")
                    .withImage("nginx").endContainer().endSpec().endTemplate().endSpec().build()).create());
        }

        Pod pod(String name, HasMetadata... owners) {
            return add(client.pods().inNamespace(ns).resource(new PodBuilder().withNewMetadata().withName(name)
                    .withOwnerReferences(refs(true, owners)).endMetadata().withNewSpec().addNewContainer()
                    .withName("c").withImage("nginx").endContainer().endSpec().build()).create());
        }

        ConfigMap configMap(String name, List<OwnerReference> refs) {
            return add(client.configMaps().inNamespace(ns).resource(new ConfigMapBuilder().withNewMetadata()
                    .withName(name).withOwnerReferences(refs).endMetadata().addToData("k", "v").build()).create());
        }

        ConfigMap configMap(String name, HasMetadata... owners) {
            return configMap(name, refs(false, owners));
        }

        /** Deployment d → ReplicaSet d-rs → pods d-rs-0, d-rs-1, as the controllers would create them. */
        Deployment deploymentTree(String name) {
            Deployment d = deployment(name);
            ReplicaSet rs = replicaSet(name + "-rs", d);
            pod(name + "-rs-0", rs);
            pod(name + "-rs-1", rs);
            return d;
        }

        boolean exists(HasMetadata o) {
            HasMetadata live = get(o);
            return live != null && live.getMetadata().getUid().equals(o.getMetadata().getUid());
        }

        HasMetadata get(HasMetadata o) {
            String ns = o.getMetadata().getNamespace();
            String name = o.getMetadata().getName();
            if (o instanceof Pod) {
                return client.pods().inNamespace(ns).withName(name).get();
            } else if (o instanceof ReplicaSet) {
                return client.apps().replicaSets().inNamespace(ns).withName(name).get();
            } else if (o instanceof Deployment) {
                return client.apps().deployments().inNamespace(ns).withName(name).get();
            } else if (o instanceof ConfigMap) {
                return client.configMaps().inNamespace(ns).withName(name).get();
            } else if (o instanceof ClusterRole) {
                return client.rbac().clusterRoles().withName(name).get();
            } else if (o instanceof GenericKubernetesResource g) {
                return client.genericKubernetesResources(g.getApiVersion(), g.getKind()).inNamespace(ns).withName(name).get();
            }
            throw new IllegalArgumentException(o.getClass().toString());
        }

        HasMetadata byUid(String uid) {
            return created.stream().filter(o -> o.getMetadata().getUid().equals(uid)).findFirst().orElse(null);
        }

        /**
         * The invariant of every scenario: an object the scenario created that is gone never has a live
         * owner. An owner is live when it exists with the referenced uid and is not being deleted.
         */
        void assertNothingWithLiveOwnerDeleted() {
            for (HasMetadata o : created) {
                if (exists(o) || deletedByTest.contains(o.getMetadata().getUid())) {
                    continue;
                }
                for (OwnerReference ref : o.getMetadata().getOwnerReferences()) {
                    HasMetadata owner = byUid(ref.getUid());
                    if (owner == null) {
                        continue; // a made-up owner (dangling, uid mismatch)
                    }
                    HasMetadata live = get(owner);
                    boolean ownerLive = live != null && live.getMetadata().getUid().equals(ref.getUid())
                            && live.getMetadata().getDeletionTimestamp() == null;
                    assertThat(ownerLive).as("%s %s was deleted although its owner %s %s is live", o.getKind(),
                            o.getMetadata().getName(), owner.getKind(), owner.getMetadata().getName()).isFalse();
                }
            }
        }

        void awaitGone(HasMetadata... objects) {
            await().atMost(TIMEOUT).untilAsserted(() -> {
                for (HasMetadata o : objects) {
                    assertThat(exists(o)).as("%s %s still exists", o.getKind(), o.getMetadata().getName()).isFalse();
                }
            });
        }

        /** Waits until the graph knows every object created so far (the GC has observed them). */
        void awaitObserved() {
            await().atMost(TIMEOUT).untilAsserted(() -> {
                for (HasMetadata o : created) {
                    assertThat(gc().graphHasUid(o.getMetadata().getUid())).as("graph has %s", o.getMetadata().getName())
                            .isTrue();
                }
            });
        }
    }

    static List<OwnerReference> refs(boolean controller, HasMetadata... owners) {
        List<OwnerReference> refs = new ArrayList<>();
        for (HasMetadata o : owners) {
            refs.add(ref(o, controller && refs.isEmpty(), true));
        }
        return refs;
    }

    static OwnerReference ref(HasMetadata o, boolean controller, boolean block) {
        return new OwnerReferenceBuilder().withApiVersion(o.getApiVersion()).withKind(o.getKind())
                .withName(o.getMetadata().getName()).withUid(o.getMetadata().getUid()).withController(controller ? true : null)
                .withBlockOwnerDeletion(block).build();
    }

    ReplicaSet rsOf(World w, Deployment d) {
        return (ReplicaSet) w.created.stream().filter(o -> o instanceof ReplicaSet
                && o.getMetadata().getName().equals(d.getMetadata().getName() + "-rs")).findFirst().orElseThrow();
    }

    List<Pod> podsOf(World w, ReplicaSet rs) {
        return w.created.stream().filter(o -> o instanceof Pod && o.getMetadata().getOwnerReferences().stream()
                .anyMatch(r -> r.getUid().equals(rs.getMetadata().getUid()))).map(o -> (Pod) o).toList();
    }

    void deleteDeployment(World w, Deployment d, DeletionPropagation policy) {
        w.deletedByTest.add(d.getMetadata().getUid());
        client.apps().deployments().inNamespace(w.ns).withName(d.getMetadata().getName()).withPropagationPolicy(policy)
                .delete();
    }

    // ---- scenarios ----

    @Test
    void queuesAndMetricsCarryUpstreamNames() {
        for (String queue : List.of("garbage_collector_attempt_to_delete", "garbage_collector_attempt_to_orphan",
                "garbage_collector_graph_changes")) {
            assertThat(registry.getMeters()).as("workqueue metrics of %s", queue)
                    .anyMatch(m -> m.getId().getName().startsWith("workqueue") && queue.equals(m.getId().getTag("name")));
        }
        assertThat(registry.find("garbagecollector.controller.resources.sync.error").counter()).isNotNull();
        assertThat(manager.healthChecks()).containsKey(GarbageCollector.NAME);
        assertThat(manager.healthChecks().get(GarbageCollector.NAME).getAsBoolean()).isTrue();
    }

    @Test
    void backgroundDeletionCollectsReplicaSetsAndPods() {
        World w = new World("gc-background");
        Deployment d = w.deploymentTree("web");
        Deployment other = w.deploymentTree("other");
        Pod bystander = w.pod("bystander");
        w.awaitObserved();

        deleteDeployment(w, d, DeletionPropagation.BACKGROUND);

        ReplicaSet rs = rsOf(w, d);
        w.awaitGone(d, rs);
        w.awaitGone(podsOf(w, rs).toArray(HasMetadata[]::new));
        assertThat(w.exists(other)).isTrue();
        assertThat(w.exists(rsOf(w, other))).isTrue();
        assertThat(podsOf(w, rsOf(w, other))).allMatch(w::exists);
        assertThat(w.exists(bystander)).isTrue();
        w.assertNothingWithLiveOwnerDeleted();
    }

    @Test
    void foregroundDeletionWaitsForBlockingDependents() {
        World w = new World("gc-foreground");
        Deployment d = w.deploymentTree("web");
        ReplicaSet rs = rsOf(w, d);
        List<Pod> pods = podsOf(w, rs);
        // a finalizer no one removes keeps one pod, and so the whole chain, in deletion
        Pod held = Conflicts.retry(() -> client.pods().inNamespace(w.ns).withName(pods.get(0).getMetadata().getName()).edit(p -> {
            p.getMetadata().setFinalizers(List.of("qkcm.io/hold"));
            return p;
        }));
        w.awaitObserved();

        deleteDeployment(w, d, DeletionPropagation.FOREGROUND);

        w.awaitGone(pods.get(1));
        await().atMost(TIMEOUT).untilAsserted(() -> {
            Pod p = client.pods().inNamespace(w.ns).withName(held.getMetadata().getName()).get();
            assertThat(p.getMetadata().getDeletionTimestamp()).isNotNull();
            ReplicaSet liveRs = client.apps().replicaSets().inNamespace(w.ns).withName(rs.getMetadata().getName()).get();
            assertThat(liveRs.getMetadata().getDeletionTimestamp()).isNotNull();
            assertThat(liveRs.getMetadata().getFinalizers()).contains("foregroundDeletion");
        });
        Deployment liveD = client.apps().deployments().inNamespace(w.ns).withName("web").get();
        assertThat(liveD).as("the owner stays while a blocking dependent exists").isNotNull();
        assertThat(liveD.getMetadata().getFinalizers()).contains("foregroundDeletion");

        Conflicts.retry(() -> client.pods().inNamespace(w.ns).withName(held.getMetadata().getName()).edit(p -> {
            p.getMetadata().setFinalizers(List.of());
            return p;
        }));
        w.awaitGone(d, rs, pods.get(0));
        w.assertNothingWithLiveOwnerDeleted();
    }

    @Test
    void orphanDeletionKeepsDependentsAndRemovesTheOwnerReference() {
        World w = new World("gc-orphan");
        Deployment d = w.deploymentTree("web");
        ReplicaSet rs = rsOf(w, d);
        w.awaitObserved();

        deleteDeployment(w, d, DeletionPropagation.ORPHAN);

        w.awaitGone(d);
        ReplicaSet liveRs = client.apps().replicaSets().inNamespace(w.ns).withName(rs.getMetadata().getName()).get();
        assertThat(liveRs).isNotNull();
        assertThat(liveRs.getMetadata().getOwnerReferences()).isEmpty();
        for (Pod p : podsOf(w, rs)) {
            Pod live = client.pods().inNamespace(w.ns).withName(p.getMetadata().getName()).get();
            assertThat(live).isNotNull();
            assertThat(live.getMetadata().getOwnerReferences()).extracting(OwnerReference::getUid)
                    .containsExactly(rs.getMetadata().getUid());
        }
        w.assertNothingWithLiveOwnerDeleted();
    }

    @Test
    void kubectlCascadeFlags() throws Exception {
        World w = new World("gc-kubectl");
        Deployment bg = w.deploymentTree("bg");
        Deployment fg = w.deploymentTree("fg");
        Deployment orphan = w.deploymentTree("orphan");
        w.awaitObserved();

        List.of(bg, fg, orphan).forEach(d -> w.deletedByTest.add(d.getMetadata().getUid()));
        kubectl("delete", "deployment", "bg", "-n", w.ns, "--cascade=background");
        kubectl("delete", "deployment", "fg", "-n", w.ns, "--cascade=foreground");
        kubectl("delete", "deployment", "orphan", "-n", w.ns, "--cascade=orphan");

        w.awaitGone(bg, rsOf(w, bg), fg, rsOf(w, fg), orphan);
        w.awaitGone(podsOf(w, rsOf(w, bg)).toArray(HasMetadata[]::new));
        w.awaitGone(podsOf(w, rsOf(w, fg)).toArray(HasMetadata[]::new));
        ReplicaSet kept = client.apps().replicaSets().inNamespace(w.ns).withName("orphan-rs").get();
        assertThat(kept).isNotNull();
        assertThat(kept.getMetadata().getOwnerReferences()).isEmpty();
        assertThat(podsOf(w, rsOf(w, orphan))).allMatch(w::exists);
        w.assertNothingWithLiveOwnerDeleted();
    }

    @Test
    void mixedOwnersKeepTheDependentAndDropOnlyTheDeletedOwner() {
        World w = new World("gc-mixed");
        Deployment d = w.deployment("d");
        ReplicaSet a = w.replicaSet("a", d);
        ReplicaSet b = w.replicaSet("b");
        Pod shared = w.pod("shared", a, b);
        Pod onlyA = w.pod("only-a", a);
        ConfigMap cm = w.configMap("cm-a-d", a, d);
        w.awaitObserved();

        // foreground on a: its references from dependents with a live owner are removed, not the dependents
        w.deletedByTest.add(a.getMetadata().getUid());
        client.apps().replicaSets().inNamespace(w.ns).withName("a").withPropagationPolicy(DeletionPropagation.FOREGROUND)
                .delete();

        w.awaitGone(a, onlyA);
        await().atMost(TIMEOUT).untilAsserted(() -> {
            Pod live = client.pods().inNamespace(w.ns).withName("shared").get();
            assertThat(live).isNotNull();
            assertThat(live.getMetadata().getOwnerReferences()).extracting(OwnerReference::getUid)
                    .containsExactly(b.getMetadata().getUid());
            ConfigMap liveCm = client.configMaps().inNamespace(w.ns).withName("cm-a-d").get();
            assertThat(liveCm).isNotNull();
            assertThat(liveCm.getMetadata().getOwnerReferences()).extracting(OwnerReference::getUid)
                    .containsExactly(d.getMetadata().getUid());
        });
        assertThat(w.exists(shared)).isTrue();
        assertThat(w.exists(cm)).isTrue();
        assertThat(w.exists(d)).isTrue();
        w.assertNothingWithLiveOwnerDeleted();
    }

    @Test
    void danglingOwnerAndUidMismatchAreCollected() {
        World w = new World("gc-dangling");
        ReplicaSet live = w.replicaSet("live");
        OwnerReference missing = new OwnerReferenceBuilder().withApiVersion("apps/v1").withKind("ReplicaSet")
                .withName("never-existed").withUid("00000000-0000-0000-0000-000000000001").build();
        OwnerReference wrongUid = new OwnerReferenceBuilder().withApiVersion("apps/v1").withKind("ReplicaSet")
                .withName("live").withUid("00000000-0000-0000-0000-000000000002").build();
        ConfigMap dangling = w.configMap("dangling", List.of(missing));
        ConfigMap mismatch = w.configMap("uid-mismatch", List.of(wrongUid));
        ConfigMap owned = w.configMap("owned", live);
        ConfigMap mixed = w.configMap("live-and-dangling", List.of(ref(live, false, false), missing));

        w.awaitGone(dangling, mismatch);
        await().atMost(TIMEOUT).untilAsserted(() -> {
            ConfigMap m = client.configMaps().inNamespace(w.ns).withName("live-and-dangling").get();
            assertThat(m.getMetadata().getOwnerReferences()).extracting(OwnerReference::getUid)
                    .containsExactly(live.getMetadata().getUid());
        });
        assertThat(w.exists(owned)).isTrue();
        assertThat(w.exists(mixed)).isTrue();
        assertThat(w.exists(live)).isTrue();
        w.assertNothingWithLiveOwnerDeleted();
    }

    @Test
    void dependencyCycleDoesNotDeadlock() {
        World w = new World("gc-cycle");
        ConfigMap a = w.configMap("a");
        ConfigMap b = w.configMap("b", List.of(ref(a, false, true)));
        ConfigMap a2 = Conflicts.retry(() -> client.configMaps().inNamespace(w.ns).withName("a").edit(c -> {
            c.getMetadata().setOwnerReferences(List.of(ref(b, false, true)));
            return c;
        }));
        w.created.set(0, a2);
        w.awaitObserved();
        await().atMost(TIMEOUT).untilAsserted(() -> assertThat(w.exists(a2) && w.exists(b)).isTrue());

        w.deletedByTest.add(a2.getMetadata().getUid());
        client.configMaps().inNamespace(w.ns).withName("a").withPropagationPolicy(DeletionPropagation.FOREGROUND).delete();

        w.awaitGone(a2, b);
        w.assertNothingWithLiveOwnerDeleted();
    }

    @Test
    void clusterScopedOwnerOfNamespacedDependents() {
        World w = new World("gc-cluster-owner");
        ClusterRole doomed = w.add(client.rbac().clusterRoles().resource(new ClusterRoleBuilder().withNewMetadata()
                .withName(w.ns + "-doomed").endMetadata().build()).create());
        ClusterRole kept = w.add(client.rbac().clusterRoles().resource(new ClusterRoleBuilder().withNewMetadata()
                .withName(w.ns + "-kept").endMetadata().build()).create());
        ConfigMap ofDoomed = w.configMap("of-doomed", doomed);
        ConfigMap ofKept = w.configMap("of-kept", kept);
        // a cluster-scoped object naming a namespaced owner is invalid and never collected
        ClusterRole invalid = w.add(client.rbac().clusterRoles().resource(new ClusterRoleBuilder().withNewMetadata()
                .withName(w.ns + "-invalid").withOwnerReferences(ref(ofKept, false, false)).endMetadata().build()).create());
        w.awaitObserved();

        w.deletedByTest.add(doomed.getMetadata().getUid());
        client.rbac().clusterRoles().withName(doomed.getMetadata().getName()).delete();

        w.awaitGone(doomed, ofDoomed);
        assertThat(w.exists(ofKept)).isTrue();
        assertThat(w.exists(kept)).isTrue();
        assertThat(w.exists(invalid)).isTrue();
        w.assertNothingWithLiveOwnerDeleted();
        client.rbac().clusterRoles().withName(kept.getMetadata().getName()).delete();
        client.rbac().clusterRoles().withName(invalid.getMetadata().getName()).delete();
    }

    @Test
    void invalidNamespaceOwnerReferenceIsReported() {
        World owners = new World("gc-invalid-owner");
        World w = new World("gc-invalid-dep");
        ConfigMap owner = owners.configMap("owner");
        owners.awaitObserved();
        // a dependent in another namespace naming that owner: the reference cannot be valid
        ConfigMap dependent = w.configMap("dependent", List.of(ref(owner, false, false)));

        await().atMost(TIMEOUT).untilAsserted(() -> {
            List<Event> events = client.v1().events().inNamespace(w.ns).list().getItems();
            assertThat(events).anySatisfy(e -> {
                assertThat(e.getReason()).isEqualTo("OwnerRefInvalidNamespace");
                assertThat(e.getType()).isEqualTo("Warning");
                assertThat(e.getSource().getComponent()).isEqualTo("garbage-collector-controller");
                assertThat(e.getInvolvedObject().getUid()).isEqualTo(dependent.getMetadata().getUid());
                assertThat(e.getMessage()).isEqualTo("ownerRef [v1/ConfigMap, namespace: " + w.ns + ", name: owner, uid: "
                        + owner.getMetadata().getUid() + "] does not exist in namespace \"" + w.ns + "\"");
            });
        });
        // as upstream: the owner does not exist in the dependent's namespace, so the dependent is collected;
        // the real owner in the other namespace is never touched
        w.awaitGone(dependent);
        assertThat(owners.exists(owner)).isTrue();
        w.assertNothingWithLiveOwnerDeleted();
        owners.assertNothingWithLiveOwnerDeleted();
    }

    @Test
    void customResourceRegisteredAfterStartup() {
        String group = "gc.qkcm.io";
        String plural = "widgets" + Long.toString(System.nanoTime(), 36);
        CustomResourceDefinition crd = new CustomResourceDefinitionBuilder().withNewMetadata()
                .withName(plural + "." + group).endMetadata().withNewSpec().withGroup(group).withScope("Namespaced")
                .withNewNames().withPlural(plural).withSingular(plural.substring(0, plural.length() - 1))
                .withKind("Widget" + plural.substring(7)).endNames()
                .addNewVersion().withName("v1").withServed(true).withStorage(true).withNewSchema()
                .withNewOpenAPIV3Schema().withType("object").withXKubernetesPreserveUnknownFields(true)
                .endOpenAPIV3Schema().endSchema().endVersion().endSpec().build();
        client.apiextensions().v1().customResourceDefinitions().resource(crd).create();
        String kind = crd.getSpec().getNames().getKind();
        await().atMost(TIMEOUT).until(() -> {
            CustomResourceDefinition c = client.apiextensions().v1().customResourceDefinitions()
                    .withName(crd.getMetadata().getName()).get();
            return c.getStatus() != null && c.getStatus().getConditions().stream()
                    .anyMatch(x -> x.getType().equals("Established") && x.getStatus().equals("True"));
        });
        // the discovery resync (30s) starts a monitor for the new resource
        GroupVersionResource gvr = new GroupVersionResource(group, "v1", plural);
        await().atMost(Duration.ofSeconds(90)).until(() -> gc().monitoredResources().contains(gvr)
                && gc().monitor(gvr).hasSynced());

        World w = new World("gc-crd");
        var widgets = client.genericKubernetesResources(new ResourceDefinitionContext.Builder().withGroup(group).withVersion("v1").withPlural(plural).withKind(kind).withNamespaced(true).build()).inNamespace(w.ns);
        GenericKubernetesResource root = w.add(widgets.resource(widget(group, kind, "root", List.of())).create());
        GenericKubernetesResource other = w.add(widgets.resource(widget(group, kind, "other", List.of())).create());
        GenericKubernetesResource child = w.add(widgets.resource(widget(group, kind, "child", refs(true, root))).create());
        GenericKubernetesResource shared = w.add(widgets.resource(widget(group, kind, "shared", refs(false, root, other)))
                .create());
        ConfigMap cm = w.configMap("cm-of-child", child);
        w.awaitObserved();

        w.deletedByTest.add(root.getMetadata().getUid());
        widgets.withName("root").withPropagationPolicy(DeletionPropagation.BACKGROUND).delete();

        w.awaitGone(root, child, cm);
        // custom resources have no strategic merge patch: the reference is removed with a JSON merge patch
        await().atMost(TIMEOUT).untilAsserted(() -> {
            GenericKubernetesResource live = widgets.withName("shared").get();
            assertThat(live).isNotNull();
            assertThat(live.getMetadata().getOwnerReferences()).extracting(OwnerReference::getUid)
                    .containsExactly(other.getMetadata().getUid());
        });
        assertThat(w.exists(shared)).isTrue();
        w.assertNothingWithLiveOwnerDeleted();

        // the CRD goes away: its monitor is stopped at the next discovery resync
        client.apiextensions().v1().customResourceDefinitions().withName(crd.getMetadata().getName()).delete();
        await().atMost(Duration.ofSeconds(90)).until(() -> !gc().monitoredResources().contains(gvr));
    }

    /**
     * A rough measurement for the benchmark issue: what one pod costs in the GC's metadata-only cache
     * versus a full Pod object as a typed informer caches it (managedFields dropped). Must stay far below.
     */
    @Test
    void metadataOnlyCacheIsFarSmallerThanFullObjects() {
        World w = new World("gc-memory");
        ReplicaSet rs = w.replicaSet("rs");
        Pod pod = w.pod("rs-0", rs);
        new io.qkcm.testing.TestKubelet(client).runningAndReady(pod);
        GroupVersionResource pods = new GroupVersionResource("", "v1", "pods");
        // only the garbage collector runs in this profile: no shared informer caches pods, its own metadata one does
        await().atMost(TIMEOUT).until(() -> gc().monitor(pods) != null);
        assertThat(gc().monitor(pods).shared()).isFalse();
        await().atMost(TIMEOUT).untilAsserted(() -> {
            io.qkcm.runtime.informers.ObjectMetadata m = gc().monitor(pods).get(w.ns + "/rs-0");
            assertThat(m).isNotNull();
            Pod live = client.pods().inNamespace(w.ns).withName("rs-0").get();
            assertThat(m.resourceVersion()).isEqualTo(live.getMetadata().getResourceVersion());
        });
        io.qkcm.runtime.informers.ObjectMetadata cached = gc().monitor(pods).get(w.ns + "/rs-0");
        Pod full = client.pods().inNamespace(w.ns).withName("rs-0").get();
        full.getMetadata().setManagedFields(null);
        long metaBytes = new DeepSize().exclude(cached.apiVersion(), cached.kind()).sizeOf(cached);
        long fullBytes = new DeepSize().sizeOf(full);
        org.jboss.logging.Logger.getLogger(GarbageCollectorTest.class).infof(
                "GC cache bytes per object (rough estimate): metadata-only pod %d bytes, full Pod object %d bytes (%.1fx)",
                metaBytes, fullBytes, (double) fullBytes / metaBytes);
        assertThat(metaBytes * 4).as("metadata-only %d bytes vs full %d bytes", metaBytes, fullBytes).isLessThan(fullBytes);
        w.assertNothingWithLiveOwnerDeleted();
    }

    static GenericKubernetesResource widget(String group, String kind, String name, List<OwnerReference> owners) {
        GenericKubernetesResource g = new GenericKubernetesResource();
        g.setApiVersion(group + "/v1");
        g.setKind(kind);
        g.setMetadata(new io.fabric8.kubernetes.api.model.ObjectMetaBuilder().withName(name).withOwnerReferences(owners)
                .build());
        g.setAdditionalProperty("spec", Map.of("size", 1));
        return g;
    }

    static void kubectl(String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add(System.getProperty("user.home") + "/.kubeapitest/k8s/1.34.4-linux-amd64/kubectl");
        cmd.add("--kubeconfig=" + RealApiServer.get().kubeconfig());
        cmd.addAll(List.of(args));
        cmd.add("--wait=false");
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.exitValue()).as("kubectl %s: %s", String.join(" ", args), out).isZero();
    }
}
