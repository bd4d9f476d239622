package io.qkcm.process;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.jar.JarFile;
import java.util.jar.Manifest;

import org.junit.jupiter.api.Test;

import io.qkcm.testing.QkcmProcess;

/**
 * The command line of the packaged app, as kube-controller-manager's: --version and --help exit 0
 * (kwokctl runs --version first), every mistake is one line on stderr and exit code 1. No API server
 * is needed: all of this is decided before the manager connects anywhere.
 */
class CommandLineIT {

    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    private static QkcmProcess run(String name, String... args) {
        QkcmProcess p = QkcmProcess.java(name, Map.of(), List.of(args));
        p.waitFor(TIMEOUT);
        return p;
    }

    @Test
    void launcherVersionPrintsTheKubernetesVersion() {
        try (QkcmProcess p = QkcmProcess.launcher("launcher-version", List.of("--version"))) {
            assertThat(p.waitFor(TIMEOUT)).as(p.stderr()).isZero();
            assertThat(p.stdout()).startsWith("Kubernetes v1.34.4");
            assertThat(p.stderrLines()).isEmpty();
        }
    }

    @Test
    void versionRawPrintsOnlyTheVersion() {
        QkcmProcess p = run("version-raw", "--version=raw");
        assertThat(p.waitFor(TIMEOUT)).isZero();
        assertThat(p.stdout().trim()).isEqualTo("v1.34.4");
    }

    @Test
    void launcherHelpListsFlagsAndControllers() {
        try (QkcmProcess p = QkcmProcess.launcher("launcher-help", List.of("--help"))) {
            assertThat(p.waitFor(TIMEOUT)).as(p.stderr()).isZero();
            assertThat(p.stdout()).contains("--kube-api-qps", "--leader-elect-lease-duration", "--controllers",
                    "--leader-elect-release-on-cancel", "[no effect]", "replicaset-controller",
                    "bootstrap-signer-controller");
            // implemented (+), partial (~, with what is missing) and not implemented are told apart
            assertThat(p.stdout()).contains("*+ replicaset-controller\n", "*+ job-controller\n", "*+ disruption-controller\n",
                    "*+ node-lifecycle-controller\n", "*+ horizontal-pod-autoscaler-controller\n",
                    "*  service-lb-controller\n",
                    "*+ resourcequota-controller\n", "*+ persistentvolume-binder-controller\n",
                    "*+ resourceclaim-controller\n", "*~ device-taint-eviction-controller (partial: ");
        }
    }

    @Test
    void launcherPassesErrorsAndExitCodesThrough() {
        try (QkcmProcess p = QkcmProcess.launcher("launcher-unknown-flag", List.of("--no-such-flag"))) {
            assertThat(p.waitFor(TIMEOUT)).isEqualTo(1);
            assertThat(p.stderrLines()).singleElement().asString().contains("--no-such-flag");
        }
    }

    @Test
    void unknownFlagIsOneLineAndExitCode1() {
        QkcmProcess p = run("unknown-flag", "--kubeconfig=/nonexistent", "--no-such-flag=1");
        assertThat(p.waitFor(TIMEOUT)).isEqualTo(1);
        assertThat(p.stderrLines()).singleElement().asString().contains("unknown flag: --no-such-flag");
        assertThat(p.stdout()).isEmpty();
    }

    @Test
    void unknownShorthandIsOneLineAndExitCode1() {
        QkcmProcess p = run("unknown-shorthand", "-x");
        assertThat(p.waitFor(TIMEOUT)).isEqualTo(1);
        assertThat(p.stderrLines()).singleElement().asString().contains("'x'");
    }

    @Test
    void malformedValuesAreOneLineNamingTheFlag() {
        QkcmProcess qps = run("malformed-qps", "--kube-api-qps=fast");
        assertThat(qps.waitFor(TIMEOUT)).isEqualTo(1);
        assertThat(qps.stderrLines()).singleElement().asString().contains("\"fast\"", "--kube-api-qps");

        QkcmProcess duration = run("malformed-duration", "--leader-elect-lease-duration=15");
        assertThat(duration.waitFor(TIMEOUT)).isEqualTo(1);
        assertThat(duration.stderrLines()).singleElement().asString().contains("\"15\"", "--leader-elect-lease-duration");

        QkcmProcess bool = run("malformed-bool", "--leader-elect=maybe");
        assertThat(bool.waitFor(TIMEOUT)).isEqualTo(1);
        assertThat(bool.stderrLines()).singleElement().asString().contains("\"maybe\"", "--leader-elect");

        QkcmProcess missing = run("missing-value", "--kubeconfig");
        assertThat(missing.waitFor(TIMEOUT)).isEqualTo(1);
        assertThat(missing.stderrLines()).singleElement().asString().contains("--kubeconfig");
    }

    @Test
    void positionalArgumentsAreRejected() {
        QkcmProcess p = run("positional", "--v=2", "extra");
        assertThat(p.waitFor(TIMEOUT)).isEqualTo(1);
        assertThat(p.stderrLines()).singleElement().asString().contains("does not take any arguments", "extra");
    }

    @Test
    void unknownControllerNamesItAndTheValidNames() {
        QkcmProcess p = run("unknown-controller", "--controllers=*,-deployment,nosuch-controller");
        assertThat(p.waitFor(TIMEOUT)).isEqualTo(1);
        assertThat(p.stderrLines()).singleElement().asString()
                .contains("\"nosuch-controller\"", "valid names", "replicaset-controller", "deployment-controller");

        QkcmProcess negated = run("unknown-negated-controller", "--controllers=*,-nosuch");
        assertThat(negated.waitFor(TIMEOUT)).isEqualTo(1);
        assertThat(negated.stderrLines()).singleElement().asString().contains("\"nosuch\"", "valid names");
    }

    @Test
    void unknownControllerInConfigFailsStartup() {
        // qkcm.controllers from the environment (QKCM_CONTROLLERS) and from a system property
        QkcmProcess env = QkcmProcess.java("config-unknown-controller-env",
                Map.of("QKCM_CONTROLLERS", "*,nosuch-env"), List.of("--kubeconfig=/nonexistent"));
        assertThat(env.waitFor(TIMEOUT)).as(env.stdout()).isEqualTo(1);
        assertThat(env.stderrLines()).singleElement().asString().contains("\"nosuch-env\"", "valid names");

        QkcmProcess prop = QkcmProcess.java("config-unknown-controller-prop", Map.of(),
                List.of("-Dqkcm.controllers=nosuch-prop"), List.of("--kubeconfig=/nonexistent"));
        assertThat(prop.waitFor(TIMEOUT)).as(prop.stdout()).isEqualTo(1);
        assertThat(prop.stderrLines()).singleElement().asString().contains("\"nosuch-prop\"");
    }

    @Test
    void commandLineWinsOverConfig() {
        // a bad config value is overridden by a good flag: the process gets past validation (and then
        // fails on the missing kubeconfig, which names the file)
        QkcmProcess p = QkcmProcess.java("flag-wins", Map.of("QKCM_CONTROLLERS", "nosuch"),
                List.of("--controllers=*", "--secure-port=0", "--kubeconfig=/nonexistent/kubeconfig"));
        assertThat(p.waitFor(TIMEOUT)).isEqualTo(1);
        assertThat(p.stderr()).doesNotContain("nosuch").contains("/nonexistent/kubeconfig");
    }

    @Test
    void malformedConfigValueFailsStartup() {
        QkcmProcess p = QkcmProcess.java("config-malformed", Map.of("QKCM_KUBE_API_BURST", "lots"),
                List.of("--kubeconfig=/nonexistent"));
        assertThat(p.waitFor(TIMEOUT)).isEqualTo(1);
        assertThat(p.stderrLines()).singleElement().asString().contains("\"lots\"", "kube-api-burst");
    }

    @Test
    void inconsistentLeaderElectionDurationsFailStartup() {
        QkcmProcess p = run("le-durations", "--kubeconfig=/nonexistent", "--leader-elect-lease-duration=2s",
                "--leader-elect-renew-deadline=3s");
        assertThat(p.waitFor(TIMEOUT)).isEqualTo(1);
        assertThat(p.stderrLines()).singleElement().asString().contains("--leader-elect-lease-duration",
                "--leader-elect-renew-deadline");
    }

    /**
     * The JVM build is a flat class path (docs/design.md, "The build"): the jar starts qkcm's own main and names
     * every library it needs, all present, so the JVM's application loader (and its AOT cache) loads them all.
     * Without fast-jar's launcher, QkcmMain installs Quarkus' log manager: the log keeps its format.
     */
    @Test
    void thePackagedAppIsAFlatClassPathAndLogsThroughQuarkus() throws IOException {
        Manifest manifest;
        try (JarFile jar = new JarFile(QkcmProcess.APP.toFile())) {
            manifest = jar.getManifest();
        }
        assertThat(manifest.getMainAttributes().getValue("Main-Class")).isEqualTo("io.qkcm.manager.QkcmMain");
        List<String> classPath = Arrays.stream(manifest.getMainAttributes().getValue("Class-Path").trim().split("\\s+"))
                .toList();
        assertThat(classPath).hasSizeGreaterThan(50).allMatch(e -> e.startsWith("lib/"));
        Path dir = QkcmProcess.APP.toAbsolutePath().getParent();
        assertThat(classPath).allMatch(e -> Files.isRegularFile(dir.resolve(e)), "present beside the jar");

        QkcmProcess p = run("flat-log-format", "--kubeconfig=/nonexistent/kubeconfig");
        assertThat(p.waitFor(TIMEOUT)).isEqualTo(1);
        assertThat(p.stdout().lines()).as(p.stdout() + p.stderr())
                .anyMatch(l -> l.matches("\\d\\d:\\d\\d:\\d\\d\\.\\d{3} INFO  \\[io\\.qk\\.ma\\.ControllerManager\\] \\(main\\) qkcm .*"));
        assertThat(p.stderr()).doesNotContain("LogManager accessed before");
    }
}
