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
 * horizontal-pod-autoscaler-controller end to end, in {@code ./mvnw verify}: {@code hack/e2e-hpa.sh}
 * runs the packaged qkcm as the only controller manager of a kwokctl cluster whose metrics.k8s.io is
 * metrics-server v0.8.0 (built from Go modules by {@code hack/install-metrics-server.sh}) scraping kwok's
 * emulated kubelets; an HPA must scale a Deployment 1 → 3 on CPU usage, back to 1 only once its 60 s
 * scale-down stabilization window allows (reporting ScaleDownStabilized meanwhile); a second HPA with a
 * Pods, an Object and an External metric, served by {@code hack/test-metrics-api/server.py} through the
 * aggregation layer, must scale its Deployment 1 → 3 → 4 → 2 with upstream's reasons; and web must be
 * held while metrics.k8s.io, pointed at the same server, answers garbage (upstream's
 * FailedGetResourceMetric condition and event, one read per sync period). The script deletes its cluster
 * in any case. {@code -Dqkcm.e2e.skip=true} skips it, as the other e2e runs.
 */
class HorizontalPodAutoscalerE2EIT {

    private static final Path OUT = Path.of("target/hpa-e2e").toAbsolutePath();
    private static final long TIMEOUT_MINUTES = 20;

    @Test
    void anHpaScalesADeploymentOnCpuUsageFromMetricsServer() throws Exception {
        Assumptions.assumeFalse(Boolean.getBoolean("qkcm.e2e.skip"), "-Dqkcm.e2e.skip=true");
        Files.createDirectories(OUT);
        Path log = OUT.resolve("e2e-hpa.log");
        ProcessBuilder pb = new ProcessBuilder("bash", Repository.ROOT.resolve("hack/e2e-hpa.sh").toString())
                .directory(Repository.ROOT.toFile()).redirectErrorStream(true).redirectOutput(log.toFile());
        pb.environment().put("HPA_E2E_WORKDIR", OUT.resolve("kwok").toString());
        pb.environment().put("JAVA", QkcmProcess.javaExecutable());
        Process p = pb.start();
        if (!p.waitFor(TIMEOUT_MINUTES, TimeUnit.MINUTES)) {
            p.toHandle().descendants().forEach(ProcessHandle::destroy);
            p.destroy();
            p.waitFor(2, TimeUnit.MINUTES);
            fail("hack/e2e-hpa.sh did not end within " + TIMEOUT_MINUTES + " minutes\n" + LogTail.of(log, 60));
        }
        assertThat(p.exitValue()).as("hack/e2e-hpa.sh exit status; its output:\n%s", LogTail.of(log, 80)).isZero();
        assertThat(Files.readString(log)).as("the script's verdict").contains("PASS: qkcm's HPA scaled web 1 -> 3");
    }
}
