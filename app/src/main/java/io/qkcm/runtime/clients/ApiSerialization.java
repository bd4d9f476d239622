package io.qkcm.runtime.clients;

import java.io.IOException;
import java.nio.charset.StandardCharsets;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.module.SimpleModule;
import com.fasterxml.jackson.module.blackbird.BlackbirdModule;

import io.fabric8.kubernetes.api.model.WatchEvent;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;

/**
 * The JSON (de)serialisation of API objects, one for every client of the process.
 * <p>
 * fabric8 gives each client a {@link KubernetesSerialization} of its own: an ObjectMapper whose
 * (de)serializers are built and warmed per client, and a scan of the model classes per client at
 * startup. One shared instance builds them once. In JVM mode its mapper also has Jackson's Blackbird
 * module, which calls the model's setters, getters and constructors through generated lambdas instead of
 * reflection: with JDK 25's method-handle reflection and C1 only, reflective calls were ~11% of qkcm's
 * CPU under load (JFR, bench/results/2026-11-25-perf/profile.md). Blackbird defines classes at run
 * time, which a native image cannot: there the mapper stays as it is.
 * <p>
 * Watch events are decoded in one pass ({@link WatchEventDeserializer}), straight from the String fabric8
 * hands over, instead of fabric8's String → bytes → JsonNode tree → object.
 * {@code -Dio.qkcm.watch-decode=tree} keeps fabric8's way, {@code -Dio.qkcm.jackson-tuning=false} gives
 * each client fabric8's default serialization altogether (both for A/B measurements).
 */
public final class ApiSerialization {

    private static final boolean TUNED = !"false".equals(System.getProperty("io.qkcm.jackson-tuning"));
    private static final boolean DIRECT_WATCH_EVENTS = !"tree".equals(System.getProperty("io.qkcm.watch-decode"));
    /** Blackbird generates the model's setters too (see create); false: constructors only, as before 2026-11-25. */
    private static final boolean BLACKBIRD_SETTERS = !"false".equals(System.getProperty("io.qkcm.blackbird-setters"));
    /** Whether this is a native image (GraalVM sets the property at build and at run time). */
    static final boolean NATIVE_IMAGE = System.getProperty("org.graalvm.nativeimage.imagecode") != null;
    private static volatile KubernetesSerialization shared;

    private ApiSerialization() {
    }

    /** The serialization for a new client: the shared one, or null for fabric8's own default. */
    public static KubernetesSerialization forClient() {
        if (!TUNED) {
            return null;
        }
        KubernetesSerialization s = shared;
        if (s == null) {
            synchronized (ApiSerialization.class) {
                s = shared;
                if (s == null) {
                    // the native image defines no classes at run time: no Blackbird there
                    boolean blackbird = !NATIVE_IMAGE;
                    ObjectMapper mapper = new ObjectMapper();
                    if (blackbird && !BLACKBIRD_SETTERS) {
                        // registered first: fabric8's wrappers hide the setters from it (constructors only)
                        mapper.registerModule(new BlackbirdModule());
                    }
                    s = shared = create(mapper, DIRECT_WATCH_EVENTS, blackbird && BLACKBIRD_SETTERS);
                }
            }
        }
        return s;
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
     * {@code -Dio.qkcm.blackbird-setters=false} registers it first again.
     */
    static KubernetesSerialization create(ObjectMapper mapper, boolean directWatchEvents, boolean blackbird) {
        return create(mapper, directWatchEvents, blackbird, CachedObjects.SHARE_EMPTY_MAPS, CachedObjects.SKIP_MANAGED_FIELDS);
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
        return create(mapper, directWatchEvents, CachedObjects.SHARE_EMPTY_MAPS, CachedObjects.SKIP_MANAGED_FIELDS);
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
