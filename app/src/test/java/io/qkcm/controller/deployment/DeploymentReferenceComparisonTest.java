package io.qkcm.controller.deployment;

import static io.qkcm.controller.deployment.DeploymentTestSupport.condition;
import static io.qkcm.controller.deployment.DeploymentTestSupport.n;
import static io.qkcm.controller.deployment.DeploymentTestSupport.recreate;
import static io.qkcm.controller.deployment.DeploymentTestSupport.rolling;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentCondition;
import io.fabric8.kubernetes.api.model.apps.ReplicaSet;
import io.fabric8.kubernetes.api.model.apps.ReplicaSetCondition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.qkcm.controller.deployment.DeploymentTestSupport.KubeletLoop;
import io.qkcm.testing.Conflicts;
import io.qkcm.testing.RealApiServerResource;
import io.qkcm.testing.ReferenceComparison;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;

/**
 * Reference comparison: the same sequence of manifests against qkcm (in-process, on the shared API
 * server) and against upstream kube-controller-manager v1.34.4 (the reference binary, on a second
 * real API server), then ReplicaSet names, labels, annotations, sizes and the final Deployment and
 * ReplicaSet status compared field by field (uids and times left out; the number of intermediate
 * scaling steps of a rollout, and so ReplicaSet generations, depends on pod timing on either side).
 *
 * <p>Deleted pods stay terminating for a second: when they vanish at once, upstream (and qkcm,
 * faithfully) can race a Recreate rollout's status write against the pod-deletion resync and keep
 * the previous rollout's {@code NewReplicaSetAvailable} condition, naming the old ReplicaSet; which
 * of the two outcomes happens is timing, not logic.
 */
@QuarkusTest
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
@TestProfile(DeploymentControllerTest.Profile.class)
class DeploymentReferenceComparisonTest {

    static final Duration TIMEOUT = Duration.ofSeconds(120);

    @Test
    void sameReplicaSetsAnnotationsAndStatusAsUpstream() throws Exception {
        ReferenceComparison.Result r = ReferenceComparison.run("refcmp", "deployment-controller,replicaset-controller", DeploymentReferenceComparisonTest::scenario,
                Duration.ZERO, DeploymentReferenceComparisonTest::snapshot, Path.of("target/deployment-reference-comparison.txt"));
        assertThat(r.diffs()).as("field-level differences from upstream").isEmpty();
    }

    /** The manifests, applied in order; each step waits until its rollout settled. */
    static void scenario(KubernetesClient c, String ns) throws Exception {
        c.namespaces().resource(new io.fabric8.kubernetes.api.model.NamespaceBuilder().withNewMetadata().withName(ns)
                .endMetadata().build()).create();
        try (KubeletLoop kubelet = new KubeletLoop(c, ns, Duration.ofMillis(200), Duration.ofSeconds(1))) {
            Deployment web = rolling("web", 4, "web", "registry.k8s.io/pause:3.9", 1, 1);
            web.getMetadata().setAnnotations(Map.of("team", "a", "kubectl.kubernetes.io/last-applied-configuration", "{}"));
            web.getSpec().getTemplate().getMetadata().setAnnotations(Map.of("note", "x"));
            web.getSpec().setMinReadySeconds(1);
            c.apps().deployments().inNamespace(ns).resource(web).create();
            awaitComplete(c, ns, "web");
            setImage(c, ns, "web", "registry.k8s.io/pause:3.10");
            awaitComplete(c, ns, "web");
            c.apps().deployments().inNamespace(ns).withName("web").scale(6);
            awaitComplete(c, ns, "web");
            Conflicts.retry(() -> c.apps().deployments().inNamespace(ns).withName("web").edit(d -> {
                d.getMetadata().getAnnotations().put("team", "b");
                return d;
            }));
            awaitObserved(c, ns, "web");
            // what `kubectl rollout undo` does for apps/v1: the old template comes back, its ReplicaSet is reused
            setImage(c, ns, "web", "registry.k8s.io/pause:3.9");
            awaitComplete(c, ns, "web");

            // proportional scaling of a stuck rollout: old 8 / new 5, then 20 replicas -> 14 / 9
            c.apps().deployments().inNamespace(ns).resource(rolling("prop", 10, "prop", "registry.k8s.io/pause:3.9", 3, 2))
                    .create();
            awaitComplete(c, ns, "prop");
            setImage(c, ns, "prop", "example.com/never-ready:1");
            await().atMost(TIMEOUT).until(() -> c.apps().replicaSets().inNamespace(ns).withLabel("app", "prop").list()
                    .getItems().stream().map(rs -> rs.getSpec().getReplicas()).sorted().toList().equals(List.of(5, 8)));
            Thread.sleep(1000);
            c.apps().deployments().inNamespace(ns).withName("prop").scale(20);
            await().atMost(TIMEOUT).until(() -> c.apps().replicaSets().inNamespace(ns).withLabel("app", "prop").list()
                    .getItems().stream().mapToInt(rs -> rs.getSpec().getReplicas()).sum() == 23);
            awaitObserved(c, ns, "prop");

            c.apps().deployments().inNamespace(ns).resource(recreate("db", 2, "db", "registry.k8s.io/pause:3.9")).create();
            awaitComplete(c, ns, "db");
            setImage(c, ns, "db", "registry.k8s.io/pause:3.10");
            awaitComplete(c, ns, "db");

            Deployment hist = rolling("hist", 1, "hist", "registry.k8s.io/pause:3.1", "25%", "25%");
            hist.getSpec().setRevisionHistoryLimit(1);
            c.apps().deployments().inNamespace(ns).resource(hist).create();
            awaitComplete(c, ns, "hist");
            for (String tag : List.of("3.2", "3.3")) {
                setImage(c, ns, "hist", "registry.k8s.io/pause:" + tag);
                awaitComplete(c, ns, "hist");
            }
            await().atMost(TIMEOUT).until(() -> c.apps().replicaSets().inNamespace(ns).withLabel("app", "hist").list()
                    .getItems().size() == 2);

            Deployment stuck = rolling("stuck", 2, "stuck", "example.com/never-ready:1", "25%", "25%");
            stuck.getSpec().setProgressDeadlineSeconds(2);
            c.apps().deployments().inNamespace(ns).resource(stuck).create();
            await().atMost(TIMEOUT).until(() -> {
                DeploymentCondition p = condition(c.apps().deployments().inNamespace(ns).withName("stuck").get(), "Progressing");
                return p != null && "ProgressDeadlineExceeded".equals(p.getReason());
            });

            Deployment paused = rolling("paused", 2, "paused", "registry.k8s.io/pause:3.10", "50%", 0);
            paused.getSpec().setPaused(true);
            c.apps().deployments().inNamespace(ns).resource(paused).create();
            awaitObserved(c, ns, "paused");
            await().atMost(TIMEOUT).until(() -> condition(c.apps().deployments().inNamespace(ns).withName("paused").get(),
                    "Progressing") != null);
            Thread.sleep(1500);
        }
    }

    static void setImage(KubernetesClient c, String ns, String name, String image) {
        Conflicts.retry(() -> c.apps().deployments().inNamespace(ns).withName(name).edit(d -> {
            d.getSpec().getTemplate().getSpec().getContainers().get(0).setImage(image);
            return d;
        }));
    }

    static void awaitObserved(KubernetesClient c, String ns, String name) {
        await().atMost(TIMEOUT).until(() -> {
            Deployment d = c.apps().deployments().inNamespace(ns).withName(name).get();
            return d.getStatus() != null && d.getStatus().getObservedGeneration() != null
                    && d.getStatus().getObservedGeneration().equals(d.getMetadata().getGeneration());
        });
    }

    static void awaitComplete(KubernetesClient c, String ns, String name) {
        await().atMost(TIMEOUT).until(() -> {
            Deployment d = c.apps().deployments().inNamespace(ns).withName(name).get();
            if (d.getStatus() == null || !d.getMetadata().getGeneration().equals(d.getStatus().getObservedGeneration())) {
                return false;
            }
            int want = d.getSpec().getReplicas();
            DeploymentCondition p = condition(d, "Progressing");
            return n(d.getStatus().getUpdatedReplicas()) == want && n(d.getStatus().getReplicas()) == want
                    && n(d.getStatus().getAvailableReplicas()) == want && p != null
                    && "NewReplicaSetAvailable".equals(p.getReason());
        });
    }

    /** Everything compared, keyed by object; uids, resourceVersions and times left out. */
    static Map<String, Object> snapshot(KubernetesClient c, String ns) {
        Map<String, Object> out = new TreeMap<>();
        for (Deployment d : c.apps().deployments().inNamespace(ns).list().getItems()) {
            String k = "deployment/" + d.getMetadata().getName();
            out.put(k + " annotations", new TreeMap<>(d.getMetadata().getAnnotations()));
            out.put(k + " generation", d.getMetadata().getGeneration());
            var s = d.getStatus();
            out.put(k + " status", List.of(s.getObservedGeneration(), n(s.getReplicas()), n(s.getUpdatedReplicas()),
                    n(s.getReadyReplicas()), n(s.getAvailableReplicas()), n(s.getUnavailableReplicas()),
                    String.valueOf(s.getTerminatingReplicas()), String.valueOf(s.getCollisionCount())));
            List<String> conds = new ArrayList<>();
            for (DeploymentCondition dc : s.getConditions()) {
                conds.add(dc.getType() + "|" + dc.getStatus() + "|" + dc.getReason() + "|" + dc.getMessage());
            }
            out.put(k + " conditions", conds);
            TreeSet<String> reasons = new TreeSet<>();
            c.v1().events().inNamespace(ns).list().getItems().stream()
                    .filter(e -> d.getMetadata().getName().equals(e.getInvolvedObject().getName())
                            && "Deployment".equals(e.getInvolvedObject().getKind()))
                    .forEach(e -> reasons.add(e.getType() + "/" + e.getReason() + "/" + e.getSource().getComponent()));
            out.put(k + " event reasons", reasons);
            // the creation of each ReplicaSet; later scaling steps depend on pod timing (and on when
            // the event correlator starts combining similar events), on either side
            List<String> created = c.apps().replicaSets().inNamespace(ns).list().getItems().stream()
                    .filter(rs -> !rs.getMetadata().getAnnotations().containsKey("deployment.kubernetes.io/revision-history"))
                    .map(rs -> "Scaled up replica set " + rs.getMetadata().getName() + " from 0 to ").toList();
            c.v1().events().inNamespace(ns).list().getItems().stream()
                    .filter(e -> d.getMetadata().getName().equals(e.getInvolvedObject().getName())
                            && created.stream().anyMatch(p -> e.getMessage().startsWith(p)))
                    .forEach(e -> out.put(k + " event " + e.getMessage(), e.getReason() + "/" + e.getType()));
        }
        for (ReplicaSet rs : c.apps().replicaSets().inNamespace(ns).list().getItems()) {
            String k = "replicaset/" + rs.getMetadata().getName();
            out.put(k + " labels", new TreeMap<>(rs.getMetadata().getLabels()));
            out.put(k + " annotations", new TreeMap<>(rs.getMetadata().getAnnotations()));
            out.put(k + " owner", rs.getMetadata().getOwnerReferences().stream().map(r -> r.getApiVersion() + "/" + r.getKind()
                    + "/" + r.getName() + "/" + r.getController() + "/" + r.getBlockOwnerDeletion()).toList());
            out.put(k + " spec", List.of(rs.getSpec().getReplicas(), n(rs.getSpec().getMinReadySeconds()),
                    new TreeMap<>(rs.getSpec().getSelector().getMatchLabels()),
                    new TreeMap<>(rs.getSpec().getTemplate().getMetadata().getLabels()),
                    String.valueOf(rs.getSpec().getTemplate().getMetadata().getAnnotations())));
            var s = rs.getStatus();
            List<String> conds = new ArrayList<>();
            if (s.getConditions() != null) {
                for (ReplicaSetCondition rc : s.getConditions()) {
                    conds.add(rc.getType() + "|" + rc.getStatus() + "|" + rc.getReason());
                }
            }
            out.put(k + " status", List.of(n(s.getReplicas()), n(s.getFullyLabeledReplicas()), n(s.getReadyReplicas()),
                    n(s.getAvailableReplicas()),
                    "observed current generation: " + rs.getMetadata().getGeneration().equals(s.getObservedGeneration()),
                    conds));
        }
        return out;
    }
}
