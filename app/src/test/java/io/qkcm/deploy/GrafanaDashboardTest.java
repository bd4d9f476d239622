package io.qkcm.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.qkcm.testing.Repository;

/**
 * deploy/grafana/kube-controller-manager.json is a well-formed Grafana dashboard whose queries name only
 * metrics and labels that both qkcm and upstream kube-controller-manager v1.34.4 expose, as scraped on the
 * local cluster into deploy/grafana/scrapes/. hack/check-dashboard.py checks the same and, with promtool,
 * that every expression parses; hack/render-dashboard.py runs them against a Prometheus.
 */
class GrafanaDashboardTest {

    static final Path DASHBOARD = Repository.file("deploy/grafana/kube-controller-manager.json");
    static final List<Path> SCRAPES = List.of(Repository.file("deploy/grafana/scrapes/qkcm.txt"),
            Repository.file("deploy/grafana/scrapes/upstream-v1.34.4.txt"));
    static final String DATASOURCE = "${datasource}";
    static final Pattern SELECTOR = Pattern.compile("([a-zA-Z_:][a-zA-Z0-9_:]*)\\s*\\{([^}]*)}");
    static final Pattern MATCHER = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)\\s*(=~|!~|!=|=)\\s*\"");
    static final Pattern GROUPING = Pattern.compile("\\b(?:by|without)\\s*\\(([^)]*)\\)");
    static final Pattern LABEL_VALUES = Pattern.compile("\\s*label_values\\((.*),\\s*(\\w+)\\)\\s*");

    final JsonNode dashboard = read();

    static JsonNode read() {
        try {
            return new ObjectMapper().readTree(DASHBOARD.toFile());
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    @Test
    void structure() {
        assertThat(dashboard.path("schemaVersion").asInt()).isGreaterThanOrEqualTo(36);
        assertThat(dashboard.path("uid").asText()).isNotEmpty();
        assertThat(dashboard.path("title").asText()).isNotEmpty();
        JsonNode variables = dashboard.path("templating").path("list");
        JsonNode datasource = variables.get(0);
        assertThat(datasource.path("name").asText()).isEqualTo("datasource");
        assertThat(datasource.path("type").asText()).isEqualTo("datasource");
        assertThat(datasource.path("query").asText()).isEqualTo("prometheus");
        for (JsonNode v : variables) {
            if (!v.path("type").asText().equals("datasource")) {
                assertThat(v.path("type").asText()).as(v.path("name").asText()).isEqualTo("query");
                assertThat(v.path("datasource").path("uid").asText()).as(v.path("name").asText()).isEqualTo(DATASOURCE);
            }
        }

        Set<Integer> ids = new HashSet<>();
        Map<String, String> cells = new HashMap<>();
        int queries = 0;
        for (JsonNode p : dashboard.path("panels")) {
            String where = "panel " + p.path("id").asInt() + " " + p.path("title").asText();
            assertThat(ids.add(p.path("id").asInt())).as(where + ": unique id").isTrue();
            JsonNode gp = p.path("gridPos");
            int x = gp.path("x").asInt(-1), y = gp.path("y").asInt(-1), w = gp.path("w").asInt(), h = gp.path("h").asInt();
            assertThat(x).as(where).isGreaterThanOrEqualTo(0);
            assertThat(x + w).as(where).isLessThanOrEqualTo(24);
            for (int cx = x; cx < x + w; cx++) {
                for (int cy = y; cy < y + h; cy++) {
                    assertThat(cells.put(cx + "," + cy, where)).as(where + " overlaps another panel").isNull();
                }
            }
            if (p.path("type").asText().equals("row")) {
                continue;
            }
            assertThat(p.path("title").asText()).isNotEmpty();
            assertThat(p.path("datasource").path("uid").asText()).as(where).isEqualTo(DATASOURCE);
            assertThat(p.path("targets").size()).as(where + ": targets").isPositive();
            Set<String> refIds = new HashSet<>();
            for (JsonNode t : p.path("targets")) {
                assertThat(refIds.add(t.path("refId").asText())).as(where + ": unique refId").isTrue();
                assertThat(t.path("datasource").path("uid").asText()).as(where).isEqualTo(DATASOURCE);
                assertThat(t.path("expr").asText()).as(where).isNotBlank();
                queries++;
            }
        }
        assertThat(queries).isGreaterThanOrEqualTo(15);
    }

    @Test
    void everyQueryNamesOnlyMetricsAndLabelsBothManagersExpose() throws IOException {
        List<String[]> exprs = new ArrayList<>(); // where, expr, extra grouping label
        for (JsonNode v : dashboard.path("templating").path("list")) {
            if (v.path("type").asText().equals("query")) {
                Matcher m = LABEL_VALUES.matcher(v.path("definition").asText());
                assertThat(m.matches()).as("variable " + v.path("name").asText()).isTrue();
                exprs.add(new String[] {"variable " + v.path("name").asText(), m.group(1), m.group(2)});
            }
        }
        for (JsonNode p : dashboard.path("panels")) {
            for (JsonNode t : p.path("targets")) {
                exprs.add(new String[] {p.path("title").asText() + " " + t.path("refId").asText(), t.path("expr").asText(), null});
            }
        }
        for (Path scrape : SCRAPES) {
            Map<String, Set<String>> exposed = labelsByMetric(scrape);
            for (String[] e : exprs) {
                String where = scrape.getFileName() + ": " + e[0];
                Matcher s = SELECTOR.matcher(e[1]);
                Set<String> metrics = new HashSet<>();
                Set<String> have = new HashSet<>(Set.of("job", "instance"));
                while (s.find()) {
                    String metric = s.group(1);
                    metrics.add(metric);
                    assertThat(exposed).as(where).containsKey(metric);
                    have.addAll(exposed.get(metric));
                    Matcher m = MATCHER.matcher(s.group(2));
                    while (m.find()) {
                        assertThat(have).as(where + ": label of " + metric).contains(m.group(1));
                    }
                }
                if (metrics.isEmpty() && e[1].strip().matches("[a-zA-Z_:][a-zA-Z0-9_:]*")) {
                    metrics.add(e[1].strip());
                    assertThat(exposed).as(where).containsKey(e[1].strip());
                    have.addAll(exposed.get(e[1].strip()));
                }
                assertThat(metrics).as(where + ": a metric selector").isNotEmpty();
                Matcher g = GROUPING.matcher(e[1]);
                while (g.find()) {
                    for (String label : g.group(1).split(",")) {
                        assertThat(have).as(where + ": grouped by").contains(label.strip());
                    }
                }
                if (e[2] != null) {
                    assertThat(have).as(where + ": label_values label").contains(e[2]);
                }
            }
        }
    }

    /** Metric name to the label names of its samples, from a Prometheus text exposition. */
    static Map<String, Set<String>> labelsByMetric(Path scrape) throws IOException {
        Map<String, Set<String>> labels = new HashMap<>();
        Pattern sample = Pattern.compile("([a-zA-Z_:][a-zA-Z0-9_:]*)(\\{([^}]*)})?\\s.*");
        Pattern label = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"");
        for (String line : Files.readAllLines(scrape)) {
            Matcher m = sample.matcher(line);
            if (line.startsWith("#") || !m.matches()) {
                continue;
            }
            Set<String> names = labels.computeIfAbsent(m.group(1), k -> new HashSet<>());
            Matcher l = label.matcher(m.group(3) == null ? "" : m.group(3));
            while (l.find()) {
                names.add(l.group(1));
            }
        }
        return labels;
    }
}
