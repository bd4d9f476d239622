package io.qkcm.manager;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.qkcm.runtime.options.CommandLineConfigSource;
import io.smallrye.config.PropertiesConfigSource;
import io.smallrye.config.SmallRyeConfig;
import io.smallrye.config.SmallRyeConfigBuilder;

/**
 * The command line reaches configuration through {@link CommandLineConfigSource} (found as Quarkus finds
 * it, through META-INF/services), above -D, and no system property is set.
 */
class QkcmMainFlagsTest {

    @Test
    void flagsBecomeConfigurationAboveSystemProperties() {
        try {
            assertThat(QkcmMain.prepare(List.of("--kube-api-qps=33", "--v=4", "--controllers=*,-ttl"))).isEqualTo(-1);
            SmallRyeConfig config = new SmallRyeConfigBuilder().addDiscoveredSources()
                    .withSources(new PropertiesConfigSource(Map.of("qkcm.kube-api-qps", "7", "qkcm.kube-api-burst", "9"),
                            "as -D", 400))
                    .build();
            assertThat(config.getValue("qkcm.kube-api-qps", String.class)).isEqualTo("33");
            assertThat(config.getValue("qkcm.kube-api-burst", String.class)).as("not given: -D's").isEqualTo("9");
            assertThat(config.getValue("qkcm.controllers", String.class)).isEqualTo("*,-ttl");
            assertThat(config.getValue("quarkus.log.category.\"io.qkcm\".level", String.class)).isEqualTo("DEBUG");
            assertThat(System.getProperty("qkcm.kube-api-qps")).as("no system property").isNull();
        } finally {
            CommandLineConfigSource.given(Map.of());
        }
    }

    @Test
    void aBadCommandLineStopsBeforeAnything() {
        assertThat(QkcmMain.prepare(List.of("--no-such-flag=1"))).isEqualTo(1);
        assertThat(new CommandLineConfigSource().getPropertyNames()).isEmpty();
    }
}
