package io.qkcm.controller.validatingadmissionpolicystatus;

import dev.cel.common.CelAbstractSyntaxTree;
import dev.cel.common.CelIssue;
import dev.cel.common.ast.CelExpr;
import java.util.Optional;
import dev.cel.common.CelSource;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.regex.Pattern;

/**
 * Renders CEL issues as cel-go's {@code Issues.String()} does, the text upstream writes into a policy's
 * status: {@code ERROR: <input>:line:col: message}, then the source line and a caret under the column, errors
 * sorted by position and joined by newlines. cel-java's messages match cel-go's but for two spellings, fixed
 * here: it lists the candidate overloads after "found no matching overload ..." (cel-go does not), and its
 * ANTLR syntax errors lack cel-go's "Syntax error: " prefix.
 */
final class CelIssues {

    private static final int MAX_ERRORS = 100;
    private static final int MAX_SNIPPET_LENGTH = 16384;

    /** cel-java's suffix on an overload-resolution error. */
    private static final Pattern CANDIDATES = Pattern.compile(
            "^(found no matching overload for '[^']*' applied to '.*') \\(candidates: .*\\)$", Pattern.DOTALL);

    /** The ANTLR messages the CEL grammar's error listener reports (cel-go prefixes exactly these). */
    private static final Pattern SYNTAX = Pattern.compile(
            "^(mismatched input|extraneous input|no viable alternative|missing |token recognition error"
                    + "|reserved identifier|More than \\d+ syntax errors).*", Pattern.DOTALL);

    private CelIssues() {
    }

    /** One issue as found by the parser, the checker or a validator, before rendering. */
    record Issue(int line, int column, String message) {
    }

    static Issue ofParser(CelIssue i) {
        String message = i.getMessage();
        if (SYNTAX.matcher(message).matches() && !message.startsWith("reserved identifier")) {
            message = "Syntax error: " + message;
        }
        return new Issue(i.getSourceLocation().getLine(), i.getSourceLocation().getColumn(), message);
    }

    /** Messages that render types: cel-java spells a few of them differently from cel-go. */
    private static final Pattern TYPE_MESSAGES = Pattern.compile(
            "^(found no matching overload for|expected type|type '|expression of type).*", Pattern.DOTALL);

    /** cel-java's overload error on a logical operator; cel-go checks each operand against bool instead. */
    private static final Pattern LOGICAL = Pattern.compile("^found no matching overload for '(_&&_|_\\|\\|_)' applied to '\\((.*)\\)'$",
            Pattern.DOTALL);

    /** cel-java's words for selecting a field of a type it has no struct for. */
    private static final Pattern UNRESOLVED = Pattern.compile(
            "^Message type resolution failure while referencing field '[^']*'\\. Ensure that the descriptor for type '(.*)' was added to the environment$",
            Pattern.DOTALL);

    /**
     * A checker issue in cel-go's words. An overload error on {@code _&&_} or {@code _||_} becomes cel-go's
     * "expected type 'bool' but found ..." at each operand that is not bool, dyn or an error, as cel-go's
     * checker reports logical operators.
     */
    static List<Issue> ofChecker(CelIssue i, CelAbstractSyntaxTree parsed) {
        Issue issue = ofChecker(i);
        var logical = LOGICAL.matcher(issue.message());
        if (logical.matches()) {
            List<String> argTypes = splitTopLevel(logical.group(2));
            Optional<CelExpr> call = find(parsed.getExpr(), i.getExprId());
            if (call.isPresent() && call.get().getKind() == CelExpr.ExprKind.Kind.CALL
                    && call.get().call().args().size() == argTypes.size()) {
                List<Issue> out = new ArrayList<>();
                for (int a = 0; a < argTypes.size(); a++) {
                    String t = argTypes.get(a);
                    if (t.equals("bool") || t.equals("dyn") || t.equals("!error!")) {
                        continue;
                    }
                    CelExpr arg = call.get().call().args().get(a);
                    Integer offset = parsed.getSource().getPositionsMap().get(arg.id());
                    Optional<dev.cel.common.CelSourceLocation> at = offset == null ? Optional.empty()
                            : parsed.getSource().getOffsetLocation(offset);
                    if (at.isEmpty()) {
                        return List.of(issue);
                    }
                    out.add(new Issue(at.get().getLine(), at.get().getColumn(),
                            "expected type 'bool' but found '" + t + "'"));
                }
                if (!out.isEmpty()) {
                    return out;
                }
            }
        }
        var unresolved = UNRESOLVED.matcher(issue.message());
        if (unresolved.matches()) {
            return List.of(new Issue(issue.line(), issue.column(),
                    "unexpected failed resolution of '" + unresolved.group(1) + "'"));
        }
        return List.of(issue);
    }

    private static List<String> splitTopLevel(String types) {
        List<String> out = new ArrayList<>();
        int depth = 0;
        int start = 0;
        for (int k = 0; k < types.length(); k++) {
            char c = types.charAt(k);
            if (c == '(') {
                depth++;
            } else if (c == ')') {
                depth--;
            } else if (c == ',' && depth == 0) {
                out.add(types.substring(start, k).trim());
                start = k + 1;
            }
        }
        out.add(types.substring(start).trim());
        return out;
    }

    private static Optional<CelExpr> find(CelExpr e, long id) {
        if (e.id() == id) {
            return Optional.of(e);
        }
        List<CelExpr> children = new ArrayList<>();
        switch (e.getKind()) {
            case CALL:
                e.call().target().ifPresent(children::add);
                children.addAll(e.call().args());
                break;
            case SELECT:
                children.add(e.select().operand());
                break;
            case LIST:
                children.addAll(e.list().elements());
                break;
            case MAP:
                e.map().entries().forEach(en -> {
                    children.add(en.key());
                    children.add(en.value());
                });
                break;
            case STRUCT:
                e.struct().entries().forEach(en -> children.add(en.value()));
                break;
            case COMPREHENSION:
                children.add(e.comprehension().iterRange());
                children.add(e.comprehension().accuInit());
                children.add(e.comprehension().loopCondition());
                children.add(e.comprehension().loopStep());
                children.add(e.comprehension().result());
                break;
            default:
                break;
        }
        for (CelExpr c : children) {
            Optional<CelExpr> found = find(c, id);
            if (found.isPresent()) {
                return found;
            }
        }
        return Optional.empty();
    }

    static Issue ofChecker(CelIssue i) {
        String message = i.getMessage();
        var m = CANDIDATES.matcher(message);
        if (m.matches()) {
            message = m.group(1);
        }
        if (TYPE_MESSAGES.matcher(message).matches()) {
            // cel-go names the error type !error! and the well-known types timestamp and duration
            message = message.replace("*error*", "!error!")
                    .replace("google.protobuf.Timestamp", "timestamp")
                    .replace("google.protobuf.Duration", "duration");
        }
        return new Issue(i.getSourceLocation().getLine(), i.getSourceLocation().getColumn(), message);
    }

    /** cel-go's Errors.ToDisplayString. */
    static String render(List<Issue> issues, CelSource source) {
        List<Issue> sorted = new ArrayList<>(issues);
        sorted.sort(Comparator.comparingInt(Issue::line).thenComparingInt(Issue::column));
        List<String> out = new ArrayList<>();
        for (int i = 0; i < sorted.size() && i < MAX_ERRORS; i++) {
            out.add(render(sorted.get(i), source));
        }
        if (sorted.size() > MAX_ERRORS) {
            out.add((sorted.size() - MAX_ERRORS) + " more errors were truncated");
        }
        return String.join("\n", out);
    }

    private static String render(Issue issue, CelSource source) {
        StringBuilder out = new StringBuilder();
        out.append("ERROR: <input>:").append(issue.line()).append(':').append(issue.column() + 1).append(": ")
                .append(issue.message());
        var snippet = source.getSnippet(issue.line());
        if (snippet.isPresent()
                && snippet.get().getBytes(java.nio.charset.StandardCharsets.UTF_8).length <= MAX_SNIPPET_LENGTH) {
            String line = snippet.get().replace('\t', ' ');
            out.append("\n | ").append(line).append("\n | ");
            int[] cps = line.codePoints().toArray();
            int i = 0;
            for (; i < issue.column() && i < cps.length; i++) {
                out.append(cps[i] > 0x7f ? "\uff0e" : ".");
            }
            out.append(i < cps.length && cps[i] > 0x7f ? "\uff3e" : "^");
        }
        return out.toString();
    }
}
