package io.qkcm.manager;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import java.util.Set;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;

import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;

/** An implemented controller that is off by default does not run under {@code *} alone. */
@QuarkusTest
@TestProfile(DefaultOffControllerTest.Profile.class)
class DefaultOffControllerTest {

    public static class Profile implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("qkcm.controllers", "*", "qkcm.leader-elect", "false");
        }

        @Override
        public Set<Class<?>> getEnabledAlternatives() {
            return Set.of(ProbeControllerImplementation.class);
        }
    }

    @Inject
    MeterRegistry registry;
    @Inject
    ControllerManager manager;
    @Inject
    ProbeControllerImplementation probe;

    @Test
    void notBuiltNotStartedNoSeries() {
        assertThat(manager.running()).isTrue();
        assertThat(manager.controllers()).extracting(c -> c.name()).doesNotContain(ProbeControllerImplementation.NAME);
        assertThat(probe.wasBuilt()).isFalse();
        assertThat(registry.find("running.managed.controllers").tag("name", ProbeControllerImplementation.NAME)
                .gauge()).isNull();
        assertThat(manager.selection().notImplemented()).doesNotContain(ProbeControllerImplementation.NAME);
    }
}
