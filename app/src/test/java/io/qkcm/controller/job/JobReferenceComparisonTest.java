package io.qkcm.controller.job;

import static io.qkcm.controller.job.JobTestSupport.activePods;
import static io.qkcm.controller.job.JobTestSupport.condition;
import static io.qkcm.controller.job.JobTestSupport.get;
import static io.qkcm.controller.job.JobTestSupport.job;
import static io.qkcm.controller.job.JobTestSupport.terminate;
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

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobCondition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.qkcm.testing.RealApiServerResource;
import io.qkcm.testing.ReferenceComparison;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;

/**
 * Reference comparison: the same Jobs and the same kubelet steps against qkcm (in-process, on the
 * shared API server) and against upstream kube-controller-manager v1.34.4 (the reference binary, on a
 * second real API server); then each Job's status (times left out), its pods (generateName, labels,
 * annotations, finalizers, hostname, env, phase) and its events (type, reason, message, pod names
 * masked) compared field by field.
 */
@QuarkusTest
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
@TestProfile(JobControllerTest.Profile.class)
class JobReferenceComparisonTest {

    static final Duration TIMEOUT = Duration.ofSeconds(120);

    @Test
    void sameStatusPodsAndEventsAsUpstream() throws Exception {
        ReferenceComparison.Result r = ReferenceComparison.run("jobcmp", "job-controller", JobReferenceComparisonTest::scenario,
                Duration.ofSeconds(2), JobReferenceComparisonTest::snapshot, Path.of("target/job-reference-comparison.txt"));
        assertThat(r.mine()).isNotEmpty();
        assertThat(r.diffs()).as("field-level differences from upstream").isEmpty();
    }

    private static String index(Pod p) {
        return p.getMetadata().getAnnotations() == null ? null
                : p.getMetadata().getAnnotations().get("batch.kubernetes.io/job-completion-index");
    }

    private static List<Pod> active(KubernetesClient c, String ns, String job) {
        return activePods(c, ns).stream()
                .filter(p -> job.equals(p.getMetadata().getLabels().get("batch.kubernetes.io/job-name"))).toList();
    }

    private static void awaitCondition(KubernetesClient c, String ns, String job, String type, String status) {
        await().atMost(TIMEOUT).until(() -> {
            JobCondition cond = condition(get(c, ns, job), type);
            return cond != null && status.equals(cond.getStatus());
        });
    }

    /** Jobs and kubelet steps, the same on both sides; each step waits until the controller acted. */
    static void scenario(KubernetesClient c, String ns) throws Exception {
        c.namespaces().resource(new io.fabric8.kubernetes.api.model.NamespaceBuilder().withNewMetadata().withName(ns)
                .endMetadata().build()).create();

        // Indexed: a failure retried within the backoff, then success of every index
        c.batch().v1().jobs().inNamespace(ns).resource(job("idx", 3, 2).editSpec().withCompletionMode("Indexed")
                .withBackoffLimit(2).endSpec().build()).create();
        await().atMost(TIMEOUT).until(() -> active(c, ns, "idx").size() == 2);
        for (Pod p : active(c, ns, "idx")) {
            terminate(c, p, "0".equals(index(p)) ? 0 : 1);
        }
        await().atMost(TIMEOUT).until(() -> active(c, ns, "idx").stream().map(JobReferenceComparisonTest::index)
                .sorted().toList().equals(List.of("1", "2")));
        for (Pod p : active(c, ns, "idx")) {
            terminate(c, p, 0);
        }
        awaitCondition(c, ns, "idx", "Complete", "True");

        // pod failure policy: Ignore on a disruption, FailJob on exit code 42
        c.batch().v1().jobs().inNamespace(ns).resource(job("pfp", 3, 1).editSpec().withBackoffLimit(0).withNewPodFailurePolicy()
                .addNewRule().withAction("FailJob").withNewOnExitCodes().withOperator("In").withValues(42).endOnExitCodes().endRule()
                .addNewRule().withAction("Ignore").addNewOnPodCondition().withType("DisruptionTarget").withStatus("True")
                .endOnPodCondition().endRule().endPodFailurePolicy().endSpec().build()).create();
        await().atMost(TIMEOUT).until(() -> active(c, ns, "pfp").size() == 1);
        Pod disrupted = active(c, ns, "pfp").get(0);
        terminate(c, disrupted, 137, JobTestSupport.disruptionTarget());
        await().atMost(TIMEOUT).until(() -> active(c, ns, "pfp").size() == 1
                && !active(c, ns, "pfp").get(0).getMetadata().getUid().equals(disrupted.getMetadata().getUid()));
        terminate(c, active(c, ns, "pfp").get(0), 42);
        awaitCondition(c, ns, "pfp", "Failed", "True");

        // suspended at creation, resumed, completed
        c.batch().v1().jobs().inNamespace(ns).resource(job("sus", 1, 1).editSpec().withSuspend(true).endSpec().build()).create();
        awaitCondition(c, ns, "sus", "Suspended", "True");
        c.batch().v1().jobs().inNamespace(ns).withName("sus").patch(PatchContext.of(PatchType.JSON_MERGE),
                "{\"spec\":{\"suspend\":false}}");
        await().atMost(TIMEOUT).until(() -> active(c, ns, "sus").size() == 1);
        terminate(c, active(c, ns, "sus").get(0), 0);
        awaitCondition(c, ns, "sus", "Complete", "True");

        // backoff limit per index: one index fails, the other succeeds
        c.batch().v1().jobs().inNamespace(ns).resource(job("per", 2, 2).editSpec().withCompletionMode("Indexed")
                .withBackoffLimitPerIndex(0).endSpec().build()).create();
        await().atMost(TIMEOUT).until(() -> active(c, ns, "per").size() == 2);
        for (Pod p : active(c, ns, "per")) {
            terminate(c, p, "0".equals(index(p)) ? 1 : 0);
        }
        awaitCondition(c, ns, "per", "Failed", "True");

        // success policy: index 0 is enough, the other pods are removed
        c.batch().v1().jobs().inNamespace(ns).resource(job("lead", 3, 3).editSpec().withCompletionMode("Indexed")
                .withNewSuccessPolicy().addNewRule().withSucceededIndexes("0").endRule().endSuccessPolicy().endSpec().build())
                .create();
        await().atMost(TIMEOUT).until(() -> active(c, ns, "lead").size() == 3);
        terminate(c, active(c, ns, "lead").stream().filter(p -> "0".equals(index(p))).findFirst().orElseThrow(), 0);
        awaitCondition(c, ns, "lead", "Complete", "True");

        // the deadline
        c.batch().v1().jobs().inNamespace(ns).resource(job("late", 2, 2).editSpec().withActiveDeadlineSeconds(3L).endSpec()
                .build()).create();
        awaitCondition(c, ns, "late", "Failed", "True");
    }

    /** What must be equal: per Job, status without times; its pods' shape; its events, pod names masked. */
    static Map<String, Object> snapshot(KubernetesClient c, String ns) {
        Map<String, Object> out = new TreeMap<>();
        for (Job j : c.batch().v1().jobs().inNamespace(ns).list().getItems()) {
            String name = j.getMetadata().getName();
            var s = j.getStatus();
            out.put(name + ".status", Map.of(
                    "active", String.valueOf(s.getActive()), "succeeded", String.valueOf(s.getSucceeded()),
                    "failed", String.valueOf(s.getFailed()), "ready", String.valueOf(s.getReady()),
                    "terminating", String.valueOf(s.getTerminating()),
                    "completedIndexes", String.valueOf(s.getCompletedIndexes()),
                    "failedIndexes", String.valueOf(s.getFailedIndexes()),
                    "uncounted", String.valueOf(s.getUncountedTerminatedPods()),
                    "startTime", String.valueOf(s.getStartTime() != null),
                    "completionTime", String.valueOf(s.getCompletionTime() != null)));
            List<String> conditions = new ArrayList<>();
            for (JobCondition cond : s.getConditions()) {
                conditions.add(cond.getType() + "/" + cond.getStatus() + "/" + cond.getReason() + "/"
                        + mask(cond.getMessage(), name));
            }
            out.put(name + ".conditions", conditions);
            List<String> pods = new ArrayList<>();
            for (Pod p : c.pods().inNamespace(ns).list().getItems()) {
                if (!name.equals(p.getMetadata().getLabels().get("batch.kubernetes.io/job-name"))) {
                    continue;
                }
                Map<String, String> labels = new TreeMap<>(p.getMetadata().getLabels());
                labels.replaceAll((k, v) -> v.equals(j.getMetadata().getUid()) ? "<uid>" : v);
                pods.add("generateName=" + p.getMetadata().getGenerateName() + " labels=" + labels + " annotations="
                        + new TreeMap<>(p.getMetadata().getAnnotations() == null ? Map.of() : p.getMetadata().getAnnotations())
                        + " finalizers=" + p.getMetadata().getFinalizers() + " hostname=" + p.getSpec().getHostname()
                        + " env=" + p.getSpec().getContainers().get(0).getEnv() + " phase=" + p.getStatus().getPhase()
                        + " deleting=" + (p.getMetadata().getDeletionTimestamp() != null));
            }
            pods.sort(null);
            out.put(name + ".pods", pods);
            TreeSet<String> events = new TreeSet<>();
            for (Event e : c.v1().events().inNamespace(ns).list().getItems()) {
                if (name.equals(e.getInvolvedObject().getName()) && "Job".equals(e.getInvolvedObject().getKind())) {
                    events.add(e.getType() + "/" + e.getReason() + "/" + mask(e.getMessage(), name) + "/"
                            + e.getSource().getComponent());
                }
            }
            out.put(name + ".events", events);
        }
        return out;
    }

    /** Generated pod names (and the namespace) differ between the two sides. */
    private static String mask(String message, String job) {
        if (message == null) {
            return null;
        }
        return message.replaceAll(java.util.regex.Pattern.quote(job) + "-(\\d+-)?[a-z0-9]{5}\\b", job + "-$1<pod>")
                .replaceAll("jobcmp-[a-z0-9]+/", "<ns>/");
    }
}
