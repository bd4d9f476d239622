package io.qkcm.controller.daemon;

import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import io.fabric8.kubernetes.api.model.apps.ControllerRevision;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;

/**
 * A DaemonSet revision's data as upstream writes it (getPatch): Go's {@code json.Marshal} of the
 * DaemonSet, decoded into a generic map and re-encoded, keeping only
 * {@code {"spec":{"template":{..., "$patch":"replace"}}}}. So every object's keys are sorted, strings
 * are escaped as Go escapes them (HTML characters as {@code \u003c}...), and the template holds
 * exactly the keys Go's encoder emits for the decoded {@code v1.PodTemplateSpec}: fields without
 * {@code omitempty} even when empty, struct-typed fields always, {@code omitzero} fields only when
 * set. Which is which comes from the Go struct layout dumped by {@code hack/daemonsetrevision}.
 * Upstream compares these bytes with the stored revision's ({@code Match}); so does qkcm, so revisions
 * written by either controller are recognised by the other.
 */
public final class RevisionData {

    private static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();
    private static final ObjectMapper MAPPER = io.qkcm.runtime.Json.mapper();
    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

    record Field(String json, boolean inline, boolean omitEmpty, boolean omitZero, String type) {
    }

    record TypeInfo(String kind, boolean marshaler, String elem, List<Field> fields) {
    }

    private static final Map<String, TypeInfo> TYPES = load("qkcm/daemon/go-podtemplatespec-json.json");

    private RevisionData() {
    }

    private static Map<String, TypeInfo> load(String resource) {
        try (InputStream in = RevisionData.class.getClassLoader().getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException(resource + " is missing from the classpath");
            }
            JsonNode schema = MAPPER.readTree(in);
            Map<String, TypeInfo> types = new HashMap<>();
            for (Iterator<Map.Entry<String, JsonNode>> it = schema.fields(); it.hasNext();) {
                Map.Entry<String, JsonNode> e = it.next();
                JsonNode t = e.getValue();
                List<Field> fields = new ArrayList<>();
                for (JsonNode f : t.path("fields")) {
                    fields.add(new Field(f.path("json").asText(null), f.path("inline").asBoolean(false),
                            f.path("omitempty").asBoolean(false), f.path("omitzero").asBoolean(false),
                            f.get("type").asText()));
                }
                types.put(e.getKey(), new TypeInfo(t.get("kind").asText(), t.path("marshaler").asBoolean(false),
                        t.path("elem").asText(null), fields));
            }
            return types;
        } catch (IOException e) {
            throw new IllegalStateException("cannot read " + resource, e);
        }
    }

    /** Upstream's getPatch(ds): the revision data of the DaemonSet's current template. */
    public static String getPatch(DaemonSet ds) {
        JsonNode template;
        try {
            template = MAPPER.readTree(SERIALIZATION.asJson(ds.getSpec().getTemplate()));
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        JsonNode rendered = render("v1.PodTemplateSpec", template);
        ObjectNode t = rendered instanceof ObjectNode o ? o : NODES.objectNode();
        t.put("$patch", "replace");
        ObjectNode spec = NODES.objectNode();
        spec.set("template", t);
        ObjectNode root = NODES.objectNode();
        root.set("spec", spec);
        StringBuilder out = new StringBuilder();
        write(root, true, out);
        return out.toString();
    }

    /**
     * A stored revision's {@code data} as the bytes the API server keeps (Data.Raw): compact JSON in
     * the stored key order with Go's escaping, which reproduces byte for byte what Go's encoder wrote.
     */
    public static String rawData(ControllerRevision revision) {
        if (revision.getData() == null) {
            return "";
        }
        JsonNode data;
        try {
            data = MAPPER.readTree(SERIALIZATION.asJson(revision)).get("data");
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        if (data == null || data.isNull()) {
            return "";
        }
        StringBuilder out = new StringBuilder();
        write(data, false, out);
        return out.toString();
    }

    /** The data as a value fabric8 writes verbatim into the request body. */
    public static Object rawValue(String data) {
        return new com.fasterxml.jackson.databind.util.RawValue(data);
    }

    // ---- Go's encoding of a decoded value ------------------------------------------------------

    private static boolean absent(JsonNode v) {
        return v == null || v.isNull() || v.isMissingNode();
    }

    /** What Go emits for a value of {@code goType} decoded from {@code value}; null when nil (emitted as null). */
    static JsonNode render(String goType, JsonNode value) {
        TypeInfo t = TYPES.get(goType);
        if (t == null) {
            // a type outside the layout (should not happen): keep the value as it is
            return absent(value) ? null : value;
        }
        if (t.marshaler()) {
            if (absent(value)) {
                return zeroOfMarshaler(goType);
            }
            return value;
        }
        switch (t.kind()) {
            case "ptr" -> {
                return absent(value) ? null : render(t.elem(), value);
            }
            case "slice", "array" -> {
                if (absent(value) || !value.isArray()) {
                    return null;
                }
                var arr = NODES.arrayNode();
                for (JsonNode e : value) {
                    JsonNode r = render(t.elem(), e);
                    arr.add(r == null ? NODES.nullNode() : r);
                }
                return arr;
            }
            case "map" -> {
                if (absent(value) || !value.isObject()) {
                    return null;
                }
                ObjectNode o = NODES.objectNode();
                for (Iterator<Map.Entry<String, JsonNode>> it = value.fields(); it.hasNext();) {
                    Map.Entry<String, JsonNode> e = it.next();
                    JsonNode r = render(t.elem(), e.getValue());
                    o.set(e.getKey(), r == null ? NODES.nullNode() : r);
                }
                return o;
            }
            case "struct" -> {
                ObjectNode o = NODES.objectNode();
                renderFields(t, absent(value) ? NODES.objectNode() : value, o);
                return o;
            }
            case "interface" -> {
                return absent(value) ? null : value;
            }
            case "string" -> {
                return absent(value) ? NODES.textNode("") : value;
            }
            case "bool" -> {
                return absent(value) ? NODES.booleanNode(false) : value;
            }
            default -> {
                // the integer and float kinds
                return absent(value) ? NODES.numberNode(0) : value;
            }
        }
    }

    private static JsonNode zeroOfMarshaler(String goType) {
        return switch (goType) {
            case "resource.Quantity" -> NODES.textNode("0");
            case "intstr.IntOrString" -> NODES.numberNode(0);
            default -> null; // pointers, v1.Time's zero value
        };
    }

    private static void renderFields(TypeInfo t, JsonNode value, ObjectNode out) {
        for (Field f : t.fields()) {
            if (f.inline()) {
                TypeInfo embedded = TYPES.get(f.type());
                if (embedded != null && "struct".equals(embedded.kind())) {
                    renderFields(embedded, value, out);
                }
                continue;
            }
            JsonNode v = value.get(f.json());
            TypeInfo ft = TYPES.get(f.type());
            if (f.omitZero() && absent(v)) {
                continue;
            }
            if (f.omitEmpty() && isEmpty(ft, v)) {
                continue;
            }
            JsonNode r = render(f.type(), v);
            out.set(f.json(), r == null ? NODES.nullNode() : r);
        }
    }

    /** encoding/json's isEmptyValue for the decoded value. */
    private static boolean isEmpty(TypeInfo ft, JsonNode v) {
        if (ft == null) {
            return absent(v);
        }
        String kind = ft.kind();
        switch (kind) {
            case "struct":
                return false;
            case "ptr", "interface":
                return absent(v);
            case "slice", "map", "array":
                return absent(v) || v.size() == 0;
            case "string":
                return absent(v) || (v.isTextual() && v.asText().isEmpty());
            case "bool":
                return absent(v) || (v.isBoolean() && !v.asBoolean());
            default:
                return absent(v) || (v.isNumber() && v.asDouble() == 0);
        }
    }

    // ---- Go's encoder's output -----------------------------------------------------------------

    /** Compact JSON as encoding/json writes it; {@code sortKeys} as for a decoded map. */
    static void write(JsonNode node, boolean sortKeys, StringBuilder out) {
        if (node == null || node.isNull() || node.isMissingNode()) {
            out.append("null");
        } else if (node.isObject()) {
            Map<String, JsonNode> fields;
            if (sortKeys) {
                fields = new TreeMap<>(RevisionData::compareUtf8);
            } else {
                fields = new java.util.LinkedHashMap<>();
            }
            for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext();) {
                Map.Entry<String, JsonNode> e = it.next();
                fields.put(e.getKey(), e.getValue());
            }
            out.append('{');
            boolean first = true;
            for (Map.Entry<String, JsonNode> e : fields.entrySet()) {
                if (!first) {
                    out.append(',');
                }
                first = false;
                writeString(e.getKey(), out);
                out.append(':');
                write(e.getValue(), sortKeys, out);
            }
            out.append('}');
        } else if (node.isArray()) {
            out.append('[');
            boolean first = true;
            for (JsonNode e : node) {
                if (!first) {
                    out.append(',');
                }
                first = false;
                write(e, sortKeys, out);
            }
            out.append(']');
        } else if (node.isTextual()) {
            writeString(node.asText(), out);
        } else if (node.isBoolean()) {
            out.append(node.asBoolean() ? "true" : "false");
        } else if (node.isIntegralNumber()) {
            if (sortKeys) {
                // decoded into interface{}: a float64
                out.append(formatFloat(node.asDouble()));
            } else {
                out.append(node.asText());
            }
        } else if (node.isNumber()) {
            out.append(formatFloat(node.asDouble()));
        } else {
            out.append(node.toString());
        }
    }

    /** Go's float64 encoding ('f' format below 1e21, shortest representation). */
    static String formatFloat(double d) {
        if (d == Math.rint(d) && Math.abs(d) < 1e21) {
            return new java.math.BigDecimal(d).toPlainString();
        }
        double abs = Math.abs(d);
        if (abs != 0 && (abs < 1e-6 || abs >= 1e21)) {
            // Go: 'e' format with a two-digit exponent at least
            String s = Double.toString(d).replace("E", "e");
            int e = s.indexOf('e');
            String mant = s.substring(0, e);
            if (mant.endsWith(".0")) {
                mant = mant.substring(0, mant.length() - 2);
            }
            int exp = Integer.parseInt(s.substring(e + 1));
            String es = (exp < 0 ? "-" : "+") + (Math.abs(exp) < 10 ? "0" : "") + Math.abs(exp);
            return mant + "e" + es;
        }
        return new java.math.BigDecimal(Double.toString(d)).toPlainString();
    }

    private static int compareUtf8(String a, String b) {
        return java.util.Arrays.compareUnsigned(a.getBytes(java.nio.charset.StandardCharsets.UTF_8),
                b.getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }

    private static final char[] HEX = "0123456789abcdef".toCharArray();

    /** encoding/json's string encoding with HTML escaping (json.Marshal's default). */
    static void writeString(String s, StringBuilder out) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                case '\b' -> out.append("\\b");
                case '\f' -> out.append("\\f");
                case '<', '>', '&', '\u2028', '\u2029' -> unicode(c, out);
                default -> {
                    if (c < 0x20) {
                        unicode(c, out);
                    } else if (Character.isSurrogate(c)) {
                        if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                            out.append(c).append(s.charAt(++i));
                        } else {
                            out.append("\\ufffd");
                        }
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        out.append('"');
    }

    private static void unicode(char c, StringBuilder out) {
        out.append("\\u").append(HEX[(c >> 12) & 0xf]).append(HEX[(c >> 8) & 0xf]).append(HEX[(c >> 4) & 0xf])
                .append(HEX[c & 0xf]);
    }
}
