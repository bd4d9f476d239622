package io.qkcm.controller.garbagecollector;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import java.util.Optional;

import org.junit.jupiter.api.Test;

import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.options.ControllerManagerOptions;
import io.qkcm.runtime.options.Flags;

/** Flags of the garbage collector, as upstream: --enable-garbage-collector=false means it does not start. */
class GarbageCollectorOptionsTest {

    static ControllerManagerOptions options(Map<String, String> config) {
        return new ControllerManagerOptions(Flags.upstream(), name -> Optional.ofNullable(config.get(name)));
    }

    @Test
    void disabledGarbageCollectorIsNotBuilt() {
        ControllerContext context = new ControllerContext(GarbageCollector.NAME, null, null, null,
                options(Map.of("qkcm.enable-garbage-collector", "false")), null, null);
        assertThat(GarbageCollectorControllerDescriptor.start(context)).isNull();
    }

    @Test
    void defaultsAreUpstreams() {
        ControllerManagerOptions o = options(Map.of());
        assertThat(o.bool("enable-garbage-collector")).isTrue();
        assertThat(o.concurrentSyncs("gc")).isEqualTo(20);
        assertThat(Flags.upstream().byName("concurrent-gc-syncs").orElseThrow().implemented()).isTrue();
        assertThat(Flags.upstream().byName("enable-garbage-collector").orElseThrow().implemented()).isTrue();
        assertThat(GarbageCollectorControllerDescriptor.DESCRIPTOR.implemented()).isTrue();
        assertThat(GarbageCollectorControllerDescriptor.DESCRIPTOR.name()).isEqualTo("garbage-collector-controller");
        assertThat(GarbageCollectorControllerDescriptor.DESCRIPTOR.aliases()).containsExactly("garbagecollector");
    }
}
