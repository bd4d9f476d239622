package io.qkcm.controller.hash;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;

import io.fabric8.kubernetes.api.model.EndpointSubset;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointPort;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;

/**
 * md5 digests upstream sorts endpoint ports and subsets by, against vectors printed by the real Go
 * code ({@code hack/golden/podtemplatehash md5}, see its README).
 */
class DeepHashTest {

    @Test
    void digestsMatchUpstream() throws Exception {
        KubernetesSerialization serialization = new KubernetesSerialization();
        List<JsonNode> vectors = DeepHashTestVectors.read("hash/endpoints-md5-vectors.jsonl");
        assertThat(vectors).hasSizeGreaterThan(5);
        for (JsonNode v : vectors) {
            String value = v.get("value").toString();
            if (v.get("type").asText().equals("discoveryendpointport")) {
                EndpointPort port = serialization.unmarshal(value, EndpointPort.class);
                assertThat(GoSpew.discoveryEndpointPort().render("v1.EndpointPort", DeepHash.toJson(port)))
                        .as(value).isEqualTo(v.get("spew").asText());
                assertThat(DeepHash.md5Hex(GoSpew.discoveryEndpointPort(), "v1.EndpointPort", port)).as(value)
                        .isEqualTo(v.get("md5").asText());
            } else {
                EndpointSubset subset = serialization.unmarshal(value, EndpointSubset.class);
                assertThat(GoSpew.endpointSubset().render("v1.EndpointSubset", DeepHash.toJson(subset)))
                        .as(value).isEqualTo(v.get("spew").asText());
                assertThat(DeepHash.md5Hex(GoSpew.endpointSubset(), "v1.EndpointSubset", subset)).as(value)
                        .isEqualTo(v.get("md5").asText());
            }
        }
    }
}
