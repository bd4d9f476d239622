package io.qkcm.controller.devicetainteviction;

import java.util.ArrayList;
import java.util.List;

import dev.cel.runtime.CelEvaluationException;
import dev.cel.runtime.CelEvaluationExceptionBuilder;
import dev.cel.runtime.CelFunctionBinding;

/**
 * cel-go's ext.Strings at version 2 (what Kubernetes' base environment enables from 1.29), on Go's semantics:
 * positions count runes (code points), split/replace/trim are Go's strings package, and errors are cel-go's
 * words, since a DeviceTaintRule selector's runtime error reaches an event. cel-java ships this library too,
 * but words its errors differently and trims Java's whitespace. {@code format} (string_format) is not here.
 */
final class CelStrings {

    private CelStrings() {
    }

    static List<CelFunctionBinding> bindings() {
        return List.of(
                CelFunctionBinding.from("string_char_at_int", String.class, Long.class, CelStrings::charAt),
                CelFunctionBinding.from("string_index_of_string", String.class, String.class,
                        (s, sub) -> indexOf(s, sub, 0)),
                CelFunctionBinding.from("string_index_of_string_int", List.of(String.class, String.class, Long.class),
                        a -> indexOf((String) a[0], (String) a[1], (Long) a[2])),
                CelFunctionBinding.from("string_last_index_of_string", String.class, String.class, CelStrings::lastIndexOf),
                CelFunctionBinding.from("string_last_index_of_string_int",
                        List.of(String.class, String.class, Long.class),
                        a -> lastIndexOf((String) a[0], (String) a[1], (Long) a[2])),
                CelFunctionBinding.from("string_lower_ascii", String.class, s -> ascii(s, false)),
                CelFunctionBinding.from("string_upper_ascii", String.class, s -> ascii(s, true)),
                CelFunctionBinding.from("string_replace_string_string",
                        List.of(String.class, String.class, String.class),
                        a -> replace((String) a[0], (String) a[1], (String) a[2], -1)),
                CelFunctionBinding.from("string_replace_string_string_int",
                        List.of(String.class, String.class, String.class, Long.class),
                        a -> replace((String) a[0], (String) a[1], (String) a[2], (Long) a[3])),
                CelFunctionBinding.from("string_split_string", String.class, String.class, (s, sep) -> split(s, sep, -1)),
                CelFunctionBinding.from("string_split_string_int", List.of(String.class, String.class, Long.class),
                        a -> split((String) a[0], (String) a[1], (Long) a[2])),
                CelFunctionBinding.from("string_substring_int", String.class, Long.class, CelStrings::substring),
                CelFunctionBinding.from("string_substring_int_int", List.of(String.class, Long.class, Long.class),
                        a -> substring((String) a[0], (Long) a[1], (Long) a[2])),
                CelFunctionBinding.from("string_trim", String.class, CelStrings::trimSpace),
                CelFunctionBinding.from("list_join", List.class, l -> join(l, null)),
                CelFunctionBinding.from("list_join_string", List.class, String.class, CelStrings::join),
                CelFunctionBinding.from("strings_quote", String.class, CelStrings::quote));
    }

    static CelEvaluationException error(String message) {
        return CelEvaluationExceptionBuilder.newBuilder("%s", message).build();
    }

    private static String charAt(String s, long index) throws CelEvaluationException {
        int[] runes = s.codePoints().toArray();
        if (index < 0 || index > runes.length) {
            throw error("index out of range: " + index);
        }
        return index == runes.length ? "" : new String(runes, (int) index, 1);
    }

    private static long indexOf(String s, String sub, long offset) throws CelEvaluationException {
        if (sub.isEmpty()) {
            return offset;
        }
        int[] runes = s.codePoints().toArray();
        int[] subRunes = sub.codePoints().toArray();
        if (offset < 0) {
            throw error("index out of range: " + offset);
        }
        if (offset >= runes.length) {
            return -1;
        }
        for (int i = (int) offset; i < runes.length - (subRunes.length - 1); i++) {
            if (regionMatches(runes, i, subRunes)) {
                return i;
            }
        }
        return -1;
    }

    private static long lastIndexOf(String s, String sub) throws CelEvaluationException {
        int runeCount = s.codePointCount(0, s.length());
        if (sub.isEmpty()) {
            return runeCount;
        }
        // Go compares the UTF-8 lengths here
        if (utf8Length(s) < utf8Length(sub)) {
            return -1;
        }
        return lastIndexOf(s, sub, runeCount - 1L);
    }

    private static long lastIndexOf(String s, String sub, long offset) throws CelEvaluationException {
        if (sub.isEmpty()) {
            return offset;
        }
        int[] runes = s.codePoints().toArray();
        int[] subRunes = sub.codePoints().toArray();
        if (offset < 0) {
            throw error("index out of range: " + offset);
        }
        if (offset >= runes.length) {
            return -1;
        }
        long off = Math.min(offset, runes.length - subRunes.length);
        for (long i = off; i >= 0; i--) {
            if (regionMatches(runes, (int) i, subRunes)) {
                return i;
            }
        }
        return -1;
    }

    private static boolean regionMatches(int[] runes, int at, int[] sub) {
        for (int j = 0; j < sub.length; j++) {
            if (runes[at + j] != sub[j]) {
                return false;
            }
        }
        return true;
    }

    private static long utf8Length(String s) {
        return s.codePoints().mapToLong(c -> c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4).sum();
    }

    private static String ascii(String s, boolean upper) {
        StringBuilder b = new StringBuilder(s.length());
        s.codePoints().forEach(c -> {
            if (upper && c >= 'a' && c <= 'z') {
                c -= 'a' - 'A';
            } else if (!upper && c >= 'A' && c <= 'Z') {
                c += 'a' - 'A';
            }
            b.appendCodePoint(c);
        });
        return b.toString();
    }

    /** Go's strings.Replace: n < 0 replaces all; an empty old matches before every rune and at the end. */
    static String replace(String s, String old, String replacement, long n) {
        if (old.equals(replacement) || n == 0) {
            return s;
        }
        long m = count(s, old);
        if (m == 0) {
            return s;
        }
        if (n < 0 || m < n) {
            n = m;
        }
        StringBuilder b = new StringBuilder();
        int start = 0;
        for (long i = 0; i < n; i++) {
            int j = start;
            if (old.isEmpty()) {
                if (i > 0) {
                    j += Character.charCount(s.codePointAt(start));
                }
            } else {
                j = s.indexOf(old, start);
            }
            b.append(s, start, j).append(replacement);
            start = j + old.length();
        }
        return b.append(s.substring(start)).toString();
    }

    /** Go's strings.Count: non-overlapping instances; an empty substring counts runes plus one. */
    private static long count(String s, String sub) {
        if (sub.isEmpty()) {
            return s.codePointCount(0, s.length()) + 1L;
        }
        long n = 0;
        for (int i = s.indexOf(sub); i >= 0; i = s.indexOf(sub, i + sub.length())) {
            n++;
        }
        return n;
    }

    /** Go's strings.SplitN (Split is n = -1). */
    static List<String> split(String s, String sep, long n) {
        List<String> out = new ArrayList<>();
        if (n == 0) {
            return out;
        }
        if (sep.isEmpty()) {
            int[] runes = s.codePoints().toArray();
            long l = runes.length;
            if (n < 0 || n > l) {
                n = l;
            }
            int at = 0;
            for (int i = 0; i < n - 1; i++) {
                int next = at + Character.charCount(runes[i]);
                out.add(s.substring(at, next));
                at = next;
            }
            if (n > 0) {
                out.add(s.substring(at));
            }
            return out;
        }
        if (n < 0) {
            n = count(s, sep) + 1;
        }
        int start = 0;
        while (out.size() < n - 1) {
            int m = s.indexOf(sep, start);
            if (m < 0) {
                break;
            }
            out.add(s.substring(start, m));
            start = m + sep.length();
        }
        out.add(s.substring(start));
        return out;
    }

    private static String substring(String s, long start) throws CelEvaluationException {
        int[] runes = s.codePoints().toArray();
        if (start < 0 || start > runes.length) {
            throw error("index out of range: " + start);
        }
        return new String(runes, (int) start, runes.length - (int) start);
    }

    private static String substring(String s, long start, long end) throws CelEvaluationException {
        int[] runes = s.codePoints().toArray();
        if (start > end) {
            throw error("invalid substring range. start: " + start + ", end: " + end);
        }
        if (start < 0 || start > runes.length) {
            throw error("index out of range: " + start);
        }
        if (end < 0 || end > runes.length) {
            throw error("index out of range: " + end);
        }
        return new String(runes, (int) start, (int) (end - start));
    }

    /** Go's unicode.IsSpace. */
    static boolean isSpace(int c) {
        return switch (c) {
            case '\t', '\n', 0x0B, '\f', '\r', ' ', 0x85, 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000 -> true;
            default -> c >= 0x2000 && c <= 0x200A;
        };
    }

    /** Go's strings.TrimSpace. */
    static String trimSpace(String s) {
        int start = 0;
        int end = s.length();
        while (start < end && isSpace(s.codePointAt(start))) {
            start += Character.charCount(s.codePointAt(start));
        }
        while (end > start && isSpace(s.codePointBefore(end))) {
            end -= Character.charCount(s.codePointBefore(end));
        }
        return s.substring(start, end);
    }

    private static String join(List<?> list, String separator) throws CelEvaluationException {
        // cel-go's type guard looks at the first element only
        if (!list.isEmpty() && !(list.get(0) instanceof String)) {
            throw error(separator == null ? "no such overload: join(list)" : "no such overload: join(list, string)");
        }
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < list.size(); i++) {
            if (i != 0 && separator != null) {
                b.append(separator);
            }
            if (!(list.get(i) instanceof String s)) {
                throw error("join: invalid input: " + list.get(i));
            }
            b.append(s);
        }
        return b.toString();
    }

    /** cel-go's strings.quote: CEL's escapes, invalid runes (lone surrogates here) as U+FFFD. */
    static String quote(String s) {
        StringBuilder b = new StringBuilder("\"");
        s.codePoints().forEach(c -> {
            switch (c) {
                case 0x07 -> b.append("\\a");
                case '\b' -> b.append("\\b");
                case '\f' -> b.append("\\f");
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                case 0x0B -> b.append("\\v");
                case '\\' -> b.append("\\\\");
                case '"' -> b.append("\\\"");
                default -> b.appendCodePoint(Character.isSurrogate((char) c) && c <= 0xFFFF ? 0xFFFD : c);
            }
        });
        return b.append('"').toString();
    }
}
