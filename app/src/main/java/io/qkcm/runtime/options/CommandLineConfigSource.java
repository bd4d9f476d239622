package io.qkcm.runtime.options;

import java.util.Map;
import java.util.Set;

import org.eclipse.microprofile.config.spi.ConfigSource;

/**
 * The flags given on the command line, as configuration: {@code qkcm.<flag>} for each one, which outranks
 * {@code -Dqkcm.<flag>} (400), the environment (300) and application.properties (250), so one configuration
 * view serves the whole process and a flag wins as upstream's command line does. QkcmMain parses the command
 * line before Quarkus starts and hands the values over ({@link #given}); Quarkus finds this source through
 * META-INF/services and reads it when it builds its configuration. Dev mode and tests have no command line:
 * the source is empty there.
 */
public final class CommandLineConfigSource implements ConfigSource {

    /** Above every one of Quarkus' own sources. */
    public static final int ORDINAL = 500;

    private static volatile Map<String, String> given = Map.of();

    /** The properties of the command line's flags ({@code qkcm.<flag>} and what they imply); once, before Quarkus starts. */
    public static void given(Map<String, String> properties) {
        given = Map.copyOf(properties);
    }

    @Override
    public Set<String> getPropertyNames() {
        return given.keySet();
    }

    @Override
    public Map<String, String> getProperties() {
        return given;
    }

    @Override
    public String getValue(String propertyName) {
        return given.get(propertyName);
    }

    @Override
    public String getName() {
        return "qkcm command line";
    }

    @Override
    public int getOrdinal() {
        return ORDINAL;
    }
}
