package io.qkcm.testing;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

import io.fabric8.kubeapitest.KubeAPIServer;
import io.fabric8.kubeapitest.KubeAPIServerConfigBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;

/**
 * Reference comparison: one scenario run at the same time against qkcm (in-process, on the shared
 * {@link RealApiServer}) and against upstream kube-controller-manager v1.34.4 (the reference binary
 * from {@code ~/.kubeapitest}, with the given {@code --controllers}, on a second real API server), then
 * a snapshot of each side compared key by key.
 */
public final class ReferenceComparison {

    /** What both sides do, in namespace {@code ns}. */
    @FunctionalInterface
    public interface Scenario {
        void run(KubernetesClient c, String ns) throws Exception;
    }

    /** The fields compared, by key (uids, times and other values that differ by nature left out). */
    @FunctionalInterface
    public interface Snapshot {
        Map<String, Object> take(KubernetesClient c, String ns) throws Exception;
    }

    /** Both snapshots and the differing keys (each with both values). */
    public record Result(Map<String, Object> mine, Map<String, Object> theirs, List<String> diffs) {
    }

    private ReferenceComparison() {
    }

    /**
     * Runs {@code scenario} on both sides in namespace {@code <prefix>-<random>}, waits {@code settle}
     * (for what either side writes asynchronously), compares the snapshots and writes them with the
     * differences to {@code report}.
     */
    public static Result run(String prefix, String controllers, Scenario scenario, Duration settle, Snapshot snapshot,
            Path report) throws Exception {
        return run(prefix, controllers, List.of(), scenario, settle, snapshot, report);
    }

    /** As {@link #run(String, String, Scenario, Duration, Snapshot, Path)}, upstream started with {@code flags} too. */
    public static Result run(String prefix, String controllers, List<String> flags, Scenario scenario, Duration settle,
            Snapshot snapshot, Path report) throws Exception {
        String ns = prefix + "-" + Long.toString(System.nanoTime() % 1_000_000_000L, 36);
        KubeAPIServer refServer = new KubeAPIServer(KubeAPIServerConfigBuilder.anAPIServerConfig().withOfflineMode(true)
                .withUpdateKubeConfig(false).withStartupTimeout(120_000).build());
        refServer.start();
        Process kcm = null;
        Path kubeconfig = Files.createTempFile(prefix + "-kubeconfig", ".yaml");
        Path kcmLog = Files.createTempFile(prefix + "-kcm", ".log");
        try (KubernetesClient ref = new KubernetesClientBuilder()
                .withConfig(Config.fromKubeconfig(refServer.getKubeConfigYaml())).build();
                KubernetesClient ours = RealApiServer.get().newClient()) {
            Files.writeString(kubeconfig, refServer.getKubeConfigYaml());
            List<String> command = new ArrayList<>(List.of(
                    System.getProperty("user.home") + "/.kubeapitest/k8s/1.34.4-linux-amd64/kube-controller-manager",
                    "--kubeconfig=" + kubeconfig, "--controllers=" + controllers, "--leader-elect=false", "--secure-port=0"));
            command.addAll(flags);
            kcm = new ProcessBuilder(command)
                    .redirectErrorStream(true).redirectOutput(kcmLog.toFile()).start();

            List<Thread> sides = new ArrayList<>();
            List<Throwable> failures = new ArrayList<>();
            for (KubernetesClient c : List.of(ours, ref)) {
                Thread t = new Thread(() -> {
                    try {
                        scenario.run(c, ns);
                    } catch (Throwable e) {
                        synchronized (failures) {
                            failures.add(e);
                        }
                    }
                });
                t.start();
                sides.add(t);
            }
            for (Thread t : sides) {
                t.join();
            }
            if (!failures.isEmpty()) {
                throw new AssertionError("scenario failed (kcm log " + kcmLog + ")", failures.get(0));
            }
            if (!settle.isZero()) {
                Thread.sleep(settle.toMillis());
            }
            Map<String, Object> mine = snapshot.take(ours, ns);
            Map<String, Object> theirs = snapshot.take(ref, ns);
            List<String> diffs = new ArrayList<>();
            TreeSet<String> keys = new TreeSet<>(mine.keySet());
            keys.addAll(theirs.keySet());
            for (String k : keys) {
                if (!Objects.equals(mine.get(k), theirs.get(k))) {
                    diffs.add(k + "\n   qkcm:     " + mine.get(k) + "\n   upstream: " + theirs.get(k));
                }
            }
            Files.writeString(report, "qkcm: " + mine + "\nupstream: " + theirs + "\ndiffs:\n" + String.join("\n", diffs) + "\n");
            return new Result(mine, theirs, diffs);
        } finally {
            if (kcm != null) {
                kcm.destroy();
                if (!kcm.waitFor(10, TimeUnit.SECONDS)) {
                    kcm.destroyForcibly();
                }
            }
            refServer.stop();
            new File(kubeconfig.toString()).delete();
        }
    }
}
