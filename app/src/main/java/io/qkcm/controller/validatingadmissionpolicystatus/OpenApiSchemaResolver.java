package io.qkcm.controller.validatingadmissionpolicystatus;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.qkcm.runtime.Json;
import java.util.HashSet;
import java.util.Iterator;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * A kind's schema from the API server's OpenAPI v3 (upstream's ClientDiscoveryResolver and PopulateRefs in
 * k8s.io/apiserver/pkg/cel/openapi/resolver): /openapi/v3 lists a document per group version, the document's
 * component carrying the kind in x-kubernetes-group-version-kind is the schema, and every $ref (alone or as
 * the first of an allOf) is inlined; a ref already being inlined further up becomes an empty object (a cycle).
 * Upstream resolves built-in kinds from the OpenAPI definitions compiled into kube-controller-manager first;
 * qkcm has none compiled in and asks the server for those too: the same schemas for type checking (the
 * server publishes the same definitions; IntOrString keeps its int-or-string format, which types it dyn).
 * Documents are cached by their server-relative URL, which carries the document's hash.
 */
final class OpenApiSchemaResolver implements TypeChecker.SchemaResolver {

    private final Function<String, JsonNode> get;
    private final Map<String, JsonNode> documents = new ConcurrentHashMap<>();

    /** {@code get}: a GET of a server path (with its query) returning JSON. */
    OpenApiSchemaResolver(Function<String, JsonNode> get) {
        this.get = get;
    }

    @Override
    public Optional<JsonNode> resolveSchema(TypeChecker.GroupVersionKind gvk) {
        String path = gvk.group().isEmpty() ? "api/" + gvk.version() : "apis/" + gvk.group() + "/" + gvk.version();
        JsonNode entry = get.apply("/openapi/v3").path("paths").get(path);
        if (entry == null) {
            return Optional.empty();
        }
        String url = entry.path("serverRelativeURL").asText("/openapi/v3/" + path);
        JsonNode doc = documents.computeIfAbsent(url, get);
        JsonNode schemas = doc.path("components").path("schemas");
        for (Iterator<Map.Entry<String, JsonNode>> it = schemas.fields(); it.hasNext();) {
            Map.Entry<String, JsonNode> e = it.next();
            for (JsonNode g : e.getValue().path("x-kubernetes-group-version-kind")) {
                if (g.path("group").asText("").equals(gvk.group()) && g.path("version").asText("").equals(gvk.version())
                        && g.path("kind").asText("").equals(gvk.kind())) {
                    Set<String> visited = new HashSet<>();
                    String ref = "#/components/schemas/" + e.getKey();
                    visited.add(ref);
                    return Optional.of(populateRefs(schemas, visited, e.getValue()));
                }
            }
        }
        return Optional.empty();
    }

    /** Upstream's populateRefs over properties, additionalProperties and items. */
    static JsonNode populateRefs(JsonNode schemas, Set<String> visited, JsonNode schema) {
        String ref = refOf(schema);
        JsonNode result = schema;
        if (ref != null) {
            if (visited.contains(ref)) {
                return Json.mapper().createObjectNode().put("type", "object");
            }
            JsonNode resolved = schemas.get(ref.substring("#/components/schemas/".length()));
            if (resolved == null) {
                throw new IllegalStateException("internal error: cannot resolve Ref " + ref);
            }
            visited.add(ref);
            try {
                return populateChildren(schemas, visited, resolved);
            } finally {
                visited.remove(ref);
            }
        }
        return populateChildren(schemas, visited, result);
    }

    private static JsonNode populateChildren(JsonNode schemas, Set<String> visited, JsonNode schema) {
        if (!schema.isObject()) {
            return schema;
        }
        ObjectNode copy = ((ObjectNode) schema).deepCopy();
        JsonNode props = schema.get("properties");
        if (props != null && props.isObject()) {
            ObjectNode out = Json.mapper().createObjectNode();
            props.fields().forEachRemaining(p -> out.set(p.getKey(), populateRefs(schemas, visited, p.getValue())));
            copy.set("properties", out);
        }
        JsonNode additional = schema.get("additionalProperties");
        if (additional != null && additional.isObject()) {
            copy.set("additionalProperties", populateRefs(schemas, visited, additional));
        }
        JsonNode items = schema.get("items");
        if (items != null && items.isObject()) {
            copy.set("items", populateRefs(schemas, visited, items));
        }
        return copy;
    }

    private static String refOf(JsonNode schema) {
        JsonNode ref = schema.get("$ref");
        if (ref != null && ref.isTextual()) {
            return ref.asText();
        }
        for (JsonNode allOf : schema.path("allOf")) {
            String r = refOf(allOf);
            if (r != null) {
                return r;
            }
        }
        return null;
    }
}
