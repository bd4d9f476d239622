package io.qkcm.controller.devicetainteviction;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import com.google.re2j.Matcher;
import com.google.re2j.Pattern;
import com.google.re2j.PatternSyntaxException;

import dev.cel.common.CelAbstractSyntaxTree;
import dev.cel.common.ast.CelConstant;
import dev.cel.common.ast.CelExpr;
import dev.cel.common.navigation.CelNavigableAst;
import dev.cel.common.navigation.CelNavigableExpr;
import dev.cel.runtime.CelEvaluationException;
import dev.cel.runtime.CelFunctionBinding;

/**
 * Kubernetes' regex library (k8s.io/apiserver/pkg/cel/library/regex.go): {@code find} and {@code findAll} with
 * Go's RE2 syntax and Go's FindString / FindAllString semantics, on RE2/J (the engine cel-java's
 * {@code matches} uses, whose syntax errors are worded as Go's). A computed pattern that does not compile is the
 * runtime error "Illegal regex: ..."; a constant one fails the program as upstream's optimization does.
 */
final class CelRegex {

    private CelRegex() {
    }

    static List<CelFunctionBinding> bindings() {
        return List.of(
                CelFunctionBinding.from("string_find_string", String.class, String.class, (s, re) -> {
                    Matcher m = compile(re).matcher(s);
                    return m.find() ? m.group() : "";
                }),
                CelFunctionBinding.from("string_find_all_string", String.class, String.class,
                        (s, re) -> findAll(s, compile(re), -1)),
                CelFunctionBinding.from("string_find_all_string_int", List.of(String.class, String.class, Long.class),
                        a -> findAll((String) a[0], compile((String) a[1]), (Long) a[2])));
    }

    /**
     * cel-go's regex optimization for find and findAll: a constant pattern is compiled when the program is
     * built, and one that does not compile fails that ("program instantiation failed: ...").
     */
    static Optional<String> constantPatternError(CelAbstractSyntaxTree ast) {
        return CelNavigableAst.fromAst(ast).getRoot().allNodes()
                .map(CelNavigableExpr::expr)
                .filter(e -> e.getKind() == CelExpr.ExprKind.Kind.CALL)
                .map(CelExpr::call)
                .filter(c -> (c.function().equals("find") || c.function().equals("findAll")) && c.target().isPresent()
                        && !c.args().isEmpty())
                .map(c -> c.args().get(0))
                .filter(p -> p.getKind() == CelExpr.ExprKind.Kind.CONSTANT
                        && p.constant().getKind() == CelConstant.Kind.STRING_VALUE)
                .map(p -> {
                    try {
                        Pattern.compile(p.constant().stringValue());
                        return null;
                    } catch (PatternSyntaxException e) {
                        return e.getMessage();
                    }
                })
                .filter(java.util.Objects::nonNull)
                .findFirst();
    }

    private static Pattern compile(String regex) throws CelEvaluationException {
        try {
            return Pattern.compile(regex);
        } catch (PatternSyntaxException e) {
            throw CelStrings.error("Illegal regex: " + e.getMessage());
        }
    }

    /**
     * Go's Regexp.FindAllString: at most n matches (all when n &lt; 0), an empty match right after the previous
     * match skipped, the search moving one rune past an empty match.
     */
    static List<String> findAll(String s, Pattern re, long n) {
        List<String> out = new ArrayList<>();
        if (n < 0) {
            n = Long.MAX_VALUE;
        }
        Matcher m = re.matcher(s);
        int pos = 0;
        int prevMatchEnd = -1;
        while (out.size() < n && pos <= s.length()) {
            if (!m.find(pos)) {
                break;
            }
            boolean accept = true;
            if (m.end() == pos) {
                if (m.start() == prevMatchEnd) {
                    accept = false;
                }
                pos += pos < s.length() ? Character.charCount(s.codePointAt(pos)) : 1;
            } else {
                pos = m.end();
            }
            prevMatchEnd = m.end();
            if (accept) {
                out.add(m.group());
            }
        }
        return out;
    }
}
