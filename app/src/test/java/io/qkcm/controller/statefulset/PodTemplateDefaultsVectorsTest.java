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
import com.fasterxml.jackson.databind.util.RawValue;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.apps.ControllerRevision;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.apps.StatefulSetBuilder;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.qkcm.controller.history.ControllerHistory;

/**
 * The revision setMatchesLatestExistingRevision reconstructs from a revision holding an undefaulted
 * template (ApplyRevision, legacyscheme.Scheme.Default, newRevision), against upstream's own code
 * (hack/golden/history defaults: v1.34.4's apps/v1 defaulting under the default feature gates, then getPatch).
 */
class PodTemplateDefaultsVectorsTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();

    static List<JsonNode> vectors() throws Exception {
        return vectors("/history/statefulset-defaults-vectors.jsonl");
    }

    static List<JsonNode> vectors(String resource) throws Exception {
        List<JsonNode> out = new ArrayList<>();
        try (BufferedReader r = new BufferedReader(new InputStreamReader(PodTemplateDefaultsVectorsTest.class
                .getResourceAsStream(resource), StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                if (!line.isBlank()) {
                    out.add(JSON.readTree(line));
                }
            }
        }
        return out;
    }

    private static StatefulSet currentSet() {
        return new StatefulSetBuilder().withNewMetadata().withName("web").withNamespace("ns").withUid("u1")
                .withGeneration(2L).endMetadata()
                .withNewSpec().withReplicas(1).withNewSelector().addToMatchLabels("app", "web").endSelector()
                .withNewTemplate().withNewMetadata().addToLabels("app", "web").endMetadata()
                .withNewSpec().addNewContainer().withName("current").withImage("current:1").endContainer().endSpec()
                .endTemplate().endSpec().build();
    }

    @Test
    void reconstructedRevisionMatchesUpstreamDefaulting() throws Exception {
        List<JsonNode> vectors = vectors();
        assertThat(vectors).hasSizeGreaterThanOrEqualTo(30);
        int changed = replay(vectors, PodTemplateDefaults.DEFAULT_GATES);
        // most vectors need the defaulting to match (the rest are already defaulted)
        assertThat(changed).isGreaterThanOrEqualTo(vectors.size() - 2);
    }

    @Test
    void imageVolumePullPolicyIsDefaultedOnlyWithTheImageVolumeGate() throws Exception {
        // hack/golden/history defaults ImageVolume=true
        List<JsonNode> vectors = vectors("/history/statefulset-defaults-imagevolume-vectors.jsonl");
        assertThat(vectors).hasSizeGreaterThanOrEqualTo(2);
        replay(vectors, new PodTemplateDefaults(true));
        for (JsonNode v : vectors) {
            assertThat(v.get("patch").textValue()).contains("\"pullPolicy\"");
        }
        // under the default gates the same templates keep no pull policy on their image volumes
        JsonNode first = vectors.get(0);
        ControllerRevision old = revision(first.get("template").toString());
        StatefulSet latestSet = StatefulSetUtils.applyRevision(currentSet(), old);
        String patch = ControllerHistory.rawData(StatefulSetUtils.newRevision(latestSet, -1, null,
                PodTemplateDefaults.DEFAULT_GATES));
        assertThat(patch).doesNotContain("\"pullPolicy\":\"Always\"").doesNotContain("\"pullPolicy\":\"IfNotPresent\"")
                .contains("\"imagePullPolicy\":\"Always\"");
    }

    private static ControllerRevision revision(String template) {
        // the revision an older release stored: the template as it was, "$patch":"replace"
        ControllerRevision old = new ControllerRevision();
        old.setMetadata(new ObjectMetaBuilder().withName("web-old").withNamespace("ns").build());
        old.setData(new RawValue("{\"spec\":{\"template\":" + template.substring(0, template.length() - 1)
                + (template.equals("{}") ? "" : ",") + "\"$patch\":\"replace\"}}}"));
        old.setRevision(1L);
        return old;
    }

    /** Replays each vector; the number of them whose revision the defaulting changed. */
    private static int replay(List<JsonNode> vectors, PodTemplateDefaults defaults) {
        int changed = 0;
        for (int i = 0; i < vectors.size(); i++) {
            JsonNode v = vectors.get(i);
            String template = v.get("template").toString();
            StatefulSet latestSet = StatefulSetUtils.applyRevision(currentSet(), revision(template));
            ControllerRevision reconstructed = StatefulSetUtils.newRevision(latestSet, -1, null, defaults);
            assertThat(ControllerHistory.rawData(reconstructed)).as("vector %d: %s", i, template)
                    .isEqualTo(v.get("patch").textValue());
            if (!StatefulSetUtils.getPatch(latestSet).equals(v.get("patch").textValue())) {
                changed++;
            }
        }
        return changed;
    }

    @Test
    void defaultingATemplateTwiceChangesNothing() throws Exception {
        for (JsonNode v : vectors()) {
            JsonNode patch = JSON.readTree(v.get("patch").textValue());
            PodTemplateSpec defaulted = SERIALIZATION.convertValue(patch.path("spec").path("template"),
                    PodTemplateSpec.class);
            StatefulSet set = currentSet();
            set.getSpec().setTemplate(defaulted);
            assertThat(StatefulSetUtils.getPatch(set, PodTemplateDefaults.DEFAULT_GATES)).isEqualTo(v.get("patch").textValue());
        }
    }
}
