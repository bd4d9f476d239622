package io.qkcm.controller.validatingadmissionpolicystatus;

import com.google.common.collect.ImmutableCollection;
import com.google.common.collect.ImmutableList;
import com.google.common.collect.ImmutableSet;
import dev.cel.checker.CelChecker;
import dev.cel.common.CelFunctionDecl;
import dev.cel.common.CelOptions;
import dev.cel.common.CelValidationResult;
import dev.cel.common.CelVarDecl;
import dev.cel.common.types.CelType;
import dev.cel.common.types.CelTypeProvider;
import dev.cel.common.types.StructType;
import dev.cel.common.types.StructTypeReference;
import dev.cel.compiler.CelCompilerFactory;
import dev.cel.parser.CelParser;
import dev.cel.parser.CelParserFactory;
import io.qkcm.controller.util.cel.KubernetesCelFunctions;
import io.qkcm.controller.util.cel.KubernetesCelMacros;
import io.qkcm.controller.util.cel.KubernetesCelTypes;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Kubernetes' CEL environment for type checking stored expressions (upstream's
 * {@code environment.MustBaseEnvSet(...).StoredExpressionsEnv()} in k8s.io/apiserver/pkg/cel/environment), on
 * cel-java's parser and checker. Every function and overload — CEL's standard library, cross-type numeric
 * comparisons, optionals, the strings (v2), sets, lists (v3) and two-variable comprehension extensions and
 * Kubernetes' own libraries (urls, regex, lists, authz and its selectors, quantity, ip, cidr, format, semver) —
 * is declared from the kit's {@link KubernetesCelFunctions} (a table dumped from that upstream environment by
 * hack/vap-typecheck), so the checker resolves overloads against exactly upstream's signatures; of cel-java's
 * standard declarations only the type identifiers are kept. Only the parser and checker run: no expression is
 * ever evaluated, and cel-java generates no bytecode.
 */
final class CelEnvironment {

    private static final CelOptions OPTIONS = CelOptions.current()
            .enableOptionalSyntax(true)
            // cel.HomogeneousAggregateLiterals() is a validator in cel-go, run after a clean check (LiteralValidators)
            .enableHomogeneousLiterals(false)
            .build();

    /** The functions of upstream's stored-expressions environment, loaded once. */
    private static final ImmutableList<CelFunctionDecl> FUNCTIONS = KubernetesCelFunctions.all();

    /** Standard macros plus those of optionals, two-variable comprehensions and lists (sortBy), as cel-go's. */
    private static final CelParser PARSER = CelParserFactory.standardCelParserBuilder()
            .setOptions(OPTIONS)
            .setStandardMacros()
            .addMacros(KubernetesCelMacros.all())
            .build();

    private CelEnvironment() {
    }

    static List<CelFunctionDecl> functions() {
        return FUNCTIONS;
    }

    /** Parses; the result carries the parse issues, if any. */
    static CelValidationResult parse(String expression) {
        return PARSER.parse(expression);
    }

    /**
     * A checker with these variables and the struct types they (transitively) use.
     *
     * @param structs every object type by name: its fields are looked up there, so a type whose fields grow
     *                (the composition's {@code variables}) is seen as it is at each check
     */
    static CelChecker checker(Map<String, CelType> variables, Map<String, StructType> structs) {
        CelTypeProvider provider = new CelTypeProvider() {
            @Override
            public ImmutableCollection<CelType> types() {
                return ImmutableList.copyOf(structs.values());
            }

            @Override
            public Optional<CelType> findType(String name) {
                return Optional.ofNullable(structs.get(name));
            }
        };
        List<CelVarDecl> vars = new ArrayList<>();
        variables.forEach((name, type) -> vars.add(CelVarDecl.newVarDeclaration(name, type)));
        return CelCompilerFactory.standardCelCheckerBuilder()
                .setOptions(OPTIONS)
                .setStandardEnvironmentEnabled(false)
                .setStandardDeclarations(KubernetesCelTypes.STANDARD_IDENTIFIERS_ONLY)
                .addVarDeclarations(KubernetesCelTypes.TYPE_IDENTIFIERS)
                .addFunctionDeclarations(FUNCTIONS)
                .setTypeProvider(provider)
                .addVarDeclarations(vars)
                .build();
    }

    /** Struct types of the given object DeclTypes, field types resolved through {@code structs}. */
    static StructType structType(DeclType.ObjectType o, Map<String, StructType> structs) {
        Map<String, DeclType> fields = o.fields();
        // a reserved word's escaped field answers to the word too (cel-java checks the name set first)
        ImmutableSet.Builder<String> names = ImmutableSet.builder();
        for (String f : fields.keySet()) {
            names.add(f);
            if (f.startsWith("__") && f.endsWith("__") && DeclType.RESERVED.contains(f.substring(2, f.length() - 2))) {
                names.add(f.substring(2, f.length() - 2));
            }
        }
        return StructType.create(o.name(), names.build(), field -> {
            DeclType ft = fields.get(field);
            // upstream's provider recognizes a reserved word as a field name: object.namespace reaches __namespace__
            if (ft == null && DeclType.RESERVED.contains(field)) {
                ft = fields.get("__" + field + "__");
            }
            return Optional.ofNullable(ft).map(t -> celTypeOf(t, structs));
        });
    }

    /** Builds and registers the struct types of every object reachable from {@code t}. */
    static void register(DeclType t, Map<String, StructType> structs) {
        Map<String, DeclType.ObjectType> objects = new LinkedHashMap<>();
        DeclType.collectObjects(t, objects);
        objects.values().forEach(o -> structs.putIfAbsent(o.name(), structType(o, structs)));
    }

    /** The CEL type of DeclType {@code t}: its objects are the registered struct types (by reference if not). */
    static CelType celTypeOf(DeclType t, Map<String, StructType> structs) {
        return t.celType(obj -> {
            StructType s = structs.get(obj.name());
            return s != null ? s : StructTypeReference.create(obj.name());
        });
    }
}
