package io.qkcm.endpointslice;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

import io.qkcm.controller.util.endpointslice.StaleInformerCacheException;

/** utilerrors.NewAggregate: one error prints as itself, several as "[a, b]" (duplicates once). */
public final class AggregateException extends RuntimeException {

    private final List<Exception> errors;

    private AggregateException(List<Exception> errors) {
        super(message(errors), errors.get(0));
        this.errors = List.copyOf(errors);
    }

    /** Throws nothing for no errors. */
    public static void throwIfAny(List<Exception> errors) {
        if (errors.isEmpty()) {
            return;
        }
        List<Exception> flat = new ArrayList<>();
        for (Exception e : errors) {
            if (e instanceof AggregateException a) {
                flat.addAll(a.errors);
            } else {
                flat.add(e);
            }
        }
        throw new AggregateException(flat);
    }

    public List<Exception> errors() {
        return errors;
    }

    /** Whether any of the aggregated errors is a stale-cache error. */
    public boolean isStale() {
        return errors.stream().anyMatch(StaleInformerCacheException::isStale);
    }

    private static String message(List<Exception> errors) {
        if (errors.size() == 1) {
            return errors.get(0).getMessage();
        }
        Set<String> seen = new LinkedHashSet<>();
        for (Exception e : errors) {
            seen.add(e.getMessage());
        }
        if (seen.size() == 1) {
            return seen.iterator().next();
        }
        return "[" + String.join(", ", seen) + "]";
    }
}
