package io.qkcm.controller.tainteviction;

import io.qkcm.controller.TaintTolerations;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import io.fabric8.kubernetes.api.model.Taint;
import io.fabric8.kubernetes.api.model.Toleration;

/**
 * The taint and toleration arithmetic of the taint manager: upstream's getNoExecuteTaints,
 * {@code v1helper.GetMatchingTolerations} with {@code Toleration.ToleratesTaint}, and getMinTolerationTime.
 */
final class Tolerations {

    /** getMinTolerationTime's answer for tolerations that tolerate forever (any negative duration). */
    static final Duration FOREVER = Duration.ofNanos(-1);

    private Tolerations() {
    }

    /** The answer of GetMatchingTolerations: whether every taint is tolerated, and by which tolerations. */
    record Match(boolean allTolerated, List<Toleration> used) {
    }

    /** Upstream's getNoExecuteTaints: the NoExecute taints, in order. */
    static List<Taint> noExecuteTaints(List<Taint> taints) {
        List<Taint> result = new ArrayList<>();
        if (taints != null) {
            for (Taint t : taints) {
                if ("NoExecute".equals(t.getEffect())) {
                    result.add(t);
                }
            }
        }
        return result;
    }

    /**
     * Upstream's GetMatchingTolerations: every taint must be tolerated; the first toleration that
     * tolerates each taint is the one used.
     */
    static Match matchingTolerations(List<Taint> taints, List<Toleration> tolerations) {
        if (taints.isEmpty()) {
            return new Match(true, List.of());
        }
        if (tolerations == null || tolerations.isEmpty()) {
            return new Match(false, List.of());
        }
        List<Toleration> used = new ArrayList<>();
        for (Taint taint : taints) {
            Toleration match = null;
            for (Toleration t : tolerations) {
                if (toleratesTaint(t, taint)) {
                    match = t;
                    break;
                }
            }
            if (match == null) {
                return new Match(false, List.of());
            }
            used.add(match);
        }
        return new Match(true, used);
    }

    /** v1.Toleration.ToleratesTaint. */
    static boolean toleratesTaint(Toleration t, Taint taint) {
        return TaintTolerations.toleratesTaint(t, taint);
    }

    /**
     * Upstream's getMinTolerationTime: zero without tolerations or when one has tolerationSeconds ≤ 0,
     * {@link #FOREVER} (negative) when none has tolerationSeconds, else the smallest. The seconds become
     * nanoseconds in a long as Go's {@code time.Duration(s) * time.Second} does, overflow included, so
     * a huge tolerationSeconds behaves as it does upstream.
     */
    static Duration minTolerationTime(List<Toleration> tolerations) {
        if (tolerations.isEmpty()) {
            return Duration.ZERO;
        }
        long min = Long.MAX_VALUE;
        for (Toleration t : tolerations) {
            Long seconds = t.getTolerationSeconds();
            if (seconds != null) {
                if (seconds <= 0) {
                    return Duration.ZERO;
                }
                if (seconds < min) {
                    min = seconds;
                }
            }
        }
        if (min == Long.MAX_VALUE) {
            return FOREVER;
        }
        return Duration.ofNanos(min * 1_000_000_000L);
    }

}
