package io.qkcm.process;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import io.qkcm.testing.LogTail;
import io.qkcm.testing.Repository;

/**
 * {@code ./mvnw quarkus:dev} against a local cluster, in {@code ./mvnw verify} (issue 20):
 * {@code hack/dev-mode-check.sh} starts a kwok cluster of its own ({@code devcheck}, under
 * target/dev-mode-check) without a controller manager, runs qkcm in dev mode with the flags
 * {@code hack/local-cluster.sh} prints, waits for the controllers (Lease held, informers synced) and
 * the Dev UI card's live data, has a Deployment's pods created and Running, live-reloads (a source
 * file touched: same threads, Lease taken again, the Deployment scaled), stops dev mode (Lease
 * released) and deletes the cluster. {@code -Dqkcm.devmode.skip=true} skips it.
 */
class DevModeIT {

    private static final Path ROOT = Repository.ROOT;
    private static final Path WORK = Path.of("target/dev-mode-check").toAbsolutePath();
    /** About two minutes here; the script bounds each of its waits. */
    private static final long TIMEOUT_MINUTES = 20;

    @Test
    void devModeRunsTheControllersAgainstALocalClusterAndReloads() throws Exception {
        Assumptions.assumeFalse(Boolean.getBoolean("qkcm.devmode.skip"), "-Dqkcm.devmode.skip=true");
        Files.createDirectories(WORK);
        Path log = WORK.resolve("dev-mode-check.log");
        ProcessBuilder pb = new ProcessBuilder("bash", ROOT.resolve("hack/dev-mode-check.sh").toString())
                .directory(ROOT.toFile()).redirectErrorStream(true).redirectOutput(log.toFile());
        pb.environment().put("QKCM_DEVCHECK_DIR", WORK.toString());
        Process p = pb.start();
        if (!p.waitFor(TIMEOUT_MINUTES, TimeUnit.MINUTES)) {
            p.toHandle().descendants().forEach(ProcessHandle::destroy);
            p.destroy();
            p.waitFor(2, TimeUnit.MINUTES);
            fail("hack/dev-mode-check.sh did not end within " + TIMEOUT_MINUTES + " minutes\n" + LogTail.of(log, 60));
        }
        String output = Files.readString(log);
        assertThat(p.exitValue()).as("hack/dev-mode-check.sh exit status; its output:\n%s", LogTail.of(log, 80)).isZero();
        // the steps that must have run, not only a zero exit
        assertThat(output).contains("ok: dev mode stopped, Lease released", "live reload", "PASSED in");
        assertThat(WORK.resolve("kwok/clusters/devcheck")).as("the script deleted its cluster").doesNotExist();
    }
}
