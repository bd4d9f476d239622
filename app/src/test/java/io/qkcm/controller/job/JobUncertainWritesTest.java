package io.qkcm.controller.job;

import static io.qkcm.controller.job.JobTestSupport.activePods;
import static io.qkcm.controller.job.JobTestSupport.job;
import static io.qkcm.testing.TestNamespaces.newNamespace;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.net.URI;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Collectors;

import jakarta.inject.Inject;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.qkcm.controller.ActivePods;
import io.qkcm.controller.ApiErrors;
import io.qkcm.testing.Conflicts;
import io.qkcm.testing.ControllerHarness;
import io.qkcm.testing.LosingPodControl;
import io.qkcm.testing.ManagerOffProfile;
import io.qkcm.testing.RealApiServer;
import io.qkcm.testing.RealApiServerResource;
import io.qkcm.testing.StallingProxy;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.vertx.core.Vertx;

/**
 * Job pod writes whose answer is lost: the API server performed the write, the connection closed before
 * the response, and the watch that would have shown it is on the same broken network. The controller's
 * informers connect through a {@link StallingProxy} that holds the cache back; its writes go directly and
 * are performed, then reported as "Connection was closed". Upstream lowers its expectations on the error
 * and, from the stale cache, creates the pod again (for an Indexed Job, a second pod of one index running
 * at once; otherwise a pod beyond parallelism) or deletes again; qkcm keeps them raised and waits until a
 * list from the API server shows the cache caught up. Syncs are driven by hand, so every step is
 * deterministic. While the cache is held back it also holds an old Job, so a sync's status write may
 * answer 409, as it would upstream; that is tolerated (and only that).
 */
@QuarkusTest
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
@TestProfile(ManagerOffProfile.class)
class JobUncertainWritesTest {

    @Inject
    Vertx vertx;

    static KubernetesClient client;

    @BeforeAll
    static void setUp() {
        client = RealApiServer.get().newClient();
    }

    @AfterAll
    static void tearDown() {
        client.close();
    }

    private record Setup(ControllerHarness<JobController> harness, LosingPodControl pods) {
    }

    private Setup newController(StallingProxy proxy) throws Exception {
        Path kubeconfig = LosingPodControl.kubeconfigVia(proxy, client, "job-lost-answers");
        LosingPodControl[] wrapper = new LosingPodControl[1];
        ControllerHarness<JobController> harness = ControllerHarness.withInformersVia(vertx, JobController.NAME, kubeconfig,
                ctx -> new JobController(ctx, 1, Clock.systemUTC(), real -> wrapper[0] = new LosingPodControl(real, proxy)));
        harness.startInformers();
        return new Setup(harness, wrapper[0]);
    }

    private static List<Pod> cachedActivePods(ControllerHarness<?> h, String ns) {
        return h.informers.informerFor(Pod.class).getStore().list().stream()
                .filter(p -> ns.equals(p.getMetadata().getNamespace()) && ActivePods.isPodActive(p)).toList();
    }

    /** Waits until the controller's cache holds the Job as the API server has it now. */
    private static void awaitCachedJob(ControllerHarness<?> h, String ns, String name) {
        await().atMost(Duration.ofSeconds(30)).until(() -> {
            Job cached = h.informers.informerFor(Job.class).getStore().getByKey(ns + "/" + name);
            Job live = client.batch().v1().jobs().inNamespace(ns).withName(name).get();
            return cached != null && Objects.equals(cached.getMetadata().getResourceVersion(),
                    live.getMetadata().getResourceVersion());
        });
    }

    /** One sync; a 409 of its status write (the held-back cache holds an old Job) is what upstream would get too. */
    private static void sync(ControllerHarness<JobController> h, String key) throws Exception {
        try {
            h.controller.syncJob(key);
        } catch (KubernetesClientException e) {
            if (!ApiErrors.isConflict(e)) {
                throw e;
            }
        }
    }

    /** Active pods per completion index, from the API server. */
    private static Map<String, Long> activePodsPerIndex(String ns) {
        return activePods(client, ns).stream().collect(Collectors.groupingBy(
                p -> String.valueOf(p.getMetadata().getAnnotations().get(IndexedJobUtils.COMPLETION_INDEX_ANNOTATION)),
                Collectors.counting()));
    }

    @Test
    void anIndexedPodWhoseCreationAnswerIsLostIsNotCreatedAgain() throws Exception {
        String ns = newNamespace(client, "job-lost-indexed");
        URI apiServer = URI.create(client.getConfiguration().getMasterUrl());
        try (StallingProxy proxy = new StallingProxy(apiServer)) {
            Setup s = newController(proxy);
            try (ControllerHarness<JobController> h = s.harness()) {
                client.batch().v1().jobs().inNamespace(ns)
                        .resource(job("indexed", 3, 3).editSpec().withCompletionMode("Indexed").endSpec().build()).create();
                String key = ns + "/indexed";
                awaitCachedJob(h, ns, "indexed");

                s.pods().lose.set(true);
                // slow start: the first batch is index 0 alone; it is created, its answer is lost
                assertThatThrownBy(() -> h.controller.syncJob(key))
                        .satisfies(e -> assertThat(ApiErrors.isOutcomeUnknown(e)).isTrue());
                s.pods().lose.set(false);
                assertThat(activePodsPerIndex(ns)).isEqualTo(Map.of("0", 1L));
                assertThat(cachedActivePods(h, ns)).isEmpty();

                // the cache still shows no pod: upstream would now create indexes 0, 1 and 2, index 0 twice
                for (int i = 0; i < 3; i++) {
                    sync(h, key);
                }
                assertThat(activePodsPerIndex(ns)).isEqualTo(Map.of("0", 1L));
                assertThat(s.pods().creates.get()).isEqualTo(1);
                assertThat(h.controller.expectations().isUncertain(key)).isTrue();

                proxy.resume();
                await().atMost(Duration.ofSeconds(30)).until(() -> cachedActivePods(h, ns).size() == 1);
                awaitCachedJob(h, ns, "indexed");
                sync(h, key);
                assertThat(s.pods().creates.get()).isEqualTo(3);
                await().atMost(Duration.ofSeconds(30)).until(() -> cachedActivePods(h, ns).size() == 3);
                awaitCachedJob(h, ns, "indexed");
                sync(h, key);
                assertThat(s.pods().creates.get()).isEqualTo(3);
                assertThat(activePodsPerIndex(ns)).isEqualTo(Map.of("0", 1L, "1", 1L, "2", 1L));
                assertThat(h.controller.expectations().satisfiedExpectations(key)).isTrue();
            }
        }
    }

    @Test
    void aCreationWhoseAnswerIsLostNeverExceedsParallelism() throws Exception {
        String ns = newNamespace(client, "job-lost-parallel");
        URI apiServer = URI.create(client.getConfiguration().getMasterUrl());
        try (StallingProxy proxy = new StallingProxy(apiServer)) {
            Setup s = newController(proxy);
            try (ControllerHarness<JobController> h = s.harness()) {
                client.batch().v1().jobs().inNamespace(ns).resource(job("parallel", 6, 3).build()).create();
                String key = ns + "/parallel";
                awaitCachedJob(h, ns, "parallel");

                s.pods().lose.set(true);
                assertThatThrownBy(() -> h.controller.syncJob(key))
                        .satisfies(e -> assertThat(ApiErrors.isOutcomeUnknown(e)).isTrue());
                s.pods().lose.set(false);
                assertThat(activePods(client, ns)).hasSize(1);
                assertThat(cachedActivePods(h, ns)).isEmpty();

                // the cache still shows no pod: upstream would create 3 more, 4 running with parallelism 3
                for (int i = 0; i < 3; i++) {
                    sync(h, key);
                }
                assertThat(activePods(client, ns)).hasSize(1);
                assertThat(s.pods().creates.get()).isEqualTo(1);
                assertThat(h.controller.expectations().isUncertain(key)).isTrue();

                proxy.resume();
                await().atMost(Duration.ofSeconds(30)).until(() -> cachedActivePods(h, ns).size() == 1);
                awaitCachedJob(h, ns, "parallel");
                sync(h, key);
                await().atMost(Duration.ofSeconds(30)).until(() -> cachedActivePods(h, ns).size() == 3);
                awaitCachedJob(h, ns, "parallel");
                sync(h, key);
                assertThat(s.pods().creates.get()).isEqualTo(3);
                assertThat(activePods(client, ns)).hasSize(3);
                assertThat(h.controller.expectations().satisfiedExpectations(key)).isTrue();
            }
        }
    }

    @Test
    void deletionsWhoseAnswersAreLostAreNotRepeatedBeforeTheCacheCatchesUp() throws Exception {
        String ns = newNamespace(client, "job-lost-delete");
        URI apiServer = URI.create(client.getConfiguration().getMasterUrl());
        try (StallingProxy proxy = new StallingProxy(apiServer)) {
            Setup s = newController(proxy);
            try (ControllerHarness<JobController> h = s.harness()) {
                client.batch().v1().jobs().inNamespace(ns).resource(job("shrink", null, 3).build()).create();
                String key = ns + "/shrink";
                awaitCachedJob(h, ns, "shrink");
                sync(h, key); // slow start 1, 2
                await().atMost(Duration.ofSeconds(30)).until(() -> cachedActivePods(h, ns).size() == 3);
                assertThat(s.pods().creates.get()).isEqualTo(3);

                Conflicts.retry(() -> client.batch().v1().jobs().inNamespace(ns).withName("shrink").edit(j -> {
                    j.getSpec().setParallelism(1);
                    return j;
                }));
                await().atMost(Duration.ofSeconds(30)).until(() -> Objects.equals(1,
                        h.informers.informerFor(Job.class).getStore().getByKey(key).getSpec().getParallelism()));
                awaitCachedJob(h, ns, "shrink");

                s.pods().lose.set(true);
                // two pods go (their tracking finalizer removed first); both answers are lost
                assertThatThrownBy(() -> h.controller.syncJob(key))
                        .satisfies(e -> assertThat(ApiErrors.isOutcomeUnknown(e)).isTrue());
                s.pods().lose.set(false);
                assertThat(s.pods().deletes.get()).isEqualTo(2);
                assertThat(s.pods().patches.get()).isEqualTo(2);
                assertThat(activePods(client, ns)).hasSize(1);
                assertThat(cachedActivePods(h, ns)).hasSize(3);

                // the cache still shows 3 pods: upstream would remove the finalizers and delete 2 again
                for (int i = 0; i < 3; i++) {
                    sync(h, key);
                }
                assertThat(s.pods().patches.get()).isEqualTo(2);
                assertThat(s.pods().deletes.get()).isEqualTo(2);
                assertThat(h.controller.expectations().isUncertain(key)).isTrue();

                proxy.resume();
                await().atMost(Duration.ofSeconds(30)).until(() -> cachedActivePods(h, ns).size() == 1);
                awaitCachedJob(h, ns, "shrink");
                sync(h, key);
                assertThat(s.pods().deletes.get()).isEqualTo(2);
                assertThat(s.pods().creates.get()).isEqualTo(3);
                assertThat(activePods(client, ns)).hasSize(1);
                assertThat(h.controller.expectations().satisfiedExpectations(key)).isTrue();
            }
        }
    }

    /**
     * The other side of an unknown outcome: the creation never reached the API server, so no event will
     * ever lower its expectation. The next sync finds the cache in step with a list from the API server
     * and acts at once, rather than after the expectations' 5-minute timeout.
     */
    @Test
    void aCreationThatNeverHappenedIsMadeOnceTheCacheIsShownCaughtUp() throws Exception {
        String ns = newNamespace(client, "job-lost-request");
        URI apiServer = URI.create(client.getConfiguration().getMasterUrl());
        try (StallingProxy proxy = new StallingProxy(apiServer)) {
            Setup s = newController(proxy);
            try (ControllerHarness<JobController> h = s.harness()) {
                client.batch().v1().jobs().inNamespace(ns)
                        .resource(job("indexed", 3, 3).editSpec().withCompletionMode("Indexed").endSpec().build()).create();
                String key = ns + "/indexed";
                awaitCachedJob(h, ns, "indexed");

                s.pods().loseRequest.set(true);
                assertThatThrownBy(() -> h.controller.syncJob(key))
                        .satisfies(e -> assertThat(ApiErrors.isOutcomeUnknown(e)).isTrue());
                s.pods().loseRequest.set(false);
                assertThat(activePods(client, ns)).isEmpty();
                assertThat(h.controller.expectations().isUncertain(key)).isTrue();
                assertThat(h.controller.expectations().satisfiedExpectations(key)).isFalse();

                awaitCachedJob(h, ns, "indexed");
                sync(h, key);
                assertThat(s.pods().creates.get()).isEqualTo(4);
                assertThat(activePodsPerIndex(ns)).isEqualTo(Map.of("0", 1L, "1", 1L, "2", 1L));
            }
        }
    }
}
