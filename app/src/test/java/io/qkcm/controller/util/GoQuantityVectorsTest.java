package io.qkcm.controller.util;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import com.fasterxml.jackson.databind.JsonNode;

import io.qkcm.runtime.Json;

/**
 * {@link GoQuantity} against apimachinery v0.34.4's resource.Quantity itself (hack/golden/quantity): parse,
 * String, CanonicalizeBytes, Format, Value, MilliValue, RoundUp, Cmp, Add and Sub, including the
 * inputs where Go's int32 scales wrap, DecimalSI exponents have no suffix, BinarySI caps at MaxInt64
 * and MilliValue overflows.
 */
class GoQuantityVectorsTest {

    static List<JsonNode> vectors(String resource) throws Exception {
        List<JsonNode> out = new ArrayList<>();
        try (BufferedReader r = new BufferedReader(new InputStreamReader(
                GoQuantityVectorsTest.class.getResourceAsStream(resource), StandardCharsets.UTF_8))) {
            String line;
            while ((line = r.readLine()) != null) {
                if (!line.isBlank()) {
                    out.add(Json.mapper().readTree(line));
                }
            }
        }
        return out;
    }

    @Test
    void parseAndPrintAsGo() throws Exception {
        List<JsonNode> vectors = vectors("/util/quantity-parse-vectors.jsonl");
        assertThat(vectors).hasSizeGreaterThan(150);
        int errors = 0;
        for (JsonNode v : vectors) {
            String in = v.get("in").textValue();
            if (v.has("error")) {
                errors++;
                assertThatThrownBy(() -> GoQuantity.parse(in)).as("parse %s", in)
                        .isInstanceOf(IllegalArgumentException.class).hasMessage(v.get("error").textValue());
                continue;
            }
            GoQuantity q = GoQuantity.parse(in);
            assertThat(q.toString()).as("String %s", in).isEqualTo(v.get("string").textValue());
            assertThat(q.canonical()).as("CanonicalizeBytes %s", in).isEqualTo(v.get("canonical").textValue());
            assertThat(q.format().goName()).as("Format %s", in).isEqualTo(v.get("format").textValue());
            assertThat(q.value()).as("Value %s", in).isEqualTo(v.get("value").longValue());
            assertThat(q.milliValue()).as("MilliValue %s", in).isEqualTo(v.get("milli").longValue());
            assertThat(q.roundUp(0).toString()).as("RoundUp(0) %s", in).isEqualTo(v.get("roundUp0").textValue());
            assertThat(q.roundUp(GoQuantity.MILLI).toString()).as("RoundUp(Milli) %s", in)
                    .isEqualTo(v.get("roundUpMilli").textValue());
            assertThat(q.sign()).as("Sign %s", in).isEqualTo(v.get("sign").intValue());
        }
        assertThat(errors).isGreaterThan(8);
    }

    @Test
    void addSubAndCmpAsGo() throws Exception {
        List<JsonNode> vectors = vectors("/util/quantity-pair-vectors.jsonl");
        assertThat(vectors).hasSizeGreaterThan(800);
        for (JsonNode v : vectors) {
            String a = v.get("a").textValue();
            String b = v.get("b").textValue();
            GoQuantity qa = GoQuantity.parse(a);
            GoQuantity qb = GoQuantity.parse(b);
            GoQuantity sum = qa.add(qb);
            assertThat(sum.toString()).as("%s + %s", a, b).isEqualTo(v.get("add").textValue());
            assertThat(sum.format().goName()).as("format of %s + %s", a, b).isEqualTo(v.get("addFormat").textValue());
            GoQuantity diff = qa.sub(qb);
            assertThat(diff.toString()).as("%s - %s", a, b).isEqualTo(v.get("sub").textValue());
            assertThat(diff.format().goName()).as("format of %s - %s", a, b).isEqualTo(v.get("subFormat").textValue());
            assertThat(qa.compareTo(qb)).as("Cmp(%s, %s)", a, b).isEqualTo(v.get("cmp").intValue());
        }
    }
}
