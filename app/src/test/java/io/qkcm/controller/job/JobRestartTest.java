package io.qkcm.controller.job;

import static io.qkcm.controller.job.JobTestSupport.activePods;
import static io.qkcm.controller.job.JobTestSupport.condition;
import static io.qkcm.controller.job.JobTestSupport.get;
import static io.qkcm.controller.job.JobTestSupport.job;
import static io.qkcm.controller.job.JobTestSupport.n;
import static io.qkcm.controller.job.JobTestSupport.pods;
import static io.qkcm.controller.job.JobTestSupport.terminate;
import static io.qkcm.testing.TestNamespaces.newNamespace;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import jakarta.inject.Inject;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.qkcm.testing.Conflicts;
import io.qkcm.testing.ControllerHarness;
import io.qkcm.testing.ManagerOffProfile;
import io.qkcm.testing.RealApiServer;
import io.qkcm.testing.RealApiServerResource;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.vertx.core.Vertx;

/**
 * The Job controller run by hand (the application's manager is off) and restarted in the middle of a
 * Job: no finished pod is counted twice or lost, and no pod is created beyond the Job's needs.
 */
@QuarkusTest
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
@TestProfile(ManagerOffProfile.class)
class JobRestartTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(90);
    private static final String FINALIZER = "batch.kubernetes.io/job-tracking";

    @Inject
    Vertx vertx;

    static KubernetesClient client;

    /** A Job controller as the manager builds it, outside the application, so that it can be killed. */
    private ControllerHarness<JobController> newController() {
        return ControllerHarness.create(vertx, JobController.NAME, JobControllerDescriptor::newController);
    }

    @BeforeAll
    static void setUp() {
        client = RealApiServer.get().newClient();
    }

    @AfterAll
    static void tearDown() {
        client.close();
    }

    private static Watch watchPods(String ns, Set<String> uids) {
        return client.pods().inNamespace(ns).watch(new Watcher<Pod>() {
            @Override
            public void eventReceived(Action action, Pod pod) {
                uids.add(pod.getMetadata().getUid());
            }

            @Override
            public void onClose(WatcherException cause) {
            }
        });
    }

    @Test
    void killedWhileCountingFinishedPodsTheNextControllerCountsEachOnce() throws Exception {
        int completions = 24;
        String ns = newNamespace(client, "job-restart");
        Set<String> uids = ConcurrentHashMap.newKeySet();
        Watch watch = watchPods(ns, uids);
        try {
            ControllerHarness<JobController> first = newController().start();
            client.batch().v1().jobs().inNamespace(ns).resource(job("count", completions, completions).build()).create();
            await().atMost(TIMEOUT).untilAsserted(() -> assertThat(activePods(client, ns)).hasSize(completions));
            List<Pod> all = activePods(client, ns);
            // half finish; the first controller dies as soon as it has started counting them
            all.subList(0, completions / 2).parallelStream().forEach(p -> terminate(client, p, 0));
            await().atMost(TIMEOUT).until(() -> {
                Job j = get(client, ns, "count");
                return n(j.getStatus().getSucceeded()) > 0 || (j.getStatus().getUncountedTerminatedPods() != null
                        && j.getStatus().getUncountedTerminatedPods().getSucceeded() != null
                        && !j.getStatus().getUncountedTerminatedPods().getSucceeded().isEmpty());
            });
            first.kill();
            all.subList(completions / 2, completions).parallelStream().forEach(p -> terminate(client, p, 0));

            try (ControllerHarness<JobController> second = newController().start()) {
                await().atMost(TIMEOUT).untilAsserted(() -> {
                    Job j = get(client, ns, "count");
                    assertThat(condition(j, "Complete")).isNotNull();
                    assertThat(j.getStatus().getSucceeded()).isEqualTo(completions);
                    assertThat(n(j.getStatus().getFailed())).isZero();
                    assertThat(j.getStatus().getUncountedTerminatedPods().getSucceeded()).isNullOrEmpty();
                });
                assertThat(pods(client, ns)).hasSize(completions)
                        .allMatch(p -> p.getMetadata().getFinalizers() == null || !p.getMetadata().getFinalizers().contains(FINALIZER));
                assertThat(uids).hasSize(completions);
            }
        } finally {
            watch.close();
        }
    }

    /**
     * The case: a Job of 100 completions, 10 at a time, whose pods finish as soon as they exist
     * (a kubelet loop), with the controller killed mid-way (after 40 completions were counted) and a
     * new one started. Every completion is counted once, none is lost, and exactly 100 pods are ever
     * created — what upstream creates for a Job whose pods all succeed.
     */
    @Test
    void restartedInTheMiddleOfAHundredCompletionsTenAtATime() throws Exception {
        int completions = 100;
        String ns = newNamespace(client, "job-restart-100");
        Set<String> uids = ConcurrentHashMap.newKeySet();
        Watch watch = watchPods(ns, uids);
        java.util.concurrent.atomic.AtomicBoolean kubelet = new java.util.concurrent.atomic.AtomicBoolean(true);
        Thread kubeletLoop = new Thread(() -> {
            while (kubelet.get()) {
                try {
                    activePods(client, ns).parallelStream().forEach(p -> terminate(client, p, 0));
                    Thread.sleep(200);
                } catch (InterruptedException e) {
                    return;
                } catch (RuntimeException e) {
                    // a pod deleted or changed under the loop: the next round sees the current state
                }
            }
        }, "test-kubelet");
        try {
            ControllerHarness<JobController> first = newController().start();
            client.batch().v1().jobs().inNamespace(ns).resource(job("hundred", completions, 10).build()).create();
            kubeletLoop.start();
            await().atMost(Duration.ofMinutes(3)).until(() -> n(get(client, ns, "hundred").getStatus().getSucceeded()) >= 40);
            first.kill();
            try (ControllerHarness<JobController> second = newController().start()) {
                await().atMost(Duration.ofMinutes(4)).untilAsserted(() -> {
                    Job j = get(client, ns, "hundred");
                    assertThat(condition(j, "Complete")).isNotNull();
                    assertThat(j.getStatus().getSucceeded()).isEqualTo(completions);
                    assertThat(n(j.getStatus().getFailed())).isZero();
                    assertThat(j.getStatus().getUncountedTerminatedPods().getSucceeded()).isNullOrEmpty();
                });
                kubelet.set(false);
                kubeletLoop.join(10_000);
                assertThat(pods(client, ns)).hasSize(completions)
                        .allMatch(p -> "Succeeded".equals(p.getStatus().getPhase()))
                        .allMatch(p -> p.getMetadata().getFinalizers() == null || !p.getMetadata().getFinalizers().contains(FINALIZER));
                assertThat(uids).as("pods ever created").hasSize(completions);
            }
        } finally {
            kubelet.set(false);
            kubeletLoop.interrupt();
            watch.close();
        }
    }

    /**
     * The windows upstream's tracking closes: a pod recorded in uncountedTerminatedPods whose
     * finalizer is already gone (killed before the counters were written), and one recorded whose
     * finalizer is still there (killed before the removal). Each is counted exactly once.
     */
    @Test
    void podsLeftInUncountedTerminatedPodsByADeadControllerAreCountedOnce() throws Exception {
        String ns = newNamespace(client, "job-uncounted");
        Pod removed;
        Pod recorded;
        Pod fresh;
        try (ControllerHarness<JobController> first = newController().start()) {
            client.batch().v1().jobs().inNamespace(ns).resource(job("window", 3, 3).build()).create();
            await().atMost(TIMEOUT).untilAsserted(() -> {
                assertThat(activePods(client, ns)).hasSize(3);
                assertThat(get(client, ns, "window").getStatus().getActive()).isEqualTo(3);
            });
        }
        List<Pod> all = activePods(client, ns);
        removed = terminate(client, all.get(0), 0);
        recorded = terminate(client, all.get(1), 0);
        fresh = terminate(client, all.get(2), 0);
        // what the dead controller left: both in uncountedTerminatedPods, one finalizer already removed
        Job j = get(client, ns, "window");
        j.getStatus().getUncountedTerminatedPods().setSucceeded(List.of(removed.getMetadata().getUid(),
                recorded.getMetadata().getUid()));
        client.batch().v1().jobs().inNamespace(ns).resource(j).updateStatus();
        Conflicts.retry(() -> client.pods().inNamespace(ns).withName(removed.getMetadata().getName()).patch(
                PatchContext.of(PatchType.STRATEGIC_MERGE),
                "{\"metadata\":{\"$deleteFromPrimitiveList/finalizers\":[\"" + FINALIZER + "\"]}}"));

        try (ControllerHarness<JobController> second = newController().start()) {
            await().atMost(TIMEOUT).untilAsserted(() -> {
                Job done = get(client, ns, "window");
                assertThat(condition(done, "Complete")).isNotNull();
                assertThat(done.getStatus().getSucceeded()).isEqualTo(3);
                assertThat(n(done.getStatus().getFailed())).isZero();
                assertThat(done.getStatus().getUncountedTerminatedPods().getSucceeded()).isNullOrEmpty();
            });
            assertThat(pods(client, ns)).hasSize(3).allMatch(p -> p.getMetadata().getFinalizers() == null || !p.getMetadata().getFinalizers().contains(FINALIZER));
            assertThat(fresh.getStatus().getPhase()).isEqualTo("Succeeded");
        }
    }

    @Test
    void aJobCreatedWhileNoControllerRunsIsSyncedAtStart() throws Exception {
        String ns = newNamespace(client, "job-cold");
        client.batch().v1().jobs().inNamespace(ns).resource(job("waiting", 2, 2).build()).create();
        try (ControllerHarness<JobController> instance = newController().start()) {
            await().atMost(TIMEOUT).untilAsserted(() -> {
                assertThat(activePods(client, ns)).hasSize(2);
                assertThat(get(client, ns, "waiting").getStatus().getActive()).isEqualTo(2);
            });
        }
    }
}
