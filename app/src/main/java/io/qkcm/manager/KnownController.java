package io.qkcm.manager;

import java.util.List;
import java.util.Optional;

import io.qkcm.runtime.josdk.Controller;
import io.qkcm.runtime.josdk.ControllerContext;

/**
 * One entry of upstream kube-controller-manager's controller table (v1.34): the canonical name, the
 * old short aliases {@code --controllers} still accepts, and when upstream runs it. {@code init} is
 * empty for controllers qkcm does not implement yet: those are reported at startup, never pretended.
 */
public record KnownController(
        String name,
        List<String> aliases,
        boolean disabledByDefault,
        List<String> requiredFeatureGates,
        boolean cloudProvider,
        Optional<Initializer> init,
        Optional<String> partial) {

    /** Builds a controller; called once per process, before the shared informers start. */
    @FunctionalInterface
    public interface Initializer {
        Controller create(ControllerContext context);
    }

    /** Implemented in part: {@link #partial} says what is missing (shown at startup and in --help). */
    public boolean isPartial() {
        return partial.isPresent();
    }

    public boolean implemented() {
        return init.isPresent();
    }
}
