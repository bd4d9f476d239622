package io.qkcm.controller.validatingadmissionpolicystatus;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ExpressionWarning;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicy;
import io.qkcm.runtime.Json;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * The type checker against upstream's own output: typechecking-golden.jsonl holds, per case, an OpenAPI schema,
 * a policy and the warnings upstream's TypeChecker.Check (k8s.io/apiserver v0.34.4, cel-go v0.26.0) wrote for
 * them, produced by hack/vap-typecheck/golden. Its first cases are upstream's TestTypeCheck table
 * (typechecking_test.go), whose assertions only look for substrings; here every warning must be equal whole,
 * up to the nanoseconds upstream appends to the object type's name (Deployment123456789). The restmapper knows
 * what upstream's test's does: pods (v1 Pod) and deployments (apps/v1 Deployment); every kind resolves to the
 * case's schema, or to none.
 */
class TypeCheckerGoldenTest {

    record Case(String name, JsonNode schema, ValidatingAdmissionPolicy policy, List<ExpressionWarning> expected) {
    }

    static List<Case> cases() throws Exception {
        List<Case> out = new ArrayList<>();
        try (var in = new BufferedReader(new InputStreamReader(
                TypeCheckerGoldenTest.class.getResourceAsStream("typechecking-golden.jsonl"), StandardCharsets.UTF_8))) {
            for (String line; (line = in.readLine()) != null;) {
                JsonNode c = Json.mapper().readTree(line);
                JsonNode schema = c.get("schema").isNull() ? null : c.get("schema");
                ValidatingAdmissionPolicy policy = Json.mapper().treeToValue(c.get("policy"), ValidatingAdmissionPolicy.class);
                List<ExpressionWarning> expected = new ArrayList<>();
                for (JsonNode w : c.get("warnings")) {
                    expected.add(new ExpressionWarning(w.get("fieldRef").asText(), w.get("warning").asText()));
                }
                out.add(new Case(c.get("name").asText(), schema, policy, expected));
            }
        }
        return out;
    }

    static TypeChecker checker(JsonNode schema) {
        TypeChecker.RestMapper restMapper = (group, version, resource) -> {
            if (group.isEmpty() && version.equals("v1") && resource.equals("pods")) {
                return List.of(new TypeChecker.GroupVersionKind("", "v1", "Pod"));
            }
            if (group.equals("apps") && version.equals("v1") && resource.equals("deployments")) {
                return List.of(new TypeChecker.GroupVersionKind("apps", "v1", "Deployment"));
            }
            return List.of();
        };
        return new TypeChecker(gvk -> Optional.ofNullable(schema), restMapper, () -> 123456789);
    }

    /** Upstream's type names end in time.Now().Nanosecond(). */
    static String normalize(String warning) {
        return warning.replaceAll("(Deployment|Pod|DoesNotMatter)\\d+", "$1#");
    }

    @Test
    void everyWarningEqualsUpstreams() throws Exception {
        List<String> differences = new ArrayList<>();
        int compared = 0;
        for (Case c : cases()) {
            Map<String, String> want = byField(c.expected());
            Map<String, String> have = byField(checker(c.schema()).check(c.policy()));
            Set<String> fields = new TreeSet<>(want.keySet());
            fields.addAll(have.keySet());
            for (String field : fields) {
                compared++;
                String key = c.name() + "|" + field;
                if (!java.util.Objects.equals(want.get(field), have.get(field))) {
                    differences.add(key + "\nupstream:\n" + want.get(field) + "\nqkcm:\n" + have.get(field));
                }
            }
        }
        assertThat(compared).isGreaterThan(200);
        assertThat(differences).as(String.join("\n----\n", differences)).isEmpty();
    }

    /** Upstream's own test table, its assertions as they are (substrings, field refs, counts). */
    @Test
    void upstreamsTypeCheckTable() throws Exception {
        Map<String, Case> cases = new java.util.LinkedHashMap<>();
        for (Case c : cases()) {
            cases.put(c.name(), c);
        }
        assertThat(check(cases, "empty")).isEmpty();
        assertThat(check(cases, "unresolved schema")).isEmpty();
        assertThat(check(cases, "passed check")).isEmpty();
        assertWarnings(check(cases, "undefined field"), List.of("spec.validations[0].expression"), "undefined field 'foo'");
        assertWarnings(check(cases, "field type mismatch"), List.of("spec.validations[0].expression"),
                "found no matching overload");
        assertWarnings(check(cases, "params"), List.of("spec.validations[0].expression"), "undefined field 'bar'");
        assertWarnings(check(cases, "multiple expressions"), List.of("spec.validations[1].expression"), "");
        assertWarnings(check(cases, "message expressions"), List.of("spec.validations[0].messageExpression"), "");
        assertThat(check(cases, "authorizer")).isEmpty();
        assertWarnings(check(cases, "authorizer invalid"), List.of("spec.validations[0].expression"),
                "found no matching overload for 'allowed' applied to 'kubernetes.authorization.Authorizer");
        assertThat(check(cases, "variables valid")).isEmpty();
        assertWarnings(check(cases, "variables missing field"), List.of("spec.validations[0].expression"),
                "undefined field 'nonExisting'");
        assertWarnings(check(cases, "variables field wrong type"), List.of("spec.validations[0].expression"),
                "found no matching overload for '_==_' applied to '(string, int)");
        assertThat(check(cases, "error in variables, not reported during type checking.")).isEmpty();
    }

    private static List<ExpressionWarning> check(Map<String, Case> cases, String name) {
        Case c = cases.get(name);
        return checker(c.schema()).check(c.policy());
    }

    private static void assertWarnings(List<ExpressionWarning> warnings, List<String> fieldRefs, String contains) {
        assertThat(warnings).extracting(ExpressionWarning::getFieldRef).containsExactlyElementsOf(fieldRefs);
        assertThat(warnings).allSatisfy(w -> assertThat(w.getWarning()).contains(contains));
    }

    private static Map<String, String> byField(List<ExpressionWarning> warnings) {
        Map<String, String> out = new java.util.LinkedHashMap<>();
        warnings.forEach(w -> out.put(w.getFieldRef(), normalize(w.getWarning())));
        return out;
    }
}
