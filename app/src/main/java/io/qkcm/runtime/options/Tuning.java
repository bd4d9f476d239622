package io.qkcm.runtime.options;

import java.time.Duration;
import java.util.Optional;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;

/**
 * qkcm's own tuning, beside upstream's flags: what the JVM and the Java libraries need that a Go
 * kube-controller-manager does not. Quarkus configuration under {@code qkcm.tuning}: application.properties,
 * the environment ({@code QKCM_TUNING_BORINGSSL=false}) or {@code -Dqkcm.tuning.boringssl=false}. Read once,
 * when the manager starts, and passed down ({@link ControllerManagerOptions#tuning()}); nothing reads it
 * statically. The levers that were measured and kept for good (the decoding's, watch-list, the early leader
 * election) are no longer switches: docs/design.md says what each does.
 */
@ConfigMapping(prefix = "qkcm.tuning")
public interface Tuning {

    /**
     * The API connections' TLS in BoringSSL (netty-tcnative) where it loads; false: the JDK's TLS
     * (docs/design.md, "TLS: BoringSSL").
     */
    @WithDefault("true")
    boolean boringssl();

    /**
     * The protocol to the API server: {@code false} HTTP/1.1 with a connection per watch (the default),
     * {@code true} every request and watch a stream of one HTTP/2 connection (client-go's way),
     * {@code requests} HTTP/2 for requests and HTTP/1.1 for watches (docs/design.md, "API connections").
     */
    @WithDefault("false")
    KubeApiHttp2 kubeApiHttp2();

    /**
     * With the JDK's TLS: offer ChaCha20-Poly1305 before AES-GCM. Unset: when the JIT has no C2 (bin/qkcm's
     * {@code -XX:TieredStopAtLevel=1}), as AES-GCM then runs without its intrinsics.
     */
    Optional<Boolean> tlsChacha20();

    /** A virtual thread per concurrent API call of a controller (JDK 21+), as upstream's goroutines; false: pools. */
    @WithDefault("false")
    boolean virtualThreads();

    /**
     * A whole-heap collection when none ran for this long (Go's forcegcperiod); a number is seconds, 0 turns
     * it off (docs/design.md, "Memory").
     */
    @WithDefault("120")
    Duration periodicGc();

    /**
     * Short strings decoded from protobuf shared through one table, so equal values are one instance
     * (docs/design.md, "The protobuf wire format"); false: a new String per field.
     */
    @WithDefault("true")
    boolean sharedStrings();

    /**
     * How the informers' protobuf watches travel over HTTP/1.1: {@code stream} a streaming GET of length-prefixed
     * frames (client-go's), {@code websocket} one binary message per event (fabric8's watch transport). Over
     * HTTP/2 they are streaming GETs either way, and so are JSON watches (docs/design.md, "The protobuf wire format").
     */
    @WithDefault("stream")
    ProtobufWatch protobufWatch();

    /** {@link #protobufWatch()}'s values. */
    enum ProtobufWatch {
        STREAM,
        WEBSOCKET
    }

    /** {@link #kubeApiHttp2()}'s values. */
    enum KubeApiHttp2 {
        FALSE,
        TRUE,
        REQUESTS;

        /** Whether requests go over HTTP/2. */
        public boolean http2() {
            return this != FALSE;
        }

        /** Whether watches keep HTTP/1.1 connections of their own while requests use HTTP/2. */
        public boolean watchesApart() {
            return this == REQUESTS;
        }
    }

    /** The defaults, for what is built outside the application (tests, tools). */
    static Tuning defaults() {
        return new Tuning() {
            @Override
            public boolean boringssl() {
                return true;
            }

            @Override
            public KubeApiHttp2 kubeApiHttp2() {
                return KubeApiHttp2.FALSE;
            }

            @Override
            public Optional<Boolean> tlsChacha20() {
                return Optional.empty();
            }

            @Override
            public boolean virtualThreads() {
                return false;
            }

            @Override
            public Duration periodicGc() {
                return Duration.ofMinutes(2);
            }

            @Override
            public boolean sharedStrings() {
                return true;
            }

            @Override
            public ProtobufWatch protobufWatch() {
                return ProtobufWatch.STREAM;
            }
        };
    }
}
