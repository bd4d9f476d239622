package io.qkcm.process;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import io.qkcm.testing.QkcmProcess;
import io.qkcm.testing.RealApiServer;

/**
 * --controllers at process level: what is enabled runs, or is skipped with upstream's reason (cloud provider,
 * feature gate); since every controller of the default set is implemented, no startup warning names an
 * unimplemented one, and nothing is pretended to run.
 */
class ControllerSelectionIT {

    private static final Pattern NOT_IMPLEMENTED = Pattern
            .compile("controllers enabled but not implemented by qkcm, NOT running: (.*)");

    private static List<String> notImplemented(String stdout) {
        // no warning when nothing enabled is left unimplemented (every controller of the default set exists)
        Matcher m = NOT_IMPLEMENTED.matcher(stdout);
        return m.find() ? Arrays.stream(m.group(1).split(",")).map(String::trim).toList() : List.of();
    }

    private static String runUntilStarted(String name, String controllers) {
        try (QkcmProcess p = QkcmProcess.java(name, Map.of(), List.of(
                "--kubeconfig=" + RealApiServer.audited().kubeconfig(), "--leader-elect=false", "--secure-port=0",
                "--controllers=" + controllers))) {
            await().atMost(Duration.ofSeconds(60)).untilAsserted(() -> {
                assertThat(p.alive()).as(p.stdout()).isTrue();
                assertThat(p.stdout()).containsPattern("Started \\d+ controllers");
            });
            p.sigterm();
            assertThat(p.waitFor(Duration.ofSeconds(30))).isZero();
            return p.stdout();
        }
    }

    @Test
    void everySelectedControllerRunsOrIsSkippedWithItsReason() {
        String out = runUntilStarted("selection-star", "*,-replicaset,-endpoint,bootstrapsigner");
        List<String> reported = notImplemented(out);
        // every controller of upstream's default set is implemented: no startup warning names one
        assertThat(reported).isEmpty();
        assertThat(out).doesNotContain("controllers enabled but not implemented");
        assertThat(reported)
                // implemented ones run instead of being reported (bootstrap-signer: off by default, named)
                .doesNotContain("garbage-collector-controller", "namespace-controller", "deployment-controller",
                        "job-controller", "daemonset-controller", "statefulset-controller", "cronjob-controller",
                        "bootstrap-signer-controller", "disruption-controller", "resourcequota-controller")
                // removed by name or alias
                .doesNotContain("replicaset-controller", "endpoints-controller")
                // off by default and not named
                .doesNotContain("token-cleaner-controller")
                // cloud provider controllers and disabled feature gates are skipped, with a reason
                .doesNotContain("service-lb-controller", "podcertificaterequest-cleaner-controller");
        assertThat(out).contains("skipping service-lb-controller: cloud provider controller",
                "skipping podcertificaterequest-cleaner-controller: feature gate PodCertificateRequest is disabled");
        assertThat(out).doesNotContain("Started controller replicaset-controller",
                "Started controller token-cleaner-controller");
        assertThat(out).contains("Started controller horizontal-pod-autoscaler-controller",
                "Started controller persistentvolume-binder-controller", "Started controller bootstrap-signer-controller",
                "Started controller disruption-controller", "Started controller garbage-collector-controller",
                "Started controller deployment-controller", "Started controller job-controller");
    }

    @Test
    void onlyNamedControllersWithoutStar() {
        String out = runUntilStarted("selection-named", "tokencleaner,horizontalpodautoscaling");
        assertThat(notImplemented(out)).isEmpty();
        assertThat(out).contains("Started controller token-cleaner-controller",
                "Started controller horizontal-pod-autoscaler-controller");
        assertThat(out).doesNotContain("Started controller job-controller");
    }
}
