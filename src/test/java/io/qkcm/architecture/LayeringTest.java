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
 * The three floors of docs/design.md, read from the sources: the process ({@code io.qkcm.manager})
 * wires everything; the plumbing ({@code io.qkcm.runtime}, the kit in {@code io.qkcm.controller}'s own
 * package and its {@code events}, {@code hash}, {@code util} and {@code history} subpackages,
 * {@code io.qkcm.endpointslice}, {@code io.qkcm.pki}) never imports the process or a controller; a
 * controller ({@code io.qkcm.controller.<name>}) imports the plumbing only, never the process nor
 * another controller.
 */
class LayeringTest {

    private static final Path SOURCES = Path.of("src/main/java/io/qkcm");
    private static final Set<String> KIT = Set.of("events", "hash", "util", "history");
    private static final Pattern IMPORT = Pattern.compile("^import (?:static )?io\\.qkcm\\.([\\w.]+);", Pattern.MULTILINE);
    private static final Pattern QUALIFIED = Pattern.compile("\\bio\\.qkcm\\.(manager|controller\\.\\w+)\\.");

    /** The controller a file belongs to, or null for the process or the plumbing. */
    private static String controllerOf(String dotted) {
        if (!dotted.startsWith("controller.")) {
            return null;
        }
        String[] parts = dotted.split("\\.");
        if (parts.length < 3 || KIT.contains(parts[1])) {
            return null; // a class of the kit's own package, or a kit subpackage
        }
        return parts[1];
    }

    private static String packageOf(Path file) {
        Path rel = SOURCES.relativize(file.getParent());
        return rel.toString().replace('/', '.');
    }

    private static List<String> references(String source) {
        List<String> refs = new ArrayList<>();
        Matcher m = IMPORT.matcher(source);
        while (m.find()) {
            refs.add(m.group(1));
        }
        Matcher q = QUALIFIED.matcher(source.replaceAll("(?m)^(import|package) .*$", ""));
        while (q.find()) {
            refs.add(q.group(1) + ".X");
        }
        return refs;
    }

    @Test
    void importsRunOneWay() throws IOException {
        List<String> violations = new ArrayList<>();
        try (Stream<Path> files = Files.walk(SOURCES)) {
            for (Path file : files.filter(p -> p.toString().endsWith(".java")).toList()) {
                String pkg = packageOf(file);
                if (pkg.equals("manager") || pkg.startsWith("manager.")) {
                    continue; // the process may import anything
                }
                String own = controllerOf(pkg + ".X");
                for (String ref : references(Files.readString(file))) {
                    if (ref.startsWith("manager.")) {
                        violations.add(file + " imports the process: io.qkcm." + ref);
                        continue;
                    }
                    String other = controllerOf(ref);
                    if (other != null && !other.equals(own)) {
                        violations.add(file + (own == null ? " (plumbing)" : " (controller " + own + ")")
                                + " imports controller " + other + ": io.qkcm." + ref);
                    }
                }
            }
        }
        assertThat(violations).isEmpty();
    }
}
