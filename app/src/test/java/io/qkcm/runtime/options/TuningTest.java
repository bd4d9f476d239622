package io.qkcm.runtime.options;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;

import org.junit.jupiter.api.Test;

import io.quarkus.runtime.configuration.DurationConverter;
import io.smallrye.config.EnvConfigSource;
import io.smallrye.config.PropertiesConfigSource;
import io.smallrye.config.SmallRyeConfigBuilder;

/** {@code qkcm.tuning.*} as Quarkus reads it: properties, -D and the environment's QKCM_TUNING_*. */
class TuningTest {

    private static Tuning read(Map<String, String> properties, Map<String, String> env) {
        return new SmallRyeConfigBuilder()
                .withConverter(Duration.class, 100, new DurationConverter())
                .withSources(new PropertiesConfigSource(properties, "test", 250), new EnvConfigSource(env, 300))
                .withMapping(Tuning.class)
                .build()
                .getConfigMapping(Tuning.class);
    }

    @Test
    void defaultsAreTheShippedBuildsAndTheSameAsDefaultsForTests() {
        Tuning t = read(Map.of(), Map.of());
        assertThat(t.boringssl()).isTrue();
        assertThat(t.kubeApiHttp2()).isEqualTo(Tuning.KubeApiHttp2.FALSE);
        assertThat(t.tlsChacha20()).isEmpty();
        assertThat(t.virtualThreads()).isFalse();
        assertThat(t.periodicGc()).isEqualTo(Duration.ofMinutes(2));
        assertThat(t.protobufWatch()).isEqualTo(Tuning.ProtobufWatch.STREAM);
        Tuning d = Tuning.defaults();
        assertThat(d.boringssl()).isEqualTo(t.boringssl());
        assertThat(d.kubeApiHttp2()).isEqualTo(t.kubeApiHttp2());
        assertThat(d.tlsChacha20()).isEqualTo(t.tlsChacha20());
        assertThat(d.virtualThreads()).isEqualTo(t.virtualThreads());
        assertThat(d.periodicGc()).isEqualTo(t.periodicGc());
        assertThat(d.protobufWatch()).isEqualTo(t.protobufWatch());
    }

    @Test
    void propertiesAndEnvironment() {
        Tuning t = read(Map.of("qkcm.tuning.kube-api-http2", "requests", "qkcm.tuning.periodic-gc", "30",
                "qkcm.tuning.tls-chacha20", "false"),
                Map.of("QKCM_TUNING_BORINGSSL", "false", "QKCM_TUNING_VIRTUAL_THREADS", "true"));
        assertThat(t.kubeApiHttp2()).isEqualTo(Tuning.KubeApiHttp2.REQUESTS);
        assertThat(t.kubeApiHttp2().http2()).isTrue();
        assertThat(t.kubeApiHttp2().watchesApart()).isTrue();
        assertThat(t.periodicGc()).isEqualTo(Duration.ofSeconds(30));
        assertThat(t.tlsChacha20()).isEqualTo(Optional.of(false));
        assertThat(t.boringssl()).isFalse();
        assertThat(t.virtualThreads()).isTrue();

        Tuning h2 = read(Map.of("qkcm.tuning.periodic-gc", "0"), Map.of("QKCM_TUNING_KUBE_API_HTTP2", "true"));
        assertThat(h2.kubeApiHttp2().http2()).isTrue();
        assertThat(h2.kubeApiHttp2().watchesApart()).isFalse();
        assertThat(h2.periodicGc()).isEqualTo(Duration.ZERO);
        assertThat(read(Map.of("qkcm.tuning.kube-api-http2", "false"), Map.of()).kubeApiHttp2().http2()).isFalse();
        assertThat(read(Map.of("qkcm.tuning.periodic-gc", "5m"), Map.of()).periodicGc()).isEqualTo(Duration.ofMinutes(5));
        assertThat(read(Map.of("qkcm.tuning.protobuf-watch", "websocket"), Map.of()).protobufWatch())
                .isEqualTo(Tuning.ProtobufWatch.WEBSOCKET);
        assertThat(read(Map.of(), Map.of("QKCM_TUNING_PROTOBUF_WATCH", "WEBSOCKET")).protobufWatch())
                .isEqualTo(Tuning.ProtobufWatch.WEBSOCKET);
    }

    @Test
    void aValueThatIsNoModeIsRefused() {
        assertThatThrownBy(() -> read(Map.of("qkcm.tuning.kube-api-http2", "yes"), Map.of()))
                .hasMessageContaining("kube-api-http2");
    }
}
