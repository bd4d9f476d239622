package io.qkcm.controller.disruption;

import io.fabric8.kubernetes.api.model.IntOrString;

/** apimachinery's intstr.GetScaledValueFromIntOrPercent, with its error messages. */
final class IntOrPercent {

    private IntOrPercent() {
    }

    /** Whether the value is the integer form (intstr.Int); a string is the percentage form. */
    static boolean isInt(IntOrString v) {
        return v.getStrVal() == null && v.getIntVal() != null;
    }

    /**
     * An integer as is; a percentage of {@code total}, rounded up when {@code roundUp} (the disruption
     * controller always rounds up: 34% of 3 is 2).
     */
    static int scaledValue(IntOrString v, int total, boolean roundUp) {
        if (v == null) {
            throw new IllegalArgumentException("nil value for IntOrString");
        }
        if (isInt(v)) {
            return v.getIntVal();
        }
        String s = v.getStrVal();
        if (s == null) {
            throw new IllegalArgumentException("invalid value for IntOrString: invalid type: neither int nor percentage");
        }
        if (!s.endsWith("%")) {
            throw new IllegalArgumentException("invalid value for IntOrString: invalid type: string is not a percentage");
        }
        int percent;
        try {
            percent = Integer.parseInt(s.substring(0, s.length() - 1));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("invalid value for IntOrString: invalid value \"" + s
                    + "\": strconv.Atoi: parsing \"" + s.substring(0, s.length() - 1) + "\": invalid syntax");
        }
        double value = (double) percent * (double) total / 100;
        return (int) (roundUp ? Math.ceil(value) : Math.floor(value));
    }
}
