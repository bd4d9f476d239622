package io.qkcm.controller.history;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * JSON text as Go's {@code encoding/json} writes it, for bytes that must match upstream's: compact, strings
 * escaped as Go escapes them ({@code <}, {@code >}, {@code &}, U+2028, U+2029 and control characters as
 * lowercase u00xx escapes, {@code \b \f \n \r \t} short), floats in Go's shortest form. {@link #compact}
 * keeps the key order and integers as they are (what an API server returns for Go-written bytes it keeps
 * verbatim); {@link #sorted} sorts object keys and writes every number as a float64 (what
 * {@code json.Marshal} does with a decoded {@code map[string]interface{}}).
 */
public final class GoJson {

    private static final ObjectMapper JSON = io.qkcm.runtime.Json.mapper();
    private static final char[] HEX = "0123456789abcdef".toCharArray();

    private GoJson() {
    }

    /** {@code value} (a Jackson tree, a Map/List/String/Number/Boolean or null) compact, key order kept. */
    public static String compact(Object value) {
        StringBuilder out = new StringBuilder();
        write(out, tree(value), false);
        return out.toString();
    }

    /** {@code value} compact with object keys sorted, as Go marshals a decoded {@code interface{}}. */
    public static String sorted(Object value) {
        StringBuilder out = new StringBuilder();
        write(out, tree(value), true);
        return out.toString();
    }

    /** A JSON document parsed into a Jackson tree (numbers as parsed). */
    public static JsonNode parse(String json) {
        try {
            return JSON.readTree(json);
        } catch (JsonProcessingException e) {
            throw new IllegalArgumentException("invalid JSON: " + e.getOriginalMessage(), e);
        }
    }

    private static JsonNode tree(Object value) {
        if (value instanceof JsonNode n) {
            return n;
        }
        return JSON.valueToTree(value);
    }

    private static void write(StringBuilder out, JsonNode n, boolean sortKeys) {
        if (n == null || n.isNull() || n.isMissingNode()) {
            out.append("null");
        } else if (n.isObject()) {
            List<String> keys = new ArrayList<>();
            for (Iterator<String> it = n.fieldNames(); it.hasNext();) {
                keys.add(it.next());
            }
            if (sortKeys) {
                // Go sorts map keys by their bytes (UTF-8), which for strings is code point order
                keys.sort(GoJson::compareCodePoints);
            }
            out.append('{');
            boolean first = true;
            for (String k : keys) {
                if (!first) {
                    out.append(',');
                }
                first = false;
                string(out, k);
                out.append(':');
                write(out, n.get(k), sortKeys);
            }
            out.append('}');
        } else if (n.isArray()) {
            out.append('[');
            for (int i = 0; i < n.size(); i++) {
                if (i > 0) {
                    out.append(',');
                }
                write(out, n.get(i), sortKeys);
            }
            out.append(']');
        } else if (n.isTextual()) {
            string(out, n.textValue());
        } else if (n.isBoolean()) {
            out.append(n.booleanValue());
        } else if (n.isIntegralNumber() && !sortKeys) {
            out.append(n.bigIntegerValue());
        } else if (n.isNumber()) {
            out.append(formatFloat(n.doubleValue()));
        } else {
            string(out, n.asText());
        }
    }

    private static int compareCodePoints(String a, String b) {
        int i = 0;
        int j = 0;
        while (i < a.length() && j < b.length()) {
            int ca = a.codePointAt(i);
            int cb = b.codePointAt(j);
            if (ca != cb) {
                return Integer.compare(ca, cb);
            }
            i += Character.charCount(ca);
            j += Character.charCount(cb);
        }
        return Integer.compare(a.length() - i, b.length() - j);
    }

    /** Go's float64 encoding: 'f' format between 1e-6 and 1e21, else 'e' with a 2-digit minimum exponent trimmed. */
    static String formatFloat(double f) {
        if (Double.isNaN(f) || Double.isInfinite(f)) {
            throw new IllegalArgumentException("json: unsupported value: " + f);
        }
        if (f == 0) {
            return (1 / f < 0) ? "-0" : "0";
        }
        double abs = Math.abs(f);
        BigDecimal shortest = new BigDecimal(Double.toString(f));
        if (abs >= 1e-6 && abs < 1e21) {
            BigDecimal plain = shortest.stripTrailingZeros();
            if (plain.scale() < 0) {
                plain = plain.setScale(0);
            }
            return plain.toPlainString();
        }
        BigDecimal s = shortest.stripTrailingZeros();
        BigInteger unscaled = s.unscaledValue().abs();
        String digits = unscaled.toString();
        int exp = digits.length() - 1 - s.scale();
        StringBuilder b = new StringBuilder();
        if (f < 0) {
            b.append('-');
        }
        b.append(digits.charAt(0));
        if (digits.length() > 1) {
            b.append('.').append(digits, 1, digits.length());
        }
        b.append('e').append(exp < 0 ? '-' : '+');
        b.append(Math.abs(exp));
        return b.toString();
    }

    private static void string(StringBuilder out, String s) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\b' -> out.append("\\b");
                case '\f' -> out.append("\\f");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                case '<', '>', '&' -> hex4(out, c);
                case '\u2028', '\u2029' -> hex4(out, c);
                default -> {
                    if (c < 0x20) {
                        hex4(out, c);
                    } else if (Character.isSurrogate(c)) {
                        if (Character.isHighSurrogate(c) && i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1))) {
                            out.append(c).append(s.charAt(++i));
                        } else {
                            out.append("\\ufffd"); // Go's replacement of invalid UTF-8
                        }
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        out.append('"');
    }

    private static void hex4(StringBuilder out, char c) {
        out.append("\\u").append(HEX[(c >> 12) & 0xF]).append(HEX[(c >> 8) & 0xF]).append(HEX[(c >> 4) & 0xF])
                .append(HEX[c & 0xF]);
    }
}
