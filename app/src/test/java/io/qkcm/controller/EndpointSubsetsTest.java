package io.qkcm.controller;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.List;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.fabric8.kubernetes.api.model.EndpointSubset;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.qkcm.controller.hash.DeepHashTestVectors;

/** RepackSubsets against upstream's own output for the same input ({@code hack/golden/podtemplatehash repack}). */
class EndpointSubsetsTest {

    @Test
    void repackMatchesUpstreamIncludingOrder() throws Exception {
        KubernetesSerialization serialization = new KubernetesSerialization();
        ObjectMapper mapper = new ObjectMapper();
        List<JsonNode> vectors = DeepHashTestVectors.read("hash/endpoints-repack-vectors.jsonl");
        assertThat(vectors).hasSizeGreaterThan(4);
        for (JsonNode v : vectors) {
            List<EndpointSubset> in = Arrays.asList(serialization.unmarshal(v.get("in").toString(), EndpointSubset[].class));
            List<EndpointSubset> out = EndpointSubsets.repack(in);
            JsonNode actual = mapper.readTree(serialization.asJson(out));
            assertThat(actual).as(v.get("in").toString()).isEqualTo(v.get("out"));
        }
    }
}
