package io.qkcm.runtime.options;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;

/**
 * Upstream's feature gates as of v1.34 (names and defaults generated from upstream sources into
 * qkcm/feature-gates.properties). {@code --feature-gates} accepts exactly these names, plus AllAlpha
 * and AllBeta; qkcm consults them to decide which gated controllers upstream would run.
 */
public final class FeatureGates {

    private static final Map<String, Boolean> DEFAULTS = load();

    private final Map<String, Boolean> enabled;

    private FeatureGates(Map<String, Boolean> enabled) {
        this.enabled = enabled;
    }

    public static FeatureGates defaults() {
        return new FeatureGates(new TreeMap<>(DEFAULTS));
    }

    /** Parses {@code A=true,B=false}; unknown gates and non-boolean values are errors, as upstream. */
    public static FeatureGates parse(String spec) {
        Map<String, Boolean> result = new TreeMap<>(DEFAULTS);
        result.putAll(parseAssignments(spec));
        return new FeatureGates(result);
    }

    static Map<String, Boolean> parseAssignments(String spec) {
        Map<String, Boolean> out = new LinkedHashMap<>();
        if (spec == null || spec.isBlank()) {
            return out;
        }
        for (String part : spec.split(",")) {
            String p = part.trim();
            if (p.isEmpty()) {
                continue;
            }
            int eq = p.indexOf('=');
            if (eq < 0) {
                throw new IllegalArgumentException("missing bool value for " + p);
            }
            String name = p.substring(0, eq).trim();
            // 1.34 accepts component-qualified gates; kube-controller-manager only has the "kube" component
            int colon = name.indexOf(':');
            if (colon >= 0) {
                String component = name.substring(0, colon);
                if (!component.equals("kube")) {
                    throw new IllegalArgumentException("unrecognized component: " + component);
                }
                name = name.substring(colon + 1);
            }
            String value = p.substring(eq + 1).trim();
            if (!value.equalsIgnoreCase("true") && !value.equalsIgnoreCase("false")) {
                throw new IllegalArgumentException("invalid value of " + name + "=" + value + ", err: strconv.ParseBool");
            }
            if (!DEFAULTS.containsKey(name) && !name.equals("AllAlpha") && !name.equals("AllBeta")) {
                throw new IllegalArgumentException("unrecognized feature gate: " + name);
            }
            out.put(name, Boolean.parseBoolean(value));
        }
        return out;
    }

    public boolean enabled(String gate) {
        return enabled.getOrDefault(gate, false);
    }

    private static Map<String, Boolean> load() {
        Properties p = new Properties();
        try (InputStream in = FeatureGates.class.getClassLoader().getResourceAsStream("qkcm/feature-gates.properties")) {
            if (in == null) {
                throw new IllegalStateException("qkcm/feature-gates.properties is missing from the classpath");
            }
            p.load(in);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        Map<String, Boolean> m = new TreeMap<>();
        p.forEach((k, v) -> m.put((String) k, Boolean.parseBoolean((String) v)));
        return m;
    }
}
