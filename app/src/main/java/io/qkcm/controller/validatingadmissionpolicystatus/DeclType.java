package io.qkcm.controller.validatingadmissionpolicystatus;

import com.fasterxml.jackson.databind.JsonNode;
import dev.cel.common.types.CelType;
import dev.cel.common.types.ListType;
import dev.cel.common.types.MapType;
import dev.cel.common.types.SimpleType;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The type a CEL expression sees for a value of an OpenAPI schema: upstream's {@code DeclType} as built by
 * {@code common.SchemaDeclType} (k8s.io/apiserver/pkg/cel), limited to what type checking needs (no size
 * estimates, defaults or enums). An object is a named struct whose fields carry escaped property names; a
 * schema CEL cannot type (no type, an array without one item schema, ...) has no DeclType, and the property
 * holding it is left out of its object, as upstream does.
 */
sealed interface DeclType {

    /** A struct; {@code name} is "object" until {@link #assignTypeName} gives it one. */
    record ObjectType(String name, Map<String, DeclType> fields) implements DeclType {
    }

    record ListOf(DeclType elem) implements DeclType {
    }

    /** Keys are always strings for schemas (additionalProperties). */
    record MapOf(DeclType key, DeclType value) implements DeclType {
    }

    /** A scalar, dyn (x-kubernetes-int-or-string) or any. */
    record Simple(CelType celType) implements DeclType {
    }

    Simple DYN = new Simple(SimpleType.DYN);
    Simple STRING = new Simple(SimpleType.STRING);
    Simple INT = new Simple(SimpleType.INT);
    Simple BOOL = new Simple(SimpleType.BOOL);
    Simple DOUBLE = new Simple(SimpleType.DOUBLE);
    Simple BYTES = new Simple(SimpleType.BYTES);
    Simple TIMESTAMP = new Simple(SimpleType.TIMESTAMP);
    Simple DURATION = new Simple(SimpleType.DURATION);

    /** CEL's reserved words: a property so named is reachable as {@code __name__} (upstream's celReservedSymbols). */
    Set<String> RESERVED = Set.of("true", "false", "null", "in", "as", "break", "const", "continue", "else", "for",
            "function", "if", "import", "let", "loop", "package", "namespace", "return", "var", "void", "while");

    /** The CEL type of this DeclType; objects are referenced by name (their struct types live in a provider). */
    default CelType celType(java.util.function.Function<ObjectType, CelType> structOf) {
        if (this instanceof ObjectType o) {
            return structOf.apply(o);
        }
        if (this instanceof ListOf l) {
            return ListType.create(l.elem().celType(structOf));
        }
        if (this instanceof MapOf m) {
            return MapType.create(m.key().celType(structOf), m.value().celType(structOf));
        }
        return ((Simple) this).celType();
    }

    /**
     * Upstream's MaybeAssignTypeName: an unnamed object takes {@code name}, its nested objects
     * {@code name.field}, list items {@code name.@idx}, map values {@code name.@elem}.
     */
    static DeclType assignTypeName(DeclType t, String name) {
        if (t instanceof ObjectType o) {
            String own = o.name().equals("object") ? name : o.name();
            Map<String, DeclType> fields = new LinkedHashMap<>();
            o.fields().forEach((f, ft) -> fields.put(f, assignTypeName(ft, own + "." + f)));
            return new ObjectType(own, fields);
        }
        if (t instanceof MapOf m) {
            return new MapOf(m.key(), assignTypeName(m.value(), name + ".@elem"));
        }
        if (t instanceof ListOf l) {
            return new ListOf(assignTypeName(l.elem(), name + ".@idx"));
        }
        return t;
    }

    /** Upstream's SchemaDeclType for an OpenAPI schema (JSON, refs already inlined); null when CEL cannot type it. */
    static DeclType ofSchema(JsonNode s, boolean isResourceRoot) {
        if (s == null || !s.isObject()) {
            return null;
        }
        // built-in kinds mark IntOrString by format, CRDs by the extension
        if ("int-or-string".equals(s.path("format").asText()) || s.path("x-kubernetes-int-or-string").asBoolean(false)) {
            return DYN;
        }
        Map<String, JsonNode> properties = properties(s);
        if (isResourceRoot) {
            properties = withTypeAndObjectMeta(properties);
        }
        switch (type(s)) {
            case "array": {
                JsonNode items = s.get("items");
                if (items == null || !items.isObject()) {
                    return null;
                }
                DeclType itemsType = ofSchema(items, isEmbedded(items));
                return itemsType == null ? null : new ListOf(itemsType);
            }
            case "object": {
                JsonNode additional = s.get("additionalProperties");
                if (additional != null && additional.isObject()) {
                    DeclType props = ofSchema(additional, isEmbedded(additional));
                    return props == null ? null : new MapOf(STRING, props);
                }
                Map<String, DeclType> fields = new LinkedHashMap<>();
                properties.forEach((name, prop) -> {
                    DeclType fieldType = ofSchema(prop, isEmbedded(prop));
                    String escaped = escape(name);
                    if (fieldType != null && escaped != null) {
                        fields.put(escaped, fieldType);
                    }
                });
                return new ObjectType("object", fields);
            }
            case "string":
                switch (s.path("format").asText("")) {
                    case "byte":
                        return BYTES;
                    case "duration":
                        return DURATION;
                    case "date":
                    case "date-time":
                        return TIMESTAMP;
                    default:
                        return STRING;
                }
            case "boolean":
                return BOOL;
            case "number":
                return DOUBLE;
            case "integer":
                return INT;
            default:
                return null;
        }
    }

    private static String type(JsonNode s) {
        JsonNode t = s.get("type");
        if (t == null) {
            return "";
        }
        if (t.isArray()) {
            return t.size() == 0 ? "" : t.get(0).asText();
        }
        return t.asText();
    }

    private static boolean typeContains(JsonNode s, String want) {
        if (s == null) {
            return false;
        }
        JsonNode t = s.get("type");
        if (t == null) {
            return false;
        }
        if (t.isArray()) {
            for (JsonNode e : t) {
                if (want.equals(e.asText())) {
                    return true;
                }
            }
            return false;
        }
        return want.equals(t.asText());
    }

    private static boolean isEmbedded(JsonNode s) {
        return s.path("x-kubernetes-embedded-resource").asBoolean(false);
    }

    private static Map<String, JsonNode> properties(JsonNode s) {
        Map<String, JsonNode> out = new LinkedHashMap<>();
        JsonNode p = s.get("properties");
        if (p != null && p.isObject()) {
            for (Iterator<Map.Entry<String, JsonNode>> it = p.fields(); it.hasNext();) {
                Map.Entry<String, JsonNode> e = it.next();
                out.put(e.getKey(), e.getValue());
            }
        }
        return out;
    }

    /**
     * apiVersion, kind, metadata.name and metadata.generateName are always reachable at a resource's root:
     * unless the schema already has them all as strings, they (and a metadata of just those two) are added.
     */
    private static Map<String, JsonNode> withTypeAndObjectMeta(Map<String, JsonNode> props) {
        JsonNode metadata = props.get("metadata");
        if (typeContains(props.get("kind"), "string") && typeContains(props.get("apiVersion"), "string")
                && typeContains(metadata, "object") && metadata.get("properties") != null
                && typeContains(metadata.get("properties").get("name"), "string")
                && typeContains(metadata.get("properties").get("generateName"), "string")) {
            return props;
        }
        var json = io.qkcm.runtime.Json.mapper();
        Map<String, JsonNode> out = new LinkedHashMap<>(props);
        var string = json.createObjectNode().put("type", "string");
        out.put("kind", string);
        out.put("apiVersion", string);
        var meta = json.createObjectNode().put("type", "object");
        meta.putObject("properties").set("name", string);
        ((com.fasterxml.jackson.databind.node.ObjectNode) meta.get("properties")).set("generateName", string);
        out.put("metadata", meta);
        return out;
    }

    /**
     * Upstream's Escape: a property name as a CEL identifier, or null when it cannot be one (it starts with a
     * digit or has a character outside [a-zA-Z0-9_./-]). Reserved words become {@code __word__}; "__", ".",
     * "-" and "/" become {@code __underscores__}, {@code __dot__}, {@code __dash__}, {@code __slash__}.
     */
    static String escape(String ident) {
        if (ident.isEmpty() || (ident.charAt(0) >= '0' && ident.charAt(0) <= '9')) {
            return null;
        }
        if (RESERVED.contains(ident)) {
            return "__" + ident + "__";
        }
        StringBuilder out = new StringBuilder();
        for (int i = 0; i < ident.length(); i++) {
            char c = ident.charAt(i);
            if (c == '_' && i + 1 < ident.length() && ident.charAt(i + 1) == '_') {
                out.append("__underscores__");
                i++;
            } else if (c == '.') {
                out.append("__dot__");
            } else if (c == '-') {
                out.append("__dash__");
            } else if (c == '/') {
                out.append("__slash__");
            } else if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_') {
                out.append(c);
            } else {
                return null;
            }
        }
        return out.toString();
    }

    /** Every object type reachable from {@code t}, by name (the struct types a provider must know). */
    static void collectObjects(DeclType t, Map<String, ObjectType> into) {
        if (t instanceof ObjectType o) {
            into.putIfAbsent(o.name(), o);
            o.fields().values().forEach(f -> collectObjects(f, into));
        } else if (t instanceof ListOf l) {
            collectObjects(l.elem(), into);
        } else if (t instanceof MapOf m) {
            collectObjects(m.value(), into);
        }
    }

    /** Field names in a fixed order (tests compare them). */
    static List<String> fieldNames(ObjectType o) {
        return List.copyOf(o.fields().keySet());
    }
}
