package io.qkcm.controller.statefulset;

import static io.qkcm.controller.statefulset.StsTestSupport.statefulSet;
import static io.qkcm.testing.TestNamespaces.newNamespace;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;

import jakarta.inject.Inject;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.qkcm.testing.ControllerHarness;
import io.qkcm.testing.ManagerOffProfile;
import io.qkcm.testing.RealApiServer;
import io.qkcm.testing.RealApiServerResource;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.vertx.core.Vertx;

/**
 * The StatefulSet controller killed in the middle of a scale-up and started again (the application's
 * manager is off): every ordinal exists exactly once, no pod is created twice or replaced.
 */
@QuarkusTest
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
@TestProfile(ManagerOffProfile.class)
class StatefulSetRestartTest {

    @Inject
    Vertx vertx;

    static KubernetesClient client;

    /** A StatefulSet controller as the manager builds it, outside the application, so that it can be killed. */
    private ControllerHarness<StatefulSetController> newController() {
        return ControllerHarness.create(vertx, StatefulSetController.NAME, StatefulSetControllerDescriptor::newController);
    }

    @BeforeAll
    static void setUp() {
        client = RealApiServer.get().newClient();
    }

    @AfterAll
    static void tearDown() {
        client.close();
    }

    @Test
    void restartDuringAScaleUpCreatesNoDuplicateOrdinal() throws Exception {
        int replicas = 60;
        String ns = newNamespace(client, "sts-restart");
        Map<String, Set<String>> uidsByName = new ConcurrentHashMap<>();
        Watch watch = client.pods().inNamespace(ns).watch(new Watcher<Pod>() {
            @Override
            public void eventReceived(Action action, Pod pod) {
                uidsByName.computeIfAbsent(pod.getMetadata().getName(), k -> ConcurrentHashMap.newKeySet())
                        .add(pod.getMetadata().getUid());
            }

            @Override
            public void onClose(WatcherException cause) {
            }
        });
        try {
            ControllerHarness<StatefulSetController> first = newController().start();
            client.apps().statefulSets().inNamespace(ns).resource(statefulSet("big", replicas, Map.of("app", "big"))
                    .editSpec().withPodManagementPolicy("Parallel").endSpec().build()).create();
            await().atMost(Duration.ofMinutes(2)).until(() -> uidsByName.size() >= 10);
            first.kill();
            AtomicInteger last = new AtomicInteger(-1);
            await().during(Duration.ofSeconds(2)).atMost(Duration.ofSeconds(30))
                    .until(() -> last.getAndSet(uidsByName.size()) == uidsByName.size());
            assertThat(uidsByName.size()).isLessThan(replicas);

            try (ControllerHarness<StatefulSetController> second = newController().start()) {
                await().atMost(Duration.ofMinutes(3)).untilAsserted(() -> {
                    StatefulSet s = client.apps().statefulSets().inNamespace(ns).withName("big").get();
                    assertThat(s.getStatus()).isNotNull();
                    assertThat(s.getStatus().getReplicas()).isEqualTo(replicas);
                });
                await().during(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(20))
                        .until(() -> uidsByName.size() == replicas);
            }
            List<String> expected = IntStream.range(0, replicas).mapToObj(i -> "big-" + i).toList();
            assertThat(uidsByName.keySet()).containsExactlyInAnyOrderElementsOf(expected);
            // each ordinal was created once: one UID per name, none replaced
            assertThat(uidsByName.values()).allSatisfy(uids -> assertThat(uids).hasSize(1));
            assertThat(client.pods().inNamespace(ns).list().getItems()).hasSize(replicas);
        } finally {
            watch.close();
        }
    }
}
