package io.qkcm.runtime.clients;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.module.blackbird.BlackbirdModule;

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
 * {@code -Dio.qkcm.jackson-tuning=false} gives each client fabric8's default (for A/B measurements).
 */
public final class ApiSerialization {

    private static final boolean TUNED = !"false".equals(System.getProperty("io.qkcm.jackson-tuning"));
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
                    ObjectMapper mapper = new ObjectMapper();
                    if (System.getProperty("org.graalvm.nativeimage.imagecode") == null) {
                        mapper.registerModule(new BlackbirdModule());
                    }
                    s = shared = new KubernetesSerialization(mapper, true);
                }
            }
        }
        return s;
    }
}
