package io.qkcm.controller.deployment;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentBuilder;
import io.fabric8.kubernetes.api.model.apps.DeploymentCondition;
import io.fabric8.kubernetes.api.model.apps.ReplicaSet;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.qkcm.testing.TestKubelet;

/** Helpers for the Deployment tests: manifests, a kubelet loop, kubectl. */
final class DeploymentTestSupport {

    static final String READY_IMAGE = "registry.k8s.io/pause:3.10";
    /** Pods of images containing this marker run but never become ready. */
    static final String UNREADY_MARKER = "never-ready";

    private DeploymentTestSupport() {
    }

    static Deployment rolling(String name, int replicas, String app, String image, Object maxSurge, Object maxUnavailable) {
        return new DeploymentBuilder().withNewMetadata().withName(name).endMetadata().withNewSpec()
                .withReplicas(replicas).withNewSelector().withMatchLabels(Map.of("app", app)).endSelector()
                .withNewStrategy().withType("RollingUpdate").withNewRollingUpdate()
                .withMaxSurge(ios(maxSurge)).withMaxUnavailable(ios(maxUnavailable)).endRollingUpdate().endStrategy()
                .withNewTemplate().withNewMetadata().withLabels(Map.of("app", app)).endMetadata().withNewSpec()
                .addNewContainer().withName("app").withImage(image).endContainer().endSpec().endTemplate().endSpec()
                .build();
    }

    static Deployment recreate(String name, int replicas, String app, String image) {
        return new DeploymentBuilder().withNewMetadata().withName(name).endMetadata().withNewSpec()
                .withReplicas(replicas).withNewSelector().withMatchLabels(Map.of("app", app)).endSelector()
                .withNewStrategy().withType("Recreate").endStrategy()
                .withNewTemplate().withNewMetadata().withLabels(Map.of("app", app)).endMetadata().withNewSpec()
                .addNewContainer().withName("app").withImage(image).endContainer().endSpec().endTemplate().endSpec()
                .build();
    }

    private static IntOrString ios(Object v) {
        return v instanceof Integer i ? new IntOrString(i) : new IntOrString((String) v);
    }

    static String image(Pod p) {
        return p.getSpec().getContainers().get(0).getImage();
    }

    static String image(ReplicaSet rs) {
        return rs.getSpec().getTemplate().getSpec().getContainers().get(0).getImage();
    }

    static String image(Deployment d) {
        return d.getSpec().getTemplate().getSpec().getContainers().get(0).getImage();
    }

    static boolean ready(Pod p) {
        return p.getStatus() != null && p.getStatus().getConditions() != null && p.getStatus().getConditions().stream()
                .anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
    }

    static DeploymentCondition condition(Deployment d, String type) {
        if (d.getStatus() == null || d.getStatus().getConditions() == null) {
            return null;
        }
        return d.getStatus().getConditions().stream().filter(c -> type.equals(c.getType())).findFirst().orElse(null);
    }

    static int n(Integer i) {
        return i == null ? 0 : i;
    }

    /**
     * A kubelet loop for one namespace: binds new pods and makes them running and ready after
     * {@code readyDelay} (never ready if the image contains {@link #UNREADY_MARKER}); finishes
     * graceful deletions at once, as a kubelet whose containers stop immediately.
     */
    static final class KubeletLoop implements AutoCloseable {
        private final KubernetesClient client;
        private final String ns;
        private final Duration readyDelay;
        private final Duration stopDelay;
        private final Map<String, Instant> terminatingSeen = new ConcurrentHashMap<>();
        private final TestKubelet kubelet;
        private final Map<String, Instant> firstSeen = new ConcurrentHashMap<>();
        private final Thread thread;
        private volatile boolean stop;

        KubeletLoop(KubernetesClient client, String ns, Duration readyDelay) {
            this(client, ns, readyDelay, Duration.ZERO);
        }

        /** {@code stopDelay}: how long a deleted pod stays terminating before it is gone. */
        KubeletLoop(KubernetesClient client, String ns, Duration readyDelay, Duration stopDelay) {
            this.client = client;
            this.ns = ns;
            this.readyDelay = readyDelay;
            this.stopDelay = stopDelay;
            this.kubelet = new TestKubelet(client);
            this.thread = new Thread(this::run, "kubelet-" + ns);
            thread.setDaemon(true);
            thread.start();
        }

        private void run() {
            while (!stop) {
                try {
                    for (Pod p : client.pods().inNamespace(ns).list().getItems()) {
                        String uid = p.getMetadata().getUid();
                        if (p.getMetadata().getDeletionTimestamp() != null) {
                            Instant since = terminatingSeen.computeIfAbsent(uid, k -> Instant.now());
                            if (Instant.now().isBefore(since.plus(stopDelay))) {
                                continue;
                            }
                            client.pods().inNamespace(ns).withName(p.getMetadata().getName()).withGracePeriod(0).delete();
                            continue;
                        }
                        Instant seen = firstSeen.computeIfAbsent(uid, k -> Instant.now());
                        boolean running = p.getStatus() != null && "Running".equals(p.getStatus().getPhase());
                        boolean wantReady = !image(p).contains(UNREADY_MARKER);
                        if (!running && (!wantReady || Instant.now().isAfter(seen.plus(readyDelay)))) {
                            kubelet.running(p, wantReady, null);
                        }
                    }
                    Thread.sleep(100);
                } catch (InterruptedException e) {
                    return;
                } catch (RuntimeException e) {
                    // conflicts and pods gone under us: try again next round
                }
            }
        }

        @Override
        public void close() throws InterruptedException {
            stop = true;
            thread.interrupt();
            thread.join(5000);
        }
    }

    record Result(int exitCode, String output) {
    }

    /** Runs kubectl v1.34.4 against the given kubeconfig. */
    static Result kubectl(Path kubeconfig, Duration timeout, String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add(System.getProperty("user.home") + "/.kubeapitest/k8s/1.34.4-linux-amd64/kubectl");
        cmd.add("--kubeconfig=" + kubeconfig);
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        Thread reader = new Thread(() -> {
            try {
                p.getInputStream().transferTo(out);
            } catch (IOException ignored) {
                // process ended
            }
        });
        reader.start();
        if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            p.destroyForcibly();
        }
        reader.join(5000);
        return new Result(p.exitValue(), out.toString());
    }
}
