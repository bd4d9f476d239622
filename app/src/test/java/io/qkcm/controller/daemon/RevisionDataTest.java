package io.qkcm.controller.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;

import io.fabric8.kubernetes.api.model.apps.ControllerRevision;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.qkcm.controller.hash.ControllerHash;

/**
 * Golden vectors from upstream's own code ({@code hack/golden/daemonsetrevision}): for each DaemonSet, the
 * revision data upstream's getPatch writes (checked there with {@code daemon.Match}) and the revision
 * name's hash ({@code controller.ComputeHash} with the status' collisionCount).
 */
class RevisionDataTest {

    private static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();

    record Vector(String daemonSet, String data, String hash) {
    }

    static List<Vector> vectors() throws Exception {
        List<Vector> result = new ArrayList<>();
        try (var in = RevisionDataTest.class.getClassLoader().getResourceAsStream("daemon/revision-vectors.jsonl");
                var r = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                if (line.isBlank()) {
                    continue;
                }
                JsonNode n = io.qkcm.runtime.Json.mapper().readTree(line);
                result.add(new Vector(n.get("daemonSet").toString(), n.get("data").asText(), n.get("hash").asText()));
            }
        }
        return result;
    }

    @Test
    void getPatchMatchesUpstreamsBytes() throws Exception {
        List<Vector> vectors = vectors();
        assertThat(vectors).hasSize(5);
        for (Vector v : vectors) {
            DaemonSet ds = SERIALIZATION.unmarshal(v.daemonSet(), DaemonSet.class);
            assertThat(RevisionData.getPatch(ds)).as(ds.getMetadata().getName()).isEqualTo(v.data());
        }
    }

    @Test
    void revisionHashMatchesUpstreams() throws Exception {
        for (Vector v : vectors()) {
            DaemonSet ds = SERIALIZATION.unmarshal(v.daemonSet(), DaemonSet.class);
            Integer collisionCount = ds.getStatus() == null ? null : ds.getStatus().getCollisionCount();
            assertThat(ControllerHash.computeHash(ds.getSpec().getTemplate(), collisionCount))
                    .as(ds.getMetadata().getName()).isEqualTo(v.hash());
        }
    }

    @Test
    void storedRevisionDataReadsBackAsTheSameBytesAndMatches() throws Exception {
        for (Vector v : vectors()) {
            DaemonSet ds = SERIALIZATION.unmarshal(v.daemonSet(), DaemonSet.class);
            // what an API server returns for a revision upstream wrote
            String stored = "{\"apiVersion\":\"apps/v1\",\"kind\":\"ControllerRevision\",\"metadata\":{\"name\":\"x\"},"
                    + "\"data\":" + v.data() + ",\"revision\":1}";
            ControllerRevision cr = SERIALIZATION.unmarshal(stored, ControllerRevision.class);
            assertThat(RevisionData.rawData(cr)).isEqualTo(v.data());
            assertThat(Update.match(ds, cr)).isTrue();
            // a different template does not match
            ds.getSpec().getTemplate().getMetadata().getLabels().put("changed", "yes");
            assertThat(Update.match(ds, cr)).isFalse();
        }
    }

    @Test
    void aRevisionWrittenByQkcmIsSentVerbatim() throws Exception {
        Vector v = vectors().get(1);
        ControllerRevision cr = new ControllerRevision();
        cr.setData(RevisionData.rawValue(v.data()));
        String json = SERIALIZATION.asJson(cr);
        assertThat(json).contains("\"data\":" + v.data());
    }
}
