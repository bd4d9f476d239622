package io.qkcm.runtime.clients;

import java.io.IOException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.Collections;
import java.util.Map;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.BeanDescription;
import com.fasterxml.jackson.databind.DeserializationConfig;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.JsonDeserializer;
import com.fasterxml.jackson.databind.deser.BeanDeserializerModifier;
import com.fasterxml.jackson.databind.deser.std.DelegatingDeserializer;
import com.fasterxml.jackson.databind.annotation.JsonDeserialize;
import com.fasterxml.jackson.databind.module.SimpleModule;

import io.fabric8.kubernetes.api.model.Quantity;
import io.quarkus.runtime.annotations.RegisterForReflection;

/**
 * Objects decoded for the informers' caches share one empty map for their {@code additionalProperties}.
 * <p>
 * Every fabric8 model object carries a {@code LinkedHashMap} for fields the model does not know, made by
 * its constructor and almost always left empty: about 40 per cached pod, 22.6 MB of the heap with 10,000
 * pods (bench/results/2026-11-25-perf/scale). Go's structs have no such map. Objects bound while the
 * {@link #FOR_CACHE} attribute is set on the decoding context (watch events, which only the informers read)
 * get one shared, immutable empty map instead when theirs stayed empty. Cached objects are read-only by
 * contract (as upstream's listers' objects): a controller copies before it changes one, and fabric8's
 * builders copy the map ({@code withAdditionalProperties} makes a new {@code LinkedHashMap}).
 * {@code -Dio.qkcm.shared-empty-maps=false} turns it off (the benchmark's A/B switch).
 */
final class CachedObjects {

    static final boolean ENABLED = !"false".equals(System.getProperty("io.qkcm.shared-empty-maps"));
    /** The decoding-context attribute that marks objects bound for a cache. */
    static final Object FOR_CACHE = CachedObjects.class;

    private static final String MODEL_PACKAGE = "io.fabric8.kubernetes.api.model";

    private CachedObjects() {
    }

    static SimpleModule module() {
        SimpleModule module = new SimpleModule("qkcm-cached-objects");
        module.setDeserializerModifier(new BeanDeserializerModifier() {
            @Override
            public JsonDeserializer<?> modifyDeserializer(DeserializationConfig config, BeanDescription desc,
                    JsonDeserializer<?> deserializer) {
                Accessors accessors = accessorsFor(desc.getBeanClass());
                return accessors == null ? deserializer : new SharingEmptyMaps(deserializer, accessors);
            }
        });
        // Quantity has a deserializer of its own, named by an annotation, which no modifier sees: a mix-in
        // names this one in its place
        module.setMixInAnnotation(Quantity.class, QuantityMixIn.class);
        return module;
    }

    // both read by Jackson through reflection: registered for the native image
    @RegisterForReflection
    @JsonDeserialize(using = SharingQuantityDeserializer.class)
    abstract static class QuantityMixIn {
    }

    /** fabric8's Quantity deserializer, sharing the empty map for cached objects. */
    @RegisterForReflection
    static final class SharingQuantityDeserializer extends Quantity.Deserializer {
        private static final Accessors ACCESSORS = accessorsFor(Quantity.class);

        @Override
        public Quantity deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
            Quantity q = super.deserialize(p, ctxt);
            if (q != null && ACCESSORS != null && ctxt.getAttribute(FOR_CACHE) != null) {
                shareEmptyMap(q, ACCESSORS);
            }
            return q;
        }
    }

    /** The getter and setter of a model class's additionalProperties, or null for any other class. */
    static Accessors accessorsFor(Class<?> type) {
        if (!type.getName().startsWith(MODEL_PACKAGE) || !Modifier.isPublic(type.getModifiers())) {
            return null;
        }
        try {
            Method get = type.getMethod("getAdditionalProperties");
            Method set = type.getMethod("setAdditionalProperties", Map.class);
            if (get.getReturnType() != Map.class) {
                return null;
            }
            return new Accessors(get, set);
        } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
            return null;
        }
    }

    /** Replaces {@code bean}'s additionalProperties by the shared empty map when it is empty. */
    static void shareEmptyMap(Object bean, Accessors accessors) {
        try {
            Object map = accessors.get.invoke(bean);
            if (map instanceof Map<?, ?> m && m.isEmpty() && m != Collections.emptyMap()) {
                accessors.set.invoke(bean, Collections.emptyMap());
            }
        } catch (ReflectiveOperationException e) {
            // left as it is: the object is only larger
        }
    }

    /** The two methods of a model class, called by reflection (one generated class per model class, ~320,
     * would cost more metaspace than the calls cost time). */
    record Accessors(Method get, Method set) {
    }

    /** A model class's deserializer that shares the empty map when the object is bound for a cache. */
    static final class SharingEmptyMaps extends DelegatingDeserializer {
        private final Accessors accessors;

        SharingEmptyMaps(JsonDeserializer<?> delegate, Accessors accessors) {
            super(delegate);
            this.accessors = accessors;
        }

        @Override
        protected JsonDeserializer<?> newDelegatingInstance(JsonDeserializer<?> newDelegatee) {
            return new SharingEmptyMaps(newDelegatee, accessors);
        }

        @Override
        public Object deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
            Object bean = _delegatee.deserialize(p, ctxt);
            if (bean != null && ctxt.getAttribute(FOR_CACHE) != null) {
                shareEmptyMap(bean, accessors);
            }
            return bean;
        }
    }
}
