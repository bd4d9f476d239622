package io.qkcm.controller.history;

import java.io.IOException;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.qkcm.controller.hash.GoQuantityJson;

/**
 * What Go's {@code encoding/json} writes for a Go value decoded from a JSON document, driven by the Go
 * type layout (json names, omitempty, omitzero, embedded structs, types with their own MarshalJSON) that
 * hack/golden/history dumps: absent non-omitempty fields come back as Go's zero values ({@code ""}, {@code 0},
 * {@code false}, {@code null}, {@code {}}), empty omitempty ones go, unknown fields go. Used to rebuild the
 * bytes upstream marshals from a typed object (a StatefulSet's or DaemonSet's template) out of fabric8's
 * model, which drops some of them (zero times, empty objects).
 */
public final class GoTypedJson {

    private static final JsonNodeFactory NODES = JsonNodeFactory.instance;
    private static final KubernetesSerialization SERIALIZATION = io.qkcm.runtime.Json.api();
    private static final GoTypedJson POD_TEMPLATE_SPEC = load("qkcm/history/go-podtemplatespec-json.json");

    private record Field(String json, boolean inline, boolean omitEmpty, boolean omitZero, String type) {
    }

    private record TypeInfo(String kind, String elem, boolean marshaler, List<Field> fields) {
    }

    private final Map<String, TypeInfo> types = new HashMap<>();

    private GoTypedJson(JsonNode schema) {
        for (Iterator<Map.Entry<String, JsonNode>> it = schema.fields(); it.hasNext();) {
            Map.Entry<String, JsonNode> e = it.next();
            JsonNode t = e.getValue();
            List<Field> fields = new ArrayList<>();
            for (JsonNode f : t.path("fields")) {
                fields.add(new Field(f.path("json").asText(null), f.path("inline").asBoolean(false),
                        f.path("omitempty").asBoolean(false), f.path("omitzero").asBoolean(false), f.get("type").asText()));
            }
            types.put(e.getKey(), new TypeInfo(t.get("kind").asText(), t.path("elem").asText(null),
                    t.path("marshaler").asBoolean(false), fields));
        }
    }

    private static GoTypedJson load(String resource) {
        try (InputStream in = GoTypedJson.class.getClassLoader().getResourceAsStream(resource)) {
            if (in == null) {
                throw new IllegalStateException(resource + " is missing from the classpath");
            }
            return new GoTypedJson(io.qkcm.runtime.Json.mapper().readTree(in));
        } catch (IOException e) {
            throw new IllegalStateException("cannot read " + resource, e);
        }
    }

    /** Go's JSON tree of a core/v1 PodTemplateSpec, from fabric8's model. */
    public static JsonNode podTemplateSpec(PodTemplateSpec template) {
        JsonNode json = SERIALIZATION.convertValue(template, JsonNode.class);
        return POD_TEMPLATE_SPEC.render("v1.PodTemplateSpec", json);
    }

    /** Go's JSON tree of the value of Go type {@code goType} decoded from {@code json}. */
    public JsonNode render(String goType, JsonNode json) {
        return value(goType, json);
    }

    private static boolean absent(JsonNode n) {
        return n == null || n.isNull() || n.isMissingNode();
    }

    private TypeInfo type(String name) {
        TypeInfo t = types.get(name);
        if (t == null) {
            throw new IllegalStateException("Go type " + name + " is not in the schema");
        }
        return t;
    }

    private JsonNode value(String typeName, JsonNode node) {
        TypeInfo t = type(typeName);
        if (t.marshaler) {
            return marshaled(typeName, node);
        }
        switch (t.kind) {
            case "ptr":
                return absent(node) ? NODES.nullNode() : value(t.elem, node);
            case "slice":
                if (absent(node)) {
                    return NODES.nullNode();
                }
                if (t.elem.equals("uint8")) {
                    return node; // []byte: base64 text, as decoded
                }
                ArrayNode arr = NODES.arrayNode();
                for (JsonNode item : node) {
                    arr.add(value(t.elem, item));
                }
                return arr;
            case "map":
                if (absent(node)) {
                    return NODES.nullNode();
                }
                ObjectNode map = NODES.objectNode();
                for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext();) {
                    Map.Entry<String, JsonNode> e = it.next();
                    map.set(e.getKey(), value(t.elem, e.getValue()));
                }
                return map;
            case "struct":
                ObjectNode out = NODES.objectNode();
                struct(t, absent(node) ? NODES.objectNode() : node, out);
                return out;
            case "string":
                return absent(node) ? NODES.textNode("") : NODES.textNode(node.asText());
            case "bool":
                return absent(node) ? NODES.booleanNode(false) : NODES.booleanNode(node.asBoolean());
            case "interface":
                return absent(node) ? NODES.nullNode() : node;
            default: // numbers
                return absent(node) ? NODES.numberNode(0) : node;
        }
    }

    private void struct(TypeInfo t, JsonNode node, ObjectNode out) {
        for (Field f : t.fields) {
            if (f.inline) {
                struct(type(f.type), node, out);
                continue;
            }
            JsonNode v = value(f.type, node.get(f.json));
            if (f.omitEmpty && isEmpty(f.type, v)) {
                continue;
            }
            if (f.omitZero && isZero(f.type, v)) {
                continue;
            }
            out.set(f.json, v);
        }
    }

    /** Go's omitempty: false, 0, "", nil pointer/interface, empty slice/map (structs never). */
    private boolean isEmpty(String typeName, JsonNode v) {
        TypeInfo t = type(typeName);
        switch (t.kind) {
            case "ptr":
            case "interface":
                return v.isNull();
            case "slice":
            case "map":
                return v.isNull() || v.size() == 0;
            case "string":
                return !t.marshaler && v.isTextual() && v.textValue().isEmpty();
            case "bool":
                return !v.asBoolean();
            case "struct":
                return false;
            default:
                return v.isNumber() && v.asDouble() == 0;
        }
    }

    /** Go's omitzero: the zero value (IsZero of metav1.Time: no time). */
    private boolean isZero(String typeName, JsonNode v) {
        TypeInfo t = type(typeName);
        if (t.marshaler) {
            return v.isNull() || (v.isTextual() && v.textValue().isEmpty());
        }
        if (t.kind.equals("struct")) {
            for (Iterator<JsonNode> it = v.elements(); it.hasNext();) {
                JsonNode child = it.next();
                if (!(child.isNull() || (child.isTextual() && child.textValue().isEmpty())
                        || (child.isNumber() && child.asDouble() == 0) || (child.isBoolean() && !child.asBoolean()))) {
                    return false;
                }
            }
            return true;
        }
        return isEmpty(typeName, v) && !t.kind.equals("slice") && !t.kind.equals("map") || v.isNull();
    }

    /** Types with their own MarshalJSON: metav1.Time (zero: null), resource.Quantity (zero: "0", else as Go re-marshals it), IntOrString. */
    private static JsonNode marshaled(String typeName, JsonNode node) {
        switch (typeName) {
            case "v1.Time":
                return absent(node) || (node.isTextual() && node.textValue().isEmpty()) ? NODES.nullNode() : node;
            case "resource.Quantity":
                return absent(node) ? NODES.textNode("0") : NODES.textNode(GoQuantityJson.marshal(node.asText()));
            case "intstr.IntOrString":
                return absent(node) ? NODES.numberNode(0) : node;
            default:
                return absent(node) ? NODES.nullNode() : node;
        }
    }
}
