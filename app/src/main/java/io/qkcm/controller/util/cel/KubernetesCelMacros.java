package io.qkcm.controller.util.cel;

import com.google.common.collect.ImmutableList;
import dev.cel.common.CelIssue;
import dev.cel.common.ast.CelExpr;
import dev.cel.extensions.CelExtensions;
import dev.cel.parser.CelMacro;
import dev.cel.parser.CelMacroExpander;
import dev.cel.parser.CelMacroExprFactory;
import dev.cel.parser.CelStandardMacro;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The macros of upstream's environment (cel-go's standard ones, optMap/optFlatMap, the two-variable
 * comprehensions and the lists library's sortBy), on cel-java's expanders. Each checks its arguments first
 * and reports a misuse as cel-go does — its words, at the offending argument — since cel-java words those
 * errors differently and places them at the call. sortBy is cel-go's own expansion (a bind of the target and a
 * call of {@code @sortByAssociatedKeys} with the mapped keys), cel-java's calls another function.
 */
public final class KubernetesCelMacros {

    private KubernetesCelMacros() {
    }

    /** function:argCount:receiver of every macro cel-go's environment has. */
    private static final Set<String> UPSTREAM = Set.of(
            "all:2:true", "all:3:true", "exists:2:true", "exists:3:true", "existsOne:3:true", "exists_one:2:true",
            "exists_one:3:true", "filter:2:true", "has:1:false", "map:2:true", "map:3:true", "optFlatMap:2:true",
            "optMap:2:true", "transformList:3:true", "transformList:4:true", "transformMap:3:true",
            "transformMap:4:true", "transformMapEntry:3:true", "transformMapEntry:4:true");

    public static List<CelMacro> all() {
        List<CelMacro> candidates = new ArrayList<>();
        CelStandardMacro.STANDARD_MACROS.forEach(m -> candidates.add(m.getDefinition()));
        candidates.addAll(CelExtensions.optional().macros());
        candidates.addAll(CelExtensions.comprehensions().macros());
        List<CelMacro> out = new ArrayList<>();
        for (CelMacro m : candidates) {
            String key = m.getFunction() + ":" + m.getArgumentCount() + ":" + m.isReceiverStyle();
            if (UPSTREAM.contains(key) && out.stream().noneMatch(o -> sameKey(o, m))) {
                out.add(wrap(m));
            }
        }
        CelMacro map = CelStandardMacro.MAP.getDefinition();
        out.add(CelMacro.newReceiverMacro("sortBy", 2, (f, target, args) -> sortBy(f, target, args, map)));
        return out;
    }

    private static boolean sameKey(CelMacro a, CelMacro b) {
        return a.getFunction().equals(b.getFunction()) && a.getArgumentCount() == b.getArgumentCount()
                && a.isReceiverStyle() == b.isReceiverStyle();
    }

    private static CelMacro wrap(CelMacro m) {
        CelMacroExpander inner = m.getExpander();
        String function = m.getFunction();
        int argc = m.getArgumentCount();
        CelMacroExpander checked = (f, target, args) -> {
            Optional<CelExpr> misuse = misuse(f, function, argc, args);
            return misuse.isPresent() ? misuse : inner.expandMacro(f, target, args);
        };
        return m.isReceiverStyle() ? CelMacro.newReceiverMacro(function, argc, checked)
                : CelMacro.newGlobalMacro(function, argc, checked);
    }

    /** cel-go's argument checks, in its words. */
    private static Optional<CelExpr> misuse(CelMacroExprFactory f, String function, int argc, List<CelExpr> args) {
        switch (function) {
            case "has":
                if (args.get(0).getKind() != CelExpr.ExprKind.Kind.SELECT) {
                    return error(f, args.get(0), "invalid argument to has() macro");
                }
                return Optional.empty();
            case "map":
            case "filter":
                if (args.get(0).getKind() != CelExpr.ExprKind.Kind.IDENT) {
                    return error(f, args.get(0), "argument is not an identifier");
                }
                return Optional.empty();
            case "optMap":
            case "optFlatMap":
                if (args.get(0).getKind() != CelExpr.ExprKind.Kind.IDENT) {
                    return error(f, args.get(0), function + "() variable name must be a simple identifier");
                }
                return Optional.empty();
            default:
                // all, exists, exists_one, existsOne, transform*: one iteration variable, or two when three or more args
                int vars = argc >= 3 ? 2 : 1;
                for (int i = 0; i < vars; i++) {
                    if (args.get(i).getKind() != CelExpr.ExprKind.Kind.IDENT) {
                        return error(f, args.get(i), "argument must be a simple name");
                    }
                }
                return Optional.empty();
        }
    }

    private static Optional<CelExpr> error(CelMacroExprFactory f, CelExpr at, String message) {
        return Optional.of(f.reportError(CelIssue.formatError(f.getSourceLocation(at), message)));
    }

    /** cel-go's sortByMacro (ext/lists.go). */
    private static Optional<CelExpr> sortBy(CelMacroExprFactory f, CelExpr target, ImmutableList<CelExpr> args,
            CelMacro map) {
        String input = "@__sortBy_input__";
        switch (target.getKind()) {
            case LIST:
            case SELECT:
            case IDENT:
            case COMPREHENSION:
            case CALL:
                break;
            default:
                return error(f, target,
                        "sortBy can only be applied to a list, identifier, comprehension, call or select expression");
        }
        if (args.get(0).getKind() != CelExpr.ExprKind.Kind.IDENT) {
            return error(f, args.get(0), "argument is not an identifier");
        }
        Optional<CelExpr> keys = map.getExpander().expandMacro(f, f.newIdentifier(input), args);
        if (keys.isEmpty()) {
            return keys;
        }
        CelExpr call = f.newReceiverCall("@sortByAssociatedKeys", f.newIdentifier(input), keys.get());
        return Optional.of(f.fold("#unused", f.newList(), input, target, f.newBoolLiteral(false),
                f.newIdentifier(input), call));
    }

}
