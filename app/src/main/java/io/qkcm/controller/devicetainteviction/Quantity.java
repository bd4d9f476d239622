package io.qkcm.controller.devicetainteviction;

import java.math.BigDecimal;
import java.util.List;

import dev.cel.runtime.CelEvaluationException;
import dev.cel.runtime.CelEvaluationExceptionBuilder;
import dev.cel.runtime.CelFunctionBinding;
import io.qkcm.controller.util.GoQuantity;

/**
 * A CEL {@code kubernetes.Quantity} value and Kubernetes' quantity library (k8s.io/apiserver/pkg/cel/library
 * quantity.go) on it: {@code quantity()}, {@code isQuantity()}, comparisons, arithmetic and conversions, with
 * resource.Quantity's semantics (the kit's {@link GoQuantity}). Two quantities are equal when their values are.
 */
record Quantity(GoQuantity value) {

    @Override
    public boolean equals(Object o) {
        return o instanceof Quantity q && value.compareTo(q.value) == 0;
    }

    @Override
    public int hashCode() {
        BigDecimal d = value.asBigDecimal();
        return d.signum() == 0 ? 0 : d.stripTrailingZeros().hashCode();
    }

    @Override
    public String toString() {
        return value.toString();
    }

    /** Quantity.AsInt64: only an exact integer on the int64 path (a decimal amount never is). */
    Long asInt64() {
        if (value.hasDec()) {
            return null;
        }
        long v = value.int64Value();
        int scale = value.int64Scale();
        if (scale == 0) {
            return v;
        }
        if (scale < 0) {
            return null;
        }
        for (int i = 0; i < scale; i++) {
            try {
                v = Math.multiplyExact(v, 10L);
            } catch (ArithmeticException e) {
                return null;
            }
        }
        return v;
    }

    /** Quantity.AsApproximateFloat64: base times ten to the exponent. */
    double asApproximateFloat() {
        double base;
        int exponent;
        if (value.hasDec()) {
            base = new BigDecimal(value.decUnscaled()).doubleValue();
            exponent = -value.decScale();
        } else {
            base = value.int64Value();
            exponent = value.int64Scale();
        }
        if (exponent == 0) {
            return base;
        }
        return base * Double.parseDouble("1e" + exponent);
    }

    private static GoQuantity ofInt(long n) {
        // resource.NewQuantity(n, DecimalExponent)
        return GoQuantity.scaled(n, 0, GoQuantity.Format.DECIMAL_EXPONENT);
    }

    private static CelEvaluationException error(String message) {
        return CelEvaluationExceptionBuilder.newBuilder("%s", message).build();
    }

    static List<CelFunctionBinding> bindings() {
        return List.of(
                CelFunctionBinding.from("string_to_quantity", String.class, s -> {
                    try {
                        return new Quantity(GoQuantity.parse(s));
                    } catch (IllegalArgumentException e) {
                        throw error(e.getMessage());
                    }
                }),
                CelFunctionBinding.from("is_quantity_string", String.class, s -> {
                    try {
                        GoQuantity.parse(s);
                        return true;
                    } catch (IllegalArgumentException e) {
                        return false;
                    }
                }),
                CelFunctionBinding.from("quantity_get_float", Quantity.class, Quantity::asApproximateFloat),
                CelFunctionBinding.from("quantity_is_integer", Quantity.class, q -> q.asInt64() != null),
                CelFunctionBinding.from("quantity_get_int", Quantity.class, q -> {
                    Long v = q.asInt64();
                    if (v == null) {
                        throw error("cannot convert value to integer");
                    }
                    return v;
                }),
                CelFunctionBinding.from("quantity_sign", Quantity.class, q -> (long) q.value.sign()),
                CelFunctionBinding.from("quantity_is_greater_than", Quantity.class, Quantity.class,
                        (a, b) -> Integer.signum(a.value.compareTo(b.value)) == 1),
                CelFunctionBinding.from("quantity_is_less_than", Quantity.class, Quantity.class,
                        (a, b) -> Integer.signum(a.value.compareTo(b.value)) == -1),
                CelFunctionBinding.from("quantity_compare_to", Quantity.class, Quantity.class,
                        (a, b) -> (long) Integer.signum(a.value.compareTo(b.value))),
                CelFunctionBinding.from("quantity_add", Quantity.class, Quantity.class,
                        (a, b) -> new Quantity(a.value.add(b.value))),
                CelFunctionBinding.from("quantity_add_int", Quantity.class, Long.class,
                        (a, b) -> new Quantity(a.value.add(ofInt(b)))),
                CelFunctionBinding.from("quantity_sub", Quantity.class, Quantity.class,
                        (a, b) -> new Quantity(a.value.sub(b.value))),
                CelFunctionBinding.from("quantity_sub_int", Quantity.class, Long.class,
                        (a, b) -> new Quantity(a.value.sub(ofInt(b)))));
    }

}
