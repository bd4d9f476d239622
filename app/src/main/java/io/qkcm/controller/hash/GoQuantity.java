package io.qkcm.controller.hash;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.RoundingMode;

/**
 * The internal state of a Go {@code resource.Quantity} after {@code resource.ParseQuantity} (what the
 * controller sees after decoding an object from the API server), as needed to render the struct the
 * way spew does: {@code i} (int64Amount value/scale), {@code d} (inf.Dec, only on the slow path),
 * {@code s} (the cached string, set when the input is already canonical) and {@code Format}.
 * A faithful port of apimachinery v0.34 quantity.go {@code ParseQuantity}.
 */
public record GoQuantity(long value, int scale, BigInteger decUnscaled, int decScale, String cached, String format) {

    static final String DECIMAL_SI = "DecimalSI";
    static final String BINARY_SI = "BinarySI";
    static final String DECIMAL_EXPONENT = "DecimalExponent";
    private static final BigInteger MAX_ALLOWED = BigInteger.valueOf(Long.MAX_VALUE);

    public boolean hasDec() {
        return decUnscaled != null;
    }

    public static GoQuantity parse(String str) {
        if (str.isEmpty()) {
            throw new IllegalArgumentException("quantities must match the regular expression");
        }
        if (str.equals("0")) {
            return new GoQuantity(0, 0, null, 0, "0", DECIMAL_SI);
        }
        // parseQuantityString
        boolean positive = true;
        int pos = 0;
        int end = str.length();
        if (str.charAt(0) == '-') {
            positive = false;
            pos++;
        } else if (str.charAt(0) == '+') {
            pos++;
        }
        String num;
        String denom = "";
        String value;
        String suf;
        while (true) {
            if (pos >= end) {
                return finish(str, positive, "0", "0", "", "");
            }
            if (str.charAt(pos) == '0') {
                pos++;
            } else {
                break;
            }
        }
        int i = pos;
        while (i < end && isDigit(str.charAt(i))) {
            i++;
        }
        if (i >= end) {
            return finish(str, positive, str.substring(0, end), str.substring(pos, end), "", "");
        }
        num = str.substring(pos, i);
        pos = i;
        if (num.isEmpty()) {
            num = "0";
        }
        if (pos < end && str.charAt(pos) == '.') {
            pos++;
            i = pos;
            while (i < end && isDigit(str.charAt(i))) {
                i++;
            }
            if (i >= end) {
                return finish(str, positive, str.substring(0, end), num, str.substring(pos, end), "");
            }
            denom = str.substring(pos, i);
            pos = i;
        }
        value = str.substring(0, pos);
        suf = str.substring(pos);
        return finish(str, positive, value, num, denom, suf);
    }

    private static boolean isDigit(char c) {
        return c >= '0' && c <= '9';
    }

    private static GoQuantity finish(String str, boolean positive, String value, String num, String denom, String suf) {
        int base;
        int exponent;
        String format;
        switch (suf) {
            case "" -> { base = 10; exponent = 0; format = DECIMAL_SI; }
            case "n" -> { base = 10; exponent = -9; format = DECIMAL_SI; }
            case "u" -> { base = 10; exponent = -6; format = DECIMAL_SI; }
            case "m" -> { base = 10; exponent = -3; format = DECIMAL_SI; }
            case "k" -> { base = 10; exponent = 3; format = DECIMAL_SI; }
            case "M" -> { base = 10; exponent = 6; format = DECIMAL_SI; }
            case "G" -> { base = 10; exponent = 9; format = DECIMAL_SI; }
            case "T" -> { base = 10; exponent = 12; format = DECIMAL_SI; }
            case "P" -> { base = 10; exponent = 15; format = DECIMAL_SI; }
            case "E" -> { base = 10; exponent = 18; format = DECIMAL_SI; }
            case "Ki" -> { base = 2; exponent = 10; format = BINARY_SI; }
            case "Mi" -> { base = 2; exponent = 20; format = BINARY_SI; }
            case "Gi" -> { base = 2; exponent = 30; format = BINARY_SI; }
            case "Ti" -> { base = 2; exponent = 40; format = BINARY_SI; }
            case "Pi" -> { base = 2; exponent = 50; format = BINARY_SI; }
            case "Ei" -> { base = 2; exponent = 60; format = BINARY_SI; }
            default -> {
                if (suf.length() > 1 && (suf.charAt(0) == 'e' || suf.charAt(0) == 'E')) {
                    base = 10;
                    exponent = Integer.parseInt(suf.substring(1).replace("+", ""));
                    format = DECIMAL_EXPONENT;
                } else {
                    throw new IllegalArgumentException("unable to parse quantity's suffix: " + str);
                }
            }
        }
        int precision = 0;
        int scale = 0;
        long mantissa = 1;
        if (!format.equals(BINARY_SI)) {
            scale = exponent;
            precision = 18 - (num.length() + denom.length());
        } else {
            if (exponent >= 0 && denom.isEmpty()) {
                mantissa = mantissa << exponent;
                precision = 15 - num.length() - (int) ((float) exponent * 3 / 10) - 1;
            } else {
                precision = -1;
            }
        }
        if (precision >= 0) {
            scale -= denom.length();
            if (scale >= -9) {
                String shifted = num + denom;
                long v;
                try {
                    v = Long.parseLong(shifted);
                } catch (NumberFormatException e) {
                    throw new IllegalArgumentException("quantities must match the regular expression: " + str);
                }
                Long result = multiply(v, mantissa);
                if (result != null) {
                    long r = positive ? result : -result;
                    boolean canonical;
                    if (format.equals(BINARY_SI)) {
                        canonical = exponent % 10 == 0 && (v & 0x07) != 0;
                    } else {
                        canonical = scale % 3 == 0 && !shifted.endsWith("000") && shifted.charAt(0) != '0';
                    }
                    return new GoQuantity(r, scale, null, 0, canonical ? str : "", format);
                }
            }
        }
        // slow path: inf.Dec
        BigDecimal amount = new BigDecimal(value);
        if (base == 10) {
            amount = amount.scaleByPowerOfTen(exponent);
        } else {
            amount = amount.multiply(new BigDecimal(BigInteger.ONE.shiftLeft(exponent)));
        }
        int sign = amount.signum();
        amount = amount.abs();
        int decScale = amount.scale();
        BigInteger unscaled = amount.unscaledValue();
        if (unscaled.signum() != 0 || unscaled.bitLength() > 63) {
            BigDecimal rounded = amount.setScale(9, RoundingMode.UP);
            unscaled = rounded.unscaledValue();
            decScale = 9;
            amount = rounded;
        }
        if (format.equals(BINARY_SI) && amount.compareTo(new BigDecimal(MAX_ALLOWED)) > 0) {
            unscaled = MAX_ALLOWED;
            decScale = 0;
            amount = new BigDecimal(MAX_ALLOWED);
        }
        if (format.equals(BINARY_SI) && amount.compareTo(BigDecimal.ONE) < 0 && amount.signum() > 0) {
            format = DECIMAL_SI;
        }
        if (sign < 0) {
            unscaled = unscaled.negate();
        }
        return new GoQuantity(0, 0, unscaled, decScale, "", format);
    }

    private static Long multiply(long a, long b) {
        if (a == 0 || b == 0 || a == 1 || b == 1) {
            return a * b;
        }
        if (a == Long.MIN_VALUE || b == Long.MIN_VALUE) {
            return null;
        }
        long c = a * b;
        return c / b == a ? c : null;
    }
}
