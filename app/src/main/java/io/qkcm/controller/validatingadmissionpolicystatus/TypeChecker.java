package io.qkcm.controller.validatingadmissionpolicystatus;

import com.fasterxml.jackson.databind.JsonNode;
import dev.cel.checker.CelChecker;
import dev.cel.common.CelAbstractSyntaxTree;
import dev.cel.common.CelValidationException;
import dev.cel.common.CelValidationResult;
import dev.cel.common.types.CelType;
import dev.cel.common.types.ListType;
import dev.cel.common.types.MapType;
import dev.cel.common.types.SimpleType;
import dev.cel.common.types.StructType;
import dev.cel.common.types.StructTypeReference;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ExpressionWarning;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.NamedRuleWithOperations;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicy;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.ValidatingAdmissionPolicySpec;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.Validation;
import io.fabric8.kubernetes.api.model.admissionregistration.v1.Variable;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;
import java.util.function.IntSupplier;
import org.jboss.logging.Logger;

/**
 * Type checks a ValidatingAdmissionPolicy's validation and message expressions against the schemas of the
 * kinds it matches (upstream's {@code TypeChecker} in k8s.io/apiserver/pkg/admission/plugin/policy/validating/
 * typechecking.go): for each kind its matchConstraints name explicitly (no wildcard, no subresource, at most
 * {@value #MAX_TYPES_TO_CHECK}), {@code object} and {@code oldObject} are typed by the kind's OpenAPI schema,
 * {@code params} by the paramKind's, and the policy's variables are compiled first into {@code variables}. A
 * kind or paramKind whose schema cannot be resolved is skipped (or left undeclared), never an error: type
 * checking must not change what the policy does.
 */
final class TypeChecker {

    private static final Logger LOG = Logger.getLogger(TypeChecker.class);

    static final int MAX_TYPES_TO_CHECK = 10;

    /** A group, version and kind; {@link #toString()} is Go's GroupVersionKind.String(). */
    record GroupVersionKind(String group, String version, String kind) {
        @Override
        public String toString() {
            return group + "/" + version + ", Kind=" + kind;
        }

        boolean isEmpty() {
            return group.isEmpty() && version.isEmpty() && kind.isEmpty();
        }
    }

    /** Upstream's RESTMapper, as far as type checking uses it. */
    interface RestMapper {
        /** The kinds of a group/version/resource; empty when unknown. */
        List<GroupVersionKind> kindsFor(String group, String version, String resource);

        /** Forget what was discovered (upstream's ResettableRESTMapper.Reset); at most once per policy. */
        default void reset() {
        }
    }

    /** Upstream's SchemaResolver: the OpenAPI schema of a kind, $refs inlined; empty when there is none. */
    interface SchemaResolver {
        Optional<JsonNode> resolveSchema(GroupVersionKind gvk) throws Exception;
    }

    private final SchemaResolver schemaResolver;
    private final RestMapper restMapper;
    /** Upstream names each object type Kind + time.Now().Nanosecond(): unique, never read back. */
    private final IntSupplier nanos;

    TypeChecker(SchemaResolver schemaResolver, RestMapper restMapper, IntSupplier nanos) {
        this.schemaResolver = schemaResolver;
        this.restMapper = restMapper;
        this.nanos = nanos;
    }

    /**
     * The types a policy's expressions are checked against, and per kind its environment with the variables
     * compiled. Upstream compiles the variables again before each expression; their types cannot depend on the
     * expression, so they are compiled once per kind here.
     */
    record Context(List<GroupVersionKind> gvks, List<DeclType> declTypes, DeclType paramDeclType,
            List<Variable> variables, List<Composition> compositions) {

        Context(List<GroupVersionKind> gvks, List<DeclType> declTypes, DeclType paramDeclType, List<Variable> variables) {
            this(gvks, declTypes, paramDeclType, variables, new ArrayList<>());
        }

        Composition composition(int i) {
            while (compositions.size() <= i) {
                Composition c = new Composition(declTypes.get(compositions.size()), paramDeclType);
                for (Variable v : variables) {
                    c.addVariable(v.getName(), c.compile(v.getExpression()).outputType());
                }
                compositions.add(c);
            }
            return compositions.get(i);
        }
    }

    /** Upstream's Check: the warnings to set in status.typeChecking, empty when every expression checks. */
    List<ExpressionWarning> check(ValidatingAdmissionPolicy policy) {
        Context ctx = createContext(policy);
        List<ExpressionWarning> warnings = new ArrayList<>();
        List<Validation> validations = spec(policy).getValidations();
        if (validations == null) {
            return warnings;
        }
        for (int i = 0; i < validations.size(); i++) {
            Validation v = validations.get(i);
            String results = checkExpression(ctx, v.getExpression());
            if (results != null) {
                warnings.add(new ExpressionWarning("spec.validations[" + i + "].expression", results));
            }
            if (v.getMessageExpression() == null || v.getMessageExpression().isEmpty()) {
                continue;
            }
            results = checkExpression(ctx, v.getMessageExpression());
            if (results != null) {
                warnings.add(new ExpressionWarning("spec.validations[" + i + "].messageExpression", results));
            }
        }
        return warnings;
    }

    private static ValidatingAdmissionPolicySpec spec(ValidatingAdmissionPolicy policy) {
        return policy.getSpec() == null ? new ValidatingAdmissionPolicySpec() : policy.getSpec();
    }

    Context createContext(ValidatingAdmissionPolicy policy) {
        List<GroupVersionKind> gvks = new ArrayList<>();
        List<DeclType> declTypes = new ArrayList<>();
        for (GroupVersionKind gvk : typesToCheck(policy)) {
            DeclType t = declType(gvk);
            if (t == null) {
                continue;
            }
            gvks.add(gvk);
            declTypes.add(t);
        }
        DeclType params = declType(paramsGVK(policy));
        List<Variable> variables = spec(policy).getVariables() == null ? List.of() : spec(policy).getVariables();
        return new Context(gvks, declTypes, params, variables);
    }

    /**
     * The results for every checked kind, as upstream's TypeCheckingResults.String(): "gvk: issues\n" each,
     * joined by newlines; null when the expression checks against every kind.
     */
    String checkExpression(Context ctx, String expression) {
        List<String> messages = new ArrayList<>();
        for (int i = 0; i < ctx.gvks().size(); i++) {
            Compiled result = ctx.composition(i).compile(expression);
            if (result.issues() != null) {
                messages.add(ctx.gvks().get(i) + ": " + result.issues() + "\n");
            }
        }
        return messages.isEmpty() ? null : String.join("\n", messages);
    }

    private DeclType declType(GroupVersionKind gvk) {
        if (gvk.isEmpty()) {
            return null;
        }
        Optional<JsonNode> schema;
        try {
            schema = schemaResolver.resolveSchema(gvk);
        } catch (Exception e) {
            LOG.debugf(e, "internal error: schema resolution failure for %s", gvk);
            return null;
        }
        if (schema.isEmpty()) {
            return null;
        }
        DeclType t = DeclType.ofSchema(schema.get(), true);
        return t == null ? null : DeclType.assignTypeName(t, gvk.kind() + nanos.getAsInt());
    }

    static GroupVersionKind paramsGVK(ValidatingAdmissionPolicy policy) {
        var paramKind = spec(policy).getParamKind();
        if (paramKind == null) {
            return new GroupVersionKind("", "", "");
        }
        String apiVersion = paramKind.getApiVersion() == null ? "" : paramKind.getApiVersion();
        String kind = paramKind.getKind() == null ? "" : paramKind.getKind();
        // schema.ParseGroupVersion: "" is the empty GroupVersion, "v1" the core group, "g/v" a group; more is an error
        String[] parts = apiVersion.split("/", -1);
        if (apiVersion.isEmpty()) {
            return new GroupVersionKind("", "", kind);
        }
        if (parts.length == 1) {
            return new GroupVersionKind("", parts[0], kind);
        }
        if (parts.length == 2) {
            return new GroupVersionKind(parts[0], parts[1], kind);
        }
        return new GroupVersionKind("", "", "");
    }

    /** Upstream's typesToCheck: the kinds named by matchConstraints.resourceRules, sorted, at most ten. */
    List<GroupVersionKind> typesToCheck(ValidatingAdmissionPolicy policy) {
        var constraints = spec(policy).getMatchConstraints();
        if (constraints == null || constraints.getResourceRules() == null || constraints.getResourceRules().isEmpty()) {
            return List.of();
        }
        Comparator<GroupVersionKind> order = Comparator.comparing(GroupVersionKind::group)
                .thenComparing(GroupVersionKind::version).thenComparing(GroupVersionKind::kind);
        TreeSet<GroupVersionKind> gvks = new TreeSet<>(order);
        boolean refreshAttempted = false;
        for (NamedRuleWithOperations rule : constraints.getResourceRules()) {
            List<String> groups = withoutWildcards(rule.getApiGroups());
            if (groups.isEmpty()) {
                continue;
            }
            List<String> versions = withoutWildcards(rule.getApiVersions());
            if (versions.isEmpty()) {
                continue;
            }
            List<String> resources = new ArrayList<>();
            if (rule.getResources() != null) {
                for (String r : rule.getResources()) {
                    // skip wildcards and subresources
                    if (!r.contains("*") && !r.contains("/")) {
                        resources.add(r);
                    }
                }
            }
            if (resources.isEmpty()) {
                continue;
            }
            groups.sort(null);
            versions.sort(null);
            resources.sort(null);
            int count = 0;
            for (String group : groups) {
                for (String version : versions) {
                    for (String resource : resources) {
                        List<GroupVersionKind> resolved = restMapper.kindsFor(group, version, resource);
                        if (resolved.isEmpty()) {
                            if (refreshAttempted) {
                                continue;
                            }
                            restMapper.reset();
                            refreshAttempted = true;
                            resolved = restMapper.kindsFor(group, version, resource);
                            if (resolved.isEmpty()) {
                                continue;
                            }
                        }
                        for (GroupVersionKind r : resolved) {
                            if (!r.isEmpty()) {
                                gvks.add(r);
                                count++;
                                if (count == MAX_TYPES_TO_CHECK) {
                                    return List.copyOf(gvks);
                                }
                            }
                        }
                    }
                }
            }
        }
        return List.copyOf(gvks);
    }

    /** The list, or empty when any entry has a wildcard (upstream gives up on the whole rule then). */
    private static List<String> withoutWildcards(List<String> in) {
        List<String> out = new ArrayList<>();
        if (in == null) {
            return out;
        }
        for (String s : in) {
            if (s.contains("*")) {
                return new ArrayList<>();
            }
            out.add(s);
        }
        return out;
    }

    /** A compiled expression: its output type, or the rendered issues. */
    record Compiled(CelType outputType, String issues) {
    }

    /**
     * One kind's environment (upstream's buildEnvSet plus its CompositionEnv): namespaceObject, request,
     * object and oldObject, params when its schema resolved, authorizer, and the {@code variables} object whose
     * fields are the variables compiled so far.
     */
    static final class Composition {
        private final Map<String, StructType> structs = new LinkedHashMap<>();
        private final Map<String, CelType> vars = new LinkedHashMap<>();
        private final Map<String, DeclType> variableFields = new LinkedHashMap<>();
        private final CelChecker checker;
        private static final String VARIABLES = "kubernetes.variables";

        Composition(DeclType object, DeclType params) {
            DeclType namespace = KubernetesTypes.namespaceType();
            DeclType request = KubernetesTypes.requestType();
            declare("namespaceObject", namespace);
            declare("request", request);
            if (object != null) {
                declare("object", object);
                declare("oldObject", object);
            } else {
                vars.put("object", SimpleType.DYN);
                vars.put("oldObject", SimpleType.DYN);
            }
            if (params != null) {
                declare("params", params);
            }
            vars.put("authorizer", StructTypeReference.create("kubernetes.authorization.Authorizer"));
            DeclType.ObjectType variables = new DeclType.ObjectType(VARIABLES, variableFields);
            structs.put(VARIABLES, CelEnvironment.structType(variables, structs));
            // by name: the checker finds the struct in the provider at each check, with the fields it has then
            vars.put("variables", StructTypeReference.create(VARIABLES));
            checker = CelEnvironment.checker(vars, structs);
        }

        private void declare(String name, DeclType t) {
            CelEnvironment.register(t, structs);
            vars.put(name, CelEnvironment.celTypeOf(t, structs));
        }

        /** Upstream's CompositionEnv.AddField: the variable's output type as a DeclType (dyn when it failed). */
        void addVariable(String name, CelType outputType) {
            variableFields.put(name, declTypeOf(outputType));
            // a new struct type with the grown field set (cel-java's struct types list their fields)
            structs.put(VARIABLES, CelEnvironment.structType(new DeclType.ObjectType(VARIABLES, variableFields), structs));
        }

        Compiled compile(String expression) {
            CelValidationResult parsed = CelEnvironment.parse(expression);
            if (parsed.hasError()) {
                List<CelIssues.Issue> issues = new ArrayList<>();
                parsed.getErrors().forEach(i -> issues.add(CelIssues.ofParser(i)));
                return new Compiled(null, CelIssues.render(issues, parsed.getSource()));
            }
            CelAbstractSyntaxTree ast;
            try {
                ast = parsed.getAst();
            } catch (CelValidationException e) {
                return new Compiled(null, e.getMessage());
            }
            CelValidationResult checked = checker.check(ast);
            if (checked.hasError()) {
                List<CelIssues.Issue> issues = new ArrayList<>();
                checked.getErrors().forEach(i -> issues.addAll(CelIssues.ofChecker(i, ast)));
                return new Compiled(null, CelIssues.render(issues, checked.getSource()));
            }
            try {
                CelAbstractSyntaxTree checkedAst = checked.getAst();
                List<CelIssues.Issue> issues = LiteralValidators.validate(checkedAst);
                if (!issues.isEmpty()) {
                    return new Compiled(null, CelIssues.render(issues, checkedAst.getSource()));
                }
                return new Compiled(checkedAst.getResultType(), null);
            } catch (CelValidationException e) {
                return new Compiled(null, e.getMessage());
            }
        }

        /** Upstream's convertCelTypeToDeclType: scalars as they are, lists and maps element-wise, else dyn. */
        static DeclType declTypeOf(CelType t) {
            if (t == null) {
                return DeclType.DYN;
            }
            if (t instanceof ListType l) {
                return new DeclType.ListOf(declTypeOf(l.elemType()));
            }
            if (t instanceof MapType m) {
                return new DeclType.MapOf(declTypeOf(m.keyType()), declTypeOf(m.valueType()));
            }
            if (t == SimpleType.ANY || t == SimpleType.BOOL || t == SimpleType.BYTES || t == SimpleType.DOUBLE
                    || t == SimpleType.DURATION || t == SimpleType.INT || t == SimpleType.NULL_TYPE
                    || t == SimpleType.STRING || t == SimpleType.TIMESTAMP || t == SimpleType.UINT) {
                return new DeclType.Simple(t);
            }
            return DeclType.DYN;
        }
    }
}
