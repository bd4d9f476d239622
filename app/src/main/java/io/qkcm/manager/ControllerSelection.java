package io.qkcm.manager;

import io.qkcm.runtime.josdk.ControllerDescriptor;
import io.qkcm.runtime.options.FeatureGates;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Resolves {@code --controllers} as upstream does: aliases map to current names, an explicit
 * {@code name} or {@code -name} decides (first mention wins), otherwise {@code *} enables every
 * controller not disabled by default. Enabled controllers are then filtered as upstream starts them:
 * cloud-provider controllers never run (no built-in cloud provider), feature-gated ones need their
 * gates. What is left and implemented runs; what is left and not implemented is reported.
 */
public final class ControllerSelection {

    public record Skipped(String name, String reason) {
    }

    private final List<ControllerDescriptor> running = new ArrayList<>();
    private final List<String> notImplemented = new ArrayList<>();
    private final List<Skipped> skipped = new ArrayList<>();

    private ControllerSelection() {
    }

    /** Validates the names in {@code controllers}: the first unknown one, with the valid names. */
    public static Optional<String> validate(ControllerCatalog catalog, List<String> controllers) {
        for (String entry : controllers) {
            if (entry.equals("*")) {
                continue;
            }
            String name = entry.startsWith("-") ? entry.substring(1) : entry;
            if (catalog.canonical(name).isEmpty()) {
                return Optional.of("--controllers: \"" + name + "\" is not in the list of known controllers; valid names: "
                        + String.join(", ", catalog.names()));
            }
        }
        return Optional.empty();
    }

    public static ControllerSelection resolve(ControllerCatalog catalog, List<String> controllers, FeatureGates gates) {
        List<String> canonical = new ArrayList<>();
        for (String entry : controllers) {
            if (entry.equals("*")) {
                canonical.add(entry);
                continue;
            }
            boolean negated = entry.startsWith("-");
            String name = negated ? entry.substring(1) : entry;
            String c = catalog.canonical(name).orElseThrow(() -> new IllegalArgumentException(
                    "\"" + name + "\" is not in the list of known controllers"));
            canonical.add(negated ? "-" + c : c);
        }
        ControllerSelection s = new ControllerSelection();
        for (ControllerDescriptor k : catalog.all()) {
            if (!enabled(k, canonical)) {
                continue;
            }
            if (k.cloudProvider()) {
                s.skipped.add(new Skipped(k.name(), "cloud provider controller (no built-in cloud provider)"));
                continue;
            }
            Optional<String> gateOff = k.requiredFeatureGates().stream().filter(g -> !gates.enabled(g)).findFirst();
            if (gateOff.isPresent()) {
                s.skipped.add(new Skipped(k.name(), "feature gate " + gateOff.get() + " is disabled"));
                continue;
            }
            if (k.implemented()) {
                s.running.add(k);
            } else {
                s.notImplemented.add(k.name());
            }
        }
        return s;
    }

    /** Upstream's IsControllerEnabled. */
    static boolean enabled(ControllerDescriptor k, List<String> controllers) {
        boolean star = false;
        for (String c : controllers) {
            if (c.equals(k.name())) {
                return true;
            }
            if (c.equals("-" + k.name())) {
                return false;
            }
            if (c.equals("*")) {
                star = true;
            }
        }
        return star && !k.disabledByDefault();
    }

    /** Enabled and implemented, in upstream's start order. */
    public List<ControllerDescriptor> running() {
        return List.copyOf(running);
    }

    /** Enabled, but qkcm has no implementation yet: reported at startup, never pretended to run. */
    public List<String> notImplemented() {
        return List.copyOf(notImplemented);
    }

    public List<Skipped> skipped() {
        return List.copyOf(skipped);
    }
}
