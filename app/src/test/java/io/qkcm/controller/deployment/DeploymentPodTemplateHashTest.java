package io.qkcm.controller.deployment;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.qkcm.controller.hash.ControllerHash;

/**
 * The pod-template-hash equals upstream's for the same template. Golden vectors: pod templates as
 * stored (defaulted) by a real kube-apiserver v1.34.4, hashed by upstream's controller.ComputeHash
 * (hack/golden/podtemplatehash); see that directory's main.go.
 */
class DeploymentPodTemplateHashTest {

    private static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();

    @Test
    void matchesUpstreamComputeHashForGoldenTemplates() throws Exception {
        List<JsonNode> vectors = new ArrayList<>();
        ObjectMapper mapper = new ObjectMapper();
        try (BufferedReader r = new BufferedReader(new InputStreamReader(
                getClass().getResourceAsStream("/deployment/pod-template-hash-vectors.jsonl"), StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                if (!line.isBlank()) {
                    vectors.add(mapper.readTree(line));
                }
            }
        }
        assertThat(vectors).hasSizeGreaterThan(10);
        for (JsonNode v : vectors) {
            PodTemplateSpec template = SERIALIZATION.unmarshal(v.get("template").toString(), PodTemplateSpec.class);
            String name = template.getMetadata().getLabels().get("app");
            assertThat(ControllerHash.spew(template)).as("spew of %s", name).isEqualTo(v.get("spew").asText());
            assertThat(ControllerHash.computeHash(template, null)).as("hash of %s", name).isEqualTo(v.get("hash").asText());
            assertThat(ControllerHash.computeHash(template, 1)).as("hash(1) of %s", name).isEqualTo(v.get("hash1").asText());
            assertThat(ControllerHash.computeHash(template, 5)).as("hash(5) of %s", name).isEqualTo(v.get("hash5").asText());
        }
    }
}
