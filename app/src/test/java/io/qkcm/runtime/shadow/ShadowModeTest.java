package io.qkcm.runtime.shadow;

import static io.qkcm.testing.TestNamespaces.newNamespace;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.PodTemplateSpecBuilder;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.fabric8.kubernetes.api.model.apps.ReplicaSet;
import io.fabric8.kubernetes.api.model.apps.ReplicaSetBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.qkcm.testing.AuditLog;
import io.qkcm.testing.ManagerOffProfile;
import io.qkcm.testing.RealApiServerResource;
import io.qkcm.testing.ShadowRun;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.vertx.core.Vertx;

/**
 * Shadow mode against the real API server: qkcm's controllers send only dry runs (the audit log shows
 * every write of qkcm's identities marked dryRun=All, and no object appears), and beside upstream's
 * kube-controller-manager their intended writes pair with upstream's.
 */
@QuarkusTest
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
@TestProfile(ManagerOffProfile.class)
class ShadowModeTest {

    static final Map<String, String> LABELS = Map.of("app", "web");
    static final Duration WINDOW = Duration.ofSeconds(5);

    @Inject
    Vertx vertx;

    static PodTemplateSpec template(String image) {
        return new PodTemplateSpecBuilder().withNewMetadata().withLabels(LABELS).endMetadata().withNewSpec()
                .addNewContainer().withName("app").withImage(image).endContainer().endSpec().build();
    }

    static ReplicaSet replicaSet(String name, int replicas) {
        return new ReplicaSetBuilder().withNewMetadata().withName(name).endMetadata().withNewSpec().withReplicas(replicas)
                .withNewSelector().withMatchLabels(LABELS).endSelector().withTemplate(template("registry.k8s.io/pause:3.10"))
                .endSpec().build();
    }

    /** qkcm's writes in {@code ns} as the API server's audit log has them. */
    static List<AuditLog.Entry> qkcmWrites(ShadowRun run, String ns) {
        return run.audit().entries().stream()
                .filter(e -> e.userAgent().startsWith("qkcm/") && e.isWrite() && ns.equals(e.namespace())).toList();
    }

    /** The report, kept in target/ for a reader of the test's outcome. */
    static void writeReport(ShadowRun run, String ns) {
        try {
            java.nio.file.Files.writeString(java.nio.file.Path.of("target", "shadow-report-" + ns + ".json"), report(run));
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    static String report(ShadowRun run) {
        return ShadowReport.json(run.matcher());
    }

    @Test
    void everyWriteIsADryRunAndNothingIsWritten() throws Exception {
        try (ShadowRun run = ShadowRun.start(vertx, WINDOW, null, List.of(ShadowRun.of("replicaset-controller")));
                KubernetesClient admin = run.server.newClient()) {
            String ns = newNamespace(admin, "shadow-nowrite");
            admin.apps().replicaSets().inNamespace(ns).resource(replicaSet("web", 3)).create();

            // the controller acts as if it wrote: three pods created (dry runs), each answered by the API server
            await().atMost(Duration.ofSeconds(30)).until(() -> qkcmWrites(run, ns).stream()
                    .filter(e -> e.verb().equals("create") && e.resource().equals("pods")).count() == 3);
            List<AuditLog.Entry> writes = qkcmWrites(run, ns);
            assertThat(writes).allSatisfy(e -> assertThat(e.uri()).contains("dryRun=All"));
            assertThat(writes).filteredOn(e -> e.resource().equals("pods")).allSatisfy(e -> assertThat(e.code()).isEqualTo(201));
            assertThat(admin.pods().inNamespace(ns).list().getItems()).isEmpty();
            assertThat(admin.v1().events().inNamespace(ns).list().getItems()).isEmpty();
            // the status update (observedGeneration 1) was a dry run too
            assertThat(admin.apps().replicaSets().inNamespace(ns).withName("web").get().getStatus().getObservedGeneration()).isNull();

            // expectations: the three creations are expected and never observed, so the controller waits
            // (upstream's expectations' TTL) rather than creating again on each status or resync event
            admin.apps().replicaSets().inNamespace(ns).withName("web")
                    .edit(rs -> new ReplicaSetBuilder(rs).editMetadata().addToAnnotations("touched", "1").endMetadata().build());
            run.matcher().closeAll();
            assertThat(qkcmWrites(run, ns).stream().filter(e -> e.resource().equals("pods")).count()).isEqualTo(3);

            // no upstream: the three creations, their events and the status update are qkcm's only
            assertThat(run.matcher().latest()).as(report(run)).anySatisfy(m -> {
                assertThat(m.key()).isEqualTo("create /pods " + ns + "/web-*");
                assertThat(m.cls()).isEqualTo(ShadowMatcher.ONLY_QKCM);
                assertThat(m.qkcmActions()).isEqualTo(3);
            }).anySatisfy(m -> {
                assertThat(m.key()).isEqualTo("update apps/replicasets/status " + ns + "/web");
                assertThat(m.cls()).isEqualTo(ShadowMatcher.ONLY_QKCM);
            });
            assertThat(run.matcher().totals().get("replicaset-controller")).containsEntry(ShadowMatcher.ONLY_QKCM, 5L);
            admin.apps().replicaSets().inNamespace(ns).withName("web").delete();
        }
    }

    @Test
    void aScaleUpBesideUpstreamMatches() throws Exception {
        try (ShadowRun run = ShadowRun.start(vertx, WINDOW, "replicaset", List.of(ShadowRun.of("replicaset-controller")));
                KubernetesClient admin = run.server.newClient()) {
            String ns = newNamespace(admin, "shadow-scale");
            admin.apps().replicaSets().inNamespace(ns).resource(replicaSet("web", 2)).create();
            await().atMost(Duration.ofSeconds(30)).until(() -> admin.pods().inNamespace(ns).list().getItems().size() == 2);
            admin.apps().replicaSets().inNamespace(ns).withName("web").scale(5);
            await().atMost(Duration.ofSeconds(30)).until(() -> admin.pods().inNamespace(ns).list().getItems().size() == 5);
            settle(run, ns);

            assertNoMismatch(run, ns);
            Map<String, Long> rs = run.matcher().totals().get("replicaset-controller");
            // 5 pod creations, the status updates, the events: each paired, or upstream's won the race and qkcm agreed
            assertThat(rs.get(ShadowMatcher.MATCHED) + rs.getOrDefault(ShadowMatcher.CONVERGED, 0L)).as(report(run))
                    .isGreaterThanOrEqualTo(6);
            assertThat(rs.get(ShadowMatcher.MATCHED)).as(report(run)).isPositive();
            assertThat(qkcmWrites(run, ns)).isNotEmpty().allSatisfy(e -> assertThat(e.uri()).contains("dryRun=All"));
            admin.apps().replicaSets().inNamespace(ns).withName("web").delete();
        }
    }

    @Test
    void aDeploymentRolloutBesideUpstreamMatches() throws Exception {
        try (ShadowRun run = ShadowRun.start(vertx, WINDOW, "deployment,replicaset",
                List.of(ShadowRun.of("deployment-controller"), ShadowRun.of("replicaset-controller")));
                KubernetesClient admin = run.server.newClient()) {
            String ns = newNamespace(admin, "shadow-rollout");
            Deployment d = new DeploymentBuilder().withNewMetadata().withName("web").endMetadata().withNewSpec()
                    .withReplicas(3).withNewSelector().withMatchLabels(LABELS).endSelector()
                    .withTemplate(template("registry.k8s.io/pause:3.10")).endSpec().build();
            admin.apps().deployments().inNamespace(ns).resource(d).create();
            await().atMost(Duration.ofSeconds(30)).until(() -> admin.pods().inNamespace(ns).list().getItems().size() == 3);
            settle(run, ns);
            admin.apps().deployments().inNamespace(ns).withName("web").edit(x -> new DeploymentBuilder(x).editSpec()
                    .editTemplate().editSpec().editFirstContainer().withImage("registry.k8s.io/pause:3.9").endContainer()
                    .endSpec().endTemplate().endSpec().build());
            await().atMost(Duration.ofSeconds(30)).until(() -> admin.apps().replicaSets().inNamespace(ns).list().getItems().size() == 2);
            settle(run, ns);

            assertNoMismatch(run, ns);
            assertThat(run.matcher().totals().get("deployment-controller").get(ShadowMatcher.MATCHED)).as(report(run))
                    .isGreaterThanOrEqualTo(1);
            assertThat(qkcmWrites(run, ns)).isNotEmpty().allSatisfy(e -> assertThat(e.uri()).contains("dryRun=All"));
            admin.apps().deployments().inNamespace(ns).withName("web").delete();
            admin.apps().replicaSets().inNamespace(ns).delete();
        }
    }

    @Test
    void aCascadeDeleteBesideUpstreamMatches() throws Exception {
        try (ShadowRun run = ShadowRun.start(vertx, WINDOW, "replicaset,garbagecollector",
                List.of(ShadowRun.of("replicaset-controller"), ShadowRun.of("garbage-collector-controller")));
                KubernetesClient admin = run.server.newClient()) {
            String ns = newNamespace(admin, "shadow-cascade");
            admin.apps().replicaSets().inNamespace(ns).resource(replicaSet("web", 3)).create();
            await().atMost(Duration.ofSeconds(30)).until(() -> admin.pods().inNamespace(ns).list().getItems().size() == 3);
            settle(run, ns);
            admin.apps().replicaSets().inNamespace(ns).withName("web")
                    .withPropagationPolicy(io.fabric8.kubernetes.api.model.DeletionPropagation.BACKGROUND).delete();
            await().atMost(Duration.ofSeconds(60)).until(() -> admin.pods().inNamespace(ns).list().getItems().isEmpty());
            settle(run, ns);

            assertNoMismatch(run, ns);
            assertThat(qkcmWrites(run, ns)).isNotEmpty().allSatisfy(e -> assertThat(e.uri()).contains("dryRun=All"));
        }
    }

    @Test
    void aNamespaceDeletionBesideUpstreamMatches() throws Exception {
        try (ShadowRun run = ShadowRun.start(vertx, WINDOW, "namespace", List.of(ShadowRun.of("namespace-controller")));
                KubernetesClient admin = run.server.newClient()) {
            String ns = newNamespace(admin, "shadow-nsdel");
            for (int i = 0; i < 3; i++) {
                admin.configMaps().inNamespace(ns).resource(new io.fabric8.kubernetes.api.model.ConfigMapBuilder()
                        .withNewMetadata().withName("cm-" + i).endMetadata().addToData("k", "v").build()).create();
            }
            admin.secrets().inNamespace(ns).resource(new io.fabric8.kubernetes.api.model.SecretBuilder().withNewMetadata()
                    .withName("s").endMetadata().addToStringData("k", "v").build()).create();
            admin.namespaces().withName(ns).delete();
            await().atMost(Duration.ofSeconds(60)).until(() -> admin.namespaces().withName(ns).get() == null);
            settle(run, ns);

            assertNoMismatch(run, ns);
            // qkcm meant to delete the content and finalize the namespace, as upstream did
            assertThat(run.matcher().totals().get("namespace-controller").get(ShadowMatcher.MATCHED)).as(report(run))
                    .isGreaterThanOrEqualTo(1);
            assertThat(run.audit().entries().stream().filter(e -> e.userAgent().startsWith("qkcm/") && e.isWrite()
                    && (ns.equals(e.namespace()) || ns.equals(e.name())))).isNotEmpty()
                    .allSatisfy(e -> assertThat(e.uri()).contains("dryRun=All"));
        }
    }

    @Test
    void endpointsChurnBesideUpstreamWritesNothing() throws Exception {
        try (ShadowRun run = ShadowRun.start(vertx, WINDOW, "endpoint", List.of(ShadowRun.of("endpoints-controller")));
                KubernetesClient admin = run.server.newClient()) {
            String ns = newNamespace(admin, "shadow-endpoints");
            io.qkcm.testing.TestKubelet kubelet = new io.qkcm.testing.TestKubelet(admin);
            admin.services().inNamespace(ns).resource(new io.fabric8.kubernetes.api.model.ServiceBuilder().withNewMetadata()
                    .withName("web").endMetadata().withNewSpec().withSelector(LABELS).addNewPort().withPort(80)
                    .withNewTargetPort(8080).endPort().endSpec().build()).create();
            List<io.fabric8.kubernetes.api.model.Pod> pods = new java.util.ArrayList<>();
            for (int i = 0; i < 3; i++) {
                io.fabric8.kubernetes.api.model.Pod pod = admin.pods().inNamespace(ns).resource(
                        new io.fabric8.kubernetes.api.model.PodBuilder().withNewMetadata().withName("web-" + i)
                                .withLabels(LABELS).endMetadata().withSpec(template("registry.k8s.io/pause:3.10").getSpec())
                                .build()).create();
                pods.add(kubelet.runningAndReady(pod));
                settle(run, ns);
            }
            admin.pods().inNamespace(ns).withName("web-1").withGracePeriod(0).delete();
            await().atMost(Duration.ofSeconds(30)).until(() -> admin.endpoints().inNamespace(ns).withName("web").get() != null
                    && admin.endpoints().inNamespace(ns).withName("web").get().getSubsets().get(0).getAddresses().size() == 2);
            settle(run, ns);

            // upstream, faster, usually writes first: qkcm's create is answered AlreadyExists and its updates Conflict
            // (and its Warnings say so, as upstream's would), or its sync finds upstream's write in the cache
            assertNoMismatch(run, ns);
            // the create, and updates for the pods added and the one removed (only the endpoints controller runs; an
            // upstream write qkcm never wrote the like of is counted as "unattributed")
            assertThat(run.matcher().total(ShadowMatcher.MATCHED) + run.matcher().total(ShadowMatcher.CONVERGED))
                    .as(report(run)).isGreaterThanOrEqualTo(4);
            // every write qkcm's endpoints controller meant was a dry run; upstream's Endpoints are the only ones
            assertThat(qkcmWrites(run, ns)).isNotEmpty().allSatisfy(e -> assertThat(e.uri()).contains("dryRun=All"));
            assertThat(admin.endpoints().inNamespace(ns).withName("web").get().getMetadata().getManagedFields())
                    .extracting(f -> f.getManager()).containsOnly("kube-controller-manager");
            admin.services().inNamespace(ns).withName("web").delete();
        }
    }

    /** Waits until the writes in {@code ns} stopped for the window, then classifies every group. */
    static void settle(ShadowRun run, String ns) throws InterruptedException {
        long before;
        do {
            before = run.audit().entries().stream().filter(e -> e.isWrite() && ns.equals(e.namespace())).count();
            Thread.sleep(WINDOW.toMillis() + 1000);
        } while (run.audit().entries().stream().filter(e -> e.isWrite() && ns.equals(e.namespace())).count() != before);
        // the matcher closes the namespace's groups itself: one it cannot judge yet first gets one more sync of qkcm's
        await().atMost(WINDOW.multipliedBy(4)).until(() -> run.matcher().openKeys().stream()
                .noneMatch(k -> k.contains(" " + ns + "/") || k.endsWith(" " + ns)));
        run.matcher().closeAll();
    }

    static void assertNoMismatch(ShadowRun run, String ns) {
        writeReport(run, ns);
        // the namespace's objects (" ns/name") and the Namespace itself (" ns")
        assertThat(run.matcher().latest()).as(report(run))
                .noneMatch(m -> m.key().contains(" " + ns + "/") || m.key().endsWith(" " + ns));
    }
}
