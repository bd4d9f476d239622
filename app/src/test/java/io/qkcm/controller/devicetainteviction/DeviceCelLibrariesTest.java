package io.qkcm.controller.devicetainteviction;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import io.fabric8.kubernetes.api.model.resource.v1beta2.Device;
import io.fabric8.kubernetes.api.model.resource.v1beta2.DeviceAttribute;
import io.qkcm.controller.util.cel.KubernetesCelFunctions;

/**
 * The CEL libraries a device selector evaluates beyond the standard ones (ext.Strings v2, ext.Lists v3, ext.Sets,
 * optionals, two-variable comprehensions, Kubernetes' lists, regex and IP/CIDR, int(duration)/duration(int), type()),
 * against a table of cases each recorded with upstream's evaluator (k8s.io/dynamic-resource-allocation/cel
 * v0.34.4's CompileCELExpression and DeviceMatches, hack/golden/dracel) for the same device: the outcome and cel-go's error words
 * must be the same here. The cases follow cel-go's and the apiserver library's own tests.
 */
class DeviceCelLibrariesTest {

    private static final DeviceCel CEL = new DeviceCel(false);
    private static final String DRIVER = "dra.example.com";

    static Device device() {
        Map<String, DeviceAttribute> attributes = new LinkedHashMap<>();
        attributes.put("model", DeviceCelTest.string("A100 80GB"));
        attributes.put("index", DeviceCelTest.integer(3));
        attributes.put("numa", DeviceCelTest.integer(1));
        attributes.put("ip", DeviceCelTest.string("10.0.0.7"));
        return DeviceCelTest.device(attributes, Map.of("memory", DeviceCelTest.capacity("80Gi")));
    }

    static Stream<Arguments> upstreamCases() throws IOException {
        List<Arguments> cases = new ArrayList<>();
        try (InputStream in = DeviceCelLibrariesTest.class.getResourceAsStream("cel-library-cases.tsv")) {
            for (String line : new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n")) {
                if (line.isBlank() || line.startsWith("#")) {
                    continue;
                }
                String[] f = line.split("\t", -1);
                cases.add(Arguments.of(f[0], f[1], f[2]));
            }
        }
        return cases.stream();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("upstreamCases")
    void evaluatesAsUpstream(String expression, String matches, String error) {
        DeviceCel.Compiled c = CEL.compile(expression);
        if (matches.equals("COMPILE")) {
            assertThat(c.error()).as(expression).isEqualTo(error);
            return;
        }
        assertThat(c.error()).as(expression).isNull();
        assertThat(c.unsupported()).as(expression).isEmpty();
        DeviceCel.Result r = DeviceCel.matches(c, DRIVER, device());
        assertThat(r.error()).as(expression).isEqualTo(error.equals("<nil>") ? null : error);
        assertThat(r.matches()).as(expression).isEqualTo(Boolean.parseBoolean(matches));
    }

    /** What stays unevaluated, by overload id: the descriptor's partial text names these libraries. */
    @Test
    void onlyTheseOverloadsAreNotEvaluated() throws Exception {
        var field = DeviceCel.class.getDeclaredField("evaluated");
        field.setAccessible(true);
        @SuppressWarnings("unchecked")
        Set<String> evaluated = (Set<String>) field.get(CEL);
        Set<String> missing = new TreeSet<>();
        KubernetesCelFunctions.all().forEach(f -> f.overloads().forEach(o -> {
            if (!evaluated.contains(o.overloadId())) {
                missing.add(o.overloadId());
            }
        }));
        // authz functions need an Authorizer, which the device selector environment has no variable of
        missing.removeIf(id -> id.startsWith("authorizer_") || id.startsWith("decision_") || id.startsWith("pathcheck_")
                || id.startsWith("resourcecheck_") || id.startsWith("groupcheck_"));
        assertThat(missing).containsExactlyInAnyOrder(
                // URL
                "string_to_url", "is_url_string", "url_get_scheme", "url_get_host", "url_get_hostname", "url_get_port",
                "url_get_escaped_path", "url_get_query",
                // format
                "format-named", "format-validate", "format.byte", "format.date", "format.datetime", "format.dns1035Label",
                "format.dns1035LabelPrefix", "format.dns1123Label", "format.dns1123LabelPrefix",
                "format.dns1123Subdomain", "format.dns1123SubdomainPrefix", "format.labelValue", "format.qualifiedName",
                "format.uri", "format.uuid",
                // ext.Strings' format
                "string_format");
    }

    @Test
    void aNotEvaluatedFunctionIsNamed() {
        DeviceCel.Compiled c = CEL.compile("isURL(device.attributes[\"dra.example.com\"].ip)");
        assertThat(c.error()).isNull();
        assertThat(c.unsupported()).containsExactly("is_url_string");
    }
}
