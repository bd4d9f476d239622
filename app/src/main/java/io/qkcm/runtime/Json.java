package io.qkcm.runtime;

import java.io.IOException;
import java.nio.charset.StandardCharsets;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.module.SimpleModule;
import com.fasterxml.jackson.module.blackbird.BlackbirdModule;

import io.fabric8.kubernetes.api.model.WatchEvent;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;

/**
 * The process's JSON, in two flavours, each made once and shared (a configured ObjectMapper is
 * thread-safe, and neither is reconfigured after it is built):
 * <ul>
 * <li>{@link #mapper()}: Jackson's defaults, for what qkcm reads and writes itself (patch bodies,
 * metadata lists, Go type layouts, golden vectors);</li>
 * <li>{@link #api()}: the serialization of API objects, the one every API client of the process is
 * built with, and the one hashes, revisions and copies of last resort use. It writes byte for byte what
 * fabric8's default serialization writes ({@code ApiSerializationTest}), so the hashes and revisions
 * computed from it are upstream's.</li>
 * </ul>
 * Nothing else in src/main builds an ObjectMapper or a KubernetesSerialization, nor uses fabric8's
 * static {@code Serialization} (a default serialization of its own, without these modules):
 * {@code OneSerializationTest}.
 * <p>
 * Why one API serialization: fabric8 gives each client a {@link KubernetesSerialization} of its own, an
 * ObjectMapper whose (de)serializers are built and warmed per client, and a scan of the model classes
 * per client at startup. One shared instance builds them once. In JVM mode its mapper also has Jackson's
 * Blackbird module, which calls the model's setters, getters and constructors through generated lambdas
 * instead of reflection: with JDK 25's method-handle reflection and C1 only, reflective calls were ~11% of
 * qkcm's CPU under load (JFR, bench/results/2026-11-25-perf/profile.md). Blackbird defines classes at run
 * time, which a native image cannot: there the mapper stays as it is.
 * <p>
 * Watch events are decoded in one pass ({@link WatchEventDeserializer}), straight from the String fabric8
 * hands over, instead of fabric8's String → bytes → JsonNode tree → object; objects bound for the
 * informers' caches skip managedFields and share one empty map ({@link CachedObjects}). The variants of
 * {@link #create} (fabric8's tree, Blackbird registered first, the cached objects' levers off) are what
 * bench/decode measures against each other in one JVM; the process always uses the one {@link #api()}
 * builds (the levers were measured and kept: bench/results/2026-11-25-decode).
 */
public final class Json {

    private static final ObjectMapper MAPPER = new ObjectMapper();
    /** Whether this is a native image (GraalVM sets the property at build and at run time). */
    static final boolean NATIVE_IMAGE = System.getProperty("org.graalvm.nativeimage.imagecode") != null;

    private Json() {
    }

    /** Jackson's defaults: not for API objects (it knows nothing of fabric8's model modules). */
    public static ObjectMapper mapper() {
        return MAPPER;
    }

    /** The API objects' serialization, shared by every client and every hash, revision and copy. */
    public static KubernetesSerialization api() {
        return Api.INSTANCE;
    }

    /** Built at first use (a class initialisation: thread-safe, once). */
    private static final class Api {
        // the native image defines no classes at run time: no Blackbird there
        static final KubernetesSerialization INSTANCE = create(new ObjectMapper(), true, !NATIVE_IMAGE);
    }

    /**
     * A serialization on {@code mapper}; with {@code directWatchEvents}, watch events decode in one pass;
     * with {@code blackbird}, the model's setters are called through generated lambdas.
     * <p>
     * Blackbird is registered last: Jackson asks the last registered module's modifier first, so Blackbird
     * replaces the reflective setters before fabric8's UnmatchedFieldTypeModule wraps every property in a
     * delegating one (which Blackbird does not look into). Registered first, as until 2026-11-25, it
     * optimized only the constructors: the setters stayed {@code Method.invoke}, the largest frame of the
     * decoding's profile (bench/decode). The price: a generated class per setter of every model class
     * decoded, made at the first decoding of each (~1 s more CPU at startup, bench/results/2026-11-25-decode);
     * bench/decode's variant with Blackbird registered first passes a mapper that already has it.
     */
    static KubernetesSerialization create(ObjectMapper mapper, boolean directWatchEvents, boolean blackbird) {
        return create(mapper, directWatchEvents, blackbird, true, true);
    }

    /** The same, with {@link CachedObjects}' two levers chosen (bench/decode's A/B in one JVM). */
    static KubernetesSerialization create(ObjectMapper mapper, boolean directWatchEvents, boolean blackbird,
            boolean shareEmptyMaps, boolean skipManagedFields) {
        KubernetesSerialization s = create(mapper, directWatchEvents, shareEmptyMaps, skipManagedFields);
        if (blackbird) {
            mapper.registerModule(new BlackbirdModule());
        }
        return s;
    }

    /** A serialization on {@code mapper}; with {@code directWatchEvents}, watch events decode in one pass. */
    static KubernetesSerialization create(ObjectMapper mapper, boolean directWatchEvents) {
        return create(mapper, directWatchEvents, true, true);
    }

    private static KubernetesSerialization create(ObjectMapper mapper, boolean directWatchEvents, boolean shareEmptyMaps,
            boolean skipManagedFields) {
        if (!directWatchEvents) {
            return new KubernetesSerialization(mapper, true);
        }
        KubernetesSerialization s = new OnePassWatchEvents(mapper);
        // registered after fabric8's own modules, so it is the one Jackson asks first
        mapper.registerModule(new SimpleModule("qkcm-watch-events")
                .addDeserializer(WatchEvent.class, new WatchEventDeserializer(s::getRegisteredKubernetesResource)));
        if (shareEmptyMaps || skipManagedFields) {
            mapper.registerModule(CachedObjects.module(shareEmptyMaps, skipManagedFields));
        }
        return s;
    }

    /**
     * fabric8 unmarshals watch events from a String through a BufferedInputStream over a copy of its
     * bytes; this parses the bytes directly (Jackson's byte parser: ~20% less CPU per pod than its
     * String parser with C1, bench/decode).
     */
    private static final class OnePassWatchEvents extends KubernetesSerialization {
        private final ObjectMapper mapper;

        OnePassWatchEvents(ObjectMapper mapper) {
            super(mapper, true);
            this.mapper = mapper;
        }

        @Override
        public <T> T unmarshal(String str, Class<T> type) {
            if (type != WatchEvent.class) {
                return super.unmarshal(str, type);
            }
            try {
                return mapper.readValue(str.getBytes(StandardCharsets.UTF_8), type);
            } catch (IOException e) {
                throw KubernetesClientException.launderThrowable(e);
            }
        }
    }
}
