package io.qkcm.runtime.options;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;

/**
 * The manager's effective settings: for every upstream flag, the command-line value if given, else
 * the config property {@code qkcm.<flag>} (application.properties, env, -D), else upstream's default.
 * The command line reaches config through {@link CommandLineConfigSource}, above the others, so flags win.
 */
public final class ControllerManagerOptions {

    private final Flags flags;
    private final Function<String, Optional<String>> config;
    private final Tuning tuning;

    /** The flags from {@code config}, qkcm's tuning at its defaults (tests, tools). */
    public ControllerManagerOptions(Flags flags, Function<String, Optional<String>> config) {
        this(flags, config, Tuning.defaults());
    }

    public ControllerManagerOptions(Flags flags, Function<String, Optional<String>> config, Tuning tuning) {
        this.flags = flags;
        this.config = config;
        this.tuning = tuning;
    }

    public Flags flags() {
        return flags;
    }

    /** qkcm's own tuning ({@code qkcm.tuning.*}), read once with the flags. */
    public Tuning tuning() {
        return tuning;
    }

    /** The raw value of a flag; unknown names are a programming error. */
    public String raw(String flag) {
        Flag f = flags.byName(flag).orElseThrow(() -> new IllegalArgumentException("unknown flag " + flag));
        return config.apply(f.configProperty()).orElse(f.defaultValue());
    }

    /** Whether a flag was set anywhere (command line or config) rather than left at its default. */
    public boolean isSet(String flag) {
        Flag f = flags.byName(flag).orElseThrow(() -> new IllegalArgumentException("unknown flag " + flag));
        return config.apply(f.configProperty()).isPresent();
    }

    /**
     * An internal setting that is no upstream flag (not in --help): config property {@code qkcm.internal.<name>},
     * for what upstream hard-codes and its own tests shorten (e.g. pod GC's check period).
     */
    public Optional<String> internal(String name) {
        return config.apply("qkcm.internal." + name).map(String::trim).filter(v -> !v.isEmpty());
    }

    public String string(String flag) {
        return raw(flag).trim();
    }

    public Optional<String> optionalString(String flag) {
        String v = string(flag);
        return v.isEmpty() ? Optional.empty() : Optional.of(v);
    }

    public boolean bool(String flag) {
        String v = string(flag);
        return v.equalsIgnoreCase("true") || v.equals("1") || v.equalsIgnoreCase("t");
    }

    public int integer(String flag) {
        return Integer.parseInt(string(flag));
    }

    public double decimal(String flag) {
        return Double.parseDouble(string(flag));
    }

    public Duration duration(String flag) {
        return GoDuration.parse(string(flag));
    }

    public List<String> list(String flag) {
        String v = string(flag);
        if (v.isEmpty()) {
            return List.of();
        }
        return Arrays.stream(v.split(",")).map(String::trim).filter(s -> !s.isEmpty()).toList();
    }

    /** Upstream's range checks of controller options (cmd/kube-controller-manager/app/options): flag, min, max. */
    private static final List<Object[]> RANGES = List.of(
            new Object[] { "concurrent-service-endpoint-syncs", 1, 50 },
            new Object[] { "max-endpoints-per-slice", 1, 1000 },
            new Object[] { "mirroring-concurrent-service-endpoint-syncs", 1, 50 },
            new Object[] { "mirroring-max-endpoints-per-subset", 1, 1000 });

    /**
     * Checks every configured value against its flag type, then upstream's range checks; returns the
     * first error, as one line.
     */
    public Optional<String> validate() {
        for (Flag f : flags.all()) {
            Optional<String> v = config.apply(f.configProperty());
            if (v.isPresent()) {
                String error = f.validate(v.get());
                if (error != null) {
                    return Optional.of("invalid value \"" + v.get() + "\" for " + f.configProperty() + " (--"
                            + f.name() + "): " + error);
                }
            }
        }
        // upstream's NodeIPAMControllerOptions.Validate
        if (raw("service-cluster-ip-range").split(",", -1).length > 2) {
            return Optional.of("--service-cluster-ip-range can not contain more than two entries");
        }
        for (Object[] range : RANGES) {
            String flag = (String) range[0];
            int value = integer(flag);
            if (value < (int) range[1]) {
                return Optional.of(flag + " must not be less than " + range[1] + ", but got " + value);
            }
            if (value > (int) range[2]) {
                return Optional.of(flag + " must not be more than " + range[2] + ", but got " + value);
            }
        }
        return Optional.empty();
    }

    // The settings the manager itself uses, named as upstream's flags.

    public FeatureGates featureGates() {
        return FeatureGates.parse(string("feature-gates"));
    }

    public double kubeApiQps() {
        return decimal("kube-api-qps");
    }

    public int kubeApiBurst() {
        return integer("kube-api-burst");
    }

    public boolean leaderElect() {
        return bool("leader-elect");
    }

    public Duration minResyncPeriod() {
        return duration("min-resync-period");
    }

    /** {@code --concurrent-<x>-syncs}, e.g. {@code concurrentSyncs("replicaset")}. */
    public int concurrentSyncs(String controller) {
        return integer("concurrent-" + controller + "-syncs");
    }
}
