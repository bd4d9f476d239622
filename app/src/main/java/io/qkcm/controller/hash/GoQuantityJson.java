package io.qkcm.controller.hash;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.RoundingMode;

/**
 * The text Go's {@code resource.Quantity.MarshalJSON} writes for a quantity decoded from JSON
 * ({@code ParseQuantity}: the input kept when it looks canonical, else {@code CanonicalizeBytes}), optionally
 * after {@code RoundUp(scale)} (which {@code SetDefaults_ResourceList} applies with milli scale).
 * apimachinery v0.34 quantity.go and amount.go.
 */
public final class GoQuantityJson {

    private static final String[] BINARY_SUFFIXES = { "", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei" };
    private static final BigDecimal BINARY_LIMIT = BigDecimal.valueOf(1024);

    private GoQuantityJson() {
    }

    /** json.Marshal of the quantity json.Unmarshal makes of {@code text}; text Go cannot parse is returned as is. */
    public static String marshal(String text) {
        GoQuantity q = parse(text);
        return q == null ? text : marshal(q);
    }

    /** json.Marshal after {@code RoundUp(scale)} (scale as Go's resource.Scale: -3 is milli). */
    public static String roundUpAndMarshal(String text, int scale) {
        GoQuantity q = parse(text);
        if (q == null) {
            return text;
        }
        if (q.hasDec()) {
            // inf.Dec AsScale: rounded away from zero to -scale decimal places; the cached text goes
            BigDecimal d = new BigDecimal(q.decUnscaled(), q.decScale()).setScale(-scale, RoundingMode.UP);
            return canonical(d, q.format());
        }
        if (q.scale() >= scale) {
            return marshal(q);
        }
        BigDecimal d = BigDecimal.valueOf(q.value(), -q.scale()).setScale(-scale, RoundingMode.UP);
        return canonical(d, q.format());
    }

    private static GoQuantity parse(String text) {
        try {
            return GoQuantity.parse(text.trim());
        } catch (RuntimeException e) {
            return null;
        }
    }

    private static String marshal(GoQuantity q) {
        if (q.cached() != null && !q.cached().isEmpty()) {
            return q.cached();
        }
        BigDecimal d = q.hasDec() ? new BigDecimal(q.decUnscaled(), q.decScale())
                : BigDecimal.valueOf(q.value(), -q.scale());
        return canonical(d, q.format());
    }

    /** CanonicalizeBytes: number and suffix of the value in its format. */
    static String canonical(BigDecimal value, String format) {
        if (value.signum() == 0) {
            return "0";
        }
        if (GoQuantity.BINARY_SI.equals(format)) {
            if (value.abs().compareTo(BINARY_LIMIT) < 0) {
                format = GoQuantity.DECIMAL_SI;
            } else {
                BigDecimal whole = value.setScale(0, RoundingMode.UP);
                if (whole.compareTo(value) != 0) {
                    format = GoQuantity.DECIMAL_SI;
                } else {
                    BigInteger n = whole.toBigIntegerExact();
                    BigInteger k = BigInteger.valueOf(1024);
                    int exp = 0;
                    while (n.signum() != 0 && n.mod(k).signum() == 0) {
                        n = n.divide(k);
                        exp++;
                    }
                    return n + (exp < BINARY_SUFFIXES.length ? BINARY_SUFFIXES[exp] : "");
                }
            }
        }
        BigInteger mantissa = value.unscaledValue();
        int exponent = -value.scale();
        while (mantissa.mod(BigInteger.TEN).signum() == 0) {
            mantissa = mantissa.divide(BigInteger.TEN);
            exponent++;
        }
        while (Math.floorMod(exponent, 3) != 0) {
            mantissa = mantissa.multiply(BigInteger.TEN);
            exponent--;
        }
        String suffix;
        if (GoQuantity.DECIMAL_EXPONENT.equals(format)) {
            suffix = exponent == 0 ? "" : "e" + exponent;
        } else {
            suffix = switch (exponent) {
                case -9 -> "n";
                case -6 -> "u";
                case -3 -> "m";
                case 0 -> "";
                case 3 -> "k";
                case 6 -> "M";
                case 9 -> "G";
                case 12 -> "T";
                case 15 -> "P";
                case 18 -> "E";
                default -> ""; // no suffix for the exponent: Go writes none
            };
        }
        return mantissa + suffix;
    }
}
