package io.qkcm.testing;

import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import io.fabric8.kubernetes.api.model.Binding;
import io.fabric8.kubernetes.api.model.BindingBuilder;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.ContainerStatusBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.PodConditionBuilder;
import io.fabric8.kubernetes.api.model.PodIP;
import io.fabric8.kubernetes.api.model.PodStatus;
import io.fabric8.kubernetes.client.KubernetesClient;

/**
 * Stands in for the kubelet, which the test control plane does not have: binds pods to a node and
 * writes the pod status a kubelet would (phase, conditions, containerStatuses, podIP, start times).
 */
public final class TestKubelet {

    private static final AtomicInteger NEXT_IP = new AtomicInteger(1);

    private final KubernetesClient client;
    private final String nodeName;

    public TestKubelet(KubernetesClient client) {
        this(client, "test-node");
    }

    public TestKubelet(KubernetesClient client, String nodeName) {
        this.client = client;
        this.nodeName = nodeName;
    }

    /** Binds the pod to this kubelet's node, as the scheduler would (no Node object is required). */
    public Pod bind(Pod pod) {
        if (pod.getSpec().getNodeName() != null) {
            return pod;
        }
        Binding binding = new BindingBuilder().withNewMetadata().withName(pod.getMetadata().getName())
                .withNamespace(pod.getMetadata().getNamespace()).endMetadata()
                .withNewTarget().withKind("Node").withApiVersion("v1").withName(nodeName).endTarget().build();
        client.bindings().inNamespace(pod.getMetadata().getNamespace()).resource(binding).create();
        return client.pods().inNamespace(pod.getMetadata().getNamespace()).withName(pod.getMetadata().getName()).get();
    }

    /** Running with every container ready; Ready since {@code readySince} (null = now). */
    public Pod runningAndReady(Pod pod) {
        return running(pod, true, null);
    }

    /** Running, ready or not; {@code readySince} backdates the Ready transition (minReadySeconds tests). */
    public Pod running(Pod pod, boolean ready, Instant readySince) {
        Pod bound = bind(pod);
        Instant now = Instant.now().truncatedTo(ChronoUnit.SECONDS);
        String since = (readySince == null ? now : readySince.truncatedTo(ChronoUnit.SECONDS)).toString();
        String status = ready ? "True" : "False";
        List<ContainerStatus> containers = new ArrayList<>();
        for (Container c : bound.getSpec().getContainers()) {
            containers.add(new ContainerStatusBuilder().withName(c.getName()).withImage(c.getImage())
                    .withImageID("docker-pullable://" + c.getImage()).withContainerID("containerd://" + c.getName())
                    .withReady(ready).withStarted(true).withRestartCount(0)
                    .withNewState().withNewRunning().withStartedAt(now.toString()).endRunning().endState().build());
        }
        List<PodCondition> conditions = List.of(
                condition("PodReadyToStartContainers", "True", now.toString()),
                condition("Initialized", "True", now.toString()),
                condition("Ready", status, since),
                condition("ContainersReady", status, since),
                condition("PodScheduled", "True", now.toString()));
        String ip = podIp();
        return writeStatus(bound, s -> {
            s.setPhase("Running");
            s.setConditions(conditions);
            s.setContainerStatuses(containers);
            s.setHostIP("172.18.0.2");
            s.setPodIP(ip);
            s.setPodIPs(List.of(new PodIP(ip)));
            s.setStartTime(now.toString());
        });
    }

    /** The pod's containers exited 0 (restartPolicy Never/OnFailure). */
    public Pod succeeded(Pod pod) {
        return terminated(pod, "Succeeded", 0);
    }

    /** The pod's containers exited non-zero. */
    public Pod failed(Pod pod) {
        return terminated(pod, "Failed", 1);
    }

    private Pod terminated(Pod pod, String phase, int exitCode) {
        Pod bound = bind(pod);
        String now = Instant.now().truncatedTo(ChronoUnit.SECONDS).toString();
        List<ContainerStatus> containers = new ArrayList<>();
        for (Container c : bound.getSpec().getContainers()) {
            containers.add(new ContainerStatusBuilder().withName(c.getName()).withImage(c.getImage())
                    .withImageID("docker-pullable://" + c.getImage()).withReady(false).withStarted(false)
                    .withRestartCount(0).withNewState().withNewTerminated().withExitCode(exitCode)
                    .withReason(exitCode == 0 ? "Completed" : "Error").withStartedAt(now).withFinishedAt(now)
                    .endTerminated().endState().build());
        }
        return writeStatus(bound, s -> {
            s.setPhase(phase);
            s.setConditions(List.of(condition("Ready", "False", now), condition("ContainersReady", "False", now),
                    condition("PodScheduled", "True", now)));
            s.setContainerStatuses(containers);
            if (s.getStartTime() == null) {
                s.setStartTime(now);
            }
        });
    }

    private Pod writeStatus(Pod pod, java.util.function.Consumer<PodStatus> change) {
        return Conflicts.retry(() -> client.pods().inNamespace(pod.getMetadata().getNamespace()).withName(pod.getMetadata().getName())
                .editStatus(p -> {
                    if (p.getStatus() == null) {
                        p.setStatus(new PodStatus());
                    }
                    change.accept(p.getStatus());
                    return p;
                }));
    }

    private static PodCondition condition(String type, String status, String since) {
        return new PodConditionBuilder().withType(type).withStatus(status).withLastTransitionTime(since).build();
    }

    private static String podIp() {
        int n = NEXT_IP.getAndIncrement();
        return "10.244." + ((n >> 8) & 0xff) + "." + (n & 0xff);
    }
}
