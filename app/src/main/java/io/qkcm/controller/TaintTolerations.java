package io.qkcm.controller;

import io.fabric8.kubernetes.api.model.Taint;
import io.fabric8.kubernetes.api.model.Toleration;

/** The API's toleration rule (k8s.io/api core/v1 {@code Toleration.ToleratesTaint}), shared by the controllers that read taints. */
public final class TaintTolerations {

    private TaintTolerations() {
    }

    /** v1.Toleration.ToleratesTaint: effect and key when set, then Equal (the default) or Exists. */
    public static boolean toleratesTaint(Toleration t, Taint taint) {
        String effect = nz(t.getEffect());
        if (!effect.isEmpty() && !effect.equals(nz(taint.getEffect()))) {
            return false;
        }
        String key = nz(t.getKey());
        if (!key.isEmpty() && !key.equals(nz(taint.getKey()))) {
            return false;
        }
        return switch (nz(t.getOperator())) {
            case "", "Equal" -> nz(t.getValue()).equals(nz(taint.getValue()));
            case "Exists" -> true;
            default -> false;
        };
    }

    private static String nz(String s) {
        return s == null ? "" : s;
    }
}
