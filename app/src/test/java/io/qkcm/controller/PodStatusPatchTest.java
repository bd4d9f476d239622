package io.qkcm.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.PodConditionBuilder;
import io.fabric8.kubernetes.api.model.PodStatus;
import io.fabric8.kubernetes.api.model.PodStatusBuilder;
import io.fabric8.kubernetes.client.utils.Serialization;

/**
 * The pod status patch against golden vectors of upstream's own code (hack/golden/podstatuspatch:
 * strategicpatch.CreateTwoWayMergePatch at apimachinery v0.34.4), byte for byte, and UpdatePodCondition.
 */
class PodStatusPatchTest {

    @Test
    void patchesAreUpstreamsByteForByte() throws Exception {
        ObjectMapper mapper = new ObjectMapper();
        List<JsonNode> vectors = new ArrayList<>();
        try (BufferedReader r = new BufferedReader(new InputStreamReader(
                getClass().getClassLoader().getResourceAsStream("podstatuspatch.jsonl"), StandardCharsets.UTF_8))) {
            for (String line = r.readLine(); line != null; line = r.readLine()) {
                if (!line.isBlank()) {
                    vectors.add(mapper.readTree(line));
                }
            }
        }
        assertThat(vectors).hasSizeGreaterThanOrEqualTo(10);
        for (JsonNode v : vectors) {
            PodStatus oldStatus = Serialization.unmarshal(v.get("old").toString(), PodStatus.class);
            PodStatus newStatus = Serialization.unmarshal(v.get("new").toString(), PodStatus.class);
            String patch = PodStatusPatch.prepare(v.get("uid").asText(), oldStatus, newStatus);
            if (v.get("unchanged").asBoolean()) {
                assertThat(patch).as(v.get("name").asText()).isNull();
            } else {
                assertThat(patch).as(v.get("name").asText()).isEqualTo(v.get("patch").asText());
            }
        }
    }

    @Test
    void otherStatusFieldsAreRefused() {
        PodStatus old = new PodStatusBuilder().withPhase("Running").withPodIP("10.0.0.1").build();
        PodStatus changed = new PodStatusBuilder().withPhase("Failed").withPodIP("10.0.0.2").build();
        assertThatThrownBy(() -> PodStatusPatch.prepare("u", old, changed)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void updatePodConditionAddsReplacesAndKeepsTransitionTimeOfAnUnchangedStatus() {
        Instant now = Instant.parse("2026-01-02T03:04:05.678Z");
        PodStatus status = new PodStatusBuilder().withPhase("Running").build();
        PodCondition added = condition("True", "R", "m");
        assertThat(PodStatusPatch.updatePodCondition(status, added, now)).isTrue();
        assertThat(status.getConditions()).hasSize(1);
        assertThat(status.getConditions().get(0).getLastTransitionTime()).isEqualTo("2026-01-02T03:04:05Z");

        // same status, same texts: nothing changed and the transition time stays
        PodCondition same = condition("True", "R", "m");
        assertThat(PodStatusPatch.updatePodCondition(status, same, now.plusSeconds(60))).isFalse();
        assertThat(status.getConditions().get(0).getLastTransitionTime()).isEqualTo("2026-01-02T03:04:05Z");

        // same status, another reason: changed, transition time kept
        PodCondition reason = condition("True", "Other", "m");
        assertThat(PodStatusPatch.updatePodCondition(status, reason, now.plusSeconds(60))).isTrue();
        assertThat(status.getConditions().get(0).getReason()).isEqualTo("Other");
        assertThat(status.getConditions().get(0).getLastTransitionTime()).isEqualTo("2026-01-02T03:04:05Z");

        // another status: a new transition time
        PodCondition flipped = condition("False", "Other", "m");
        assertThat(PodStatusPatch.updatePodCondition(status, flipped, now.plusSeconds(60))).isTrue();
        assertThat(status.getConditions()).hasSize(1);
        assertThat(status.getConditions().get(0).getLastTransitionTime()).isEqualTo("2026-01-02T03:05:05Z");
    }

    @Test
    void copyIsDeep() {
        PodStatus status = new PodStatusBuilder().withPhase("Running").withConditions(condition("True", "R", "m")).build();
        PodStatus copy = PodStatusPatch.copy(status);
        copy.getConditions().get(0).setStatus("False");
        copy.setPhase("Failed");
        assertThat(status.getConditions().get(0).getStatus()).isEqualTo("True");
        assertThat(status.getPhase()).isEqualTo("Running");
    }

    private static PodCondition condition(String status, String reason, String message) {
        return new PodConditionBuilder().withType("DisruptionTarget").withStatus(status).withReason(reason)
                .withMessage(message).build();
    }
}
