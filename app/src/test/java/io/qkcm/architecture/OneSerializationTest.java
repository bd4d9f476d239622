package io.qkcm.architecture;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

/**
 * One JSON configuration for the process ({@code io.qkcm.runtime.Json}): no other ObjectMapper, no other
 * KubernetesSerialization, no use of fabric8's static {@code Serialization} (a default serialization of its
 * own, without the process's modules), anywhere in src/main but where the provider builds them.
 */
class OneSerializationTest {

    private static final Path SOURCES = Path.of("src/main/java");
    /** The provider. */
    private static final Set<String> PROVIDER = Set.of("io/qkcm/runtime/Json.java");
    /**
     * {@code new ObjectMapper(}, {@code new KubernetesSerialization(}, and fabric8's static class: its import,
     * a qualified use, or {@code Serialization.} not preceded by a letter (which would make it another class,
     * e.g. {@code KubernetesSerialization.}).
     */
    static final Pattern FORBIDDEN = Pattern.compile("new\\s+ObjectMapper\\s*\\(|new\\s+KubernetesSerialization\\s*\\("
            + "|io\\.fabric8\\.kubernetes\\.client\\.utils\\.Serialization\\b|(?<![\\w.])Serialization\\s*\\.\\s*\\w");

    @Test
    void noSerializationOutsideTheProvider() throws IOException {
        List<String> found = new ArrayList<>();
        try (Stream<Path> files = Files.walk(SOURCES)) {
            for (Path file : files.filter(p -> p.toString().endsWith(".java")).toList()) {
                String name = SOURCES.relativize(file).toString().replace('\\', '/');
                if (PROVIDER.contains(name)) {
                    continue;
                }
                found.addAll(matches(name, Files.readString(file)));
            }
        }
        assertThat(found).as("ObjectMappers, KubernetesSerializations or fabric8's static Serialization outside %s",
                PROVIDER).isEmpty();
    }

    @Test
    void theProviderIsWhereTheyAreBuilt() throws IOException {
        // the scan sees what it looks for: the provider itself has both
        List<String> inProvider = matches("Json.java", Files.readString(SOURCES.resolve("io/qkcm/runtime/Json.java")));
        assertThat(inProvider).anyMatch(m -> m.contains("new ObjectMapper("));
        assertThat(inProvider).anyMatch(m -> m.contains("new KubernetesSerialization("));
    }

    @Test
    void patternTellsFabric8sStaticClassFromOthers() {
        assertThat(matches("x", "String s = Serialization.asJson(o);")).hasSize(1);
        assertThat(matches("x", "import io.fabric8.kubernetes.client.utils.Serialization;")).hasSize(1);
        assertThat(matches("x", "io.fabric8.kubernetes.client.utils.Serialization.unmarshal(s, T.class)")).hasSize(1);
        assertThat(matches("x", "var m = new ObjectMapper ();")).hasSize(1);
        assertThat(matches("x", "KubernetesSerialization s = Json.api(); KubernetesSerialization.class; "
                + "ApiSerialization.create(); jws.getCompactSerialization();")).isEmpty();
    }

    private static List<String> matches(String name, String source) {
        List<String> found = new ArrayList<>();
        Matcher m = FORBIDDEN.matcher(source);
        while (m.find()) {
            int line = 1 + (int) source.substring(0, m.start()).chars().filter(c -> c == '\n').count();
            found.add(name + ":" + line + ": " + m.group());
        }
        return found;
    }
}
