package io.qkcm.controller.job;

import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;

import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.ContainerStatusBuilder;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.PodConditionBuilder;
import io.fabric8.kubernetes.api.model.PodStatus;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.api.model.batch.v1.JobBuilder;
import io.fabric8.kubernetes.api.model.batch.v1.JobCondition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.qkcm.controller.ActivePods;
import io.qkcm.testing.Conflicts;

/** Shared helpers of the Job controller tests: Jobs, pods of a Job, and a kubelet's terminal statuses. */
final class JobTestSupport {

    private JobTestSupport() {
    }

    /** A Job with a one-container template, restartPolicy Never; completions/parallelism as given. */
    static JobBuilder job(String name, Integer completions, Integer parallelism) {
        return new JobBuilder().withNewMetadata().withName(name).endMetadata().withNewSpec().withCompletions(completions)
                .withParallelism(parallelism).withNewTemplate().withNewSpec().addNewContainer().withName("app")
                .withImage("registry.k8s.io/pause:3.10").endContainer().withRestartPolicy("Never")
                .withTerminationGracePeriodSeconds(30L).endSpec().endTemplate().endSpec();
    }

    static List<Pod> pods(KubernetesClient client, String ns) {
        return client.pods().inNamespace(ns).list().getItems();
    }

    static List<Pod> activePods(KubernetesClient client, String ns) {
        return pods(client, ns).stream().filter(ActivePods::isPodActive).toList();
    }

    static Job get(KubernetesClient client, String ns, String name) {
        return client.batch().v1().jobs().inNamespace(ns).withName(name).get();
    }

    static JobCondition condition(Job job, String type) {
        if (job == null || job.getStatus() == null || job.getStatus().getConditions() == null) {
            return null;
        }
        return job.getStatus().getConditions().stream().filter(c -> type.equals(c.getType())).findFirst().orElse(null);
    }

    static List<Event> events(KubernetesClient client, String ns, String involvedName) {
        return client.v1().events().inNamespace(ns).list().getItems().stream()
                .filter(e -> involvedName.equals(e.getInvolvedObject().getName())).toList();
    }

    static int n(Integer i) {
        return i == null ? 0 : i;
    }

    /**
     * What a kubelet writes when the pod's containers exit: phase Failed (exit code non-zero) or
     * Succeeded (0), terminated container states, and extra pod conditions (e.g. DisruptionTarget).
     */
    static Pod terminate(KubernetesClient client, Pod pod, int exitCode, PodCondition... extra) {
        String now = Instant.now().truncatedTo(ChronoUnit.SECONDS).toString();
        return Conflicts.retry(() -> client.pods().inNamespace(pod.getMetadata().getNamespace())
                .withName(pod.getMetadata().getName()).editStatus(p -> {
                    if (p.getStatus() == null) {
                        p.setStatus(new PodStatus());
                    }
                    List<ContainerStatus> containers = new ArrayList<>();
                    p.getSpec().getContainers().forEach(c -> containers.add(new ContainerStatusBuilder()
                            .withName(c.getName()).withImage(c.getImage()).withImageID("docker-pullable://" + c.getImage())
                            .withReady(false).withRestartCount(0).withNewState().withNewTerminated().withExitCode(exitCode)
                            .withReason(exitCode == 0 ? "Completed" : "Error").withStartedAt(now).withFinishedAt(now)
                            .endTerminated().endState().build()));
                    List<PodCondition> conditions = new ArrayList<>(List.of(
                            new PodConditionBuilder().withType("Ready").withStatus("False").withLastTransitionTime(now).build(),
                            new PodConditionBuilder().withType("PodScheduled").withStatus("True").withLastTransitionTime(now)
                                    .build()));
                    conditions.addAll(List.of(extra));
                    p.getStatus().setPhase(exitCode == 0 ? "Succeeded" : "Failed");
                    p.getStatus().setContainerStatuses(containers);
                    p.getStatus().setConditions(conditions);
                    return p;
                }));
    }

    static PodCondition disruptionTarget() {
        return new PodConditionBuilder().withType("DisruptionTarget").withStatus("True").withReason("EvictionByEvictionAPI")
                .withMessage("Eviction API: evicting").withLastTransitionTime(Instant.now().truncatedTo(ChronoUnit.SECONDS).toString())
                .build();
    }
}
