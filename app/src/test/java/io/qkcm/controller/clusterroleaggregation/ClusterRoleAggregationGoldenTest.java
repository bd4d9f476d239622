package io.qkcm.controller.clusterroleaggregation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;

import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import io.qkcm.runtime.DeepCopy;
import io.qkcm.runtime.Json;
import io.qkcm.testing.Repository;

/**
 * Golden vectors printed by upstream's own syncClusterRole (hack/golden/clusterroleaggregation): for
 * upstream's TestSyncClusterRole table and more selector and rule shapes, whether a sync writes and
 * the exact apply body it sends; and the rules kube-apiserver's bootstrap aggregated roles (admin,
 * edit, view) end up with, with and without a CRD's aggregated roles.
 */
class ClusterRoleAggregationGoldenTest {

    static List<JsonNode> lines(String text) throws Exception {
        List<JsonNode> out = new ArrayList<>();
        for (String line : text.split("\n")) {
            if (!line.isBlank()) {
                out.add(Json.mapper().readTree(line));
            }
        }
        return out;
    }

    static List<JsonNode> cases() throws Exception {
        return lines(Files.readString(Repository.file("hack/golden/clusterroleaggregation/cases.jsonl")));
    }

    static Map<String, JsonNode> vectors() throws Exception {
        String text = new String(ClusterRoleAggregationGoldenTest.class
                .getResourceAsStream("/clusterroleaggregation/aggregation-vectors.jsonl").readAllBytes(),
                java.nio.charset.StandardCharsets.UTF_8);
        Map<String, JsonNode> byName = new LinkedHashMap<>();
        for (JsonNode v : lines(text)) {
            byName.put(v.get("name").asText(), v);
        }
        return byName;
    }

    static List<ClusterRole> roles(JsonNode c) throws Exception {
        List<ClusterRole> roles = new ArrayList<>();
        for (JsonNode r : c.get("clusterRoles")) {
            roles.add(Json.api().unmarshal(Json.mapper().writeValueAsString(r), ClusterRole.class));
        }
        return roles;
    }

    static List<PolicyRule> rules(JsonNode array) throws Exception {
        List<PolicyRule> rules = new ArrayList<>();
        for (JsonNode r : array) {
            rules.add(Json.api().unmarshal(Json.mapper().writeValueAsString(r), PolicyRule.class));
        }
        return rules;
    }

    @Test
    void syncsWriteWhatUpstreamWrites() throws Exception {
        Map<String, JsonNode> vectors = vectors();
        int checked = 0;
        for (JsonNode c : cases()) {
            if (c.path("fixedPoint").asBoolean()) {
                continue;
            }
            String name = c.get("name").asText();
            JsonNode expected = vectors.get(name);
            List<ClusterRole> roles = roles(c);
            ClusterRole synced = roles.stream().filter(r -> r.getMetadata().getName().equals(c.get("sync").asText()))
                    .findFirst().orElse(null);
            if (expected.has("error")) {
                assertThatThrownBy(() -> Aggregation.aggregatedRules(synced, roles)).as(name)
                        .isInstanceOf(IllegalArgumentException.class);
                continue;
            }
            String apply = null;
            if (synced != null && synced.getAggregationRule() != null) {
                List<PolicyRule> rules = Aggregation.aggregatedRules(synced, roles);
                if (!Aggregation.semanticallyEqual(rules, synced.getRules())) {
                    apply = Aggregation.applyBody(synced.getMetadata().getName(), rules);
                }
            }
            if (expected.get("apply").isNull()) {
                assertThat(apply).as(name).isNull();
            } else {
                // client-go's bytes: same fields in the same order
                assertThat(apply).as(name).isEqualTo(Json.mapper().writeValueAsString(expected.get("apply")));
            }
            checked++;
        }
        assertThat(checked).isGreaterThanOrEqualTo(15);
    }

    @Test
    void aggregationsReachUpstreamsFixedPoint() throws Exception {
        Map<String, JsonNode> vectors = vectors();
        int checked = 0;
        for (JsonNode c : cases()) {
            if (!c.path("fixedPoint").asBoolean()) {
                continue;
            }
            String name = c.get("name").asText();
            Map<String, ClusterRole> byName = new TreeMap<>();
            for (ClusterRole r : roles(c)) {
                byName.put(r.getMetadata().getName(), r);
            }
            int applies = fixedPoint(byName);
            JsonNode expected = vectors.get(name);
            assertThat(applies).as(name).isEqualTo(expected.get("applies").asInt());
            Map<String, List<PolicyRule>> actual = new HashMap<>();
            byName.values().stream().filter(r -> r.getAggregationRule() != null)
                    .forEach(r -> actual.put(r.getMetadata().getName(), r.getRules()));
            assertThat(actual.keySet()).as(name).containsExactlyInAnyOrderElementsOf(
                    () -> expected.get("rules").fieldNames());
            for (Map.Entry<String, List<PolicyRule>> e : actual.entrySet()) {
                List<PolicyRule> want = rules(expected.get("rules").get(e.getKey()));
                assertThat(Aggregation.semanticallyEqual(e.getValue(), want)).as("%s: %s", name, e.getKey()).isTrue();
            }
            checked++;
        }
        assertThat(checked).isEqualTo(3);
    }

    /** As the generator: every aggregating role synced in name order, rounds until nothing is written. */
    static int fixedPoint(Map<String, ClusterRole> byName) {
        int applies = 0;
        for (boolean wrote = true; wrote;) {
            wrote = false;
            for (String name : List.copyOf(byName.keySet())) {
                ClusterRole role = byName.get(name);
                if (role.getAggregationRule() == null) {
                    continue;
                }
                List<PolicyRule> rules = Aggregation.aggregatedRules(role, byName.values());
                if (Aggregation.semanticallyEqual(rules, role.getRules())) {
                    continue;
                }
                ClusterRole applied = DeepCopy.of(role);
                applied.setRules(new ArrayList<>(rules));
                byName.put(name, applied);
                applies++;
                wrote = true;
            }
        }
        return applies;
    }
}
