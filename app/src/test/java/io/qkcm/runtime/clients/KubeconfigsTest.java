package io.qkcm.runtime.clients;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import com.fasterxml.jackson.databind.SerializationFeature;

import io.fabric8.kubernetes.client.Config;
import io.qkcm.runtime.Json;

/**
 * The kubeconfig read without fabric8's static Serialization ({@link Kubeconfigs}) gives the Config fabric8's own
 * {@code Config.fromKubeconfig} gives, field for field (both written out as JSON), on the shapes kubeconfigs take:
 * embedded and relative-file credentials, tokens, basic auth, several contexts, a namespace, proxy and TLS
 * settings, extensions, an exec plugin; one with values Jackson coerces, and one it cannot bind, go to fabric8's
 * parse (the latter failing as fabric8's does).
 */
class KubeconfigsTest {

    @TempDir
    static Path dir;

    static Stream<String> kubeconfigs() {
        String cluster = """
                clusters:
                - name: kwok
                  cluster:
                    server: https://127.0.0.1:6443
                    certificate-authority-data: Y2EtZGF0YQ==
                """;
        return Stream.of(
                // embedded client certificate (kwokctl's, kubeadm's)
                """
                        apiVersion: v1
                        kind: Config
                        current-context: kwok
                        """ + cluster + """
                        contexts:
                        - name: kwok
                          context: {cluster: kwok, user: admin}
                        users:
                        - name: admin
                          user:
                            client-certificate-data: Y2VydA==
                            client-key-data: a2V5
                        """,
                // files relative to the kubeconfig, several contexts, a namespace, TLS and proxy settings
                """
                        apiVersion: v1
                        kind: Config
                        current-context: second
                        clusters:
                        - name: a
                          cluster: {server: "https://a.example:6443", certificate-authority: pki/ca.crt}
                        - name: b
                          cluster:
                            server: https://b.example:6443
                            insecure-skip-tls-verify: true
                            tls-server-name: api.b
                            proxy-url: http://proxy:3128
                            disable-compression: true
                            extensions:
                            - name: client.authentication.k8s.io/exec
                              extension: {audience: x, nested: {k: v}}
                        contexts:
                        - name: first
                          context: {cluster: a, user: files}
                        - name: second
                          context: {cluster: b, user: token, namespace: team}
                          extensions:
                          - name: ext
                            extension: {apiVersion: v1, kind: ConfigMap, metadata: {name: x}}
                        users:
                        - name: files
                          user: {client-certificate: pki/c.crt, client-key: /abs/c.key}
                        - name: token
                          user: {token: abc, as: someone, as-groups: [g1, g2]}
                        preferences: {colors: true}
                        """,
                // basic auth, a token file, no current context
                """
                        apiVersion: v1
                        kind: Config
                        """ + cluster + """
                        contexts:
                        - name: basic
                          context: {cluster: kwok, user: basic}
                        users:
                        - name: basic
                          user: {username: u, password: p, tokenFile: tok}
                        """,
                // an exec plugin that is not run (the current context's user has none)
                """
                        apiVersion: v1
                        kind: Config
                        current-context: plain
                        """ + cluster + """
                        contexts:
                        - name: plain
                          context: {cluster: kwok, user: plain}
                        - name: exec
                          context: {cluster: kwok, user: exec}
                        users:
                        - name: plain
                          user: {token: t}
                        - name: exec
                          user:
                            exec:
                              apiVersion: client.authentication.k8s.io/v1
                              command: /bin/false
                              args: [a]
                              env: [{name: A, value: b}]
                              interactiveMode: Never
                        """,
                // values Jackson coerces (a number for a string, a string for a boolean): fabric8 parses it
                """
                        apiVersion: v1
                        kind: Config
                        current-context: kwok
                        clusters:
                        - name: kwok
                          cluster: {server: "https://127.0.0.1:6443", insecure-skip-tls-verify: "true"}
                        contexts:
                        - name: kwok
                          context: {cluster: kwok, user: admin, namespace: 123}
                        users:
                        - name: admin
                          user: {token: t}
                        """,
                // a value the model cannot bind: fabric8's parse, and its error
                """
                        apiVersion: v1
                        kind: Config
                        current-context: kwok
                        """ + cluster + """
                        contexts:
                        - name: kwok
                          context: {cluster: kwok, user: admin, namespace: [not, a, string]}
                        users:
                        - name: admin
                          user: {token: t}
                        """);
    }

    @ParameterizedTest
    @MethodSource("kubeconfigs")
    void theConfigIsFabric8sOwn(String kubeconfig) throws IOException {
        Path file = dir.resolve("kubeconfig-" + Integer.toHexString(kubeconfig.hashCode()) + ".yaml");
        Files.writeString(file, kubeconfig);
        String path = file.toAbsolutePath().toString();
        Config fabric8;
        try {
            fabric8 = Config.fromKubeconfig(null, kubeconfig, path);
        } catch (RuntimeException e) {
            assertThatThrownBy(() -> Kubeconfigs.fromKubeconfig(kubeconfig, path)).isInstanceOf(e.getClass())
                    .hasMessage(e.getMessage());
            assertThat(kubeconfig).contains("[not, a, string]");
            return;
        }
        Config ours = Kubeconfigs.fromKubeconfig(kubeconfig, path);
        assertThat(json(ours)).isEqualTo(json(fabric8));
        assertThat(ours.getMasterUrl()).isEqualTo(fabric8.getMasterUrl()).isNotBlank();
        assertThat(ours.getCurrentContext()).isEqualTo(fabric8.getCurrentContext());
    }

    @ParameterizedTest
    @MethodSource("kubeconfigs")
    void allButTheUnbindableBindWithoutFabric8sParse(String kubeconfig) throws IOException {
        Path file = dir.resolve("bind.yaml");
        Files.writeString(file, kubeconfig);
        boolean binds;
        try {
            Kubeconfigs.bind(kubeconfig);
            binds = true;
        } catch (RuntimeException e) {
            binds = false;
        }
        assertThat(binds).isEqualTo(!kubeconfig.contains("[not, a, string]") && !kubeconfig.contains("namespace: 123"));
    }

    /** The current user's exec plugin runs once, as through fabric8, even when it fails. */
    @Test
    void anExecPluginRunsOnceAndFailsAsFabric8s() throws IOException {
        Path marker = dir.resolve("exec-runs");
        String kubeconfig = """
                apiVersion: v1
                kind: Config
                current-context: exec
                clusters:
                - name: kwok
                  cluster: {server: "https://127.0.0.1:6443"}
                contexts:
                - name: exec
                  context: {cluster: kwok, user: exec}
                users:
                - name: exec
                  user:
                    exec:
                      apiVersion: client.authentication.k8s.io/v1
                      command: /bin/sh
                      args: ["-c", "echo run >> %s; exit 1"]
                """.formatted(marker);
        Path file = dir.resolve("exec.yaml");
        Files.writeString(file, kubeconfig);
        Throwable fabric8 = catchThrowable(() -> Config.fromKubeconfig(null, kubeconfig, file.toString()));
        assertThat(Files.readAllLines(marker)).hasSize(1);
        Files.delete(marker);
        Throwable ours = catchThrowable(() -> Kubeconfigs.fromKubeconfig(kubeconfig, file.toString()));
        assertThat(Files.readAllLines(marker)).hasSize(1);
        if (fabric8 == null) {
            assertThat(ours).isNull();
        } else {
            assertThat(ours).isInstanceOf(fabric8.getClass()).hasMessage(fabric8.getMessage());
        }
    }

    private static String json(Config config) throws IOException {
        return Json.mapper().copy().configure(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS, true)
                .writerWithDefaultPrettyPrinter().writeValueAsString(config);
    }
}
