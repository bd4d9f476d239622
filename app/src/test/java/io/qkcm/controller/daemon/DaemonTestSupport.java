package io.qkcm.controller.daemon;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.NodeCondition;
import io.fabric8.kubernetes.api.model.NodeConditionBuilder;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.PodTemplateSpecBuilder;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.DaemonSetBuilder;
import io.fabric8.kubernetes.api.model.apps.DaemonSetUpdateStrategy;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.qkcm.controller.daemon.util.DaemonSetUtil;
import io.qkcm.testing.TestKubelet;

/**
 * What a DaemonSet test needs besides the controller: Node objects (made Ready by a status update),
 * without the admission's not-ready taint, and {@link FakeNodes}, which stands in for the scheduler and the kubelets, none of which exist in
 * the test control plane: it binds each pending daemon pod to the node its required node affinity
 * names (through the binding subresource), makes bound pods Running and Ready, and completes the
 * graceful deletion of terminating pods as a kubelet would.
 */
final class DaemonTestSupport {

    private static final Logger LOG = Logger.getLogger(DaemonTestSupport.class);

    private DaemonTestSupport() {
    }

    /** A Ready node with the given labels (the kubelet would register and report it). */
    static Node createNode(KubernetesClient client, String name, Map<String, String> labels) {
        return createNode(client, name, labels, List.of());
    }

    static Node createNode(KubernetesClient client, String name, Map<String, String> labels,
            List<io.fabric8.kubernetes.api.model.Taint> taints) {
        client.nodes().resource(new NodeBuilder().withNewMetadata().withName(name).withLabels(labels)
                .endMetadata().withNewSpec().withTaints(taints).endSpec().build()).create();
        String now = Instant.now().toString().replaceAll("\\.\\d+Z$", "Z");
        NodeCondition ready = new NodeConditionBuilder().withType("Ready").withStatus("True").withReason("KubeletReady")
                .withMessage("kubelet is posting ready status").withLastHeartbeatTime(now).withLastTransitionTime(now)
                .build();
        client.nodes().withName(name).editStatus(n -> {
            n.setStatus(new io.fabric8.kubernetes.api.model.NodeStatus());
            n.getStatus().setConditions(new ArrayList<>(List.of(ready)));
            return n;
        });
        // kube-apiserver's TaintNodesByCondition admission puts node.kubernetes.io/not-ready:NoSchedule on
        // every new node; node-lifecycle-controller (not run here) lifts it once the node is Ready
        return client.nodes().withName(name).edit(n -> {
            if (n.getSpec().getTaints() != null) {
                n.getSpec().setTaints(new ArrayList<>(n.getSpec().getTaints().stream()
                        .filter(t -> !"node.kubernetes.io/not-ready".equals(t.getKey())).toList()));
            }
            return n;
        });
    }

    static PodTemplateSpec template(Map<String, String> labels, Map<String, String> nodeSelector, String image) {
        return new PodTemplateSpecBuilder().withNewMetadata().withLabels(labels).endMetadata().withNewSpec()
                .withNodeSelector(nodeSelector).addNewContainer().withName("app").withImage(image).endContainer()
                .withTerminationGracePeriodSeconds(30L).endSpec().build();
    }

    static DaemonSet daemonSet(String name, Map<String, String> labels, Map<String, String> nodeSelector,
            DaemonSetUpdateStrategy strategy) {
        return new DaemonSetBuilder().withNewMetadata().withName(name).endMetadata().withNewSpec().withNewSelector()
                .withMatchLabels(labels).endSelector().withTemplate(template(labels, nodeSelector, "registry.k8s.io/pause:3.10"))
                .withUpdateStrategy(strategy).endSpec().build();
    }

    static List<Pod> activePods(KubernetesClient client, String ns) {
        return client.pods().inNamespace(ns).list().getItems().stream()
                .filter(p -> p.getMetadata().getDeletionTimestamp() == null)
                .filter(p -> !"Failed".equals(p.getStatus() == null ? null : p.getStatus().getPhase()))
                .filter(p -> !"Succeeded".equals(p.getStatus() == null ? null : p.getStatus().getPhase())).toList();
    }

    static String targetNode(Pod pod) {
        try {
            return DaemonSetUtil.getTargetNodeName(pod);
        } catch (DaemonSetUtil.ParseException e) {
            return null;
        }
    }

    static OwnerReference controllerRef(Pod pod) {
        return pod.getMetadata().getOwnerReferences().stream().filter(r -> Boolean.TRUE.equals(r.getController()))
                .findFirst().orElse(null);
    }

    record Result(int exitCode, String output) {
    }

    /** Runs kubectl v1.34.4 against the given kubeconfig. */
    static Result kubectl(java.nio.file.Path kubeconfig, java.time.Duration timeout, String... args)
            throws java.io.IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add(System.getProperty("user.home") + "/.kubeapitest/k8s/1.34.4-linux-amd64/kubectl");
        cmd.add("--kubeconfig=" + kubeconfig);
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
        Thread reader = new Thread(() -> {
            try {
                p.getInputStream().transferTo(out);
            } catch (java.io.IOException ignored) {
                // process ended
            }
        });
        reader.start();
        if (!p.waitFor(timeout.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS)) {
            p.destroyForcibly();
        }
        reader.join(5000);
        return new Result(p.exitValue(), out.toString());
    }

    /** The scheduler and kubelets of the test, for the pods of one namespace, in a background thread. */
    static final class FakeNodes implements AutoCloseable {
        private final KubernetesClient client;
        private final String ns;
        private final Thread thread;
        /** Pods (by name) left bound but not ready, e.g. to hold a surge. */
        final Set<String> notReady = ConcurrentHashMap.newKeySet();
        /** Nodes whose pods are neither bound nor started (a node without a kubelet). */
        final Set<String> deadNodes = ConcurrentHashMap.newKeySet();
        private volatile boolean running = true;
        private volatile boolean paused;

        FakeNodes(KubernetesClient client, String ns) {
            this.client = client;
            this.ns = ns;
            this.thread = new Thread(this::loop, "fake-nodes-" + ns);
            this.thread.setDaemon(true);
            this.thread.start();
        }

        void pause(boolean p) {
            paused = p;
        }

        private void loop() {
            while (running) {
                try {
                    if (!paused) {
                        step();
                    }
                    Thread.sleep(200);
                } catch (InterruptedException e) {
                    return;
                } catch (RuntimeException e) {
                    LOG.debugf("fake nodes: %s", e.getMessage());
                }
            }
        }

        void step() {
            for (Pod pod : client.pods().inNamespace(ns).list().getItems()) {
                String name = pod.getMetadata().getName();
                try {
                    if (pod.getMetadata().getDeletionTimestamp() != null) {
                        LOG.debugf("fake nodes: completing deletion of %s", name);
                        client.pods().inNamespace(ns).withName(name).withGracePeriod(0).delete();
                        continue;
                    }
                    String phase = pod.getStatus() == null ? null : pod.getStatus().getPhase();
                    if ("Failed".equals(phase) || "Succeeded".equals(phase)) {
                        continue;
                    }
                    String node = targetNode(pod);
                    if (node == null || deadNodes.contains(node)) {
                        continue;
                    }
                    boolean ready = !notReady.contains(name);
                    boolean isReady = pod.getStatus() != null && pod.getStatus().getConditions() != null
                            && pod.getStatus().getConditions().stream()
                                    .anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
                    if ("Running".equals(phase) && isReady == ready) {
                        continue;
                    }
                    LOG.debugf("fake nodes: running %s on %s (bound to %s)", name, node, pod.getSpec().getNodeName());
                    new TestKubelet(client, node).running(pod, ready, null);
                } catch (RuntimeException e) {
                    LOG.debugf("fake nodes: pod %s: %s", name, e.getMessage());
                }
            }
        }

        @Override
        public void close() {
            running = false;
            thread.interrupt();
        }
    }
}
