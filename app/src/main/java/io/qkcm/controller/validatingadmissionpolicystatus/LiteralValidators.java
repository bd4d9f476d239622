package io.qkcm.controller.validatingadmissionpolicystatus;

import dev.cel.common.CelAbstractSyntaxTree;
import dev.cel.common.ast.CelConstant;
import dev.cel.common.ast.CelExpr;
import java.math.BigInteger;
import java.time.DateTimeException;
import java.time.LocalDate;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;

/**
 * The AST validators Kubernetes' base environment adds after type checking (cel-go's
 * ValidateDurationLiterals, ValidateTimestampLiterals, ValidateRegexLiterals and
 * ValidateHomogeneousAggregateLiterals): a {@code duration},
 * {@code timestamp} or {@code matches} call whose first argument is a literal the function would reject is
 * reported at the literal as "invalid &lt;function&gt; argument". They run only on an expression that type
 * checked, as in cel-go; the strings extension's check of literal {@code format} calls follows them
 * ({@link FormatValidator}). Durations parse as Go's time.ParseDuration, timestamps as Go's RFC 3339 parser within
 * CEL's range (years 1 to 9999), patterns as RE2 (re2j, a port of Go's regexp).
 */
final class LiteralValidators {

    private LiteralValidators() {
    }

    static List<CelIssues.Issue> validate(CelAbstractSyntaxTree ast) {
        List<CelIssues.Issue> issues = new ArrayList<>();
        walk(ast.getExpr(), ast, issues);
        homogeneous(ast.getExpr(), false, ast, issues);
        // the strings extension's validator comes after the base environment's, as its library is added later
        FormatValidator.validate(ast, issues);
        return issues;
    }

    /**
     * cel-go's ValidateHomogeneousAggregateLiterals (what cel.HomogeneousAggregateLiterals() is since cel-go
     * moved it out of the checker): every element of a list literal, every key and every value of a map
     * literal, of the type of the first (an optional entry by its value's type); literals inside a call of
     * {@code format} are exempt (the strings extension's exemption). A list reports its first mismatch only.
     */
    private static void homogeneous(CelExpr e, boolean exempt, CelAbstractSyntaxTree ast,
            List<CelIssues.Issue> issues) {
        switch (e.getKind()) {
            case CALL: {
                boolean inner = exempt || e.call().function().equals("format");
                e.call().target().ifPresent(t -> homogeneous(t, inner, ast, issues));
                e.call().args().forEach(a -> homogeneous(a, inner, ast, issues));
                return;
            }
            case LIST: {
                var list = e.list();
                if (!exempt) {
                    dev.cel.common.types.CelType first = null;
                    for (int i = 0; i < list.elements().size(); i++) {
                        CelExpr el = list.elements().get(i);
                        dev.cel.common.types.CelType t = typeOf(ast, el, list.optionalIndices().contains(i));
                        if (first == null) {
                            first = t;
                            continue;
                        }
                        if (!equivalent(first, t)) {
                            mismatch(ast, el, first, t, issues);
                            break;
                        }
                    }
                }
                list.elements().forEach(el -> homogeneous(el, exempt, ast, issues));
                return;
            }
            case MAP: {
                if (!exempt) {
                    dev.cel.common.types.CelType key = null;
                    dev.cel.common.types.CelType value = null;
                    for (var entry : e.map().entries()) {
                        var kt = typeOf(ast, entry.key(), false);
                        var vt = typeOf(ast, entry.value(), entry.optionalEntry());
                        if (key == null && value == null) {
                            key = kt;
                            value = vt;
                            continue;
                        }
                        if (!equivalent(key, kt)) {
                            mismatch(ast, entry.key(), key, kt, issues);
                        }
                        if (!equivalent(value, vt)) {
                            mismatch(ast, entry.value(), value, vt, issues);
                        }
                    }
                }
                e.map().entries().forEach(en -> {
                    homogeneous(en.key(), exempt, ast, issues);
                    homogeneous(en.value(), exempt, ast, issues);
                });
                return;
            }
            case SELECT:
                homogeneous(e.select().operand(), exempt, ast, issues);
                return;
            case STRUCT:
                e.struct().entries().forEach(en -> homogeneous(en.value(), exempt, ast, issues));
                return;
            case COMPREHENSION: {
                var c = e.comprehension();
                homogeneous(c.iterRange(), exempt, ast, issues);
                homogeneous(c.accuInit(), exempt, ast, issues);
                homogeneous(c.loopCondition(), exempt, ast, issues);
                homogeneous(c.loopStep(), exempt, ast, issues);
                homogeneous(c.result(), exempt, ast, issues);
                return;
            }
            default:
                return;
        }
    }

    private static dev.cel.common.types.CelType typeOf(CelAbstractSyntaxTree ast, CelExpr e, boolean optional) {
        dev.cel.common.types.CelType t = ast.getType(e.id()).orElse(dev.cel.common.types.SimpleType.DYN);
        if (optional && !t.parameters().isEmpty()) {
            return t.parameters().get(0);
        }
        return t;
    }

    /** cel-go's Type.IsEquivalentType: same kind, name (but of type parameters) and parameters. */
    static boolean equivalent(dev.cel.common.types.CelType a, dev.cel.common.types.CelType b) {
        if (a.kind() != b.kind() || a.parameters().size() != b.parameters().size()) {
            return false;
        }
        if (a.kind() != dev.cel.common.types.CelKind.TYPE_PARAM && !a.name().equals(b.name())) {
            return false;
        }
        for (int i = 0; i < a.parameters().size(); i++) {
            if (!equivalent(a.parameters().get(i), b.parameters().get(i))) {
                return false;
            }
        }
        return true;
    }

    /** cel-go's FormatCELType. */
    static String format(dev.cel.common.types.CelType t) {
        switch (t.kind()) {
            case ANY:
                return "any";
            case DURATION:
                return "duration";
            case ERROR:
                return "!error!";
            case NULL_TYPE:
                return "null";
            case TIMESTAMP:
                return "timestamp";
            case TYPE_PARAM:
                return t.name();
            default:
                break;
        }
        if (t.parameters().isEmpty()) {
            return t.name();
        }
        List<String> params = new ArrayList<>();
        t.parameters().forEach(p -> params.add(format(p)));
        return t.name() + "(" + String.join(", ", params) + ")";
    }

    private static void mismatch(CelAbstractSyntaxTree ast, CelExpr at, dev.cel.common.types.CelType expected,
            dev.cel.common.types.CelType actual, List<CelIssues.Issue> issues) {
        Integer offset = ast.getSource().getPositionsMap().get(at.id());
        var location = offset == null ? java.util.Optional.<dev.cel.common.CelSourceLocation>empty()
                : ast.getSource().getOffsetLocation(offset);
        issues.add(new CelIssues.Issue(location.map(l -> l.getLine()).orElse(-1),
                location.map(l -> l.getColumn()).orElse(-1),
                "expected type '" + format(expected) + "' but found '" + format(actual) + "'"));
    }

    private static void walk(CelExpr e, CelAbstractSyntaxTree ast, List<CelIssues.Issue> issues) {
        switch (e.getKind()) {
            case CALL: {
                var call = e.call();
                check(call.function(), call.args(), ast, issues);
                call.target().ifPresent(t -> walk(t, ast, issues));
                call.args().forEach(a -> walk(a, ast, issues));
                break;
            }
            case SELECT:
                walk(e.select().operand(), ast, issues);
                break;
            case LIST:
                e.list().elements().forEach(a -> walk(a, ast, issues));
                break;
            case MAP:
                e.map().entries().forEach(en -> {
                    walk(en.key(), ast, issues);
                    walk(en.value(), ast, issues);
                });
                break;
            case STRUCT:
                e.struct().entries().forEach(en -> walk(en.value(), ast, issues));
                break;
            case COMPREHENSION: {
                var c = e.comprehension();
                walk(c.iterRange(), ast, issues);
                walk(c.accuInit(), ast, issues);
                walk(c.loopCondition(), ast, issues);
                walk(c.loopStep(), ast, issues);
                walk(c.result(), ast, issues);
                break;
            }
            default:
                break;
        }
    }

    private static void check(String function, List<CelExpr> args, CelAbstractSyntaxTree ast,
            List<CelIssues.Issue> issues) {
        Predicate<CelConstant> valid;
        switch (function) {
            case "duration":
                valid = c -> c.getKind() != CelConstant.Kind.STRING_VALUE || parseGoDuration(c.stringValue());
                break;
            case "timestamp":
                valid = c -> c.getKind() != CelConstant.Kind.STRING_VALUE || parseRfc3339(c.stringValue());
                break;
            case "matches":
                valid = c -> c.getKind() != CelConstant.Kind.STRING_VALUE || compiles(c.stringValue());
                break;
            default:
                return;
        }
        if (args.isEmpty() || args.get(0).getKind() != CelExpr.ExprKind.Kind.CONSTANT) {
            return;
        }
        CelExpr literal = args.get(0);
        if (!valid.test(literal.constant())) {
            Integer offset = ast.getSource().getPositionsMap().get(literal.id());
            var location = offset == null ? java.util.Optional.<dev.cel.common.CelSourceLocation>empty()
                    : ast.getSource().getOffsetLocation(offset);
            int line = location.map(l -> l.getLine()).orElse(-1);
            int column = location.map(l -> l.getColumn()).orElse(-1);
            issues.add(new CelIssues.Issue(line, column, "invalid " + function + " argument"));
        }
    }

    private static boolean compiles(String pattern) {
        try {
            com.google.re2j.Pattern.compile(pattern);
            return true;
        } catch (RuntimeException e) {
            return false;
        }
    }

    /** Go's time.ParseDuration: [-+]?([0-9]*(\.[0-9]*)?[a-z]+)+, "0", within int64 nanoseconds. */
    static boolean parseGoDuration(String s) {
        int i = 0;
        if (!s.isEmpty() && (s.charAt(0) == '-' || s.charAt(0) == '+')) {
            i++;
        }
        if (s.substring(i).equals("0")) {
            return true;
        }
        if (i == s.length()) {
            return false;
        }
        BigInteger total = BigInteger.ZERO;
        BigInteger max = BigInteger.valueOf(Long.MAX_VALUE).add(s.charAt(0) == '-' ? BigInteger.ONE : BigInteger.ZERO);
        while (i < s.length()) {
            int start = i;
            while (i < s.length() && Character.isDigit(s.charAt(i)) && s.charAt(i) < 128) {
                i++;
            }
            String whole = s.substring(start, i);
            String frac = "";
            boolean dot = false;
            if (i < s.length() && s.charAt(i) == '.') {
                dot = true;
                i++;
                int fs = i;
                while (i < s.length() && Character.isDigit(s.charAt(i)) && s.charAt(i) < 128) {
                    i++;
                }
                frac = s.substring(fs, i);
            }
            if (whole.isEmpty() && frac.isEmpty()) {
                return false; // no digits (e.g. ".s")
            }
            int us = i;
            while (i < s.length() && s.charAt(i) != '.' && !(s.charAt(i) >= '0' && s.charAt(i) <= '9')) {
                i++;
            }
            long unit;
            switch (s.substring(us, i)) {
                case "ns":
                    unit = 1L;
                    break;
                case "us":
                case "\u00b5s":
                case "\u03bcs":
                    unit = 1_000L;
                    break;
                case "ms":
                    unit = 1_000_000L;
                    break;
                case "s":
                    unit = 1_000_000_000L;
                    break;
                case "m":
                    unit = 60_000_000_000L;
                    break;
                case "h":
                    unit = 3_600_000_000_000L;
                    break;
                default:
                    return false; // missing or unknown unit
            }
            BigInteger v = whole.isEmpty() ? BigInteger.ZERO : new BigInteger(whole);
            v = v.multiply(BigInteger.valueOf(unit));
            if (dot && !frac.isEmpty()) {
                // Go truncates the fraction's contribution toward zero
                BigInteger f = new BigInteger(frac).multiply(BigInteger.valueOf(unit));
                v = v.add(f.divide(BigInteger.TEN.pow(frac.length())));
            }
            total = total.add(v);
            if (total.compareTo(max) > 0) {
                return false;
            }
        }
        return true;
    }

    /** Go's RFC 3339 parser (time.Parse's fast path), then CEL's range: 0001-01-01 to 9999-12-31. */
    static boolean parseRfc3339(String s) {
        if (s.length() < 19 || !s.chars().limit(19).allMatch(c -> c < 128)) {
            return false;
        }
        int year = num(s, 0, 4, 0, 9999);
        int month = num(s, 5, 7, 1, 12);
        if (year < 0 || month < 0) {
            return false;
        }
        int days;
        try {
            days = LocalDate.of(year == 0 ? 2000 : year, month, 1).lengthOfMonth();
        } catch (DateTimeException e) {
            return false;
        }
        if (num(s, 8, 10, 1, days) < 0 || num(s, 11, 13, 0, 23) < 0 || num(s, 14, 16, 0, 59) < 0
                || num(s, 17, 19, 0, 59) < 0) {
            return false;
        }
        if (s.charAt(4) != '-' || s.charAt(7) != '-' || s.charAt(10) != 'T' || s.charAt(13) != ':'
                || s.charAt(16) != ':') {
            return false;
        }
        String rest = s.substring(19);
        if (rest.length() >= 2 && rest.charAt(0) == '.' && isDigit(rest.charAt(1))) {
            int n = 2;
            while (n < rest.length() && isDigit(rest.charAt(n))) {
                n++;
            }
            rest = rest.substring(n);
        }
        int offsetMinutes = 0;
        if (!rest.equals("Z")) {
            if (rest.length() != 6) {
                return false;
            }
            int hr = num(rest, 1, 3, 0, 23);
            int mm = num(rest, 4, 6, 0, 59);
            if (hr < 0 || mm < 0 || !((rest.charAt(0) == '-' || rest.charAt(0) == '+') && rest.charAt(3) == ':')) {
                return false;
            }
            offsetMinutes = (hr * 60 + mm) * (rest.charAt(0) == '-' ? -1 : 1);
        }
        // the instant in UTC must lie within CEL's timestamps
        if (year == 0) {
            return false;
        }
        if (year == 1 && month == 1 && s.startsWith("01", 8) && offsetMinutes > 0) {
            int minutes = Integer.parseInt(s.substring(11, 13)) * 60 + Integer.parseInt(s.substring(14, 16));
            return minutes >= offsetMinutes;
        }
        if (year == 9999 && month == 12 && s.startsWith("31", 8) && offsetMinutes < 0) {
            int minutes = Integer.parseInt(s.substring(11, 13)) * 60 + Integer.parseInt(s.substring(14, 16));
            return minutes - offsetMinutes < 24 * 60;
        }
        return true;
    }

    private static boolean isDigit(char c) {
        return c >= '0' && c <= '9';
    }

    /** The digits s[from, to) as a number within [min, max], or -1. */
    private static int num(String s, int from, int to, int min, int max) {
        int x = 0;
        for (int i = from; i < to; i++) {
            char c = s.charAt(i);
            if (!isDigit(c)) {
                return -1;
            }
            x = x * 10 + (c - '0');
        }
        return x < min || x > max ? -1 : x;
    }
}
