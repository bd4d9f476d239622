package io.qkcm.controller.hash;

import io.qkcm.controller.util.GoQuantity;

/**
 * The text Go's {@code resource.Quantity.MarshalJSON} writes for a quantity decoded from JSON
 * ({@code ParseQuantity}: the input kept when it looks canonical, else {@code CanonicalizeBytes}), optionally
 * after {@code RoundUp(scale)} (which {@code SetDefaults_ResourceList} applies with milli scale). The
 * arithmetic is the kit's {@link GoQuantity}; text Go cannot parse is left as it is.
 */
public final class GoQuantityJson {

    private GoQuantityJson() {
    }

    /** json.Marshal of the quantity json.Unmarshal makes of {@code text}; text Go cannot parse is returned as is. */
    public static String marshal(String text) {
        GoQuantity q = parse(text);
        return q == null ? text : q.toString();
    }

    /** json.Marshal after {@code RoundUp(scale)} (scale as Go's resource.Scale: -3 is milli). */
    public static String roundUpAndMarshal(String text, int scale) {
        GoQuantity q = parse(text);
        return q == null ? text : q.roundUp(scale).toString();
    }

    private static GoQuantity parse(String text) {
        try {
            return GoQuantity.parse(text.trim());
        } catch (RuntimeException e) {
            return null;
        }
    }
}
