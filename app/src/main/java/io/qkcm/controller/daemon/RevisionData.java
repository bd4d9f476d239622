package io.qkcm.controller.daemon;

import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import io.fabric8.kubernetes.api.model.apps.ControllerRevision;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.qkcm.controller.history.ControllerHistory;
import io.qkcm.controller.history.GoJson;

/**
 * A DaemonSet revision's data as upstream writes it (getPatch): Go's {@code json.Marshal} of the
 * DaemonSet, decoded into a generic map and re-encoded, keeping only
 * {@code {"spec":{"template":{..., "$patch":"replace"}}}}. So every object's keys are sorted, strings
 * are escaped as Go escapes them (HTML characters as {@code \u003c}...), and the template holds
 * exactly the keys Go's encoder emits for the decoded {@code v1.PodTemplateSpec}: fields without
 * {@code omitempty} even when empty, struct-typed fields always, {@code omitzero} fields only when
 * set. Which is which comes from the Go struct layout dumped by {@code hack/golden/daemonsetrevision}.
 * Upstream compares these bytes with the stored revision's ({@code Match}); so does qkcm, so revisions
 * written by either controller are recognised by the other.
 */
public final class RevisionData {

    private static final KubernetesSerialization SERIALIZATION = io.qkcm.runtime.Json.api();
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
        return GoJson.sorted(root);
    }

    /** The stored revision's data bytes (Data.Raw), as the history kit renders them. */
    public static String rawData(ControllerRevision revision) {
        return ControllerHistory.rawData(revision);
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
}
