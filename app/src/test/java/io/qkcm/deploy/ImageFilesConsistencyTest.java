package io.qkcm.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.HTTPGetAction;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Probe;
import io.fabric8.kubernetes.api.model.VolumeMount;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.qkcm.manager.ControllerCatalog;
import io.qkcm.manager.ControllerSelection;
import io.qkcm.manager.FlagParser;
import io.qkcm.runtime.options.Flags;
import io.qkcm.testing.Repository;

/**
 * The install files agree with each other and with upstream: Dockerfile.native, Dockerfile.jvm,
 * deploy/kubeadm/kube-controller-manager.yaml, bin/qkcm and the generated manifests' settings in
 * application.properties. None of the images can be built on the development machines (no container
 * engine), so this is what keeps them honest there.
 */
class ImageFilesConsistencyTest {

    static final Path NATIVE = Repository.file("Dockerfile.native");
    static final Path JVM = Repository.file("Dockerfile.jvm");
    static final Path KUBEADM = Repository.file("deploy/kubeadm/kube-controller-manager.yaml");
    static final Path LAUNCHER = Repository.file("bin/qkcm");
    static final Path PROPERTIES = Path.of("src/main/resources/application.properties");
    static final Path FLAGS_TSV = Path.of("src/main/resources/qkcm/flags.tsv");

    /** Where upstream's image has its executable; kubeadm's command runs it by this name. */
    static final String EXECUTABLE = "/usr/local/bin/kube-controller-manager";

    /** The flags kubeadm v1.34 gives kube-controller-manager (getControllerManagerCommand, without a podSubnet). */
    static final Map<String, String> KUBEADM_FLAGS = Map.ofEntries(
            Map.entry("bind-address", "127.0.0.1"),
            Map.entry("leader-elect", "true"),
            Map.entry("kubeconfig", "/etc/kubernetes/controller-manager.conf"),
            Map.entry("authentication-kubeconfig", "/etc/kubernetes/controller-manager.conf"),
            Map.entry("authorization-kubeconfig", "/etc/kubernetes/controller-manager.conf"),
            Map.entry("client-ca-file", "/etc/kubernetes/pki/ca.crt"),
            Map.entry("requestheader-client-ca-file", "/etc/kubernetes/pki/front-proxy-ca.crt"),
            Map.entry("root-ca-file", "/etc/kubernetes/pki/ca.crt"),
            Map.entry("service-account-private-key-file", "/etc/kubernetes/pki/sa.key"),
            Map.entry("cluster-signing-cert-file", "/etc/kubernetes/pki/ca.crt"),
            Map.entry("cluster-signing-key-file", "/etc/kubernetes/pki/ca.key"),
            Map.entry("use-service-account-credentials", "true"),
            Map.entry("controllers", "*,bootstrapsigner,tokencleaner"),
            Map.entry("cluster-name", "kubernetes"));

    // --- both images ---

    @Test
    void bothImagesRunTheSameExecutableWithUpstreamFlagsAsArguments() throws IOException {
        for (Path dockerfile : List.of(NATIVE, JVM)) {
            List<Instruction> stage = finalStage(dockerfile);
            assertThat(all(stage, "ENTRYPOINT")).as("%s: one ENTRYPOINT", dockerfile).hasSize(1);
            // exec form, the executable alone: every argument the container gets is a flag, as upstream's
            assertThat(one(stage, "ENTRYPOINT")).as(dockerfile.toString()).isEqualTo("[\"" + EXECUTABLE + "\"]");
            assertThat(all(stage, "CMD")).as("%s: no CMD (default flags would precede the user's)", dockerfile)
                    .isEmpty();
        }
        assertThat(all(finalStage(NATIVE), "COPY")).anySatisfy(c -> assertThat(c).endsWith(" " + EXECUTABLE));
        assertThat(all(finalStage(JVM), "RUN")).contains("ln -s /opt/qkcm/bin/qkcm " + EXECUTABLE);
    }

    @Test
    void bothImagesExposeTheSecurePortAndRunAsTheSameNonRootUser() throws IOException {
        String securePort = upstreamFlags().get("secure-port");
        assertThat(securePort).isEqualTo("10257");
        for (Path dockerfile : List.of(NATIVE, JVM)) {
            List<Instruction> stage = finalStage(dockerfile);
            assertThat(all(stage, "EXPOSE")).as(dockerfile.toString()).containsExactly(securePort);
            List<String> users = all(stage, "USER");
            assertThat(users).as("%s: the last USER is the runtime user", dockerfile).isNotEmpty();
            String user = users.get(users.size() - 1);
            assertThat(user).as(dockerfile.toString()).matches("[0-9]+").isNotEqualTo("0");
            assertThat(user).isEqualTo("1001");
        }
    }

    // --- the JVM image ---

    @Test
    void jvmImageStartsQuarkusAppThroughBinQkcmWithItsDefaultJvmOptions(@TempDir Path image) throws Exception {
        List<Instruction> stage = finalStage(JVM);
        // bin/qkcm, the launcher that defines the JVM options, is the image's entrypoint, in the
        // repository's layout (bin/qkcm finds ../app/target/quarkus-app/quarkus-run.jar)
        assertThat(all(stage, "COPY")).contains("--chmod=0755 bin/qkcm /opt/qkcm/bin/qkcm",
                "--from=build /code/app/target/quarkus-app/ /opt/qkcm/app/target/quarkus-app/");
        assertThat(Files.readString(LAUNCHER)).contains("TARGET=\"${QKCM_TARGET:-$ROOT/app/target}\"",
                "JAR=\"$TARGET/quarkus-app/quarkus-run.jar\"");
        // nothing in the image replaces or adds to them
        for (String env : all(stage, "ENV")) {
            assertThat(env).doesNotContain("QKCM_JAVA_OPTS", "JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS", "_JAVA_OPTIONS",
                    "QKCM_TARGET", "JAVA=");
        }
        assertThat(String.join("\n", all(stage, "ENTRYPOINT"))).doesNotContain("java");

        // the options the image's entrypoint prints are bin/qkcm's defaults
        String defaults = printJavaOpts(LAUNCHER.toAbsolutePath());
        assertThat(defaults).contains("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xms32m");
        Path launcher = image.resolve("opt/qkcm/bin/qkcm");
        Files.createDirectories(launcher.getParent());
        Files.copy(LAUNCHER, launcher);
        launcher.toFile().setExecutable(true);
        Path executable = image.resolve(EXECUTABLE.substring(1));
        Files.createDirectories(executable.getParent());
        Files.createSymbolicLink(executable, launcher);
        // (the AOT cache option depends on a cache written into this checkout's app/target/ by hack/aot-train.sh)
        assertThat(withoutAotCache(printJavaOpts(executable))).isEqualTo(withoutAotCache(defaults));
    }

    private static String withoutAotCache(String opts) {
        return opts.replaceAll(" ?-XX:AOTCache=\\S+", "");
    }

    // --- the kubeadm static pod ---

    @Test
    void kubeadmManifestHasKubeadmsCommandWithKnownUpstreamFlags() throws Exception {
        Container c = kubeadmContainer();
        List<String> command = c.getCommand();
        assertThat(command.get(0)).isEqualTo(Path.of(EXECUTABLE).getFileName().toString());
        assertThat(c.getArgs()).as("flags in command, as kubeadm writes them").isNullOrEmpty();
        Map<String, String> flags = kubeadmFlags();
        Set<String> upstream = upstreamFlags().keySet();
        assertThat(flags.keySet()).allSatisfy(name -> assertThat(upstream).as("--%s is an upstream flag", name)
                .contains(name));
        assertThat(flags).isEqualTo(KUBEADM_FLAGS);
        // qkcm accepts the command line as it is
        FlagParser.Result parsed = new FlagParser(Flags.upstream()).parse(command.subList(1, command.size()));
        assertThat(parsed.values()).hasSize(KUBEADM_FLAGS.size());
        assertThat(ControllerSelection.validate(ControllerCatalog.upstream(),
                List.of(flags.get("controllers").split(",")))).isEmpty();
    }

    @Test
    void kubeadmManifestProbesTheSecurePortOverHttpsAsKubeadm() throws Exception {
        Pod pod = kubeadmPod();
        Container c = kubeadmContainer();
        Map<String, String> flags = kubeadmFlags();
        String securePort = flags.getOrDefault("secure-port", upstreamFlags().get("secure-port"));
        assertThat(c.getPorts()).hasSize(1);
        assertThat(c.getPorts().get(0).getName()).isEqualTo("probe-port");
        assertThat(c.getPorts().get(0).getContainerPort()).isEqualTo(Integer.parseInt(securePort)).isEqualTo(10257);
        assertThat(c.getReadinessProbe()).as("kubeadm gives kube-controller-manager no readiness probe").isNull();
        for (Probe probe : List.of(c.getLivenessProbe(), c.getStartupProbe())) {
            HTTPGetAction get = probe.getHttpGet();
            assertThat(get.getScheme()).isEqualTo("HTTPS");
            assertThat(get.getPath()).isEqualTo("/healthz");
            assertThat(get.getPort().getStrVal()).isEqualTo("probe-port");
            assertThat(get.getHost()).isEqualTo(flags.get("bind-address"));
            assertThat(probe.getTimeoutSeconds()).isEqualTo(15);
            assertThat(probe.getPeriodSeconds()).isEqualTo(10);
            assertThat(probe.getInitialDelaySeconds()).isEqualTo(10);
        }
        assertThat(c.getLivenessProbe().getFailureThreshold()).isEqualTo(8);
        assertThat(c.getStartupProbe().getFailureThreshold()).isEqualTo(24); // 4 min / 10 s
        assertThat(pod.getSpec().getHostNetwork()).isTrue();
        assertThat(pod.getSpec().getPriorityClassName()).isEqualTo("system-node-critical");
        assertThat(pod.getSpec().getPriority()).isEqualTo(2000001000);
        assertThat(pod.getMetadata().getNamespace()).isEqualTo("kube-system");
        assertThat(pod.getMetadata().getLabels()).containsEntry("component", "kube-controller-manager")
                .containsEntry("tier", "control-plane");
    }

    @Test
    void kubeadmManifestMountsEveryFileItsFlagsNameAndRunsAsTheirOwner() throws Exception {
        Pod pod = kubeadmPod();
        Container c = kubeadmContainer();
        Map<String, String> hostPaths = pod.getSpec().getVolumes().stream()
                .collect(Collectors.toMap(v -> v.getName(), v -> v.getHostPath().getPath()));
        assertThat(hostPaths).containsEntry("k8s-certs", "/etc/kubernetes/pki")
                .containsEntry("kubeconfig", "/etc/kubernetes/controller-manager.conf")
                .containsEntry("ca-certs", "/etc/ssl/certs")
                .containsEntry("flexvolume-dir", "/usr/libexec/kubernetes/kubelet-plugins/volume/exec");
        for (VolumeMount m : c.getVolumeMounts()) {
            assertThat(hostPaths).containsEntry(m.getName(), m.getMountPath()); // same path inside and out
            assertThat(m.getReadOnly()).as(m.getName()).isEqualTo(m.getName().equals("flexvolume-dir") ? null : true);
        }
        for (Map.Entry<String, String> flag : kubeadmFlags().entrySet()) {
            if (flag.getValue().startsWith("/")) {
                assertThat(c.getVolumeMounts()).as("--%s is mounted", flag.getKey())
                        .anySatisfy(m -> assertThat(flag.getValue().equals(m.getMountPath())
                                || flag.getValue().startsWith(m.getMountPath() + "/")).isTrue());
            }
        }
        // kubeadm's key files and kubeconfig are root's, mode 0600: root reads them without capabilities
        assertThat(c.getSecurityContext().getRunAsUser()).isZero();
        assertThat(c.getSecurityContext().getAllowPrivilegeEscalation()).isFalse();
        assertThat(c.getSecurityContext().getCapabilities().getDrop()).containsExactly("ALL");
    }

    @Test
    void kubeadmManifestRunsTheImageTheGeneratedManifestsName() throws Exception {
        Properties p = properties();
        String repository = "docker.io/" + p.getProperty("quarkus.container-image.group") + "/"
                + p.getProperty("quarkus.container-image.name");
        String image = kubeadmContainer().getImage();
        assertThat(image).startsWith(repository + ":").matches(".*:" + Pattern.quote(projectVersion()) + "-(native|jvm)");
    }

    // --- the generated manifests ---

    @Test
    void generatedManifestsChooseTheImageByOneProperty() throws Exception {
        Properties p = properties();
        assertThat(p.getProperty("qkcm-image")).isEqualTo("native");
        assertThat(p.getProperty("quarkus.container-image.tag")).isEqualTo("${quarkus.application.version}-${qkcm-image}");
        assertThat(Files.readString(NATIVE)).contains("-t qkcm/qkcm:<version>-native");
        assertThat(Files.readString(JVM)).contains("-t qkcm/qkcm:<version>-jvm", "-Dqkcm-image=jvm");
    }

    @Test
    void generatedManifestsUseTheSameFlagStyleAndSecurePort() throws Exception {
        Properties p = properties();
        Set<String> upstream = upstreamFlags().keySet();
        for (String arg : p.getProperty("quarkus.kubernetes.arguments").split(",")) {
            Matcher m = Pattern.compile("--([a-z0-9-]+)=(.+)").matcher(arg);
            assertThat(m.matches()).as(arg).isTrue();
            assertThat(upstream).contains(m.group(1));
        }
        assertThat(p.getProperty("quarkus.kubernetes.ports.https.container-port"))
                .isEqualTo(upstreamFlags().get("secure-port"));
        for (String probe : List.of("liveness", "readiness", "startup")) {
            assertThat(p.getProperty("quarkus.kubernetes." + probe + "-probe.http-action-scheme")).isEqualTo("HTTPS");
            assertThat(p.getProperty("quarkus.kubernetes." + probe + "-probe.http-action-port-name")).isEqualTo("https");
        }
        assertThat(p.getProperty("quarkus.kubernetes.security-context.run-as-non-root")).isEqualTo("true");
    }

    // --- helpers ---

    record Instruction(String keyword, String arguments) {
    }

    /** The instructions after the last FROM, continuation lines joined, comments dropped. */
    static List<Instruction> finalStage(Path dockerfile) throws IOException {
        List<Instruction> all = new ArrayList<>();
        StringBuilder current = new StringBuilder();
        for (String line : Files.readAllLines(dockerfile)) {
            String t = line.strip();
            if (current.isEmpty() && (t.isEmpty() || t.startsWith("#"))) {
                continue;
            }
            if (t.endsWith("\\")) {
                current.append(t, 0, t.length() - 1).append(' ');
                continue;
            }
            current.append(t);
            String s = current.toString().strip();
            current.setLength(0);
            int sp = s.indexOf(' ');
            all.add(new Instruction(s.substring(0, sp).toUpperCase(), s.substring(sp + 1).strip()));
        }
        int from = 0;
        for (int i = 0; i < all.size(); i++) {
            if (all.get(i).keyword().equals("FROM")) {
                from = i;
            }
        }
        return all.subList(from, all.size());
    }

    static List<String> all(List<Instruction> stage, String keyword) {
        return stage.stream().filter(i -> i.keyword().equals(keyword)).map(Instruction::arguments).toList();
    }

    static String one(List<Instruction> stage, String keyword) {
        List<String> found = all(stage, keyword);
        assertThat(found).hasSize(1);
        return found.get(0);
    }

    /** name → default of every upstream kube-controller-manager v1.34 flag (flags.tsv). */
    static Map<String, String> upstreamFlags() throws IOException {
        Map<String, String> flags = new LinkedHashMap<>();
        for (String line : Files.readAllLines(FLAGS_TSV)) {
            if (line.isBlank() || line.startsWith("#")) {
                continue;
            }
            String[] f = line.split("\t", -1);
            flags.put(f[1], f[4]);
        }
        return flags;
    }

    static Pod kubeadmPod() throws IOException {
        try (InputStream in = Files.newInputStream(KUBEADM)) {
            return Serialization.unmarshal(in, Pod.class);
        }
    }

    static Container kubeadmContainer() throws IOException {
        List<Container> containers = kubeadmPod().getSpec().getContainers();
        assertThat(containers).hasSize(1);
        return containers.get(0);
    }

    static Map<String, String> kubeadmFlags() throws IOException {
        Map<String, String> flags = new LinkedHashMap<>();
        List<String> command = kubeadmContainer().getCommand();
        for (String arg : command.subList(1, command.size())) {
            Matcher m = Pattern.compile("--([a-z0-9-]+)=(.*)").matcher(arg);
            assertThat(m.matches()).as("%s is written --name=value, as kubeadm writes flags", arg).isTrue();
            assertThat(flags.put(m.group(1), m.group(2))).as("--%s once", m.group(1)).isNull();
        }
        return flags;
    }

    static Properties properties() throws IOException {
        Properties p = new Properties();
        try (InputStream in = Files.newInputStream(PROPERTIES)) {
            p.load(in);
        }
        return p;
    }

    static String projectVersion() throws IOException {
        // the application's POM (app/pom.xml) takes its version from the repository's parent POM
        Matcher m = Pattern.compile("<artifactId>qkcm-parent</artifactId>\\s*<version>([^<]+)</version>")
                .matcher(Files.readString(Path.of("pom.xml")));
        assertThat(m.find()).isTrue();
        return m.group(1);
    }

    /** What `QKCM_PRINT_JAVA_OPTS=1 <launcher>` prints, without a QKCM_JAVA_OPTS of the caller's. */
    static String printJavaOpts(Path launcher) throws Exception {
        ProcessBuilder pb = new ProcessBuilder("bash", launcher.toString()).redirectErrorStream(true);
        pb.environment().remove("QKCM_JAVA_OPTS");
        pb.environment().put("QKCM_PRINT_JAVA_OPTS", "1");
        Process process = pb.start();
        String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(process.exitValue()).as(out).isZero();
        return out;
    }
}
