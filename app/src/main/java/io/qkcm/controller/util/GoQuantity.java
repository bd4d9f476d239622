package io.qkcm.controller.util;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.RoundingMode;
import java.util.Objects;

/**
 * apimachinery v0.34's {@code resource.Quantity} (quantity.go, amount.go, math.go, scale_int.go), the one
 * port the controllers share: the quota arithmetic (parse, {@link #add}, {@link #sub}, {@link #compareTo},
 * {@link #milliValue}, {@link #roundUp}) and the state the hash renders ({@code i}, {@code d}, {@code s},
 * {@code Format}). It keeps Go's two representations, an int64 amount (value × 10^scale) and an
 * arbitrary-precision decimal, and follows Go's code paths between them, including int32 scale
 * arithmetic that wraps and the DecimalSI exponents that have no suffix (Go writes the mantissa
 * alone: {@code 1000E} reads back as {@code 1}); so a value is printed as the API server would store it.
 * Immutable: the operations return new quantities where Go mutates the receiver.
 */
public final class GoQuantity implements Comparable<GoQuantity> {

    public enum Format {
        DECIMAL_SI("DecimalSI"), BINARY_SI("BinarySI"), DECIMAL_EXPONENT("DecimalExponent");

        private final String goName;

        Format(String goName) {
            this.goName = goName;
        }

        /** The Go constant's value ({@code resource.Format}). */
        public String goName() {
            return goName;
        }
    }

    /** ErrFormatWrong, ErrNumeric, ErrSuffix. */
    public static final String ERR_FORMAT_WRONG =
            "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
    public static final String ERR_NUMERIC = "unable to parse numeric part of quantity";
    public static final String ERR_SUFFIX = "unable to parse quantity's suffix";

    public static final int NANO = -9;
    public static final int MILLI = -3;

    /** {@code resource.Quantity{Format: resource.DecimalSI}}. */
    public static final GoQuantity ZERO = new GoQuantity(0, 0, null, "", Format.DECIMAL_SI);

    private static final BigInteger MAX_INT64 = BigInteger.valueOf(Long.MAX_VALUE);
    private static final BigDecimal MAX_ALLOWED = new BigDecimal(MAX_INT64);
    private static final BigInteger K1024 = BigInteger.valueOf(1024);

    /** int64Amount (meaningful while {@link #d} is null). */
    private final long value;
    private final int scale;
    /** infDecAmount: null on the int64 path; its scale is inf's (digits after the point). */
    private final BigDecimal d;
    /** The cached text ("" when none): ParseQuantity keeps an input that is already canonical. */
    private final String s;
    private final Format format;

    private GoQuantity(long value, int scale, BigDecimal d, String s, Format format) {
        this.value = value;
        this.scale = scale;
        this.d = d;
        this.s = s;
        this.format = format;
    }

    /** {@code resource.NewQuantity(n, DecimalSI)}. */
    public static GoQuantity of(long n) {
        return new GoQuantity(n, 0, null, "", Format.DECIMAL_SI);
    }

    /** {@code resource.NewScaledQuantity(n, scale)} in {@code format}. */
    public static GoQuantity scaled(long n, int scale, Format format) {
        return new GoQuantity(n, scale, null, "", format);
    }

    /** A fabric8 quantity as Go's UnmarshalJSON decodes it (spaces trimmed). */
    public static GoQuantity of(io.fabric8.kubernetes.api.model.Quantity q) {
        String amount = q.getAmount() == null ? "" : q.getAmount();
        String suffix = q.getFormat() == null ? "" : q.getFormat();
        return parse((amount + suffix).trim());
    }

    /** The quantity to write into an object: Go's String(). */
    public io.fabric8.kubernetes.api.model.Quantity toFabric8() {
        return new io.fabric8.kubernetes.api.model.Quantity(toString());
    }

    /** Go's ParseQuantity; IllegalArgumentException with Go's error text on what it refuses. */
    public static GoQuantity parse(String str) {
        if (str.isEmpty()) {
            throw new IllegalArgumentException(ERR_FORMAT_WRONG);
        }
        if (str.equals("0")) {
            return new GoQuantity(0, 0, null, "0", Format.DECIMAL_SI);
        }
        Parts p = Parts.of(str);
        Suffix suf = Suffix.interpret(p.suffix);
        if (suf == null) {
            throw new IllegalArgumentException(ERR_SUFFIX);
        }
        int precision = 0;
        int scale = 0;
        long mantissa = 1;
        Format format = suf.format;
        if (format == Format.BINARY_SI) {
            if (suf.exponent >= 0 && p.denom.isEmpty()) {
                mantissa = mantissa << suf.exponent;
                precision = 15 - p.num.length() - (int) ((float) suf.exponent * 3 / 10) - 1;
            } else {
                precision = -1;
            }
        } else {
            scale = suf.exponent;
            precision = 18 - (p.num.length() + p.denom.length());
        }
        if (precision >= 0) {
            scale -= p.denom.length();
            if (scale >= NANO) {
                String shifted = p.num + p.denom;
                long v;
                try {
                    v = Long.parseLong(shifted);
                } catch (NumberFormatException e) {
                    throw new IllegalArgumentException(ERR_NUMERIC);
                }
                long[] result = new long[1];
                if (int64Multiply(v, mantissa, result)) {
                    long r = p.positive ? result[0] : -result[0];
                    boolean canonical = format == Format.BINARY_SI
                            ? suf.exponent % 10 == 0 && (v & 0x07) != 0
                            : scale % 3 == 0 && !shifted.endsWith("000") && shifted.charAt(0) != '0';
                    return new GoQuantity(r, scale, null, canonical ? str : "", format);
                }
            }
        }
        // the slow path: inf.Dec
        BigDecimal amount;
        try {
            String text = p.value.startsWith("+") ? p.value.substring(1) : p.value;
            amount = new BigDecimal(text.endsWith(".") ? text.substring(0, text.length() - 1) : text);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(ERR_NUMERIC);
        }
        if (suf.base == 10) {
            // SetScale(Scale() - exponent) in int32, wrapping as Go's does
            amount = new BigDecimal(amount.unscaledValue(), amount.scale() - suf.exponent);
        } else {
            amount = new BigDecimal(amount.unscaledValue().shiftLeft(suf.exponent), amount.scale());
        }
        int sign = amount.signum();
        amount = amount.abs();
        // non-zero values round up to the nano (anything asked for gets something)
        if (amount.unscaledValue().signum() != 0) {
            amount = amount.setScale(9, RoundingMode.UP);
        }
        if (format == Format.BINARY_SI && amount.compareTo(MAX_ALLOWED) > 0) {
            amount = MAX_ALLOWED;
        }
        if (format == Format.BINARY_SI && amount.compareTo(BigDecimal.ONE) < 0 && amount.signum() > 0) {
            format = Format.DECIMAL_SI;
        }
        if (sign < 0) {
            amount = amount.negate();
        }
        return new GoQuantity(0, 0, amount, "", format);
    }

    /** parseQuantityString's parts. */
    private record Parts(boolean positive, String value, String num, String denom, String suffix) {
        static Parts of(String str) {
            boolean positive = true;
            int pos = 0;
            int end = str.length();
            if (pos < end) {
                if (str.charAt(0) == '-') {
                    positive = false;
                    pos++;
                } else if (str.charAt(0) == '+') {
                    pos++;
                }
            }
            while (true) {
                if (pos >= end) {
                    return new Parts(positive, "0", "0", "", "");
                }
                if (str.charAt(pos) != '0') {
                    break;
                }
                pos++;
            }
            int i = pos;
            while (i < end && isDigit(str.charAt(i))) {
                i++;
            }
            if (i >= end) {
                return new Parts(positive, str, str.substring(pos), "", "");
            }
            String num = str.substring(pos, i);
            pos = i;
            if (num.isEmpty()) {
                num = "0";
            }
            String denom = "";
            if (pos < end && str.charAt(pos) == '.') {
                pos++;
                i = pos;
                while (i < end && isDigit(str.charAt(i))) {
                    i++;
                }
                if (i >= end) {
                    return new Parts(positive, str, num, str.substring(pos), "");
                }
                denom = str.substring(pos, i);
                pos = i;
            }
            String value = str.substring(0, pos);
            int suffixStart = pos;
            i = pos;
            while (i < end && "eEinumkKMGTP".indexOf(str.charAt(i)) >= 0) {
                i++;
            }
            if (i >= end) {
                return new Parts(positive, value, num, denom, str.substring(suffixStart));
            }
            pos = i;
            if (str.charAt(pos) == '-' || str.charAt(pos) == '+') {
                pos++;
            }
            for (i = pos; i < end; i++) {
                if (!isDigit(str.charAt(i))) {
                    throw new IllegalArgumentException(ERR_FORMAT_WRONG);
                }
            }
            return new Parts(positive, value, num, denom, str.substring(suffixStart));
        }

        private static boolean isDigit(char c) {
            return c >= '0' && c <= '9';
        }
    }

    /** suffixHandler.interpret: base, exponent and format of a suffix; null when there is none such. */
    private record Suffix(int base, int exponent, Format format) {
        static Suffix interpret(String s) {
            switch (s) {
                case "": return new Suffix(10, 0, Format.DECIMAL_SI);
                case "n": return new Suffix(10, -9, Format.DECIMAL_SI);
                case "u": return new Suffix(10, -6, Format.DECIMAL_SI);
                case "m": return new Suffix(10, -3, Format.DECIMAL_SI);
                case "k": return new Suffix(10, 3, Format.DECIMAL_SI);
                case "M": return new Suffix(10, 6, Format.DECIMAL_SI);
                case "G": return new Suffix(10, 9, Format.DECIMAL_SI);
                case "T": return new Suffix(10, 12, Format.DECIMAL_SI);
                case "P": return new Suffix(10, 15, Format.DECIMAL_SI);
                case "E": return new Suffix(10, 18, Format.DECIMAL_SI);
                case "Ki": return new Suffix(2, 10, Format.BINARY_SI);
                case "Mi": return new Suffix(2, 20, Format.BINARY_SI);
                case "Gi": return new Suffix(2, 30, Format.BINARY_SI);
                case "Ti": return new Suffix(2, 40, Format.BINARY_SI);
                case "Pi": return new Suffix(2, 50, Format.BINARY_SI);
                case "Ei": return new Suffix(2, 60, Format.BINARY_SI);
                default:
                    if (s.length() > 1 && (s.charAt(0) == 'E' || s.charAt(0) == 'e')) {
                        try {
                            // ParseInt(64 bits) then int32(): the exponent wraps as Go's
                            return new Suffix(10, (int) Long.parseLong(s.substring(1)), Format.DECIMAL_EXPONENT);
                        } catch (NumberFormatException e) {
                            return null;
                        }
                    }
                    return null;
            }
        }

        /** constructBytes for base 10; "" where Go has no suffix (DecimalSI outside n..E). */
        static String decimal(int exponent, Format format) {
            if (format == Format.DECIMAL_EXPONENT) {
                return exponent == 0 ? "" : "e" + exponent;
            }
            return switch (exponent) {
                case -9 -> "n";
                case -6 -> "u";
                case -3 -> "m";
                case 3 -> "k";
                case 6 -> "M";
                case 9 -> "G";
                case 12 -> "T";
                case 15 -> "P";
                case 18 -> "E";
                default -> "";
            };
        }

        static String binary(int exponent) {
            return switch (exponent) {
                case 10 -> "Ki";
                case 20 -> "Mi";
                case 30 -> "Gi";
                case 40 -> "Ti";
                case 50 -> "Pi";
                case 60 -> "Ei";
                default -> "";
            };
        }
    }

    // ---- state (as Go holds it; GoSpew renders it)

    public boolean hasDec() {
        return d != null;
    }

    /** int64Amount.value (0 on the decimal path). */
    public long int64Value() {
        return value;
    }

    /** int64Amount.scale (a power of ten). */
    public int int64Scale() {
        return scale;
    }

    /** inf.Dec's unscaled value, or null on the int64 path. */
    public BigInteger decUnscaled() {
        return d == null ? null : d.unscaledValue();
    }

    /** inf.Dec's scale (digits after the point). */
    public int decScale() {
        return d == null ? 0 : d.scale();
    }

    /** The cached text ({@code s}), "" when none. */
    public String cached() {
        return s;
    }

    public Format format() {
        return format;
    }

    /** The exact value. */
    public BigDecimal asBigDecimal() {
        return d != null ? d : asDec(value, scale);
    }

    private static BigDecimal asDec(long value, int scale) {
        return new BigDecimal(BigInteger.valueOf(value), -scale);
    }

    // ---- arithmetic

    public boolean isZero() {
        return d != null ? d.signum() == 0 : value == 0;
    }

    public int sign() {
        return d != null ? d.signum() : Long.signum(value);
    }

    /** Go's Cmp. */
    @Override
    public int compareTo(GoQuantity y) {
        if (d == null && y.d == null) {
            return int64Cmp(value, scale, y.value, y.scale);
        }
        return asBigDecimal().compareTo(y.asBigDecimal());
    }

    /** Go's CmpInt64. */
    public int cmpInt64(long y) {
        return d != null ? d.compareTo(BigDecimal.valueOf(y)) : int64Cmp(value, scale, y, 0);
    }

    /** Go's Add on a copy: the sum, in the receiver's format unless the receiver is zero. */
    public GoQuantity add(GoQuantity y) {
        Format f = format;
        if (d == null && y.d == null) {
            if (value == 0) {
                f = y.format;
            }
            long[] out = new long[2];
            if (int64Add(value, scale, y.value, y.scale, out)) {
                return new GoQuantity(out[0], (int) out[1], null, "", f);
            }
        } else if (isZero()) {
            f = y.format;
        }
        return new GoQuantity(0, 0, asBigDecimal().add(y.asBigDecimal()), "", f);
    }

    /** Go's Sub on a copy. */
    public GoQuantity sub(GoQuantity y) {
        Format f = isZero() ? y.format : format;
        if (d == null && y.d == null) {
            long[] out = new long[2];
            // int64Amount.Sub negates in int64: MinInt64 stays itself, as in Go
            if (int64Add(value, scale, -y.value, y.scale, out)) {
                return new GoQuantity(out[0], (int) out[1], null, "", f);
            }
        }
        return new GoQuantity(0, 0, asBigDecimal().subtract(y.asBigDecimal()), "", f);
    }

    /** Go's RoundUp(scale) on a copy (scale as resource.Scale: -3 is milli); the value is unchanged when exact. */
    public GoQuantity roundUp(int toScale) {
        if (d != null) {
            return new GoQuantity(0, 0, d.setScale(-toScale, RoundingMode.UP), "", format);
        }
        if (scale >= toScale) {
            return this;
        }
        long[] r = negativeScaleInt64(value, toScale - scale);
        return new GoQuantity(r[0], toScale, null, "", format);
    }

    /** Go's Value(). */
    public long value() {
        return scaledValue(0);
    }

    /** Go's MilliValue(). */
    public long milliValue() {
        return scaledValue(MILLI);
    }

    /** Go's ScaledValue: rounded up, with Go's overflow behaviour (int64 wrap-around). */
    public long scaledValue(int toScale) {
        if (d == null) {
            if (scale < toScale) {
                return negativeScaleInt64(value, toScale - scale)[0];
            }
            // Go returns the product even when it overflowed (ScaledValue ignores the flag)
            long[] r = new long[1];
            positiveScaleInt64(value, scale - toScale, r);
            return r[0];
        }
        return scaledValue(d.unscaledValue(), d.scale(), -(long) toScale);
    }

    /** scale_int.go scaledValue; dif in Go's int (64 bits). */
    private static long scaledValue(BigInteger unscaled, long decScale, long newScale) {
        long dif = decScale - newScale;
        if (dif == 0) {
            return unscaled.longValue();
        }
        if (dif < 0) {
            return unscaled.longValue() * goFloatToInt64(Math.pow(10, -dif));
        }
        if (unscaled.compareTo(MAX_INT64) < 0 && dif < 19) {
            long divide = goFloatToInt64(Math.pow(10, dif));
            long v = unscaled.longValue();
            long result = v / divide;
            return v % divide != 0 ? result + 1 : result;
        }
        BigInteger divisor = BigInteger.TEN.pow((int) dif);
        BigInteger[] qr = unscaled.divideAndRemainder(divisor);
        if (qr[1].signum() < 0) {
            // big.Int DivMod is Euclidean
            qr[0] = qr[0].subtract(BigInteger.ONE);
            qr[1] = qr[1].add(divisor);
        }
        return qr[1].signum() != 0 ? qr[0].longValue() + 1 : qr[0].longValue();
    }

    /** int64(f) as Go compiles it on amd64: out of range is MinInt64. */
    private static long goFloatToInt64(double f) {
        if (Double.isNaN(f) || f >= 0x1p63 || f < -0x1p63) {
            return Long.MIN_VALUE;
        }
        return (long) f;
    }

    // ---- text

    /** Go's String(): the cached text, else CanonicalizeBytes. */
    @Override
    public String toString() {
        return s.isEmpty() ? canonical() : s;
    }

    /** CanonicalizeBytes (the cached text ignored). */
    public String canonical() {
        if (isZero()) {
            return "0";
        }
        Format f = format;
        BigDecimal roundedDec = null;
        long roundedValue = 0;
        int roundedScale = 0;
        if (f == Format.BINARY_SI) {
            if (cmpInt64(-1024) > 0 && cmpInt64(1024) < 0) {
                f = Format.DECIMAL_SI;
            } else if (d != null) {
                roundedDec = d.setScale(0, RoundingMode.UP);
                if (roundedDec.compareTo(d) != 0) {
                    f = Format.DECIMAL_SI;
                }
            } else if (scale >= 0) {
                roundedValue = value;
                roundedScale = scale;
            } else {
                long[] r = negativeScaleInt64(value, -scale);
                roundedValue = r[0];
                roundedScale = 0;
                if (r[1] == 0) {
                    f = Format.DECIMAL_SI;
                }
            }
        }
        if (f != Format.BINARY_SI) {
            return d != null ? decCanonical(d, f) : int64Canonical(value, scale, f);
        }
        if (roundedDec != null) {
            return dec1024(roundedDec);
        }
        // int64Amount.AsCanonicalBase1024Bytes
        long[] v = new long[1];
        if (roundedScale < 0) {
            v[0] = negativeScaleInt64(roundedValue, -roundedScale)[0];
        } else if (!positiveScaleInt64(roundedValue, roundedScale, v)) {
            return dec1024(asDec(roundedValue, roundedScale).setScale(0, RoundingMode.UP));
        }
        long amount = v[0];
        boolean negative = amount < 0;
        if (negative) {
            amount = -amount;
        }
        int times = 0;
        while (amount >= 1024 && amount % 1024 == 0) {
            times++;
            amount /= 1024;
        }
        return (negative ? -amount : amount) + Suffix.binary(times * 10);
    }

    private static String dec1024(BigDecimal rounded) {
        BigInteger amount = rounded.setScale(0, RoundingMode.UP).unscaledValue();
        int times = 0;
        while (amount.signum() != 0) {
            BigInteger[] qr = amount.divideAndRemainder(K1024);
            if (qr[1].signum() != 0) {
                break;
            }
            times++;
            amount = qr[0];
        }
        return amount + Suffix.binary(times * 10);
    }

    /** int64Amount.AsCanonicalBytes with the suffix. */
    private static String int64Canonical(long value, int scale, Format f) {
        long amount = value;
        boolean negative = amount < 0;
        if (negative) {
            amount = -amount;
        }
        int times = 0;
        while (amount >= 10 && amount % 10 == 0) {
            times++;
            amount /= 10;
        }
        if (negative) {
            amount = -amount;
        }
        int exponent = scale + times;
        long[] r = new long[1];
        switch (exponent % 3) {
            case 1, -2 -> {
                if (!int64MultiplyScale(amount, 10, r)) {
                    return decCanonical(asDec(value, scale), f);
                }
                amount = r[0];
                exponent = exponent - 1;
            }
            case 2, -1 -> {
                if (!int64MultiplyScale(amount, 100, r)) {
                    return decCanonical(asDec(value, scale), f);
                }
                amount = r[0];
                exponent = exponent - 2;
            }
            default -> {
            }
        }
        return amount + Suffix.decimal(exponent, f);
    }

    /** infDecAmount.AsCanonicalBytes with the suffix. */
    private static String decCanonical(BigDecimal dec, Format f) {
        BigInteger amount = dec.unscaledValue();
        int exponent = -dec.scale();
        int times = 0;
        while (amount.signum() != 0) {
            BigInteger[] qr = amount.divideAndRemainder(BigInteger.TEN);
            if (qr[1].signum() != 0) {
                break;
            }
            times++;
            amount = qr[0];
        }
        exponent += times;
        while (exponent % 3 != 0) {
            amount = amount.multiply(BigInteger.TEN);
            exponent--;
        }
        return amount + Suffix.decimal(exponent, f);
    }

    // ---- math.go

    private static boolean int64Multiply(long a, long b, long[] out) {
        if (a == 0 || b == 0 || a == 1 || b == 1) {
            out[0] = a * b;
            return true;
        }
        if (a == Long.MIN_VALUE || b == Long.MIN_VALUE) {
            return false;
        }
        long c = a * b;
        out[0] = c;
        return c / b == a;
    }

    /** int64MultiplyScale (and its 10/100/1000 variants, which are the same rule). */
    private static boolean int64MultiplyScale(long a, long b, long[] out) {
        if (a == 0 || a == 1) {
            out[0] = a * b;
            return true;
        }
        if (a == Long.MIN_VALUE && b != 1) {
            out[0] = 0;
            return false;
        }
        long c = a * b;
        out[0] = c;
        return c / b == a;
    }

    private static boolean int64AddValues(long a, long b, long[] out) {
        long c = a + b;
        if (a > 0 && b > 0 && c < 0) {
            return false;
        }
        if (a < 0 && b < 0 && (c > 0 || (a == Long.MIN_VALUE && b == Long.MIN_VALUE))) {
            return false;
        }
        out[0] = c;
        return true;
    }

    private static boolean positiveScaleInt64(long base, int scale, long[] out) {
        switch (scale) {
            case 0 -> {
                out[0] = base;
                return true;
            }
            case 1 -> {
                return int64MultiplyScale(base, 10, out);
            }
            case 2 -> {
                return int64MultiplyScale(base, 100, out);
            }
            case 3 -> {
                return int64MultiplyScale(base, 1000, out);
            }
            case 6 -> {
                return int64MultiplyScale(base, 1_000_000, out);
            }
            case 9 -> {
                return int64MultiplyScale(base, 1_000_000_000, out);
            }
            default -> {
                long v = base;
                long[] r = new long[1];
                for (int i = 0; i < scale; i++) {
                    if (!int64MultiplyScale(v, 10, r)) {
                        out[0] = 0;
                        return false;
                    }
                    v = r[0];
                }
                out[0] = v;
                return true;
            }
        }
    }

    /** negativeScaleInt64: {result, exact ? 1 : 0}, rounded away from zero. */
    private static long[] negativeScaleInt64(long base, int scale) {
        if (scale == 0) {
            return new long[] { base, 1 };
        }
        long v = base;
        boolean fraction = false;
        for (int i = 0; i < scale; i++) {
            if (!fraction && v % 10 != 0) {
                fraction = true;
            }
            v = v / 10;
            if (v == 0) {
                if (fraction) {
                    return new long[] { base > 0 ? 1 : -1, 0 };
                }
                return new long[] { 0, 1 };
            }
        }
        if (fraction) {
            v = base > 0 ? v + 1 : v - 1;
        }
        return new long[] { v, fraction ? 0 : 1 };
    }

    /** int64Amount.Add: out = {value, scale}; false where Go falls back to inf.Dec. */
    private static boolean int64Add(long av, int as, long bv, int bs, long[] out) {
        long[] r = new long[1];
        if (bv == 0) {
            out[0] = av;
            out[1] = as;
            return true;
        }
        if (av == 0) {
            out[0] = bv;
            out[1] = bs;
            return true;
        }
        if (as == bs) {
            if (!int64AddValues(av, bv, r)) {
                return false;
            }
            out[0] = r[0];
            out[1] = as;
            return true;
        }
        if (as > bs) {
            if (!positiveScaleInt64(av, as - bs, r) || !int64AddValues(r[0], bv, r)) {
                return false;
            }
            out[0] = r[0];
            out[1] = bs;
            return true;
        }
        if (!positiveScaleInt64(bv, bs - as, r) || !int64AddValues(av, r[0], r)) {
            return false;
        }
        out[0] = r[0];
        out[1] = as;
        return true;
    }

    private static long pow10(int n) {
        long p = 1;
        for (int i = 0; i < n; i++) {
            p *= 10;
        }
        return p;
    }

    /** int64Amount.Cmp. */
    private static int int64Cmp(long av, int as, long bv, int bs) {
        if (as > bs) {
            int by = as - bs;
            if (by >= 18 || by < 0) {
                return asDec(av, as).compareTo(asDec(bv, bs));
            }
            long div = pow10(by);
            long result = bv / div;
            long remainder = bv % div;
            if (result == av) {
                return remainder == 0 ? 0 : remainder > 0 ? -1 : 1;
            }
            bv = result;
        } else if (as < bs) {
            int by = bs - as;
            if (by >= 18 || by < 0) {
                return asDec(av, as).compareTo(asDec(bv, bs));
            }
            long div = pow10(by);
            long result = av / div;
            long remainder = av % div;
            if (result == bv) {
                return remainder == 0 ? 0 : remainder > 0 ? 1 : -1;
            }
            av = result;
        }
        return Long.compare(av, bv);
    }

    /** Equal values (Go's Cmp == 0); format and cached text are not compared. */
    @Override
    public boolean equals(Object o) {
        return o instanceof GoQuantity q && compareTo(q) == 0;
    }

    @Override
    public int hashCode() {
        return Objects.hashCode(asBigDecimal().stripTrailingZeros());
    }
}
