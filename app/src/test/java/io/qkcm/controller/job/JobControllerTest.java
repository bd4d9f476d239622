package io.qkcm.controller.job;

import static io.qkcm.controller.job.JobTestSupport.activePods;
import static io.qkcm.controller.job.JobTestSupport.condition;
import static io.qkcm.controller.job.JobTestSupport.events;
import static io.qkcm.controller.job.JobTestSupport.get;
import static io.qkcm.controller.job.JobTestSupport.job;
import static io.qkcm.controller.job.JobTestSupport.n;
import static io.qkcm.controller.job.JobTestSupport.pods;
import static io.qkcm.controller.job.JobTestSupport.terminate;
import static io.qkcm.testing.TestNamespaces.newNamespace;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.ResourceQuota;
import io.fabric8.kubernetes.api.model.ResourceQuotaBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobCondition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.qkcm.controller.ControllerRefManager;
import io.qkcm.testing.RealApiServer;
import io.qkcm.testing.RealApiServerResource;
import io.qkcm.testing.TestKubelet;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;

/** The Job controller against a real API server; the test plays the kubelet. */
@QuarkusTest
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
@TestProfile(JobControllerTest.Profile.class)
class JobControllerTest {

    public static class Profile implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("qkcm.controllers", "job-controller,garbage-collector-controller");
        }
    }

    private static final PatchContext MERGE = PatchContext.of(PatchType.JSON_MERGE);
    private static final Duration TIMEOUT = Duration.ofSeconds(90);
    private static final String FINALIZER = "batch.kubernetes.io/job-tracking";

    static KubernetesClient client;
    static TestKubelet kubelet;

    @jakarta.inject.Inject
    io.micrometer.core.instrument.MeterRegistry registry;

    @BeforeAll
    static void setUp() {
        client = RealApiServer.get().newClient();
        kubelet = new TestKubelet(client);
    }

    @AfterAll
    static void tearDown() {
        client.close();
    }

    private Job create(String ns, Job job) {
        return client.batch().v1().jobs().inNamespace(ns).resource(job).create();
    }

    /** The highest number of pods active at once in {@code ns}, from a watch started now. */
    private static Watch watchMaxActive(String ns, AtomicInteger max) {
        Set<String> active = ConcurrentHashMap.newKeySet();
        return client.pods().inNamespace(ns).watch(new Watcher<Pod>() {
            @Override
            public void eventReceived(Action action, Pod pod) {
                if (action != Action.DELETED && io.qkcm.controller.ActivePods.isPodActive(pod)) {
                    active.add(pod.getMetadata().getUid());
                } else {
                    active.remove(pod.getMetadata().getUid());
                }
                max.accumulateAndGet(active.size(), Math::max);
            }

            @Override
            public void onClose(WatcherException cause) {
            }
        });
    }

    private static void assertFinished(Job job, String type, String reason, String message) {
        JobCondition c = condition(job, type);
        assertThat(c).as("%s condition of %s", type, job.getStatus()).isNotNull();
        assertThat(c.getStatus()).isEqualTo("True");
        assertThat(c.getReason()).isEqualTo(reason);
        assertThat(c.getMessage()).isEqualTo(message);
    }

    @Test
    void nonIndexedJobRunsToCompleteWithinParallelism() {
        String ns = newNamespace(client, "job-complete");
        AtomicInteger maxActive = new AtomicInteger();
        Watch watch = watchMaxActive(ns, maxActive);
        try {
            Job created = create(ns, job("work", 4, 2).build());
            String uid = created.getMetadata().getUid();
            await().atMost(TIMEOUT).untilAsserted(() -> {
                List<Pod> active = activePods(client, ns);
                assertThat(active).hasSize(2);
                for (Pod p : active) {
                    assertThat(p.getMetadata().getGenerateName()).isEqualTo("work-");
                    assertThat(p.getMetadata().getFinalizers()).contains(FINALIZER);
                    assertThat(p.getMetadata().getLabels()).containsEntry("batch.kubernetes.io/controller-uid", uid)
                            .containsEntry("batch.kubernetes.io/job-name", "work").containsEntry("controller-uid", uid)
                            .containsEntry("job-name", "work");
                    OwnerReference ref = ControllerRefManager.controllerOf(p);
                    assertThat(ref.getKind()).isEqualTo("Job");
                    assertThat(ref.getApiVersion()).isEqualTo("batch/v1");
                    assertThat(ref.getUid()).isEqualTo(uid);
                    assertThat(ref.getBlockOwnerDeletion()).isTrue();
                }
                Job j = get(client, ns, "work");
                assertThat(j.getStatus().getActive()).isEqualTo(2);
                assertThat(j.getStatus().getStartTime()).isNotNull();
                assertThat(j.getStatus().getReady()).isEqualTo(0);
                assertThat(j.getStatus().getTerminating()).isEqualTo(0);
            });
            activePods(client, ns).forEach(kubelet::runningAndReady);
            await().atMost(TIMEOUT).untilAsserted(() -> assertThat(get(client, ns, "work").getStatus().getReady()).isEqualTo(2));
            // each success lets one more pod start, never more than parallelism at once
            for (int done = 0; done < 4; done++) {
                await().atMost(TIMEOUT).until(() -> !activePods(client, ns).isEmpty());
                terminate(client, activePods(client, ns).get(0), 0);
            }
            await().atMost(TIMEOUT).until(() -> condition(get(client, ns, "work"), "Complete") != null);
            Job done = get(client, ns, "work");
            assertFinished(done, "Complete", "CompletionsReached", "Reached expected number of succeeded pods");
            assertFinished(done, "SuccessCriteriaMet", "CompletionsReached", "Reached expected number of succeeded pods");
            assertThat(done.getStatus().getSucceeded()).isEqualTo(4);
            assertThat(n(done.getStatus().getFailed())).isZero();
            assertThat(n(done.getStatus().getActive())).isZero();
            // as upstream: completionTime is the finished condition's time taken when the sync decided the Job
            // finished, the Complete condition gets the clock once more when added, so it may be a second later
            Instant completion = Instant.parse(done.getStatus().getCompletionTime());
            Instant completeAt = Instant.parse(condition(done, "Complete").getLastTransitionTime());
            assertThat(completion).isBetween(completeAt.minusSeconds(1), completeAt);
            assertThat(completion).isAfterOrEqualTo(Instant.parse(done.getStatus().getStartTime()));
            assertThat(done.getStatus().getUncountedTerminatedPods().getSucceeded()).isNullOrEmpty();
            assertThat(maxActive.get()).isLessThanOrEqualTo(2);
            List<Pod> all = pods(client, ns);
            assertThat(all).hasSize(4).allMatch(p -> "Succeeded".equals(p.getStatus().getPhase()));
            // counted pods lose the tracking finalizer
            assertThat(all).allMatch(p -> p.getMetadata().getFinalizers() == null || !p.getMetadata().getFinalizers().contains(FINALIZER));
            await().atMost(TIMEOUT).untilAsserted(() -> {
                List<Event> ev = events(client, ns, "work");
                assertThat(ev.stream().filter(e -> "SuccessfulCreate".equals(e.getReason())).map(Event::getMessage)
                        .collect(Collectors.toSet()))
                        .isEqualTo(all.stream().map(p -> "Created pod: " + p.getMetadata().getName()).collect(Collectors.toSet()));
                assertThat(ev).anyMatch(e -> "Completed".equals(e.getReason()) && "Job completed".equals(e.getMessage())
                        && "Normal".equals(e.getType()) && "job-controller".equals(e.getSource().getComponent()));
            });
        } finally {
            watch.close();
        }
    }

    @Test
    void indexedJobHasOnePodPerIndexAndCompletedIndexes() {
        String ns = newNamespace(client, "job-indexed");
        create(ns, job("idx", 3, 3).editSpec().withCompletionMode("Indexed").endSpec().build());
        await().atMost(TIMEOUT).untilAsserted(() -> assertThat(activePods(client, ns)).hasSize(3));
        Map<String, Pod> byIndex = activePods(client, ns).stream().collect(Collectors.toMap(
                p -> p.getMetadata().getAnnotations().get("batch.kubernetes.io/job-completion-index"), p -> p));
        assertThat(byIndex.keySet()).containsExactlyInAnyOrder("0", "1", "2");
        byIndex.forEach((ix, p) -> {
            assertThat(p.getMetadata().getLabels()).containsEntry("batch.kubernetes.io/job-completion-index", ix);
            assertThat(p.getSpec().getHostname()).isEqualTo("idx-" + ix);
            assertThat(p.getMetadata().getGenerateName()).isEqualTo("idx-" + ix + "-");
            assertThat(p.getSpec().getContainers().get(0).getEnv()).anyMatch(e -> "JOB_COMPLETION_INDEX".equals(e.getName())
                    && "metadata.labels['batch.kubernetes.io/job-completion-index']".equals(e.getValueFrom().getFieldRef().getFieldPath()));
        });
        terminate(client, byIndex.get("0"), 0);
        terminate(client, byIndex.get("2"), 0);
        await().atMost(TIMEOUT).untilAsserted(() -> {
            Job j = get(client, ns, "idx");
            assertThat(j.getStatus().getCompletedIndexes()).isEqualTo("0,2");
            assertThat(j.getStatus().getSucceeded()).isEqualTo(2);
            assertThat(j.getStatus().getActive()).isEqualTo(1);
        });
        // a failed index is retried with a new pod of the same index
        terminate(client, byIndex.get("1"), 3);
        await().atMost(TIMEOUT).untilAsserted(() -> {
            List<Pod> active = activePods(client, ns);
            assertThat(active).hasSize(1);
            assertThat(active.get(0).getMetadata().getAnnotations()).containsEntry("batch.kubernetes.io/job-completion-index", "1");
            assertThat(get(client, ns, "idx").getStatus().getFailed()).isEqualTo(1);
        });
        terminate(client, activePods(client, ns).get(0), 0);
        await().atMost(TIMEOUT).untilAsserted(() -> {
            Job j = get(client, ns, "idx");
            assertFinished(j, "Complete", "CompletionsReached", "Reached expected number of succeeded pods");
            assertThat(j.getStatus().getCompletedIndexes()).isEqualTo("0-2");
            assertThat(j.getStatus().getSucceeded()).isEqualTo(3);
            assertThat(j.getStatus().getFailed()).isEqualTo(1);
        });
    }

    @Test
    void backoffLimitExceededFailsTheJobAfterTheReplacementBackoff() {
        String ns = newNamespace(client, "job-backoff");
        create(ns, job("flaky", 1, 1).editSpec().withBackoffLimit(1).endSpec().build());
        await().atMost(TIMEOUT).untilAsserted(() -> assertThat(activePods(client, ns)).hasSize(1));
        Pod first = activePods(client, ns).get(0);
        terminate(client, first, 1);
        // the replacement comes after the pod-failure backoff (10 s for the first failure)
        await().atMost(TIMEOUT).untilAsserted(() -> {
            List<Pod> active = activePods(client, ns);
            assertThat(active).hasSize(1);
            assertThat(active.get(0).getMetadata().getUid()).isNotEqualTo(first.getMetadata().getUid());
            assertThat(get(client, ns, "flaky").getStatus().getFailed()).isEqualTo(1);
        });
        Pod second = activePods(client, ns).get(0);
        assertThat(java.time.Instant.parse(second.getMetadata().getCreationTimestamp()))
                .isAfterOrEqualTo(java.time.Instant.parse(first.getMetadata().getCreationTimestamp()).plusSeconds(9));
        terminate(client, second, 1);
        await().atMost(TIMEOUT).untilAsserted(() -> {
            Job j = get(client, ns, "flaky");
            assertFinished(j, "Failed", "BackoffLimitExceeded", "Job has reached the specified backoff limit");
            assertFinished(j, "FailureTarget", "BackoffLimitExceeded", "Job has reached the specified backoff limit");
            assertThat(j.getStatus().getFailed()).isEqualTo(2);
            assertThat(n(j.getStatus().getActive())).isZero();
            assertThat(j.getStatus().getCompletionTime()).isNull();
            assertThat(events(client, ns, "flaky")).anyMatch(e -> "BackoffLimitExceeded".equals(e.getReason())
                    && "Warning".equals(e.getType()) && "Job has reached the specified backoff limit".equals(e.getMessage()));
        });
        assertThat(pods(client, ns)).hasSize(2)
                .allMatch(p -> p.getMetadata().getFinalizers() == null || !p.getMetadata().getFinalizers().contains(FINALIZER));
    }

    @Test
    void podFailurePolicyFailsTheJobOnAnExitCodeAndIgnoresDisruptions() {
        String ns = newNamespace(client, "job-pfp");
        create(ns, job("policy", 1, 1).editSpec().withBackoffLimit(0).withNewPodFailurePolicy()
                .addNewRule().withAction("FailJob").withNewOnExitCodes().withOperator("In").withValues(42).endOnExitCodes().endRule()
                .addNewRule().withAction("Ignore").addNewOnPodCondition().withType("DisruptionTarget").withStatus("True")
                .endOnPodCondition().endRule().endPodFailurePolicy().endSpec().build());
        await().atMost(TIMEOUT).untilAsserted(() -> assertThat(activePods(client, ns)).hasSize(1));
        Pod disrupted = activePods(client, ns).get(0);
        terminate(client, disrupted, 137, JobTestSupport.disruptionTarget());
        // ignored: not counted against backoffLimit 0, and replaced
        await().atMost(TIMEOUT).untilAsserted(() -> {
            List<Pod> active = activePods(client, ns);
            assertThat(active).hasSize(1);
            assertThat(active.get(0).getMetadata().getUid()).isNotEqualTo(disrupted.getMetadata().getUid());
            Job j = get(client, ns, "policy");
            assertThat(n(j.getStatus().getFailed())).isZero();
            assertThat(condition(j, "Failed")).isNull();
            assertThat(client.pods().inNamespace(ns).withName(disrupted.getMetadata().getName()).get().getMetadata()
                    .getFinalizers()).doesNotContain(FINALIZER);
        });
        Pod fatal = activePods(client, ns).get(0);
        terminate(client, fatal, 42);
        String message = "Container app for pod " + ns + "/" + fatal.getMetadata().getName()
                + " failed with exit code 42 matching FailJob rule at index 0";
        await().atMost(TIMEOUT).untilAsserted(() -> {
            Job j = get(client, ns, "policy");
            assertFinished(j, "FailureTarget", "PodFailurePolicy", message);
            assertFinished(j, "Failed", "PodFailurePolicy", message);
            assertThat(j.getStatus().getFailed()).isEqualTo(1);
            assertThat(events(client, ns, "policy")).anyMatch(e -> "PodFailurePolicy".equals(e.getReason())
                    && message.equals(e.getMessage()));
        });
    }

    @Test
    void backoffLimitPerIndexRecordsFailedIndexes() {
        String ns = newNamespace(client, "job-perindex");
        create(ns, job("per", 3, 3).editSpec().withCompletionMode("Indexed").withBackoffLimitPerIndex(0).endSpec().build());
        await().atMost(TIMEOUT).untilAsserted(() -> assertThat(activePods(client, ns)).hasSize(3));
        Map<String, Pod> byIndex = activePods(client, ns).stream().collect(Collectors.toMap(
                p -> p.getMetadata().getAnnotations().get("batch.kubernetes.io/job-completion-index"), p -> p));
        byIndex.values().forEach(p -> assertThat(p.getMetadata().getAnnotations())
                .containsEntry("batch.kubernetes.io/job-index-failure-count", "0"));
        terminate(client, byIndex.get("1"), 1);
        await().atMost(TIMEOUT).untilAsserted(() -> {
            Job j = get(client, ns, "per");
            assertThat(j.getStatus().getFailedIndexes()).isEqualTo("1");
            assertThat(j.getStatus().getFailed()).isEqualTo(1);
            assertThat(j.getStatus().getActive()).isEqualTo(2);
        });
        terminate(client, byIndex.get("0"), 0);
        terminate(client, byIndex.get("2"), 0);
        await().atMost(TIMEOUT).untilAsserted(() -> {
            Job j = get(client, ns, "per");
            assertFinished(j, "Failed", "FailedIndexes", "Job has failed indexes");
            assertThat(j.getStatus().getCompletedIndexes()).isEqualTo("0,2");
            assertThat(j.getStatus().getFailedIndexes()).isEqualTo("1");
            assertThat(j.getStatus().getSucceeded()).isEqualTo(2);
        });
        assertThat(pods(client, ns)).hasSize(3);
    }

    @Test
    void successPolicyEndsTheJobAndRemovesTheRest() {
        String ns = newNamespace(client, "job-success");
        create(ns, job("leader", 3, 3).editSpec().withCompletionMode("Indexed").withNewSuccessPolicy().addNewRule()
                .withSucceededIndexes("0").endRule().endSuccessPolicy().endSpec().build());
        await().atMost(TIMEOUT).untilAsserted(() -> assertThat(activePods(client, ns)).hasSize(3));
        Pod leader = activePods(client, ns).stream().filter(p -> "0".equals(p.getMetadata().getAnnotations()
                .get("batch.kubernetes.io/job-completion-index"))).findFirst().orElseThrow();
        terminate(client, leader, 0);
        await().atMost(TIMEOUT).untilAsserted(() -> {
            Job j = get(client, ns, "leader");
            assertFinished(j, "SuccessCriteriaMet", "SuccessPolicy", "Matched rules at index 0");
            assertFinished(j, "Complete", "SuccessPolicy", "Matched rules at index 0");
            assertThat(j.getStatus().getCompletedIndexes()).isEqualTo("0");
            assertThat(j.getStatus().getSucceeded()).isEqualTo(1);
            assertThat(n(j.getStatus().getActive())).isZero();
            assertThat(activePods(client, ns)).isEmpty();
        });
    }

    @Test
    void activeDeadlineSecondsFailsTheJobAtTheDeadline() {
        String ns = newNamespace(client, "job-deadline");
        create(ns, job("slow", 2, 2).editSpec().withActiveDeadlineSeconds(4L).endSpec().build());
        await().atMost(TIMEOUT).untilAsserted(() -> assertThat(activePods(client, ns)).hasSize(2));
        await().atMost(TIMEOUT).untilAsserted(() -> {
            Job j = get(client, ns, "slow");
            assertFinished(j, "Failed", "DeadlineExceeded", "Job was active longer than specified deadline");
            assertThat(j.getStatus().getFailed()).isEqualTo(2);
            assertThat(n(j.getStatus().getActive())).isZero();
            assertThat(pods(client, ns)).isEmpty();
            assertThat(events(client, ns, "slow")).anyMatch(e -> "DeadlineExceeded".equals(e.getReason()))
                    .anyMatch(e -> "SuccessfulDelete".equals(e.getReason()));
        });
    }

    @Test
    void suspendAndResume() {
        String ns = newNamespace(client, "job-suspend");
        create(ns, job("paused", 2, 2).editSpec().withSuspend(true).endSpec().build());
        await().atMost(TIMEOUT).untilAsserted(() -> {
            Job j = get(client, ns, "paused");
            assertFinished(j, "Suspended", "JobSuspended", "Job suspended");
            assertThat(j.getStatus().getStartTime()).isNull();
            assertThat(events(client, ns, "paused")).anyMatch(e -> "Suspended".equals(e.getReason()));
        });
        assertThat(pods(client, ns)).isEmpty();

        client.batch().v1().jobs().inNamespace(ns).withName("paused").patch(MERGE, "{\"spec\":{\"suspend\":false}}");
        await().atMost(TIMEOUT).untilAsserted(() -> {
            Job j = get(client, ns, "paused");
            JobCondition c = condition(j, "Suspended");
            assertThat(c.getStatus()).isEqualTo("False");
            assertThat(c.getReason()).isEqualTo("JobResumed");
            assertThat(c.getMessage()).isEqualTo("Job resumed");
            assertThat(j.getStatus().getStartTime()).isNotNull();
            assertThat(activePods(client, ns)).hasSize(2);
            assertThat(events(client, ns, "paused")).anyMatch(e -> "Resumed".equals(e.getReason()));
        });

        client.batch().v1().jobs().inNamespace(ns).withName("paused").patch(MERGE, "{\"spec\":{\"suspend\":true}}");
        await().atMost(TIMEOUT).untilAsserted(() -> {
            Job j = get(client, ns, "paused");
            assertFinished(j, "Suspended", "JobSuspended", "Job suspended");
            assertThat(pods(client, ns)).isEmpty();
            assertThat(n(j.getStatus().getActive())).isZero();
            assertThat(condition(j, "Failed")).isNull();
            assertThat(events(client, ns, "paused")).filteredOn(e -> "SuccessfulDelete".equals(e.getReason())).hasSize(2);
        });
    }

    @Test
    void aJobManagedByAnotherControllerIsLeftAlone() {
        String ns = newNamespace(client, "job-managedby");
        create(ns, job("foreign", 1, 1).editSpec().withManagedBy("example.com/other-controller").endSpec().build());
        create(ns, job("ours", 1, 1).build());
        await().atMost(TIMEOUT).untilAsserted(() -> assertThat(get(client, ns, "ours").getStatus().getStartTime()).isNotNull());
        await().during(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
            assertThat(pods(client, ns)).allMatch(p -> p.getMetadata().getName().startsWith("ours-"));
            Job foreign = get(client, ns, "foreign");
            assertThat(foreign.getStatus() == null || foreign.getStatus().getStartTime() == null).isTrue();
        });
    }

    @Test
    void podsForbiddenByAResourceQuotaGiveFailedCreateWithoutAHotLoop() {
        String ns = newNamespace(client, "job-quota");
        ResourceQuota quota = client.resourceQuotas().inNamespace(ns).resource(new ResourceQuotaBuilder()
                .withNewMetadata().withName("pods").endMetadata().withNewSpec().addToHard("pods", new Quantity("0"))
                .endSpec().build()).create();
        quota.setStatus(new io.fabric8.kubernetes.api.model.ResourceQuotaStatusBuilder()
                .addToHard("pods", new Quantity("0")).addToUsed("pods", new Quantity("0")).build());
        client.resourceQuotas().inNamespace(ns).resource(quota).updateStatus();

        create(ns, job("capped", 3, 3).build());
        await().atMost(TIMEOUT).untilAsserted(() -> assertThat(events(client, ns, "capped"))
                .anyMatch(e -> "FailedCreate".equals(e.getReason()) && "Warning".equals(e.getType())
                        && e.getMessage().startsWith("Error creating: ") && e.getMessage().contains("exceeded quota")));
        // slow start: one creation per sync while it fails, and syncs back off (1 s doubling)
        int before = failedCreates(ns);
        await().pollDelay(Duration.ofSeconds(10)).atMost(Duration.ofSeconds(20)).until(() -> true);
        int after = failedCreates(ns);
        assertThat(after - before).isLessThanOrEqualTo(6);
        assertThat(pods(client, ns)).isEmpty();
        Job j = get(client, ns, "capped");
        assertThat(n(j.getStatus().getActive())).isZero();
        assertThat(condition(j, "Failed")).isNull();
    }

    private int failedCreates(String ns) {
        return events(client, ns, "capped").stream().filter(e -> "FailedCreate".equals(e.getReason()))
                .mapToInt(e -> e.getCount() == null ? 1 : e.getCount()).sum();
    }

    @Test
    void orphanPodsWithTheTrackingFinalizerAreCleanedUp() {
        String ns = newNamespace(client, "job-orphan");
        Pod orphan = client.pods().inNamespace(ns).resource(new io.fabric8.kubernetes.api.model.PodBuilder()
                .withNewMetadata().withName("leftover").withFinalizers(FINALIZER).withLabels(Map.of("app", "x"))
                .endMetadata().withNewSpec().addNewContainer().withName("app").withImage("registry.k8s.io/pause:3.10")
                .endContainer().endSpec().build()).create();
        await().atMost(TIMEOUT).untilAsserted(() -> assertThat(client.pods().inNamespace(ns)
                .withName(orphan.getMetadata().getName()).get().getMetadata().getFinalizers()).doesNotContain(FINALIZER));
    }

    @Test
    void deletingARunningJobLetsItsPodsGo() {
        String ns = newNamespace(client, "job-delete");
        create(ns, job("gone", 2, 2).build());
        await().atMost(TIMEOUT).untilAsserted(() -> assertThat(activePods(client, ns)).hasSize(2));
        client.batch().v1().jobs().inNamespace(ns).withName("gone").withPropagationPolicy(
                io.fabric8.kubernetes.api.model.DeletionPropagation.BACKGROUND).delete();
        await().atMost(TIMEOUT).untilAsserted(() -> assertThat(pods(client, ns)).isEmpty());
    }

    @Test
    void podReplacementPolicyFailedWaitsForTerminatingPods() {
        String ns = newNamespace(client, "job-replace");
        create(ns, job("failed-only", 1, 1).editSpec().withPodReplacementPolicy("Failed").endSpec().build());
        create(ns, job("eager", 1, 1).build());
        await().atMost(TIMEOUT).untilAsserted(() -> assertThat(activePods(client, ns)).hasSize(2));
        Map<String, Pod> byJob = activePods(client, ns).stream().collect(Collectors.toMap(
                p -> p.getMetadata().getLabels().get("batch.kubernetes.io/job-name"), p -> p));
        // bound and running: a deletion leaves them terminating (no kubelet finishes them)
        byJob.values().forEach(kubelet::runningAndReady);
        byJob.values().forEach(p -> client.pods().inNamespace(ns).withName(p.getMetadata().getName()).delete());

        // TerminatingOrFailed (the default): replaced while the old pod still terminates
        await().atMost(TIMEOUT).untilAsserted(() -> {
            Job eager = get(client, ns, "eager");
            assertThat(eager.getStatus().getTerminating()).isEqualTo(1);
            assertThat(eager.getStatus().getActive()).isEqualTo(1);
            assertThat(eager.getStatus().getFailed()).isEqualTo(1);
        });
        // Failed: no replacement while the pod terminates
        Job failedOnly = get(client, ns, "failed-only");
        assertThat(failedOnly.getStatus().getTerminating()).isEqualTo(1);
        assertThat(n(failedOnly.getStatus().getActive())).isZero();
        assertThat(activePods(client, ns)).extracting(p -> p.getMetadata().getLabels().get("batch.kubernetes.io/job-name"))
                .containsExactly("eager");

        terminate(client, byJob.get("failed-only"), 137);
        await().atMost(TIMEOUT).untilAsserted(() -> {
            Job j = get(client, ns, "failed-only");
            assertThat(j.getStatus().getTerminating()).isEqualTo(0);
            assertThat(j.getStatus().getFailed()).isEqualTo(1);
            assertThat(j.getStatus().getActive()).isEqualTo(1);
        });
    }

    @Test
    void metricsCountSyncsAndFinishedPods() throws Exception {
        String ns = newNamespace(client, "job-metrics");
        create(ns, job("measured", 1, 1).build());
        await().atMost(TIMEOUT).untilAsserted(() -> assertThat(activePods(client, ns)).hasSize(1));
        terminate(client, activePods(client, ns).get(0), 0);
        await().atMost(TIMEOUT).until(() -> condition(get(client, ns, "measured"), "Complete") != null);
        await().atMost(TIMEOUT).untilAsserted(() -> {
            assertThat(registry.find("job.controller.job.syncs").tag("completion_mode", "NonIndexed")
                    .tag("result", "success").tag("action", "pods_created").counter().count()).isPositive();
            assertThat(registry.find("job.controller.jobs.finished").tag("result", "succeeded")
                    .tag("reason", "CompletionsReached").counter().count()).isPositive();
            assertThat(registry.find("job.controller.job.pods.finished").tag("result", "succeeded").counter().count())
                    .isPositive();
            assertThat(registry.find("job.controller.job.pods.creation").tag("reason", "new").tag("status", "succeeded")
                    .counter().count()).isPositive();
        });
    }

    @Test
    void podsRejectedByPodSecurityAdmissionGiveFailedCreate() {
        String ns = "job-psa-" + Long.toString(System.nanoTime() % 1_000_000_000L, 36);
        client.namespaces().resource(new io.fabric8.kubernetes.api.model.NamespaceBuilder().withNewMetadata().withName(ns)
                .addToLabels("pod-security.kubernetes.io/enforce", "restricted").endMetadata().build()).create();
        // the Job is admitted (PodSecurity only warns for workloads); its pods are not
        create(ns, job("insecure", 2, 2).build());
        await().atMost(TIMEOUT).untilAsserted(() -> assertThat(events(client, ns, "insecure"))
                .anyMatch(e -> "FailedCreate".equals(e.getReason()) && e.getMessage().startsWith("Error creating: ")
                        && e.getMessage().contains("violates PodSecurity")));
        assertThat(pods(client, ns)).isEmpty();
        // once the namespace allows them, the retries (1 s doubling) create them
        client.namespaces().withName(ns).edit(n -> {
            n.getMetadata().getLabels().put("pod-security.kubernetes.io/enforce", "privileged");
            return n;
        });
        await().atMost(TIMEOUT).untilAsserted(() -> assertThat(activePods(client, ns)).hasSize(2));
    }

    @Test
    void failIndexAndMaxFailedIndexesWithBackoffLimitPerIndex() {
        String ns = newNamespace(client, "job-failindex");
        create(ns, job("fi", 3, 3).editSpec().withCompletionMode("Indexed").withBackoffLimitPerIndex(1)
                .withMaxFailedIndexes(1).withNewPodFailurePolicy().addNewRule().withAction("FailIndex").withNewOnExitCodes()
                .withOperator("In").withValues(5).endOnExitCodes().endRule().endPodFailurePolicy().endSpec().build());
        await().atMost(TIMEOUT).untilAsserted(() -> assertThat(activePods(client, ns)).hasSize(3));
        Map<String, Pod> byIndex = activePods(client, ns).stream().collect(Collectors.toMap(
                p -> p.getMetadata().getAnnotations().get("batch.kubernetes.io/job-completion-index"), p -> p));
        // an ordinary failure is retried within the index, the replacement carrying the count
        terminate(client, byIndex.get("2"), 1);
        await().atMost(TIMEOUT).untilAsserted(() -> {
            List<Pod> index2 = activePods(client, ns).stream().filter(p -> "2".equals(p.getMetadata().getAnnotations()
                    .get("batch.kubernetes.io/job-completion-index"))).toList();
            assertThat(index2).hasSize(1);
            assertThat(index2.get(0).getMetadata().getAnnotations())
                    .containsEntry("batch.kubernetes.io/job-index-failure-count", "1");
            assertThat(n(get(client, ns, "fi").getStatus().getFailed())).isEqualTo(1);
            assertThat(get(client, ns, "fi").getStatus().getFailedIndexes()).isEmpty();
        });
        // FailIndex fails the index at once
        terminate(client, byIndex.get("0"), 5);
        await().atMost(TIMEOUT).untilAsserted(() -> {
            Job j = get(client, ns, "fi");
            assertThat(j.getStatus().getFailedIndexes()).isEqualTo("0");
            assertThat(condition(j, "Failed")).isNull();
        });
        // a second failed index is more than maxFailedIndexes
        terminate(client, byIndex.get("1"), 5);
        await().atMost(TIMEOUT).untilAsserted(() -> {
            Job j = get(client, ns, "fi");
            assertFinished(j, "Failed", "MaxFailedIndexesExceeded", "Job has exceeded the specified maximal number of failed indexes");
            assertThat(j.getStatus().getFailedIndexes()).isEqualTo("0,1");
            assertThat(activePods(client, ns)).isEmpty();
        });
    }

    @Test
    void parallelismChangesScaleThePodsWithoutCountingFailures() {
        String ns = newNamespace(client, "job-scale");
        create(ns, job("scaled", 5, 3).build());
        await().atMost(TIMEOUT).untilAsserted(() -> assertThat(activePods(client, ns)).hasSize(3));
        client.batch().v1().jobs().inNamespace(ns).withName("scaled").patch(MERGE, "{\"spec\":{\"parallelism\":1}}");
        await().atMost(TIMEOUT).untilAsserted(() -> {
            assertThat(activePods(client, ns)).hasSize(1);
            assertThat(pods(client, ns)).hasSize(1);
            Job j = get(client, ns, "scaled");
            assertThat(j.getStatus().getActive()).isEqualTo(1);
            assertThat(n(j.getStatus().getFailed())).isZero();
            assertThat(events(client, ns, "scaled")).filteredOn(e -> "SuccessfulDelete".equals(e.getReason())).hasSize(2);
        });
        client.batch().v1().jobs().inNamespace(ns).withName("scaled").patch(MERGE, "{\"spec\":{\"parallelism\":2}}");
        await().atMost(TIMEOUT).untilAsserted(() -> {
            assertThat(activePods(client, ns)).hasSize(2);
            assertThat(get(client, ns, "scaled").getStatus().getActive()).isEqualTo(2);
        });
    }
}
