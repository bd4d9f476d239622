package io.qkcm.controller.replicaset;

import static io.qkcm.controller.replicaset.RsTestSupport.replicaSet;
import static io.qkcm.testing.TestNamespaces.newNamespace;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.apps.ReplicaSet;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.qkcm.controller.PodControl;
import io.qkcm.runtime.shadow.ShadowMatcher;
import io.qkcm.runtime.shadow.ShadowReport;
import io.qkcm.runtime.informers.SharedInformers;
import io.qkcm.testing.ControllerHarness;
import io.qkcm.testing.ManagerOffProfile;
import io.qkcm.testing.RealApiServerResource;
import io.qkcm.testing.ShadowRun;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.vertx.core.Vertx;

/**
 * Shadow mode catches a qkcm that behaves differently from upstream: a test-only switch makes qkcm's
 * ReplicaSet controller create one pod too many (its first creation is sent twice) while upstream's
 * kube-controller-manager runs the real thing; the surplus creation is reported.
 */
@QuarkusTest
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
@TestProfile(ManagerOffProfile.class)
class ReplicaSetShadowTest {

    static final Map<String, String> LABELS = Map.of("app", "web");

    @Inject
    Vertx vertx;

    /** The real pod control, but while {@code extra} is set the first creation is made twice. */
    static final class OnePodTooMany implements PodControl {
        final AtomicBoolean extra = new AtomicBoolean(true);
        private final PodControl real;

        OnePodTooMany(PodControl real) {
            this.real = real;
        }

        @Override
        public Pod createPodsWithGenerateName(String namespace, PodTemplateSpec template, HasMetadata controllerObject,
                OwnerReference controllerRef, String generateName) {
            if (extra.getAndSet(false)) {
                real.createPodsWithGenerateName(namespace, template, controllerObject, controllerRef, generateName);
            }
            return real.createPodsWithGenerateName(namespace, template, controllerObject, controllerRef, generateName);
        }

        @Override
        public void deletePod(String namespace, String podName, HasMetadata controllerObject) {
            real.deletePod(namespace, podName, controllerObject);
        }

        @Override
        public void patchPod(String namespace, String name, String strategicMergePatch) {
            real.patchPod(namespace, name, strategicMergePatch);
        }
    }

    @Test
    void onePodTooManyIsReported() throws Exception {
        ShadowRun.Start altered = new ShadowRun.Start(ReplicaSetController.NAME, ReplicaSetController.NAME,
                ctx -> ctx.operate(new ReplicaSetController<>(ctx, ReplicaSet.class, ReplicaSetController.QUEUE, 1,
                        ReplicaSetSource.replicaSets(ctx.informers(), ctx.client()), ReplicaSetController.EVENT_SOURCE,
                        OnePodTooMany::new)));
        try (ShadowRun run = ShadowRun.start(vertx, Duration.ofSeconds(3), "replicaset", List.of(altered));
                KubernetesClient admin = run.server.newClient()) {
            String ns = newNamespace(admin, "shadow-altered");
            // qkcm acts first: were upstream's pods in its cache before it synced, it would create nothing at all
            run.pauseUpstream();
            try {
                admin.apps().replicaSets().inNamespace(ns).resource(replicaSet("web", 3, LABELS)).create();
                await().atMost(Duration.ofSeconds(30)).until(() -> run.audit().entries().stream()
                        .filter(e -> e.userAgent().startsWith("qkcm/") && e.isWrite() && ns.equals(e.namespace())
                                && e.uri().contains("/pods"))
                        .count() == 4);
            } finally {
                run.resumeUpstream();
            }
            await().atMost(Duration.ofSeconds(30)).until(() -> admin.pods().inNamespace(ns).list().getItems().size() == 3);
            await().atMost(Duration.ofSeconds(30)).until(() -> run.matcher().latest().stream()
                    .anyMatch(m -> m.key().equals("create /pods " + ns + "/web-*")));
            String json = ShadowReport.json(run.matcher());
            assertThat(run.matcher().latest()).as(json).anySatisfy(m -> {
                assertThat(m.key()).isEqualTo("create /pods " + ns + "/web-*");
                assertThat(m.cls()).isEqualTo(ShadowMatcher.ONLY_QKCM);
                assertThat(m.controller()).isEqualTo(ReplicaSetController.NAME);
                assertThat(m.qkcmActions()).isEqualTo(4);
                assertThat(m.upstreamActions()).isEqualTo(3);
            });
            // the three pods both created matched; one only-qkcm creation, counted for the controller
            assertThat(run.matcher().totals().get(ReplicaSetController.NAME))
                    .containsEntry(ShadowMatcher.ONLY_QKCM, 1L);
            assertThat(run.registry.get("qkcm.shadow.actions").tags("controller", ReplicaSetController.NAME, "class",
                    ShadowMatcher.ONLY_QKCM).counter().count()).isEqualTo(1.0);
            assertThat(json).contains("\"only-qkcm\" : 1");
            assertThat(ShadowReport.html(run.matcher())).contains("create /pods " + ns + "/web-*").contains("only-qkcm");
            // a real write never left: upstream's three pods are the only ones
            assertThat(admin.pods().inNamespace(ns).list().getItems()).hasSize(3);
            admin.apps().replicaSets().inNamespace(ns).withName("web").delete();
        }
    }

    /** The ReplicaSet API, but while {@code frozen} is set its cache answers that version of the ReplicaSet. */
    static final class FrozenReplicaSet implements ReplicaSetSource {
        final java.util.concurrent.atomic.AtomicReference<ReplicaSet> frozen = new java.util.concurrent.atomic.AtomicReference<>();
        private final ReplicaSetSource real;

        FrozenReplicaSet(SharedInformers informers, KubernetesClient client) {
            this.real = ReplicaSetSource.replicaSets(informers, client);
        }

        @Override
        public ReplicaSet getCached(String namespace, String name) {
            ReplicaSet f = frozen.get();
            return f != null && f.getMetadata().getNamespace().equals(namespace) && f.getMetadata().getName().equals(name)
                    ? f : real.getCached(namespace, name);
        }

        @Override
        public String apiVersion() {
            return real.apiVersion();
        }

        @Override
        public String kind() {
            return real.kind();
        }

        @Override
        public io.fabric8.kubernetes.client.informers.SharedIndexInformer<?> informer() {
            return real.informer();
        }

        @Override
        public void addEventHandler(io.fabric8.kubernetes.client.informers.ResourceEventHandler<ReplicaSet> handler) {
            real.addEventHandler(handler);
        }

        @Override
        public List<ReplicaSet> listCached(String namespace) {
            return real.listCached(namespace);
        }

        @Override
        public List<ReplicaSet> listByControllerUid(String uid) {
            return real.listByControllerUid(uid);
        }

        @Override
        public ReplicaSet getLive(String namespace, String name) {
            return real.getLive(namespace, name);
        }

        @Override
        public ReplicaSet updateStatus(ReplicaSet rs) {
            return real.updateStatus(rs);
        }

        @Override
        public HasMetadata eventObject(ReplicaSet rs) {
            return real.eventObject(rs);
        }

        @Override
        public boolean hasTerminatingReplicas() {
            return real.hasTerminatingReplicas();
        }
    }

    /** The real pod control, counting the creations and deletions asked of it. */
    static final class CountingPodControl implements PodControl {
        final java.util.concurrent.atomic.AtomicInteger creates = new java.util.concurrent.atomic.AtomicInteger();
        final java.util.concurrent.atomic.AtomicInteger deletes = new java.util.concurrent.atomic.AtomicInteger();
        private final PodControl real;

        CountingPodControl(PodControl real) {
            this.real = real;
        }

        @Override
        public Pod createPodsWithGenerateName(String namespace, PodTemplateSpec template, HasMetadata controllerObject,
                OwnerReference controllerRef, String generateName) {
            creates.incrementAndGet();
            return real.createPodsWithGenerateName(namespace, template, controllerObject, controllerRef, generateName);
        }

        @Override
        public void deletePod(String namespace, String podName, HasMetadata controllerObject) {
            deletes.incrementAndGet();
            real.deletePod(namespace, podName, controllerObject);
        }

        @Override
        public void patchPod(String namespace, String name, String strategicMergePatch) {
            real.patchPod(namespace, name, strategicMergePatch);
        }
    }

    /** A pod of {@code rs} as upstream's ReplicaSet controller makes it. */
    static Pod podOf(ReplicaSet rs, String name) {
        return new io.fabric8.kubernetes.api.model.PodBuilder().withNewMetadata().withName(name)
                .withLabels(rs.getSpec().getTemplate().getMetadata().getLabels())
                .addNewOwnerReference().withApiVersion("apps/v1").withKind("ReplicaSet").withName(rs.getMetadata().getName())
                .withUid(rs.getMetadata().getUid()).withController(true).withBlockOwnerDeletion(true).endOwnerReference()
                .endMetadata().withSpec(rs.getSpec().getTemplate().getSpec()).build();
    }

    /**
     * The cache order shadow mode makes (bench/results/2026-11-27-shadow: "Deleted pod" of a Deployment's new
     * ReplicaSet during a rollout): the deployment controller scales the ReplicaSet 2 -> 3, upstream's ReplicaSet
     * controller makes the third pod, and qkcm's pod cache gets it before its ReplicaSet cache gets the scale. From
     * that cache upstream's code deletes the newest pod (shown with shadow off: what upstream's code does given
     * this cache, which upstream never has for pods it made itself); in shadow mode the controller confirms
     * spec.replicas with the API server first and waits for its cache. Likewise for a scale-down seen by its pods
     * first.
     */
    @Test
    void podsSeenBeforeTheirReplicaSetsScaleAreNotActedOnInShadowMode() throws Exception {
        for (boolean shadow : List.of(false, true)) {
            FrozenReplicaSet[] source = new FrozenReplicaSet[1];
            CountingPodControl[] pods = new CountingPodControl[1];
            try (KubernetesClient admin = io.qkcm.testing.RealApiServer.get().newClient();
                    ControllerHarness<ReplicaSetController<ReplicaSet>> h = ControllerHarness.create(vertx,
                            ReplicaSetController.NAME, ctx -> new ReplicaSetController<>(ctx, ReplicaSet.class,
                                    ReplicaSetController.QUEUE, 1, source[0] = new FrozenReplicaSet(ctx.informers(), ctx.client()),
                                    ReplicaSetController.EVENT_SOURCE, real -> pods[0] = new CountingPodControl(real), shadow))) {
                h.startInformers();
                String ns = newNamespace(admin, "rs-shadow-order");
                String key = ns + "/web";
                ReplicaSet rs = admin.apps().replicaSets().inNamespace(ns).resource(replicaSet("web", 2, LABELS)).create();
                await().atMost(Duration.ofSeconds(30)).until(() -> source[0].getCached(ns, "web") != null);
                source[0].frozen.set(source[0].getCached(ns, "web"));
                // the deployment controller's scale, then upstream's ReplicaSet controller's pods
                admin.apps().replicaSets().inNamespace(ns).withName("web").scale(3);
                for (int i = 0; i < 3; i++) {
                    admin.pods().inNamespace(ns).resource(podOf(rs, "web-" + i)).create();
                }
                await().atMost(Duration.ofSeconds(30)).until(() -> h.informers.informerFor(Pod.class).getStore().list()
                        .stream().filter(p -> ns.equals(p.getMetadata().getNamespace())).count() == 3);

                h.controller.sync(key);
                if (!shadow) {
                    // upstream's code path, given this cache: the newest pod goes
                    assertThat(pods[0].deletes).hasValue(1);
                    continue;
                }
                assertThat(pods[0].deletes).hasValue(0);
                assertThat(RsTestSupport.activePods(admin, ns)).hasSize(3);
                // the scale reaches the cache: nothing to do
                source[0].frozen.set(null);
                await().atMost(Duration.ofSeconds(30)).until(() -> ReplicaSetStatusUtil.replicas(source[0].getCached(ns, "web")) == 3);
                h.controller.sync(key);
                assertThat(pods[0].deletes).hasValue(0);
                assertThat(pods[0].creates).hasValue(0);

                // a scale-down whose deletion reaches the pod cache first: no pod made again
                source[0].frozen.set(source[0].getCached(ns, "web"));
                admin.apps().replicaSets().inNamespace(ns).withName("web").scale(2);
                admin.pods().inNamespace(ns).withName("web-2").withGracePeriod(0).delete();
                await().atMost(Duration.ofSeconds(30)).until(() -> h.informers.informerFor(Pod.class).getStore().list()
                        .stream().filter(p -> ns.equals(p.getMetadata().getNamespace())).count() == 2);
                h.controller.sync(key);
                assertThat(pods[0].creates).hasValue(0);
                assertThat(RsTestSupport.activePods(admin, ns)).hasSize(2);
            }
        }
    }
}
