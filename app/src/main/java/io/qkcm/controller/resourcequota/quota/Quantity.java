package io.qkcm.controller.resourcequota.quota;

import java.math.BigDecimal;
import java.math.BigInteger;
import java.math.RoundingMode;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The arithmetic of apimachinery's {@code resource.Quantity} that quota needs: a value (rounded up to
 * nano precision on parse, as {@code ParseQuantity}) and its format (DecimalSI, BinarySI or
 * DecimalExponent, from the suffix it was written with). {@link #add} keeps Go's rule for the format
 * of a sum (the receiver's, or the addend's when the receiver is zero), and {@link #toString} is Go's
 * canonical form ({@code CanonicalizeBytes}): what the API server stores for the string we send, so
 * status.used reads as upstream's.
 */
public record Quantity(BigDecimal value, Format format) implements Comparable<Quantity> {

    public enum Format {
        DECIMAL_SI, BINARY_SI, DECIMAL_EXPONENT
    }

    /** A zero DecimalSI quantity ({@code resource.Quantity{Format: resource.DecimalSI}}). */
    public static final Quantity ZERO = new Quantity(BigDecimal.ZERO, Format.DECIMAL_SI);

    private static final Pattern SYNTAX = Pattern.compile("^([+-]?[0-9]*\\.?[0-9]*)([a-zA-Z]*[-+]?[0-9]*)$");
    private static final BigDecimal K1024 = BigDecimal.valueOf(1024);

    public Quantity {
        value = value.stripTrailingZeros();
        if (value.signum() == 0) {
            value = BigDecimal.ZERO;
        }
    }

    /** {@code resource.NewQuantity(n, DecimalSI)}. */
    public static Quantity of(long n) {
        return new Quantity(BigDecimal.valueOf(n), Format.DECIMAL_SI);
    }

    /** {@code resource.ParseQuantity}; IllegalArgumentException on what the API server would not accept. */
    public static Quantity parse(String s) {
        String str = s.trim();
        Matcher m = SYNTAX.matcher(str);
        if (str.isEmpty() || !m.matches() || m.group(1).isEmpty() || m.group(1).equals(".")
                || m.group(1).equals("+") || m.group(1).equals("-")) {
            throw new IllegalArgumentException("quantities must match the regular expression: " + s);
        }
        BigDecimal number = new BigDecimal(m.group(1).startsWith("+") ? m.group(1).substring(1) : m.group(1));
        String suffix = m.group(2);
        Format format;
        BigDecimal v;
        switch (suffix) {
            case "" -> { format = Format.DECIMAL_SI; v = number; }
            case "n" -> { format = Format.DECIMAL_SI; v = number.scaleByPowerOfTen(-9); }
            case "u" -> { format = Format.DECIMAL_SI; v = number.scaleByPowerOfTen(-6); }
            case "m" -> { format = Format.DECIMAL_SI; v = number.scaleByPowerOfTen(-3); }
            case "k" -> { format = Format.DECIMAL_SI; v = number.scaleByPowerOfTen(3); }
            case "M" -> { format = Format.DECIMAL_SI; v = number.scaleByPowerOfTen(6); }
            case "G" -> { format = Format.DECIMAL_SI; v = number.scaleByPowerOfTen(9); }
            case "T" -> { format = Format.DECIMAL_SI; v = number.scaleByPowerOfTen(12); }
            case "P" -> { format = Format.DECIMAL_SI; v = number.scaleByPowerOfTen(15); }
            case "E" -> { format = Format.DECIMAL_SI; v = number.scaleByPowerOfTen(18); }
            case "Ki" -> { format = Format.BINARY_SI; v = number.multiply(K1024.pow(1)); }
            case "Mi" -> { format = Format.BINARY_SI; v = number.multiply(K1024.pow(2)); }
            case "Gi" -> { format = Format.BINARY_SI; v = number.multiply(K1024.pow(3)); }
            case "Ti" -> { format = Format.BINARY_SI; v = number.multiply(K1024.pow(4)); }
            case "Pi" -> { format = Format.BINARY_SI; v = number.multiply(K1024.pow(5)); }
            case "Ei" -> { format = Format.BINARY_SI; v = number.multiply(K1024.pow(6)); }
            default -> {
                if ((suffix.startsWith("e") || suffix.startsWith("E")) && suffix.length() > 1) {
                    int exp;
                    try {
                        exp = Integer.parseInt(suffix.substring(1));
                    } catch (NumberFormatException e) {
                        throw new IllegalArgumentException("unable to parse quantity's suffix: " + s);
                    }
                    format = Format.DECIMAL_EXPONENT;
                    v = number.scaleByPowerOfTen(exp);
                } else {
                    throw new IllegalArgumentException("unable to parse quantity's suffix: " + s);
                }
            }
        }
        // ParseQuantity keeps nano precision at most, rounding away from zero
        if (v.scale() > 9) {
            v = v.setScale(9, RoundingMode.UP);
        }
        return new Quantity(v, format);
    }

    /** A fabric8 quantity as Go would have decoded it. */
    public static Quantity of(io.fabric8.kubernetes.api.model.Quantity q) {
        String amount = q.getAmount() == null ? "" : q.getAmount();
        String suffix = q.getFormat() == null ? "" : q.getFormat();
        return parse(amount + suffix);
    }

    /** The quantity to write into an object: Go's canonical string. */
    public io.fabric8.kubernetes.api.model.Quantity toFabric8() {
        return new io.fabric8.kubernetes.api.model.Quantity(toString());
    }

    /** {@code q.Add(y)} on a copy: the sum, in the receiver's format unless the receiver is zero. */
    public Quantity add(Quantity y) {
        Format f = value.signum() == 0 ? y.format : format;
        return new Quantity(value.add(y.value), f);
    }

    public Quantity sub(Quantity y) {
        Format f = value.signum() == 0 ? y.format : format;
        return new Quantity(value.subtract(y.value), f);
    }

    public boolean isZero() {
        return value.signum() == 0;
    }

    /** {@code Cmp}: by value only. */
    @Override
    public int compareTo(Quantity o) {
        return value.compareTo(o.value);
    }

    /** Go's {@code CanonicalizeBytes}. */
    @Override
    public String toString() {
        if (value.signum() == 0) {
            return "0";
        }
        Format f = format;
        if (f == Format.BINARY_SI) {
            if (value.abs().compareTo(K1024) < 0 || value.stripTrailingZeros().scale() > 0) {
                // small or fractional values are shown as DecimalSI, never rounded
                f = Format.DECIMAL_SI;
            }
        }
        if (f == Format.BINARY_SI) {
            BigInteger amount = value.toBigIntegerExact();
            int exponent = 0;
            BigInteger k = BigInteger.valueOf(1024);
            while (exponent < 60) {
                BigInteger[] qr = amount.divideAndRemainder(k);
                if (qr[1].signum() != 0) {
                    break;
                }
                amount = qr[0];
                exponent += 10;
            }
            String suffix = switch (exponent) {
                case 0 -> "";
                case 10 -> "Ki";
                case 20 -> "Mi";
                case 30 -> "Gi";
                case 40 -> "Ti";
                case 50 -> "Pi";
                default -> "Ei";
            };
            return amount + suffix;
        }
        BigDecimal stripped = value.stripTrailingZeros();
        BigInteger mantissa = stripped.unscaledValue();
        int exponent = -stripped.scale();
        // the exponent goes down to a multiple of three (the mantissa grows)
        int down = Math.floorMod(exponent, 3);
        if (down != 0) {
            mantissa = mantissa.multiply(BigInteger.TEN.pow(down));
            exponent -= down;
        }
        String suffix;
        if (f == Format.DECIMAL_EXPONENT) {
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
                default -> "e" + exponent;
            };
        }
        return mantissa + suffix;
    }
}
