package io.qkcm.runtime;

import java.io.IOException;
import java.lang.invoke.LambdaMetafactory;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.Collections;
import java.util.Map;
import java.util.function.BiConsumer;
import java.util.function.Function;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.databind.BeanDescription;
import com.fasterxml.jackson.databind.DeserializationConfig;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.JsonDeserializer;
import com.fasterxml.jackson.databind.PropertyName;
import com.fasterxml.jackson.databind.deser.BeanDeserializerBuilder;
import com.fasterxml.jackson.databind.deser.BeanDeserializerModifier;
import com.fasterxml.jackson.databind.deser.SettableBeanProperty;
import com.fasterxml.jackson.databind.deser.std.DelegatingDeserializer;
import com.fasterxml.jackson.databind.annotation.JacksonStdImpl;
import com.fasterxml.jackson.databind.annotation.JsonDeserialize;
import com.fasterxml.jackson.databind.module.SimpleModule;

import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.Quantity;
import io.quarkus.runtime.annotations.RegisterForReflection;

/**
 * Objects decoded for the informers' caches: decoded without their managedFields, and sharing one empty
 * map for their {@code additionalProperties}.
 * <p>
 * <b>managedFields</b> are never read by a controller; the informers' store dropped them after decoding
 * (as upstream's informer transform does). In JSON they are a third of a pod's bytes, and fabric8 decodes
 * each {@code fieldsV1} into a tree of LinkedHashMaps, where Go's protobuf decoding keeps it as raw bytes.
 * Objects bound while {@link #FOR_CACHE} is set skip the field in the stream instead.
 * <p>
 * <b>additionalProperties</b>:
 * Every fabric8 model object carries a {@code LinkedHashMap} for fields the model does not know, made by
 * its constructor and almost always left empty: about 40 per cached pod, 22.6 MB of the heap with 10,000
 * pods (bench/results/2026-11-25-perf/scale). Go's structs have no such map. Objects bound while the
 * {@link #FOR_CACHE} attribute is set on the decoding context (watch events, which only the informers read)
 * get one shared, immutable empty map instead when theirs stayed empty. Cached objects are read-only by
 * contract (as upstream's listers' objects): a controller copies before it changes one, and fabric8's
 * builders copy the map ({@code withAdditionalProperties} makes a new {@code LinkedHashMap}), and so
 * does {@link DeepCopy}. bench/decode measures the two levers off in the same JVM
 * ({@link Json#create}'s variants).
 */
final class CachedObjects {

    /** The decoding-context attribute that marks objects bound for a cache. */
    static final Object FOR_CACHE = CachedObjects.class;

    private static final String MODEL_PACKAGE = "io.fabric8.kubernetes.api.model";

    private CachedObjects() {
    }

    static SimpleModule module(boolean shareEmptyMaps, boolean skipManagedFields) {
        SimpleModule module = new SimpleModule("qkcm-cached-objects");
        module.setDeserializerModifier(new BeanDeserializerModifier() {
            @Override
            public BeanDeserializerBuilder updateBuilder(DeserializationConfig config, BeanDescription desc,
                    BeanDeserializerBuilder builder) {
                if (skipManagedFields && desc.getBeanClass() == ObjectMeta.class) {
                    SettableBeanProperty managedFields = builder.findProperty(PropertyName.construct(MANAGED_FIELDS));
                    if (managedFields != null) {
                        builder.addOrReplaceProperty(new SkippedForCache(managedFields), true);
                    }
                }
                return builder;
            }

            @Override
            public JsonDeserializer<?> modifyDeserializer(DeserializationConfig config, BeanDescription desc,
                    JsonDeserializer<?> deserializer) {
                Accessors accessors = shareEmptyMaps ? accessorsFor(desc.getBeanClass()) : null;
                return accessors == null ? deserializer : new SharingEmptyMaps(deserializer, accessors);
            }
        });
        if (shareEmptyMaps) {
            // Quantity has a deserializer of its own, named by an annotation, which no modifier sees: a mix-in
            // names this one in its place
            module.setMixInAnnotation(Quantity.class, QuantityMixIn.class);
        }
        return module;
    }

    private static final String MANAGED_FIELDS = "managedFields";

    /** Shadow mode's reader of managedFields ({@link ManagedFieldsTap}); null: skip them unread. */
    static volatile ManagedFieldsTap tap;

    /** Decodes the field for the tap, hands the metadata to it, then drops the field as a skip would. */
    private static boolean tapped(SettableBeanProperty delegate, JsonParser p, DeserializationContext ctxt,
            Object instance) throws IOException {
        ManagedFieldsTap t = tap;
        if (t == null || !(instance instanceof ObjectMeta meta)) {
            return false;
        }
        delegate.deserializeAndSet(p, ctxt, instance);
        try {
            t.observe(meta);
        } finally {
            meta.setManagedFields(null);
        }
        return true;
    }

    /** A property whose value is skipped in the stream, not decoded, when the object is bound for a cache. */
    static final class SkippedForCache extends SettableBeanProperty.Delegating {
        SkippedForCache(SettableBeanProperty delegate) {
            super(delegate);
        }

        @Override
        protected SettableBeanProperty withDelegate(SettableBeanProperty d) {
            return new SkippedForCache(d);
        }

        @Override
        public void deserializeAndSet(JsonParser p, DeserializationContext ctxt, Object instance) throws IOException {
            if (ctxt.getAttribute(FOR_CACHE) != null) {
                if (!tapped(delegate, p, ctxt, instance)) {
                    p.skipChildren();
                    set(instance, null);
                }
                return;
            }
            delegate.deserializeAndSet(p, ctxt, instance);
        }

        @Override
        public Object deserializeSetAndReturn(JsonParser p, DeserializationContext ctxt, Object instance) throws IOException {
            if (ctxt.getAttribute(FOR_CACHE) != null) {
                if (tapped(delegate, p, ctxt, instance)) {
                    return instance;
                }
                p.skipChildren();
                return setAndReturn(instance, null);
            }
            return delegate.deserializeSetAndReturn(p, ctxt, instance);
        }
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
            return Json.NATIVE_IMAGE ? reflective(get, set) : generated(type, get, set);
        } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
            return null;
        } catch (VirtualMachineError e) {
            throw e;
        } catch (Throwable e) {
            // LambdaMetafactory's factory call declares Throwable; anything it throws: no sharing for this class
            return null;
        }
    }

    /**
     * The two methods as a Function and a BiConsumer made by LambdaMetafactory, as Blackbird does for the
     * setters: an interface call. Through {@code Method.invoke} (method handles since JDK 18, not inlined by
     * C1) the two calls per decoded object were ~40% of the decoding's CPU (bench/decode, JFR).
     */
    @SuppressWarnings("unchecked")
    private static Accessors generated(Class<?> type, Method get, Method set) throws Throwable {
        MethodHandles.Lookup lookup = MethodHandles.lookup();
        MethodHandle getter = lookup.unreflect(get);
        MethodHandle setter = lookup.unreflect(set);
        Function<Object, Object> g = (Function<Object, Object>) LambdaMetafactory.metafactory(lookup, "apply",
                MethodType.methodType(Function.class), MethodType.methodType(Object.class, Object.class), getter,
                MethodType.methodType(Map.class, type)).getTarget().invoke();
        BiConsumer<Object, Object> st = (BiConsumer<Object, Object>) LambdaMetafactory.metafactory(lookup, "accept",
                MethodType.methodType(BiConsumer.class), MethodType.methodType(void.class, Object.class, Object.class),
                setter, MethodType.methodType(void.class, type, Map.class)).getTarget().invoke();
        return new Accessors(g, st);
    }

    /** The native image defines no classes at run time: reflection there. */
    private static Accessors reflective(Method get, Method set) {
        return new Accessors(bean -> {
            try {
                return get.invoke(bean);
            } catch (ReflectiveOperationException e) {
                return null;
            }
        }, (bean, map) -> {
            try {
                set.invoke(bean, map);
            } catch (ReflectiveOperationException e) {
                // left as it is: the object is only larger
            }
        });
    }

    /** Replaces {@code bean}'s additionalProperties by the shared empty map when it is empty. */
    static void shareEmptyMap(Object bean, Accessors accessors) {
        Object map = accessors.get.apply(bean);
        if (map instanceof Map<?, ?> m && m.isEmpty() && m != Collections.emptyMap()) {
            accessors.set.accept(bean, Collections.emptyMap());
        }
    }

    /** A model class's getAdditionalProperties and setAdditionalProperties. */
    record Accessors(Function<Object, Object> get, BiConsumer<Object, Object> set) {
    }

    /**
     * A model class's deserializer that shares the empty map when the object is bound for a cache.
     * <p>
     * Marked as one of Jackson's own: Blackbird keeps its generated setter only for properties whose value
     * deserializer is Jackson's (or its own), and fell back to {@code Method.invoke} for every property of a
     * model type (Pod.spec, Container.resources, each Volume source, ...) once this one wrapped theirs.
     */
    @JacksonStdImpl
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
