package io.qkcm.process;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.fail;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import io.qkcm.testing.LogTail;
import io.qkcm.testing.QkcmProcess;
import io.qkcm.testing.Repository;

/**
 * The chaos run's CI size in {@code ./mvnw verify} (issue 19): {@code bench/chaos.sh --short} — the
 * packaged qkcm at QPS 100 through kill -9, leader failover, an API server restart with etcd
 * compacted, watches cut, Toxiproxy faults and a split leader, each episode counted from the API
 * server's audit log and a watch. The script exits 1 when qkcm created or deleted a pod beyond spec,
 * wrote while another replica held the lease, or did not converge; this test fails with its report.
 *
 * <p>Its own kwokctl cluster ({@code qkcm-it-chaos}) in target/chaos-short, deleted by the script.
 * The manager ports (10857/10858) and Toxiproxy's API port (8575) are the script's own, used by no
 * other test. {@code -Dqkcm.chaos.skip=true} skips it.
 */
class ChaosShortIT {

    private static final Path ROOT = Repository.ROOT;
    private static final Path OUT = Path.of("target/chaos-short").toAbsolutePath();
    /** About 3 minutes on a built machine; Toxiproxy's first build adds about one. */
    private static final long TIMEOUT_MINUTES = 30;

    @Test
    void shortChaosRunHasNoPodBeyondSpecAndOneLeaderAtATime() throws Exception {
        Assumptions.assumeFalse(Boolean.getBoolean("qkcm.chaos.skip"), "-Dqkcm.chaos.skip=true");
        Files.createDirectories(OUT);
        Path log = OUT.resolve("chaos.sh.log");
        Path results = OUT.resolve("run");
        ProcessBuilder pb = new ProcessBuilder("bash", ROOT.resolve("bench/chaos.sh").toString(), "--short",
                "--out", results.toString(), "--kwok-workdir", OUT.resolve("kwok").toString(),
                "--cluster-name", "qkcm-it-chaos", "--qkcm-jar", QkcmProcess.APP.toAbsolutePath().toString())
                .directory(ROOT.toFile()).redirectErrorStream(true).redirectOutput(log.toFile());
        // the packaged application, not a rebuild
        pb.environment().put("QKCM_JAR", QkcmProcess.APP.toAbsolutePath().toString());
        Process p = pb.start();
        if (!p.waitFor(TIMEOUT_MINUTES, TimeUnit.MINUTES)) {
            p.toHandle().descendants().forEach(ProcessHandle::destroy);
            p.destroy();
            p.waitFor(2, TimeUnit.MINUTES);
            fail("bench/chaos.sh --short did not end within " + TIMEOUT_MINUTES + " minutes\n" + LogTail.of(log, 60));
        }
        Path report = results.resolve("results.md");
        String table = Files.exists(report) ? Files.readString(report) : "(no results.md)";
        assertThat(p.exitValue()).as("bench/chaos.sh --short exit status; its report:\n%s\nits output:\n%s", table,
                LogTail.of(log, 60)).isZero();
        // a run in which no episode ran cannot pass
        assertThat(table).contains("kill", "failover", "split");
        assertThat(OUT.resolve("kwok/clusters/qkcm-it-chaos")).as("the script deleted its cluster").doesNotExist();
    }
}
