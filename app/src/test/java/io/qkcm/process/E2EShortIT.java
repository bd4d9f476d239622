package io.qkcm.process;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.qkcm.testing.LogTail;
import io.qkcm.testing.QkcmProcess;
import io.qkcm.testing.Repository;

/**
 * Upstream's own e2e specs as acceptance, in {@code ./mvnw verify}: {@code hack/e2e.sh --short} (the CI
 * selection of upstream's e2e.test v1.34.4: one or two specs per controller family) against a kwok
 * cluster whose kube-controller-manager is the packaged qkcm ({@code bin/qkcm}). The script builds
 * e2e.test from Go modules when it is missing (cached in ~/.kubeapitest/e2e/). Fails with the
 * script's results table when a selected spec does not pass under qkcm.
 *
 * <p>Its own kwokctl cluster ({@code qkcm-it-e2e-qkcm}) in its own work directory under
 * target/e2e-short, and a free port for qkcm's /healthz: kwokctl gives etcd, kube-apiserver,
 * kube-scheduler and kwok free ports of their own, so nothing collides with the other tests' API
 * servers or with the local cluster ({@code hack/local-cluster.sh}, {@code hack/e2e.sh} outside the
 * tests, bench/). The cluster is deleted when the script ends (this test checks that) and again
 * after the test in any case. {@code -Dqkcm.e2e.skip=true} skips it.
 */
class E2EShortIT {

    private static final Path ROOT = Repository.ROOT;
    private static final Path OUT = Path.of("target/e2e-short").toAbsolutePath();
    private static final Path KWOK_WORKDIR = OUT.resolve("kwok");
    /** hack/e2e.sh names the cluster {@code <QKCM_CLUSTER_NAME>-qkcm}, in {@code $KWOK_WORKDIR/qkcm}. */
    private static final String CLUSTER_BASE = "qkcm-it-e2e";
    private static final String CLUSTER = CLUSTER_BASE + "-qkcm";
    private static final Path CLUSTER_WORKDIR = KWOK_WORKDIR.resolve("qkcm");
    /**
     * The script bounds itself (e2e.test build ≤ 90 min on a fresh machine, the specs ≤ 10 min plus
     * teardown); this only guards against a hang of the script itself.
     */
    private static final long TIMEOUT_MINUTES = 120;

    @Test
    void upstreamsShortSelectionPassesUnderQkcm() throws Exception {
        Assumptions.assumeFalse(Boolean.getBoolean("qkcm.e2e.skip"), "-Dqkcm.e2e.skip=true");
        deleteCluster(); // one left by a run that was killed
        deleteRecursively(OUT);
        Files.createDirectories(OUT);
        Path log = OUT.resolve("e2e.sh.log");

        ProcessBuilder pb = new ProcessBuilder("bash", ROOT.resolve("hack/e2e.sh").toString(), "--short",
                "--out", OUT.resolve("run").toString())
                .directory(ROOT.toFile()).redirectErrorStream(true).redirectOutput(log.toFile());
        pb.environment().putAll(env());
        pb.environment().put("QKCM_SECURE_PORT", Integer.toString(freePort()));
        Process p = pb.start();
        boolean exited = p.waitFor(TIMEOUT_MINUTES, TimeUnit.MINUTES);
        if (!exited) {
            p.toHandle().descendants().forEach(ProcessHandle::destroy);
            p.destroy();
            p.waitFor(2, TimeUnit.MINUTES);
            fail("hack/e2e.sh --short did not end within " + TIMEOUT_MINUTES + " minutes\n" + LogTail.of(log, 60));
        }
        int code = p.exitValue();

        Path results = OUT.resolve("run/results.md");
        String table = Files.exists(results) ? Files.readString(results) : "(no results.md)";
        assertThat(code).as("hack/e2e.sh --short exit status; its table:\n%s\nits output:\n%s", table, LogTail.of(log, 60))
                .isZero();

        // every selected spec ran under qkcm and passed: a run in which nothing ran cannot pass
        List<String> selected = Files.readAllLines(OUT.resolve("run/list.txt")).stream()
                .filter(l -> !l.isBlank()).toList();
        assertThat(selected).as("the --short selection (e2e.test --ginkgo.dry-run)").hasSizeGreaterThanOrEqualTo(5);
        JsonNode qkcm = new ObjectMapper().readTree(OUT.resolve("run/results.json").toFile()).path("qkcm");
        List<String> passed = new ArrayList<>();
        qkcm.fields().forEachRemaining(e -> {
            if ("passed".equals(e.getValue().path("state").asText())) {
                passed.add(e.getKey());
            }
        });
        assertThat(passed).as("specs that passed under qkcm; the table:\n%s", table).hasSameSizeAs(selected);

        // the script deleted its cluster (kwokctl's processes and directory)
        assertThat(CLUSTER_WORKDIR.resolve("clusters/" + CLUSTER)).as("cluster %s deleted by hack/e2e.sh", CLUSTER)
                .doesNotExist();
    }

    /** In any case (a failed assertion, a timeout): no cluster left behind. A no-op when it is gone. */
    @AfterAll
    static void deleteCluster() throws Exception {
        if (!Files.isDirectory(CLUSTER_WORKDIR.resolve("clusters/" + CLUSTER))) {
            return;
        }
        Map<String, String> env = env();
        env.put("QKCM_CLUSTER_NAME", CLUSTER);
        env.put("KWOK_WORKDIR", CLUSTER_WORKDIR.toString());
        env.put("QKCM_KUBECONFIG", CLUSTER_WORKDIR.resolve(CLUSTER + ".kubeconfig").toString());
        ProcessBuilder pb = new ProcessBuilder("bash", ROOT.resolve("hack/local-cluster.sh").toString(), "down")
                .directory(ROOT.toFile()).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(OUT.resolve("cleanup.log").toFile()));
        pb.environment().putAll(env);
        Process p = pb.start();
        p.waitFor(3, TimeUnit.MINUTES);
    }

    private static Map<String, String> env() {
        Map<String, String> env = new HashMap<>();
        env.put("QKCM_CLUSTER_NAME", CLUSTER_BASE);
        env.put("KWOK_WORKDIR", KWOK_WORKDIR.toString());
        // the packaged application (the native executable when one was built), run by this JDK
        env.put("QKCM_BINARY", ROOT.resolve("bin/qkcm").toString());
        env.put("JAVA", QkcmProcess.javaExecutable());
        return env;
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    private static void deleteRecursively(Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            paths.sorted(Comparator.reverseOrder()).forEach(f -> {
                try {
                    Files.delete(f);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
