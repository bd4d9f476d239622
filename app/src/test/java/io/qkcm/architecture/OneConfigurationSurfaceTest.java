package io.qkcm.architecture;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

/**
 * One configuration surface: qkcm's switches are Quarkus configuration ({@code qkcm.<flag>} and
 * {@code qkcm.tuning.*}), read once and passed down; none is a system property read into a static, and no
 * static initializer changes process-wide state (system properties).
 */
class OneConfigurationSurfaceTest {

    private static final Path SOURCES = Path.of("src/main/java");
    /** A read of an io.qkcm.* or qkcm.* system property, or of any property through the boxed types' getters. */
    static final Pattern PROPERTY_READ = Pattern.compile("System\\s*\\.\\s*getProperty\\s*\\(\\s*\"(io\\.)?qkcm\\."
            + "|Boolean\\s*\\.\\s*getBoolean\\s*\\(|Integer\\s*\\.\\s*getInteger\\s*\\(|Long\\s*\\.\\s*getLong\\s*\\(");
    /** A static initializer block. */
    static final Pattern STATIC_BLOCK = Pattern.compile("(?m)^\\s*static\\s*\\{");

    @Test
    void noSystemPropertySwitches() throws IOException {
        List<String> found = new ArrayList<>();
        for (Path file : sources()) {
            String source = Files.readString(file);
            Matcher m = PROPERTY_READ.matcher(source);
            while (m.find()) {
                found.add(SOURCES.relativize(file) + ": " + m.group());
            }
        }
        assertThat(found).as("switches read from system properties (make them qkcm.tuning.*)").isEmpty();
    }

    @Test
    void noStaticInitializerSetsSystemProperties() throws IOException {
        List<String> found = new ArrayList<>();
        for (Path file : sources()) {
            String source = Files.readString(file);
            Matcher m = STATIC_BLOCK.matcher(source);
            while (m.find()) {
                String block = block(source, source.indexOf('{', m.start()));
                if (block.contains("System.setProperty") || block.contains("System.getProperties().put")) {
                    found.add(SOURCES.relativize(file).toString());
                }
            }
        }
        assertThat(found).as("static initializers that set system properties").isEmpty();
    }

    @Test
    void patternsSeeWhatTheyLookFor() {
        assertThat(PROPERTY_READ.matcher("!\"false\".equals(System.getProperty(\"io.qkcm.watch-list\"))").find()).isTrue();
        assertThat(PROPERTY_READ.matcher("Boolean.getBoolean(VIRTUAL_THREADS)").find()).isTrue();
        assertThat(PROPERTY_READ.matcher("System.getProperty(\"java.home\")").find()).isFalse();
        String source = "class A {\n    static {\n        if (x) { System.setProperty(\"a\", \"b\"); }\n    }\n}";
        Matcher m = STATIC_BLOCK.matcher(source);
        assertThat(m.find()).isTrue();
        assertThat(block(source, source.indexOf('{', m.start()))).contains("System.setProperty");
    }

    private static List<Path> sources() throws IOException {
        try (Stream<Path> files = Files.walk(SOURCES)) {
            return files.filter(p -> p.toString().endsWith(".java")).toList();
        }
    }

    /** The text of the brace block opening at {@code open}. */
    private static String block(String source, int open) {
        int depth = 0;
        for (int i = open; i < source.length(); i++) {
            char c = source.charAt(i);
            if (c == '{') {
                depth++;
            } else if (c == '}' && --depth == 0) {
                return source.substring(open, i + 1);
            }
        }
        return source.substring(open);
    }
}
