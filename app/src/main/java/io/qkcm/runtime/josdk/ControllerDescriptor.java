package io.qkcm.runtime.josdk;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * One controller of kube-controller-manager's table, as upstream's {@code ControllerDescriptor}
 * (cmd/kube-controller-manager/app/controller_descriptor.go) together with its start function: the canonical
 * name, the old short aliases {@code --controllers} still accepts, the client (ServiceAccount and user-agent)
 * name it uses, the feature gates it needs, whether it is off by default or needs a cloud provider, and how it
 * is built. A controller qkcm implements has its descriptor in its own package, beside the controller; the
 * manager's catalog is the ordered list of all descriptors. {@code start} is empty for controllers qkcm does
 * not implement yet: those are reported at startup, never pretended. {@code requiresSpecialHandling} is upstream's
 * flag of the same name, which only serviceaccount-token-controller sets: it mints the tokens the other
 * controllers' clients authenticate with, so it is built on the manager's own credentials (upstream's
 * rootClientBuilder), never on a ServiceAccount of its own.
 */
public record ControllerDescriptor(
        String name,
        List<String> aliases,
        String clientName,
        List<String> requiredFeatureGates,
        boolean disabledByDefault,
        boolean cloudProvider,
        Optional<Starter> start,
        Optional<String> partial,
        boolean requiresSpecialHandling) {

    /**
     * Builds the controller (upstream's start function minus the goroutine): reads the controller's flags and
     * concurrency from {@link ControllerContext#options()} once and passes them down. Called once per process,
     * on every replica, before the shared informers start; the controller's workers start only on the leader.
     * Returns null when the controller decides not to run (upstream's {@code enabled=false}, e.g.
     * {@code --enable-garbage-collector=false}).
     */
    @FunctionalInterface
    public interface Starter {
        Controller start(ControllerContext context);
    }

    public ControllerDescriptor {
        Objects.requireNonNull(name, "name");
        aliases = List.copyOf(aliases);
        clientName = clientName == null ? name : clientName;
        requiredFeatureGates = List.copyOf(requiredFeatureGates);
    }

    /** Without special handling (every controller but serviceaccount-token-controller). */
    public ControllerDescriptor(String name, List<String> aliases, String clientName, List<String> requiredFeatureGates,
            boolean disabledByDefault, boolean cloudProvider, Optional<Starter> start, Optional<String> partial) {
        this(name, aliases, clientName, requiredFeatureGates, disabledByDefault, cloudProvider, start, partial, false);
    }

    /** A descriptor of {@code name}, its client name the same, no alias, on by default, not implemented. */
    public static ControllerDescriptor of(String name) {
        return new ControllerDescriptor(name, List.of(), name, List.of(), false, false, Optional.empty(), Optional.empty());
    }

    public ControllerDescriptor withAliases(String... aliases) {
        return new ControllerDescriptor(name, List.of(aliases), clientName, requiredFeatureGates, disabledByDefault,
                cloudProvider, start, partial, requiresSpecialHandling);
    }

    public ControllerDescriptor withClientName(String clientName) {
        return new ControllerDescriptor(name, aliases, clientName, requiredFeatureGates, disabledByDefault,
                cloudProvider, start, partial, requiresSpecialHandling);
    }

    public ControllerDescriptor requiringFeatureGates(String... gates) {
        return new ControllerDescriptor(name, aliases, clientName, List.of(gates), disabledByDefault, cloudProvider,
                start, partial, requiresSpecialHandling);
    }

    /** Off unless {@code --controllers} names it (upstream's DisabledByDefault). */
    public ControllerDescriptor offByDefault() {
        return new ControllerDescriptor(name, aliases, clientName, requiredFeatureGates, true, cloudProvider, start,
                partial, requiresSpecialHandling);
    }

    public ControllerDescriptor requiringCloudProvider() {
        return new ControllerDescriptor(name, aliases, clientName, requiredFeatureGates, disabledByDefault, true,
                start, partial, requiresSpecialHandling);
    }

    /** qkcm implements it: {@code starter} builds it. */
    public ControllerDescriptor startedBy(Starter starter) {
        return new ControllerDescriptor(name, aliases, clientName, requiredFeatureGates, disabledByDefault,
                cloudProvider, Optional.of(starter), partial, requiresSpecialHandling);
    }

    /** Implemented in part: {@code missing} says what upstream does that qkcm does not (startup log, --help, README). */
    public ControllerDescriptor partially(String missing) {
        return new ControllerDescriptor(name, aliases, clientName, requiredFeatureGates, disabledByDefault,
                cloudProvider, start, Optional.of(missing), requiresSpecialHandling);
    }

    /**
     * Upstream's requiresSpecialHandling: built with the manager's own client (rootClientBuilder) rather than
     * one authenticated as the controller's ServiceAccount.
     */
    public ControllerDescriptor requiringSpecialHandling() {
        return new ControllerDescriptor(name, aliases, clientName, requiredFeatureGates, disabledByDefault,
                cloudProvider, start, partial, true);
    }

    public boolean implemented() {
        return start.isPresent();
    }

    public boolean isPartial() {
        return partial.isPresent();
    }
}
