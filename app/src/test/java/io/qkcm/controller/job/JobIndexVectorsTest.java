package io.qkcm.controller.job;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeSet;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;

import io.qkcm.runtime.Json;

/**
 * Golden vectors printed by upstream's own code (hack/golden/jobindexes): interval strings of
 * completedIndexes/failedIndexes and the generateName of Indexed Jobs' pods match byte for byte.
 */
class JobIndexVectorsTest {

    @Test
    void intervalsAndGenerateNamesMatchUpstream() throws Exception {
        List<JsonNode> vectors = new ArrayList<>();
        try (BufferedReader r = new BufferedReader(new InputStreamReader(
                getClass().getResourceAsStream("/job/index-intervals-vectors.jsonl"), StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                vectors.add(Json.mapper().readTree(line));
            }
        }
        assertThat(vectors).hasSizeGreaterThan(20);
        for (JsonNode v : vectors) {
            if (v.has("indexes")) {
                OrderedIntervals parsed = OrderedIntervals.parse(v.get("indexes").asText(), v.get("completions").asInt());
                assertThat(parsed.toString()).as("parse %s", v).isEqualTo(v.path("parsed").asText(""));
                assertThat(parsed.total()).as("total %s", v).isEqualTo(v.get("total").asInt());
                List<Integer> add = new ArrayList<>();
                v.path("add").forEach(n -> add.add(n.asInt()));
                // upstream is handed the new indexes sorted and deduplicated (sets.List)
                assertThat(parsed.withOrderedIndexes(new ArrayList<>(new TreeSet<>(add))).toString()).as("merge %s", v)
                        .isEqualTo(v.path("merged").asText(""));
            } else {
                assertThat(IndexedJobUtils.podGenerateNameWithIndex(v.get("job").asText(), v.path("index").asInt(0)))
                        .as("generateName %s", v).isEqualTo(v.get("generateName").asText());
            }
        }
    }
}
