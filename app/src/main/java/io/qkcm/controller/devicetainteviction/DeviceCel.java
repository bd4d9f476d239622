package io.qkcm.controller.devicetainteviction;

import java.util.AbstractMap;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;
import java.util.TreeSet;

import com.google.common.collect.ImmutableCollection;
import com.google.common.collect.ImmutableList;
import com.google.common.collect.ImmutableSet;

import dev.cel.checker.CelChecker;
import dev.cel.common.CelAbstractSyntaxTree;
import dev.cel.common.CelOptions;
import dev.cel.common.CelValidationException;
import dev.cel.common.CelValidationResult;
import dev.cel.common.CelVarDecl;
import dev.cel.common.ast.CelReference;
import dev.cel.common.types.CelType;
import dev.cel.common.types.CelTypeProvider;
import dev.cel.common.types.MapType;
import dev.cel.common.types.SimpleType;
import dev.cel.common.types.StructType;
import dev.cel.common.types.StructTypeReference;
import dev.cel.common.types.TypeType;
import dev.cel.compiler.CelCompilerFactory;
import dev.cel.extensions.CelExtensions;
import dev.cel.parser.CelParser;
import dev.cel.parser.CelParserFactory;
import dev.cel.runtime.CelEvaluationException;
import dev.cel.runtime.CelFunctionBinding;
import dev.cel.runtime.CelRuntime;
import dev.cel.runtime.CelRuntimeFactory;
import dev.cel.runtime.CelStandardFunctions;
import dev.cel.runtime.RuntimeEquality;
import dev.cel.runtime.RuntimeHelpers;
import io.fabric8.kubernetes.api.model.resource.v1beta2.Device;
import io.fabric8.kubernetes.api.model.resource.v1beta2.DeviceAttribute;
import io.fabric8.kubernetes.api.model.resource.v1beta2.DeviceCapacity;
import io.qkcm.controller.util.GoQuantity;
import io.qkcm.controller.util.cel.KubernetesCelFunctions;
import io.qkcm.controller.util.cel.KubernetesCelMacros;
import io.qkcm.controller.util.cel.KubernetesCelTypes;

/**
 * Upstream's k8s.io/dynamic-resource-allocation/cel as the ResourceSlice tracker uses it: a device selector's
 * expression compiled in Kubernetes' stored-expressions environment with the variable {@code device}
 * ({@code driver}, {@code attributes} and {@code capacity} by domain and id, and {@code allowMultipleAllocations}
 * with DRAConsumableCapacity) plus {@code cel.bind}, and evaluated against one device.
 *
 * <p>Type checking is upstream's (every function of that environment, by the kit's table). Evaluation runs on
 * cel-java's runtime with CEL's standard library (with type(), int(duration) and cel-go's failing
 * duration(int)), cel-java's optionals, sets and two-variable comprehension bindings ({@link CelJavaLibraries}),
 * and ports of cel-go's ext.Strings v2 ({@link CelStrings}) and ext.Lists v3 and Kubernetes' lists
 * ({@link CelLists}), regex ({@link CelRegex}), IP/CIDR ({@link CelNet}), quantity ({@link Quantity}) and
 * semver ({@link Semver}) libraries, with cel-go's error words. An expression calling any other function (the
 * URL and format libraries, string.format) is compiled but not evaluated: {@link Compiled#unsupported()} names those
 * overloads. Upstream's runtime cost limit is not enforced: cel-java tracks no cost.
 */
final class DeviceCel {

    static final String QUANTITY = "kubernetes.Quantity";
    static final String SEMVER = "kubernetes.Semver";

    private static final CelOptions OPTIONS = CelOptions.current()
            .enableOptionalSyntax(true)
            .enableHomogeneousLiterals(false)
            .build();

    private static final CelParser PARSER = CelParserFactory.standardCelParserBuilder()
            .setOptions(OPTIONS)
            .setStandardMacros()
            .addMacros(KubernetesCelMacros.all())
            // ext.Bindings: cel.bind(name, init, expr)
            .addMacros(CelExtensions.bindings().macros())
            .build();

    /** cel-go's type identifiers, and the IP and CIDR libraries' types, declared by name. */
    private static final List<CelVarDecl> TYPE_IDENTIFIERS = Stream.concat(
            KubernetesCelTypes.TYPE_IDENTIFIERS.stream(), Stream.of(
                    CelVarDecl.newVarDeclaration("net.IP", TypeType.create(dev.cel.common.types.OpaqueType.create("net.IP"))),
                    CelVarDecl.newVarDeclaration("net.CIDR", TypeType.create(dev.cel.common.types.OpaqueType.create("net.CIDR")))))
            .toList();

    /** Upstream's attributes and capacity: by domain, then id; an attribute is of the unknown type. */
    private static final CelType ATTRIBUTES = MapType.create(SimpleType.STRING, MapType.create(SimpleType.STRING, SimpleType.ANY));
    private static final CelType CAPACITY = MapType.create(SimpleType.STRING,
            MapType.create(SimpleType.STRING, StructTypeReference.create(QUANTITY)));

    private final CelChecker checker;
    private final CelRuntime runtime;
    private final Set<String> evaluated;
    private final Map<String, Compiled> cache = new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Compiled> eldest) {
            return size() > 10; // upstream's cel.NewCache(10)
        }
    };

    /** A compiled selector: its AST, or its compile error; {@code unsupported}: functions not evaluated here. */
    record Compiled(String expression, CelRuntime.Program program, String error, Set<String> unsupported) {
    }

    /** The outcome of one evaluation: a match, or an error (upstream's runtime error). */
    record Result(boolean matches, String error) {
    }

    /** @param consumableCapacity DRAConsumableCapacity: the device has {@code allowMultipleAllocations} */
    DeviceCel(boolean consumableCapacity) {
        Set<String> fields = new java.util.LinkedHashSet<>(List.of("driver", "attributes", "capacity"));
        if (consumableCapacity) {
            fields.add("allowMultipleAllocations");
        }
        StructType device = StructType.create("kubernetes.DRADevice", ImmutableSet.copyOf(fields), field -> switch (field) {
            case "driver" -> Optional.of(SimpleType.STRING);
            case "attributes" -> Optional.of(ATTRIBUTES);
            case "capacity" -> Optional.of(CAPACITY);
            case "allowMultipleAllocations" -> consumableCapacity ? Optional.of(SimpleType.BOOL) : Optional.empty();
            default -> Optional.empty();
        });
        CelTypeProvider provider = new CelTypeProvider() {
            @Override
            public ImmutableCollection<CelType> types() {
                return ImmutableList.of(device);
            }

            @Override
            public Optional<CelType> findType(String name) {
                return device.name().equals(name) ? Optional.of(device) : Optional.empty();
            }
        };
        this.checker = CelCompilerFactory.standardCelCheckerBuilder()
                .setOptions(OPTIONS)
                .setStandardEnvironmentEnabled(false)
                .setStandardDeclarations(KubernetesCelTypes.STANDARD_IDENTIFIERS_ONLY)
                .addVarDeclarations(TYPE_IDENTIFIERS)
                .addFunctionDeclarations(KubernetesCelFunctions.all())
                .setTypeProvider(provider)
                .addVarDeclarations(CelVarDecl.newVarDeclaration("device", device))
                .build();

        RuntimeEquality equality = RuntimeEquality.create(RuntimeHelpers.create(), OPTIONS);
        // "in" on attributes or capacity asks the real map: only a lookup falls back to the empty map
        CelStandardFunctions standard = CelStandardFunctions.newBuilder()
                .filterFunctions((function, overload) -> !(overload instanceof Enum<?> e && e.name().equals("IN_MAP")))
                .build();
        List<CelFunctionBinding> bindings = new ArrayList<>(standard.newFunctionBindings(equality, OPTIONS));
        bindings.add(CelFunctionBinding.from("in_map", Object.class, Map.class,
                (key, map) -> {
                    @SuppressWarnings("unchecked")
                    Map<Object, Object> m = (Map<Object, Object>) (Map<?, ?>) (map instanceof DefaultingMap d ? d.real : map);
                    return equality.inMap(m, key);
                }));
        // cel-go's id of getSeconds(tz) is cel-java's timestamp_to_seconds_with_tz
        bindings.stream().filter(b -> b.getOverloadId().equals("timestamp_to_seconds_with_tz")).findFirst()
                .map(b -> CelFunctionBinding.from("timestamp_to_seconds_tz", b.getArgTypes(), b.getDefinition()))
                .ifPresent(bindings::add);
        bindings.addAll(Quantity.bindings());
        bindings.addAll(Semver.bindings());
        bindings.addAll(CelStrings.bindings());
        bindings.addAll(CelLists.bindings(equality));
        bindings.addAll(CelRegex.bindings());
        bindings.addAll(CelNet.bindings());
        bindings.addAll(CelJavaLibraries.bindings(equality, OPTIONS));
        // cel-go v0.26 declares duration(int) but an int does not convert to a duration; int(duration) is nanoseconds
        bindings.add(CelFunctionBinding.from("int64_to_duration", Long.class, i -> {
            throw CelStrings.error("type conversion error from 'int' to 'google.protobuf.Duration'");
        }));
        bindings.add(CelFunctionBinding.from("duration_to_int64", java.time.Duration.class, java.time.Duration::toNanos));
        this.runtime = CelRuntimeFactory.standardCelRuntimeBuilder()
                .setOptions(OPTIONS)
                .setStandardEnvironmentEnabled(false)
                .addFunctionBindings(bindings)
                .build();
        Set<String> ids = new HashSet<>(SPECIAL_FORMS);
        bindings.forEach(b -> ids.add(b.getOverloadId()));
        this.evaluated = Set.copyOf(ids);
    }

    /** Overloads cel-java's interpreter evaluates itself (short-circuits and the conditional). */
    private static final Set<String> SPECIAL_FORMS = Set.of("logical_and", "logical_or", "conditional",
            "not_strictly_false", "__not_strictly_false__", "optional_or_optional", "optional_orValue_value", "type");

    /** Upstream's Cache.GetOrCompile. */
    synchronized Compiled compile(String expression) {
        Compiled c = cache.get(expression);
        if (c == null) {
            c = doCompile(expression);
            cache.put(expression, c);
        }
        return c;
    }

    private Compiled doCompile(String expression) {
        CelValidationResult parsed = PARSER.parse(expression);
        CelAbstractSyntaxTree ast;
        try {
            ast = checker.check(parsed.getAst()).getAst();
        } catch (CelValidationException e) {
            return new Compiled(expression, null, "compilation failed: " + e.getMessage(), Set.of());
        } catch (IllegalStateException e) {
            // the parse failed: the parsed result carries the syntax errors
            return new Compiled(expression, null, "compilation failed: " + parsed.getErrorString(), Set.of());
        }
        CelType result = ast.getResultType();
        if (!result.equals(SimpleType.BOOL) && !result.equals(SimpleType.ANY)) {
            return new Compiled(expression, null, "must evaluate to bool or the unknown type, not " + result.name(), Set.of());
        }
        Set<String> unsupported = new TreeSet<>();
        Map<Long, CelReference> references = new HashMap<>(ast.getReferenceMap());
        for (Map.Entry<Long, CelReference> e : ast.getReferenceMap().entrySet()) {
            CelReference ref = e.getValue();
            Optional<String> dispatch = CelLists.dispatchId(ref.overloadIds());
            if (dispatch.isPresent()) {
                // cel-java finds several list overloads taking the list ambiguous; cel-go takes the first that fits
                references.put(e.getKey(), CelReference.newBuilder().setName(ref.name())
                        .addOverloadIds(dispatch.get()).build());
                continue;
            }
            for (String id : ref.overloadIds()) {
                if (!evaluated.contains(id)) {
                    unsupported.add(id);
                }
            }
        }
        ast = CelAbstractSyntaxTree.newCheckedAst(ast.getExpr(), ast.getSource(), references, ast.getTypeMap());
        if (!unsupported.isEmpty()) {
            return new Compiled(expression, null, null, unsupported);
        }
        Optional<String> regexError = CelRegex.constantPatternError(ast);
        if (regexError.isPresent()) {
            return new Compiled(expression, null, "program instantiation failed: " + regexError.get(), Set.of());
        }
        try {
            return new Compiled(expression, runtime.createProgram(ast), null, Set.of());
        } catch (CelEvaluationException e) {
            return new Compiled(expression, null, "program instantiation failed: " + e.getMessage(), Set.of());
        }
    }

    /** CompilationResult.DeviceMatches for a device of {@code driver}. */
    static Result matches(Compiled compiled, String driver, Device device) {
        Map<String, Object> attributes = new HashMap<>();
        if (device.getAttributes() != null) {
            for (Map.Entry<String, DeviceAttribute> e : device.getAttributes().entrySet()) {
                Object value;
                try {
                    value = attributeValue(e.getValue());
                } catch (IllegalArgumentException ex) {
                    return new Result(false, "attribute " + e.getKey() + ": " + ex.getMessage());
                }
                String[] name = qualifiedName(e.getKey(), driver);
                @SuppressWarnings("unchecked")
                Map<String, Object> domain = (Map<String, Object>) attributes.computeIfAbsent(name[0], k -> new HashMap<>());
                domain.put(name[1], value);
            }
        }
        Map<String, Object> capacity = new HashMap<>();
        if (device.getCapacity() != null) {
            for (Map.Entry<String, DeviceCapacity> e : device.getCapacity().entrySet()) {
                String[] name = qualifiedName(e.getKey(), driver);
                @SuppressWarnings("unchecked")
                Map<String, Object> domain = (Map<String, Object>) capacity.computeIfAbsent(name[0], k -> new HashMap<>());
                domain.put(name[1], new Quantity(e.getValue().getValue() == null ? GoQuantity.ZERO
                        : GoQuantity.of(e.getValue().getValue())));
            }
        }
        Map<String, Object> vars = new HashMap<>();
        vars.put("driver", driver == null ? "" : driver);
        Object multi = device.getAdditionalProperties() == null ? null
                : device.getAdditionalProperties().get("allowMultipleAllocations");
        vars.put("allowMultipleAllocations", Boolean.TRUE.equals(multi));
        vars.put("attributes", new DefaultingMap(attributes));
        vars.put("capacity", new DefaultingMap(capacity));
        Object result;
        try {
            result = compiled.program().eval(Map.of("device", vars));
        } catch (CelEvaluationException e) {
            return new Result(false, goMessage(e));
        }
        if (result instanceof Boolean b) {
            return new Result(b, null);
        }
        return new Result(false, "CEL result of type " + typeName(result) + " could not be converted to bool");
    }

    private static String typeName(Object v) {
        if (v instanceof Long) {
            return "int";
        }
        if (v instanceof String) {
            return "string";
        }
        if (v instanceof Double) {
            return "double";
        }
        if (v instanceof Map) {
            return "map";
        }
        if (v instanceof List) {
            return "list";
        }
        if (v instanceof Quantity) {
            return QUANTITY;
        }
        if (v instanceof Semver) {
            return SEMVER;
        }
        return v == null ? "null_type" : v.getClass().getSimpleName();
    }

    /**
     * The evaluation error in cel-go's words where they differ in the common cases (a missing key, division
     * by zero, overflow); others keep cel-java's.
     */
    static String goMessage(CelEvaluationException e) {
        String m = e.getMessage() == null ? "" : e.getMessage();
        String bare = m.replaceFirst("^evaluation error( at [^:]*:\\d+)?: ", "");
        if (e.getErrorCode() == dev.cel.common.CelErrorCode.ATTRIBUTE_NOT_FOUND) {
            // a selected field: "key 'x' is not present in map."; an index: the key alone
            java.util.regex.Matcher key = java.util.regex.Pattern.compile("^key '(.*)' is not present in map\\.?$").matcher(bare);
            return "no such key: " + (key.find() ? key.group(1) : bare);
        }
        if (e.getErrorCode() == dev.cel.common.CelErrorCode.DIVIDE_BY_ZERO) {
            return bare.contains("%") || bare.contains("modulus") ? "modulus by zero" : "division by zero";
        }
        if (e.getErrorCode() == dev.cel.common.CelErrorCode.NUMERIC_OVERFLOW) {
            return "integer overflow";
        }
        return bare;
    }

    /** getAttributeValue. */
    static Object attributeValue(DeviceAttribute a) {
        if (a.getInt() != null) {
            return a.getInt();
        }
        if (a.getBool() != null) {
            return a.getBool();
        }
        if (a.getString() != null) {
            return a.getString();
        }
        if (a.getVersion() != null) {
            try {
                return Semver.parse(a.getVersion());
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("parse semantic version: " + e.getMessage());
            }
        }
        throw new IllegalArgumentException("unsupported attribute value");
    }

    /** parseQualifiedName: domain and id, the driver's name the default domain. */
    static String[] qualifiedName(String name, String defaultDomain) {
        int sep = name.indexOf('/');
        if (sep == -1) {
            return new String[] { defaultDomain == null ? "" : defaultDomain, name };
        }
        return new String[] { name.substring(0, sep), name.substring(sep + 1) };
    }

    /**
     * newStringInterfaceMapWithDefault: looking up a domain that is not there gives an empty map (so a missing
     * attribute fails as "no such key: <id>"); {@code in} and iteration see the real map.
     */
    static final class DefaultingMap extends AbstractMap<String, Object> {
        final Map<String, Object> real;

        DefaultingMap(Map<String, Object> real) {
            this.real = real;
        }

        @Override
        public Object get(Object key) {
            Object v = real.get(key);
            return v != null ? v : Map.of();
        }

        @Override
        public boolean containsKey(Object key) {
            return real.containsKey(key);
        }

        @Override
        public Set<Map.Entry<String, Object>> entrySet() {
            return real.entrySet();
        }
    }
}
