package io.qkcm.controller.util.cel;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.databind.JsonNode;
import com.google.common.collect.ImmutableList;

import dev.cel.common.CelFunctionDecl;
import dev.cel.common.CelOverloadDecl;
import dev.cel.common.types.CelType;
import dev.cel.common.types.ListType;
import dev.cel.common.types.MapType;
import dev.cel.common.types.OpaqueType;
import dev.cel.common.types.OptionalType;
import dev.cel.common.types.SimpleType;
import dev.cel.common.types.StructTypeReference;
import dev.cel.common.types.TypeParamType;
import dev.cel.common.types.TypeType;
import io.qkcm.runtime.Json;

/**
 * Every function, with its overloads, of Kubernetes' stored-expressions CEL environment (upstream's
 * {@code environment.MustBaseEnvSet(...)} in k8s.io/apiserver/pkg/cel/environment): CEL's standard library,
 * cross-type numeric comparisons, optionals, the strings, sets, lists and two-variable comprehension
 * extensions and Kubernetes' own libraries (urls, regex, lists, authz, quantity, ip, cidr, format, semver).
 * They are read from {@code kubernetes-cel-functions.json}, a table dumped from that upstream environment by
 * hack/vap-typecheck, so a checker declaring them resolves overloads against exactly upstream's signatures and
 * overload ids. Kubernetes' own value types are struct references by name ({@code kubernetes.Quantity},
 * {@code kubernetes.Semver}, ...).
 */
public final class KubernetesCelFunctions {

    private static final Map<String, CelType> SIMPLE = Map.ofEntries(
            Map.entry("any", SimpleType.ANY), Map.entry("bool", SimpleType.BOOL), Map.entry("bytes", SimpleType.BYTES),
            Map.entry("double", SimpleType.DOUBLE), Map.entry("duration", SimpleType.DURATION),
            Map.entry("dyn", SimpleType.DYN), Map.entry("error", SimpleType.ERROR), Map.entry("int", SimpleType.INT),
            Map.entry("null", SimpleType.NULL_TYPE), Map.entry("string", SimpleType.STRING),
            Map.entry("timestamp", SimpleType.TIMESTAMP), Map.entry("uint", SimpleType.UINT));

    private static final ImmutableList<CelFunctionDecl> FUNCTIONS = load();

    private KubernetesCelFunctions() {
    }

    /** The declarations, loaded once. */
    public static ImmutableList<CelFunctionDecl> all() {
        return FUNCTIONS;
    }

    private static ImmutableList<CelFunctionDecl> load() {
        JsonNode root;
        try (InputStream in = KubernetesCelFunctions.class.getResourceAsStream("kubernetes-cel-functions.json")) {
            if (in == null) {
                throw new IllegalStateException("kubernetes-cel-functions.json is missing from the class path");
            }
            root = Json.mapper().readTree(in);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        ImmutableList.Builder<CelFunctionDecl> out = ImmutableList.builder();
        for (JsonNode f : root.get("functions")) {
            List<CelOverloadDecl> overloads = new ArrayList<>();
            for (JsonNode o : f.get("overloads")) {
                List<CelType> args = new ArrayList<>();
                JsonNode a = o.get("args");
                if (a != null && a.isArray()) {
                    a.forEach(t -> args.add(type(t)));
                }
                CelType result = type(o.get("result"));
                String id = o.get("id").asText();
                overloads.add(o.path("member").asBoolean(false)
                        ? CelOverloadDecl.newMemberOverload(id, result, args)
                        : CelOverloadDecl.newGlobalOverload(id, result, args));
            }
            out.add(CelFunctionDecl.newFunctionDeclaration(f.get("name").asText(), overloads));
        }
        return out.build();
    }

    private static CelType type(JsonNode t) {
        String kind = t.get("kind").asText();
        List<CelType> params = new ArrayList<>();
        JsonNode p = t.get("params");
        if (p != null && p.isArray()) {
            p.forEach(e -> params.add(type(e)));
        }
        CelType simple = SIMPLE.get(kind);
        if (simple != null) {
            return simple;
        }
        String name = t.path("name").asText("");
        switch (kind) {
            case "list":
                return ListType.create(params.get(0));
            case "map":
                return MapType.create(params.get(0), params.get(1));
            case "type":
                return params.isEmpty() ? TypeType.create(SimpleType.DYN) : TypeType.create(params.get(0));
            case "typeparam":
                return TypeParamType.create(name);
            case "struct":
                return StructTypeReference.create(name);
            case "opaque":
                if (name.equals("optional_type")) {
                    return OptionalType.create(params.get(0));
                }
                return OpaqueType.create(name, ImmutableList.copyOf(params));
            default:
                throw new IllegalStateException("unknown CEL type kind in kubernetes-cel-functions.json: " + kind);
        }
    }
}
