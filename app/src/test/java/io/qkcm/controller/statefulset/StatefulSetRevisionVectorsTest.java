package io.qkcm.controller.statefulset;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.fabric8.kubernetes.api.model.apps.ControllerRevision;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.qkcm.controller.history.ControllerHistory;

/**
 * The revision data, hash and name of StatefulSets as read from a real API server, against upstream's own
 * getPatch and NewControllerRevision (hack/golden/history stspatch).
 */
class StatefulSetRevisionVectorsTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();

    static List<JsonNode> vectors() throws Exception {
        List<JsonNode> out = new ArrayList<>();
        try (BufferedReader r = new BufferedReader(new InputStreamReader(StatefulSetRevisionVectorsTest.class
                .getResourceAsStream("/history/statefulset-patch-vectors.jsonl"), StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                if (!line.isBlank()) {
                    out.add(JSON.readTree(line));
                }
            }
        }
        return out;
    }

    @Test
    void revisionDataHashAndNameMatchUpstream() throws Exception {
        List<JsonNode> vectors = vectors();
        assertThat(vectors).hasSizeGreaterThanOrEqualTo(16);
        for (JsonNode v : vectors) {
            // as the shared informer holds it: decoded by fabric8 from the API server's JSON
            StatefulSet set = SERIALIZATION.unmarshal(v.get("set").toString(), StatefulSet.class);
            String name = set.getMetadata().getName();
            assertThat(StatefulSetUtils.getPatch(set)).as("patch of %s", name).isEqualTo(v.get("patch").textValue());
            Integer cc = set.getStatus() == null ? null : set.getStatus().getCollisionCount();
            ControllerRevision cr = StatefulSetUtils.newRevision(set, 1, cc);
            assertThat(cr.getMetadata().getName()).as("name of %s", name).isEqualTo(v.get("name").textValue());
            assertThat(cr.getMetadata().getLabels()).containsEntry(ControllerHistory.REVISION_HASH_LABEL,
                    v.get("hash").textValue());
            // applying the revision gives back the same template, hence the same revision
            StatefulSet applied = StatefulSetUtils.applyRevision(set, cr);
            assertThat(StatefulSetUtils.getPatch(applied)).as("re-applied %s", name).isEqualTo(v.get("patch").textValue());
        }
    }
}
