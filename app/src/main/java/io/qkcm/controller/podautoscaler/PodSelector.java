package io.qkcm.controller.podautoscaler;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.LabelSelectorRequirement;
import io.qkcm.controller.LabelSelectors;

/**
 * A label selector as upstream's labels.Selector: its string form (what the scale subresource's
 * status.selector holds and the metrics APIs take) and its matcher. {@link #parse} is labels.Parse for
 * the set- and equality-based syntax ({@code a=b,c!=d,e in (f,g),h notin (i),j,!k}).
 */
public record PodSelector(String text, LabelSelectors.Selector matcher) {

    /** labels.Nothing(): what an HPA selects before its first sync. */
    public static final PodSelector NOTHING = new PodSelector("", LabelSelectors.nothing());

    public boolean matches(Map<String, String> labels) {
        return matcher.matches(labels);
    }

    @Override
    public String toString() {
        return text;
    }

    /** labels.Parse; an error message as upstream's parser's when the syntax is not understood. */
    public static PodSelector parse(String text) throws IllegalArgumentException {
        List<LabelSelectorRequirement> reqs = new ArrayList<>();
        int i = 0;
        String s = text.strip();
        while (i < s.length()) {
            int end = nextComma(s, i);
            String part = s.substring(i, end).strip();
            i = end + 1;
            if (part.isEmpty()) {
                throw new IllegalArgumentException("found '', expected: !, identifier, or 'end of string'");
            }
            reqs.add(requirement(part));
        }
        LabelSelector ls = new LabelSelector(reqs, null);
        return new PodSelector(text, LabelSelectors.fromLabelSelector(ls));
    }

    /** The comma ending the requirement starting at {@code from}, commas inside parentheses excluded. */
    private static int nextComma(String s, int from) {
        int depth = 0;
        for (int i = from; i < s.length(); i++) {
            char c = s.charAt(i);
            if (c == '(') {
                depth++;
            } else if (c == ')') {
                depth--;
            } else if (c == ',' && depth == 0) {
                return i;
            }
        }
        return s.length();
    }

    private static LabelSelectorRequirement requirement(String part) {
        if (part.startsWith("!")) {
            return new LabelSelectorRequirement(key(part.substring(1).strip()), "DoesNotExist", null);
        }
        int ne = part.indexOf("!=");
        if (ne > 0) {
            return new LabelSelectorRequirement(key(part.substring(0, ne).strip()), "NotIn",
                    List.of(part.substring(ne + 2).strip()));
        }
        int eq = part.indexOf('=');
        if (eq > 0) {
            String value = part.substring(part.startsWith("==", eq) ? eq + 2 : eq + 1).strip();
            return new LabelSelectorRequirement(key(part.substring(0, eq).strip()), "In", List.of(value));
        }
        String[] words = part.split("\\s+", 2);
        if (words.length == 2) {
            String rest = words[1].strip();
            String op;
            if (rest.startsWith("notin")) {
                op = "NotIn";
                rest = rest.substring(5).strip();
            } else if (rest.startsWith("in")) {
                op = "In";
                rest = rest.substring(2).strip();
            } else {
                throw new IllegalArgumentException("found '" + rest + "', expected: in, notin, =, ==, !=, gt, lt");
            }
            if (!rest.startsWith("(") || !rest.endsWith(")")) {
                throw new IllegalArgumentException("found '" + rest + "', expected: '('");
            }
            List<String> values = new ArrayList<>();
            for (String v : rest.substring(1, rest.length() - 1).split(",")) {
                if (!v.isBlank()) {
                    values.add(v.strip());
                }
            }
            return new LabelSelectorRequirement(key(words[0]), op, values);
        }
        return new LabelSelectorRequirement(key(part), "Exists", null);
    }

    private static String key(String key) {
        if (key.isEmpty() || key.chars().anyMatch(c -> Character.isWhitespace(c) || c == '(' || c == ')')) {
            throw new IllegalArgumentException("invalid label key \"" + key + "\"");
        }
        return key;
    }

    /**
     * metav1.LabelSelectorAsSelector(ls).String(): requirements sorted by key; a nil selector selects
     * nothing and prints empty, as an empty one.
     */
    public static String format(LabelSelector ls) {
        if (ls == null) {
            return "";
        }
        TreeMap<String, List<String>> byKey = new TreeMap<>();
        if (ls.getMatchLabels() != null) {
            ls.getMatchLabels().forEach((k, v) -> byKey.computeIfAbsent(k, x -> new ArrayList<>()).add(k + "=" + v));
        }
        if (ls.getMatchExpressions() != null) {
            for (LabelSelectorRequirement r : ls.getMatchExpressions()) {
                List<String> values = r.getValues() == null ? List.of() : r.getValues().stream().sorted().toList();
                String req = switch (r.getOperator()) {
                    case "In" -> r.getKey() + " in (" + String.join(",", values) + ")";
                    case "NotIn" -> r.getKey() + " notin (" + String.join(",", values) + ")";
                    case "Exists" -> r.getKey();
                    case "DoesNotExist" -> "!" + r.getKey();
                    default -> throw new IllegalArgumentException("\"" + r.getOperator() + "\" is not a valid label selector operator");
                };
                byKey.computeIfAbsent(r.getKey(), x -> new ArrayList<>()).add(req);
            }
        }
        List<String> all = new ArrayList<>();
        byKey.values().forEach(all::addAll);
        return String.join(",", all);
    }
}
