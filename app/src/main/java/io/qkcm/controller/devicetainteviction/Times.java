package io.qkcm.controller.devicetainteviction;

import java.time.Instant;
import java.time.OffsetDateTime;

/** metav1.Time as this controller compares it: an instant, or null when unset. */
final class Times {

    private Times() {
    }

    static Instant parse(String t) {
        if (t == null || t.isEmpty()) {
            return null;
        }
        return OffsetDateTime.parse(t).toInstant();
    }
}
