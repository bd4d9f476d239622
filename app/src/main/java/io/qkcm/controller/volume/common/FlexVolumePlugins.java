package io.qkcm.controller.volume.common;

import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

import org.jboss.logging.Logger;

/**
 * The probed half of a controller's VolumePluginMgr: InitPlugins' prober.Init (a prober whose Init fails is
 * replaced by none, logged, as upstream's dummyPluginProber) and refreshProbedPlugins, which applies the
 * prober's events before every lookup (a driver with an invalid name or a failed init is logged and left
 * out). Each controller owns one, closed when it stops.
 */
public final class FlexVolumePlugins implements AutoCloseable {

    private static final Logger LOG = Logger.getLogger(FlexVolumePlugins.class);
    private static final Pattern QUALIFIED_NAME_PART = Pattern.compile("([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]");
    private static final Pattern DNS1123_SUBDOMAIN = Pattern
            .compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");

    /** The dynamic prober, or null (none given, or its Init failed). */
    private final FlexVolumeProber prober;
    private final Map<String, FlexVolumePlugin> probedPlugins = new HashMap<>();

    public FlexVolumePlugins(FlexVolumeProber prober) {
        this.prober = prober;
    }

    /** No probed plugins at all. */
    public static FlexVolumePlugins none() {
        return new FlexVolumePlugins(null);
    }

    /**
     * GetDynamicPluginProber(--flex-volume-plugin-dir) handed to InitPlugins: the prober initialised on
     * {@code dir} (created when missing), or none when {@code dir} is null or Init fails.
     */
    public static FlexVolumePlugins probing(Path dir) {
        if (dir == null) {
            return none();
        }
        FlexVolumeProber prober = new FlexVolumeProber(dir);
        try {
            prober.init();
            return new FlexVolumePlugins(prober);
        } catch (java.io.IOException | RuntimeException e) {
            LOG.errorf("Error initializing dynamic plugin prober: %s", e.getMessage());
            prober.close();
            return none();
        }
    }

    public FlexVolumeProber prober() {
        return prober;
    }

    /** refreshProbedPlugins: applies the prober's events. */
    private Map<String, FlexVolumePlugin> refresh() {
        if (prober != null) {
            FlexVolumeProber.ProbeResult result = prober.probe();
            if (!result.errors().isEmpty()) {
                LOG.errorf("Error dynamically probing plugins: %s", aggregate(result.errors()));
            }
            for (FlexVolumeProber.ProbeEvent event : result.events()) {
                if (event.remove()) {
                    probedPlugins.remove(event.pluginName());
                    continue;
                }
                String invalid = qualifiedNameError(event.pluginName());
                if (invalid != null) {
                    LOG.errorf("Error initializing dynamically probed plugin %s: volume plugin has invalid name: \"%s\": %s",
                            event.pluginName(), event.pluginName(), invalid);
                    continue;
                }
                probedPlugins.put(event.pluginName(), event.plugin());
            }
        }
        return probedPlugins;
    }

    /** The probed driver supporting the spec (its flex driver is the driver's name), or null. */
    public FlexVolumePlugin bySpec(FlexVolumePlugin.Spec spec) {
        if (spec == null || FlexVolumePlugin.driver(spec) == null) {
            return null;
        }
        synchronized (this) {
            for (FlexVolumePlugin p : refresh().values()) {
                if (p.canSupport(spec)) {
                    return p;
                }
            }
        }
        return null;
    }

    /** The probed driver of that name, or null. */
    public synchronized FlexVolumePlugin byName(String name) {
        return refresh().get(name);
    }

    /** errors.NewAggregate's text. */
    private static String aggregate(List<String> errors) {
        return errors.size() == 1 ? errors.get(0) : "[" + String.join(", ", errors) + "]";
    }

    /** validation.IsQualifiedName's verdict, null when valid. */
    public static String qualifiedNameError(String name) {
        String[] parts = name.split("/", -1);
        String base;
        if (parts.length == 1) {
            base = parts[0];
        } else if (parts.length == 2) {
            if (parts[0].isEmpty()) {
                return "prefix part must be non-empty";
            }
            if (parts[0].length() > 253 || !DNS1123_SUBDOMAIN.matcher(parts[0]).matches()) {
                return "prefix part must be a valid DNS-1123 subdomain";
            }
            base = parts[1];
        } else {
            return "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
                    + "with an alphanumeric character with an optional DNS subdomain prefix and '/'";
        }
        if (base.isEmpty()) {
            return "name part must be non-empty";
        }
        if (base.length() > 63) {
            return "name part must be no more than 63 characters";
        }
        if (!QUALIFIED_NAME_PART.matcher(base).matches()) {
            return "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
                    + "alphanumeric character";
        }
        return null;
    }

    @Override
    public void close() {
        if (prober != null) {
            prober.close();
        }
    }
}
