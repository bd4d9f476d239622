package io.qkcm.architecture;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

/**
 * The floors of docs/design.md, read from the sources, from the bottom up:
 * <ol>
 * <li><b>runtime</b> ({@code io.qkcm.runtime.*}, {@code io.qkcm.pki}): informers, clients, options, work
 * queues, events, the JOSDK glue — client-go's and the framework's share;</li>
 * <li><b>kit</b> (the classes of {@code io.qkcm.controller} itself and its {@code hash}, {@code history} and
 * {@code util} subpackages, {@code io.qkcm.endpointslice}): upstream's {@code pkg/controller} helpers;</li>
 * <li><b>controllers</b> ({@code io.qkcm.controller.<name>}): one package tree per upstream controller;</li>
 * <li><b>process</b> ({@code io.qkcm.manager.*}).</li>
 * </ol>
 * Imports run only down, a controller never imports another controller, and no two packages import each
 * other through any chain.
 */
class LayeringTest {

    private static final Path SOURCES = Path.of("src/main/java/io/qkcm");
    private static final Set<String> KIT = Set.of("hash", "util", "history");
    private static final Pattern IMPORT = Pattern.compile("^import (?:static )?io\\.qkcm\\.([\\w.]+);", Pattern.MULTILINE);
    private static final Pattern QUALIFIED = Pattern.compile("\\bio\\.qkcm\\.((?:[a-z]\\w*\\.)*)[A-Z]");

    enum Floor {
        RUNTIME, KIT, CONTROLLER, PROCESS
    }

    /** The floor of a package (dotted, below {@code io.qkcm}). */
    static Floor floorOf(String pkg) {
        String[] parts = pkg.split("\\.");
        return switch (parts[0]) {
            case "runtime", "pki" -> Floor.RUNTIME;
            case "endpointslice" -> Floor.KIT;
            case "manager" -> Floor.PROCESS;
            case "controller" -> parts.length == 1 || KIT.contains(parts[1]) ? Floor.KIT : Floor.CONTROLLER;
            default -> throw new AssertionError("a package of no floor: io.qkcm." + pkg);
        };
    }

    /** The controller a package belongs to, or null outside the controllers' floor. */
    static String controllerOf(String pkg) {
        return floorOf(pkg) == Floor.CONTROLLER ? pkg.split("\\.")[1] : null;
    }

    private static String packageOf(Path file) {
        return SOURCES.relativize(file.getParent()).toString().replace('/', '.');
    }

    /** The packages (below io.qkcm) a source file refers to, by import or by qualified name. */
    static Set<String> references(String source) {
        Set<String> refs = new TreeSet<>();
        Matcher m = IMPORT.matcher(source);
        while (m.find()) {
            String imported = m.group(1);
            // io.qkcm.a.b.Type or io.qkcm.a.b.Type.member (static): the package is the lower-case prefix
            StringBuilder pkg = new StringBuilder();
            for (String part : imported.split("\\.")) {
                if (Character.isUpperCase(part.charAt(0)) || part.equals("*")) {
                    break;
                }
                pkg.append(pkg.isEmpty() ? "" : ".").append(part);
            }
            refs.add(pkg.toString());
        }
        Matcher q = QUALIFIED.matcher(source.replaceAll("(?m)^(import|package) .*$", ""));
        while (q.find()) {
            refs.add(q.group(1).replaceAll("\\.$", ""));
        }
        return refs;
    }

    /** Package → the packages its sources refer to. */
    static Map<String, Set<String>> packageGraph() throws IOException {
        Map<String, Set<String>> graph = new TreeMap<>();
        try (Stream<Path> files = Files.walk(SOURCES)) {
            for (Path file : files.filter(p -> p.toString().endsWith(".java")).toList()) {
                String pkg = packageOf(file);
                Set<String> refs = graph.computeIfAbsent(pkg, p -> new TreeSet<>());
                for (String ref : references(Files.readString(file))) {
                    if (!ref.equals(pkg)) {
                        refs.add(ref);
                    }
                }
            }
        }
        // only this application's packages (io.qkcm.devui.* is the Dev UI extension, a dependency)
        graph.values().forEach(refs -> refs.retainAll(graph.keySet()));
        return graph;
    }

    @Test
    void importsRunOnlyDown() throws IOException {
        List<String> violations = new ArrayList<>();
        packageGraph().forEach((pkg, refs) -> {
            Floor floor = floorOf(pkg);
            String own = controllerOf(pkg);
            for (String ref : refs) {
                Floor to = floorOf(ref);
                if (to.compareTo(floor) > 0) {
                    violations.add("io.qkcm." + pkg + " (" + floor + ") imports up: io.qkcm." + ref + " (" + to + ")");
                } else if (to == Floor.CONTROLLER && floor == Floor.CONTROLLER && !controllerOf(ref).equals(own)) {
                    violations.add("controller " + own + " imports controller " + controllerOf(ref) + ": io.qkcm." + ref);
                }
            }
        });
        assertThat(violations).isEmpty();
    }

    @Test
    void noPackageCycles() throws IOException {
        Map<String, Set<String>> graph = packageGraph();
        List<List<String>> cycles = stronglyConnected(graph).stream().filter(c -> c.size() > 1).toList();
        assertThat(cycles).as("packages that import each other through a chain").isEmpty();
    }

    @Test
    void theCheckSeesUpwardImportsAndCycles() {
        // the rules themselves: a runtime class importing a controller, and a two-package cycle
        assertThat(references("package io.qkcm.runtime.josdk;\nimport io.qkcm.controller.WorkQueue;\n"
                + "class A { io.qkcm.manager.serving.Server s; }"))
                .containsExactly("controller", "manager.serving");
        assertThat(floorOf("controller")).isEqualTo(Floor.KIT);
        assertThat(floorOf("controller.history")).isEqualTo(Floor.KIT);
        assertThat(floorOf("controller.job.metrics")).isEqualTo(Floor.CONTROLLER);
        assertThat(controllerOf("controller.job.metrics")).isEqualTo("job");
        Map<String, Set<String>> cyclic = new TreeMap<>(Map.of("a", Set.of("b"), "b", Set.of("c"), "c", Set.of("a"),
                "d", Set.of("a")));
        assertThat(stronglyConnected(cyclic)).contains(List.of("a", "b", "c"));
    }

    /** Tarjan's strongly connected components, each sorted. */
    static List<List<String>> stronglyConnected(Map<String, Set<String>> graph) {
        Map<String, Integer> index = new HashMap<>();
        Map<String, Integer> low = new HashMap<>();
        Deque<String> stack = new ArrayDeque<>();
        Set<String> onStack = new TreeSet<>();
        List<List<String>> out = new ArrayList<>();
        int[] counter = { 0 };
        for (String v : graph.keySet()) {
            if (!index.containsKey(v)) {
                connect(v, graph, index, low, stack, onStack, out, counter);
            }
        }
        return out;
    }

    private static void connect(String v, Map<String, Set<String>> graph, Map<String, Integer> index,
            Map<String, Integer> low, Deque<String> stack, Set<String> onStack, List<List<String>> out, int[] counter) {
        index.put(v, counter[0]);
        low.put(v, counter[0]++);
        stack.push(v);
        onStack.add(v);
        for (String w : graph.getOrDefault(v, Set.of())) {
            if (!index.containsKey(w)) {
                connect(w, graph, index, low, stack, onStack, out, counter);
                low.put(v, Math.min(low.get(v), low.get(w)));
            } else if (onStack.contains(w)) {
                low.put(v, Math.min(low.get(v), index.get(w)));
            }
        }
        if (low.get(v).equals(index.get(v))) {
            List<String> component = new ArrayList<>();
            String w;
            do {
                w = stack.pop();
                onStack.remove(w);
                component.add(w);
            } while (!w.equals(v));
            component.sort(null);
            out.add(component);
        }
    }
}
