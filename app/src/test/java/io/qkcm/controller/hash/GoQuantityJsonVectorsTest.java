package io.qkcm.controller.hash;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * What Go writes for a resource.Quantity decoded from JSON, as is and after RoundUp(Milli) (SetDefaults_ResourceList),
 * against apimachinery v0.34.4 itself (hack/golden/history quantity).
 */
class GoQuantityJsonVectorsTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    private static List<JsonNode> vectors() throws Exception {
        List<JsonNode> out = new ArrayList<>();
        try (BufferedReader r = new BufferedReader(new InputStreamReader(GoQuantityJsonVectorsTest.class
                .getResourceAsStream("/history/quantity-vectors.jsonl"), StandardCharsets.UTF_8))) {
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
    void marshalAndRoundUpMatchUpstream() throws Exception {
        List<JsonNode> vectors = vectors();
        assertThat(vectors).hasSizeGreaterThanOrEqualTo(60);
        int parsed = 0;
        for (JsonNode v : vectors) {
            String in = v.get("in").textValue();
            if (v.has("error")) {
                // Go cannot decode it; qkcm leaves the text alone rather than fail
                assertThat(GoQuantityJson.marshal(in)).isEqualTo(in);
                continue;
            }
            parsed++;
            assertThat(GoQuantityJson.marshal(in)).as("marshal %s", in).isEqualTo(v.get("marshal").textValue());
            assertThat(GoQuantityJson.roundUpAndMarshal(in, -3)).as("RoundUp(Milli) %s", in)
                    .isEqualTo(v.get("roundUp").textValue());
        }
        assertThat(parsed).isGreaterThanOrEqualTo(55);
    }
}
