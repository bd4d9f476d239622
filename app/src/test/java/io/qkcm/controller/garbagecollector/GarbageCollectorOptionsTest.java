package io.qkcm.controller.garbagecollector;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import java.util.Optional;

import org.junit.jupiter.api.Test;

import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.options.ControllerManagerOptions;
import io.qkcm.runtime.options.Flags;
import io.qkcm.manager.ManagedControllers;

/** Flags of the garbage collector, as upstream: --enable-garbage-collector=false means it does not start. */
class GarbageCollectorOptionsTest {

    static ControllerManagerOptions options(Map<String, String> config) {
        return new ControllerManagerOptions(Flags.upstream(), name -> Optional.ofNullable(config.get(name)));
    }

    @Test
    void disabledGarbageCollectorIsNotBuilt() {
        ControllerContext context = new ControllerContext(GarbageCollector.NAME, null, null, null,
                options(Map.of("qkcm.enable-garbage-collector", "false")), null, null);
        assertThat(GarbageCollector.create(context)).isNull();
    }

    @Test
    void defaultsAreUpstreams() {
        ControllerManagerOptions o = options(Map.of());
        assertThat(o.bool("enable-garbage-collector")).isTrue();
        assertThat(o.concurrentSyncs("gc")).isEqualTo(20);
        assertThat(Flags.upstream().byName("concurrent-gc-syncs").orElseThrow().implemented()).isTrue();
        assertThat(Flags.upstream().byName("enable-garbage-collector").orElseThrow().implemented()).isTrue();
        assertThat(ManagedControllers.catalog().byName("garbage-collector-controller").orElseThrow().implemented())
                .isTrue();
        assertThat(ManagedControllers.catalog().canonical("garbagecollector")).contains("garbage-collector-controller");
    }
}
