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
}
