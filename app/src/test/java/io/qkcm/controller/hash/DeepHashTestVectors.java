package io.qkcm.controller.hash;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/** Reads JSON-lines golden vectors printed by hack/golden/podtemplatehash. */
public final class DeepHashTestVectors {

    private DeepHashTestVectors() {
    }

    public static List<JsonNode> read(String resource) throws IOException {
        ObjectMapper mapper = new ObjectMapper();
        List<JsonNode> out = new ArrayList<>();
        try (BufferedReader r = new BufferedReader(new InputStreamReader(
                DeepHashTestVectors.class.getClassLoader().getResourceAsStream(resource), StandardCharsets.UTF_8))) {
            for (String line = r.readLine(); line != null; line = r.readLine()) {
                if (!line.isBlank()) {
                    out.add(mapper.readTree(line));
                }
            }
        }
        return out;
    }
}
