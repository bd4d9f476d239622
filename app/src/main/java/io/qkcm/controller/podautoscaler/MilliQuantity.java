package io.qkcm.controller.podautoscaler;

/**
 * The text of Go's {@code resource.NewMilliQuantity(v, format).String()}: the canonical form of a
 * milli-value, DecimalSI (m, "", k, M, G, T, P, E) or, for memory, BinarySI (Ki, Mi, ...) when the value
 * is whole and at least 1024.
 */
final class MilliQuantity {

    private static final String[] DECIMAL = {"m", "", "k", "M", "G", "T", "P", "E"};
    private static final String[] BINARY = {"", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};

    private MilliQuantity() {
    }

    static String format(long milli, boolean binarySI) {
        if (binarySI && milli % 1000 == 0) {
            long whole = milli / 1000;
            if (whole <= -1024 || whole >= 1024) {
                int exp = 0;
                while (whole != 0 && whole % 1024 == 0 && exp < BINARY.length - 1) {
                    whole /= 1024;
                    exp++;
                }
                return whole + BINARY[exp];
            }
        }
        if (milli == 0) {
            return "0";
        }
        long mantissa = milli;
        int exp = 0;
        while (mantissa % 1000 == 0 && exp < DECIMAL.length - 1) {
            mantissa /= 1000;
            exp++;
        }
        return mantissa + DECIMAL[exp];
    }
}
