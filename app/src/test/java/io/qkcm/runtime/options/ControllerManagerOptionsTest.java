package io.qkcm.runtime.options;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import java.util.Optional;

import org.junit.jupiter.api.Test;

class ControllerManagerOptionsTest {

    static Optional<String> validate(Map<String, String> config) {
        return new ControllerManagerOptions(Flags.upstream(), name -> Optional.ofNullable(config.get(name))).validate();
    }

    @Test
    void upstreamDefaultsAreValid() {
        assertThat(validate(Map.of())).isEmpty();
    }

    @Test
    void typesAreCheckedFirst() {
        assertThat(validate(Map.of("qkcm.max-endpoints-per-slice", "many"))).get().asString()
                .startsWith("invalid value \"many\" for qkcm.max-endpoints-per-slice (--max-endpoints-per-slice)");
    }

    @Test
    void endpointSliceOptionsHaveUpstreamsRanges() {
        assertThat(validate(Map.of("qkcm.max-endpoints-per-slice", "1001"))).contains(
                "max-endpoints-per-slice must not be more than 1000, but got 1001");
        assertThat(validate(Map.of("qkcm.concurrent-service-endpoint-syncs", "0"))).contains(
                "concurrent-service-endpoint-syncs must not be less than 1, but got 0");
        assertThat(validate(Map.of("qkcm.mirroring-concurrent-service-endpoint-syncs", "51"))).contains(
                "mirroring-concurrent-service-endpoint-syncs must not be more than 50, but got 51");
        assertThat(validate(Map.of("qkcm.mirroring-max-endpoints-per-subset", "0"))).contains(
                "mirroring-max-endpoints-per-subset must not be less than 1, but got 0");
        assertThat(validate(Map.of("qkcm.max-endpoints-per-slice", "1000"))).isEmpty();
    }
}
