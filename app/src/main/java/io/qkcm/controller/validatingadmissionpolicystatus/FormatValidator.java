package io.qkcm.controller.validatingadmissionpolicystatus;

import dev.cel.common.CelAbstractSyntaxTree;
import dev.cel.common.ast.CelConstant;
import dev.cel.common.ast.CelExpr;
import dev.cel.common.types.CelKind;
import dev.cel.common.types.CelType;
import dev.cel.common.types.SimpleType;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;

/**
 * The compile-time check of {@code string.format()} that the strings extension (version 2, as Kubernetes
 * declares it) adds as an AST validator (cel-go's stringFormatValidator in ext/formatting.go): on every member
 * call of {@code format} resolved to {@code string_format} whose receiver is a string literal and whose
 * argument is a list literal, the format string is parsed as at run time, each clause checked against the
 * checked type of the list element it takes, and every element must be taken. A clause's first bad argument is
 * reported at that argument, anything else (a clause it cannot parse, too few or too many arguments) at the call;
 * the first error of a call ends its check. A non-literal format string or argument list is not checked.
 */
final class FormatValidator {

    private static final String OVERLOAD = "string_format";

    private FormatValidator() {
    }

    /** Appends the issues of every checkable format call, in cel-go's order (post-order of the AST). */
    static void validate(CelAbstractSyntaxTree ast, List<CelIssues.Issue> issues) {
        List<CelExpr> calls = new ArrayList<>();
        collect(ast.getExpr(), ast, calls);
        for (CelExpr call : calls) {
            String format = call.call().target().orElseThrow().constant().stringValue();
            List<CelExpr> args = call.call().args().get(0).list().elements();
            Checker checker = new Checker(ast, args);
            FormatError error = checker.parse(format.getBytes(StandardCharsets.UTF_8));
            if (error != null) {
                issues.add(issueAt(ast, error.id() == CALL ? call.id() : error.id(), error.message()));
                continue;
            }
            if (args.size() > checker.argsRequested) {
                issues.add(issueAt(ast, call.id(), "too many arguments supplied to string.format (expected "
                        + checker.argsRequested + ", got " + args.size() + ")"));
            }
        }
    }

    /** cel-go's matchConstantFormatStringWithListLiteralArgs, children before their parent. */
    private static void collect(CelExpr e, CelAbstractSyntaxTree ast, List<CelExpr> out) {
        switch (e.getKind()) {
            case CALL:
                e.call().target().ifPresent(t -> collect(t, ast, out));
                e.call().args().forEach(a -> collect(a, ast, out));
                break;
            case SELECT:
                collect(e.select().operand(), ast, out);
                break;
            case LIST:
                e.list().elements().forEach(a -> collect(a, ast, out));
                break;
            case MAP:
                e.map().entries().forEach(en -> {
                    collect(en.key(), ast, out);
                    collect(en.value(), ast, out);
                });
                break;
            case STRUCT:
                e.struct().entries().forEach(en -> collect(en.value(), ast, out));
                break;
            case COMPREHENSION: {
                var c = e.comprehension();
                collect(c.iterRange(), ast, out);
                collect(c.accuInit(), ast, out);
                collect(c.loopCondition(), ast, out);
                collect(c.loopStep(), ast, out);
                collect(c.result(), ast, out);
                break;
            }
            default:
                break;
        }
        if (matches(e, ast)) {
            out.add(e);
        }
    }

    private static boolean matches(CelExpr e, CelAbstractSyntaxTree ast) {
        if (e.getKind() != CelExpr.ExprKind.Kind.CALL) {
            return false;
        }
        var call = e.call();
        if (call.target().isEmpty() || !call.function().equals("format")) {
            return false;
        }
        // a call the checker resolved to another function's overload is not string.format
        var overloads = ast.getReference(e.id()).map(r -> r.overloadIds()).orElse(null);
        if (overloads != null && !overloads.isEmpty() && !overloads.contains(OVERLOAD)) {
            return false;
        }
        CelExpr target = call.target().get();
        if (target.getKind() != CelExpr.ExprKind.Kind.CONSTANT
                || target.constant().getKind() != CelConstant.Kind.STRING_VALUE) {
            return false;
        }
        return call.args().size() == 1 && call.args().get(0).getKind() == CelExpr.ExprKind.Kind.LIST;
    }

    private static CelIssues.Issue issueAt(CelAbstractSyntaxTree ast, long id, String message) {
        Integer offset = ast.getSource().getPositionsMap().get(id);
        var location = offset == null ? java.util.Optional.<dev.cel.common.CelSourceLocation>empty()
                : ast.getSource().getOffsetLocation(offset);
        return new CelIssues.Issue(location.map(l -> l.getLine()).orElse(-1),
                location.map(l -> l.getColumn()).orElse(-1), message);
    }

    /** Stands for the call's own id: the error is not about one argument. */
    private static final long CALL = Long.MIN_VALUE;

    /** An error and the expression it is reported at. */
    record FormatError(long id, String message) {
    }

    /** The verbs' accepted kinds (cel-go's stringFormatChecker); dyn is accepted by every verb. */
    private static final Set<CelKind> DECIMAL = EnumSet.of(CelKind.INT, CelKind.UINT);
    private static final Set<CelKind> FLOATING = EnumSet.of(CelKind.DOUBLE, CelKind.STRING);
    private static final Set<CelKind> BINARY = EnumSet.of(CelKind.INT, CelKind.UINT, CelKind.BOOL);
    private static final Set<CelKind> HEX = EnumSet.of(CelKind.INT, CelKind.UINT, CelKind.STRING, CelKind.BYTES);
    private static final Set<CelKind> STRING = EnumSet.of(CelKind.LIST, CelKind.MAP, CelKind.INT, CelKind.UINT,
            CelKind.DOUBLE, CelKind.BOOL, CelKind.STRING, CelKind.TIMESTAMP, CelKind.BYTES, CelKind.DURATION,
            CelKind.TYPE, CelKind.NULL_TYPE);

    /** One format call's check: parseFormatString driven by the checking interpolator. */
    private static final class Checker {
        private final CelAbstractSyntaxTree ast;
        private final List<CelExpr> args;
        int argsRequested;

        Checker(CelAbstractSyntaxTree ast, List<CelExpr> args) {
            this.ast = ast;
            this.args = args;
        }

        /** cel-go's parseFormatString on the format string's UTF-8 bytes; null when every clause checks. */
        FormatError parse(byte[] format) {
            int i = 0;
            int argIndex = 0;
            while (i < format.length) {
                if (format[i] != '%') {
                    i++;
                    continue;
                }
                if (i + 1 < format.length && format[i + 1] == '%') {
                    i += 2;
                    continue;
                }
                argsRequested++;
                if (i + 1 >= format.length) {
                    return new FormatError(CALL, "unexpected end of string");
                }
                if (argIndex >= args.size()) {
                    return new FormatError(CALL, "index " + argIndex + " out of range");
                }
                // parseAndFormatClause: the clause after '%', then its check of the argument
                int start = i + 1;
                int at = start;
                if (format[at] == '.') {
                    at++;
                    int digits = at;
                    while (true) {
                        if (at >= format.length) {
                            return new FormatError(CALL, "could not parse formatting clause: error while parsing "
                                    + "precision: could not find end of precision specifier");
                        }
                        if (!isAsciiDigit(format[at])) {
                            break;
                        }
                        at++;
                    }
                    String precision = new String(format, digits, at - digits, StandardCharsets.US_ASCII);
                    String atoi = atoiError(precision);
                    if (atoi != null) {
                        return new FormatError(CALL, "could not parse formatting clause: error while parsing "
                                + "precision: error while converting precision to integer: " + atoi);
                    }
                }
                // cel-go takes the verb as one byte, whatever the encoding
                char verb = (char) (format[at] & 0xff);
                at++;
                CelExpr arg = args.get(argIndex);
                FormatError error;
                switch (verb) {
                    case 's':
                        error = string(arg);
                        break;
                    case 'd':
                        error = oneOf(arg, DECIMAL, "decimal clause can only be used on integers, was given ");
                        break;
                    case 'f':
                        error = oneOf(arg, FLOATING, "fixed-point clause can only be used on doubles, was given ");
                        break;
                    case 'e':
                        error = oneOf(arg, FLOATING, "scientific clause can only be used on doubles, was given ");
                        break;
                    case 'b':
                        error = oneOf(arg, BINARY, "only integers and bools can be formatted as binary, was given ");
                        break;
                    case 'x':
                    case 'X':
                        error = oneOf(arg, HEX,
                                "only integers, byte buffers, and strings can be formatted as hex, was given ");
                        break;
                    case 'o':
                        error = oneOf(arg, DECIMAL, "octal clause can only be used on integers, was given ");
                        break;
                    default:
                        return new FormatError(CALL, "could not parse formatting clause: unrecognized formatting clause \""
                                + verb + "\"");
                }
                if (error != null) {
                    return new FormatError(error.id(), "error during formatting: " + error.message());
                }
                i = at;
                argIndex++;
            }
            return null;
        }

        private FormatError oneOf(CelExpr arg, Set<CelKind> kinds, String message) {
            if (valid(arg.id(), kinds)) {
                return null;
            }
            return new FormatError(arg.id(), message + typeName(typeOf(arg.id())));
        }

        /** cel-go's verifyString: the argument, and each element, key and value of a literal list or map. */
        private FormatError string(CelExpr arg) {
            CelExpr bad = badForString(arg);
            if (bad == null) {
                return null;
            }
            return new FormatError(bad.id(), "string clause can only be used on strings, bools, bytes, ints, doubles, "
                    + "maps, lists, types, durations, and timestamps, was given " + typeName(typeOf(bad.id())));
        }

        private CelExpr badForString(CelExpr e) {
            if (!valid(e.id(), STRING)) {
                return e;
            }
            switch (e.getKind()) {
                case LIST:
                    for (CelExpr el : e.list().elements()) {
                        CelExpr bad = badForString(el);
                        if (bad != null) {
                            return bad;
                        }
                    }
                    return null;
                case MAP:
                    for (var entry : e.map().entries()) {
                        CelExpr bad = badForString(entry.key());
                        if (bad == null) {
                            bad = badForString(entry.value());
                        }
                        if (bad != null) {
                            return bad;
                        }
                    }
                    return null;
                default:
                    return null;
            }
        }

        /** cel-go's verifyTypeOneOf: dyn, or a type of one of the kinds (parameters are not looked at). */
        private boolean valid(long id, Set<CelKind> kinds) {
            CelType t = typeOf(id);
            return t.kind() == CelKind.DYN || kinds.contains(t.kind());
        }

        /** cel-go's AST.GetType: dyn for an expression the checker did not type. */
        private CelType typeOf(long id) {
            return ast.getType(id).orElse(SimpleType.DYN);
        }
    }

    private static boolean isAsciiDigit(byte b) {
        return b >= '0' && b <= '9';
    }

    /** The error of Go's strconv.Atoi on these ASCII digits (on 64 bits), null when it parses. */
    static String atoiError(String digits) {
        if (digits.isEmpty()) {
            return "strconv.Atoi: parsing \"\": invalid syntax";
        }
        if (new BigInteger(digits).compareTo(BigInteger.valueOf(Long.MAX_VALUE)) > 0) {
            return "strconv.Atoi: parsing \"" + digits + "\": value out of range";
        }
        return null;
    }

    /** cel-go's Type.TypeName(): the runtime type name, the protobuf names of the well-known types. */
    static String typeName(CelType t) {
        switch (t.kind()) {
            case ANY:
                return "google.protobuf.Any";
            case BOOL:
                return "bool";
            case BYTES:
                return "bytes";
            case DOUBLE:
                return "double";
            case DURATION:
                return "google.protobuf.Duration";
            case DYN:
                return "dyn";
            case ERROR:
                return "error";
            case INT:
                return "int";
            case LIST:
                return "list";
            case MAP:
                return "map";
            case NULL_TYPE:
                return "null_type";
            case STRING:
                return "string";
            case TIMESTAMP:
                return "google.protobuf.Timestamp";
            case TYPE:
                return "type";
            case UINT:
                return "uint";
            default:
                // opaque (optional_type, kubernetes.URL, ...), struct and type parameter types by their names
                return t.name();
        }
    }
}
