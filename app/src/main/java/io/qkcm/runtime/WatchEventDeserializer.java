package io.qkcm.runtime;

import java.io.IOException;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.BiFunction;

import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.util.JsonParserSequence;
import com.fasterxml.jackson.databind.DeserializationContext;
import com.fasterxml.jackson.databind.JsonDeserializer;
import com.fasterxml.jackson.databind.deser.std.StdDeserializer;
import com.fasterxml.jackson.databind.util.TokenBuffer;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.KubernetesResource;
import io.fabric8.kubernetes.api.model.WatchEvent;

/**
 * Decodes a watch event's object straight into its model class.
 * <p>
 * fabric8 7.4 decodes {@code WatchEvent.object} with its KubernetesDeserializer, which first reads the
 * whole object into a JsonNode tree to find its kind, then binds the tree to the class: every object
 * of every watch is parsed twice. The API server writes an object's {@code kind} and
 * {@code apiVersion} first (Go encodes the inlined TypeMeta before the other fields), so reading those
 * two fields from the stream is enough to pick the class, whose bean deserializer then binds the rest
 * of the object straight from the stream (a new model object already carries its kind and apiVersion).
 * Anything else (no kind first, an unregistered kind, a non-object) goes the KubernetesDeserializer's
 * way, with the fields read so far replayed from a small buffer.
 */
final class WatchEventDeserializer extends StdDeserializer<WatchEvent> {

    private static final Optional<Class<? extends KubernetesResource>> UNKNOWN = Optional.empty();
    /** Objects bound in one pass, for tests. */
    static final LongAdder DIRECT = new LongAdder();

    /** (apiVersion, kind) → the registered model class, or null. */
    private final BiFunction<String, String, Class<? extends KubernetesResource>> registry;
    private final ConcurrentHashMap<String, Optional<Class<? extends KubernetesResource>>> classes = new ConcurrentHashMap<>();
    /**
     * The model classes' bean deserializers. Jackson's lookup of a root value's deserializer introspects the
     * class's annotations again on every call (for a type deserializer): 9% of a pod's decoding (bench/decode,
     * JFR). This instance belongs to one mapper, whose deserializers are the same for every context.
     */
    private final ConcurrentHashMap<Class<?>, JsonDeserializer<Object>> deserializers = new ConcurrentHashMap<>();

    WatchEventDeserializer(BiFunction<String, String, Class<? extends KubernetesResource>> registry) {
        super(WatchEvent.class);
        this.registry = registry;
    }

    @Override
    public WatchEvent deserialize(JsonParser p, DeserializationContext ctxt) throws IOException {
        JsonToken t = p.currentToken();
        if (t == JsonToken.START_OBJECT) {
            t = p.nextToken();
        }
        WatchEvent event = new WatchEvent();
        for (; t == JsonToken.FIELD_NAME; t = p.nextToken()) {
            String name = p.currentName();
            p.nextToken();
            switch (name) {
                case "type" -> event.setType(p.getValueAsString());
                case "object" -> event.setObject(readObject(p, ctxt));
                default -> event.setAdditionalProperty(name, ctxt.readValue(p, Object.class));
            }
        }
        return event;
    }

    private Object readObject(JsonParser p, DeserializationContext ctxt) throws IOException {
        // a watch event's object goes into an informer's cache (CachedObjects' module, when registered, acts on it)
        ctxt.setAttribute(CachedObjects.FOR_CACHE, Boolean.TRUE);
        if (p.currentToken() != JsonToken.START_OBJECT) {
            return p.currentToken() == JsonToken.VALUE_NULL ? null : ctxt.readValue(p, KubernetesResource.class);
        }
        TokenBuffer head = ctxt.bufferForInputBuffering(p);
        head.writeStartObject();
        String apiVersion = null;
        String kind = null;
        JsonToken t = p.nextToken();
        while (t == JsonToken.FIELD_NAME && (apiVersion == null || kind == null)) {
            String name = p.currentName();
            boolean isKind = "kind".equals(name);
            if (!isKind && !"apiVersion".equals(name)) {
                break;
            }
            head.writeFieldName(name);
            t = p.nextToken();
            head.copyCurrentStructure(p);
            if (t == JsonToken.VALUE_STRING) {
                if (isKind) {
                    kind = p.getText();
                } else {
                    apiVersion = p.getText();
                }
            }
            t = p.nextToken();
        }
        Class<? extends KubernetesResource> type = apiVersion == null || kind == null ? null : classFor(apiVersion, kind);
        if (type != null) {
            // p stands on the object's next field (or its end): the bean deserializer goes on from there,
            // and the model class's own defaults are the kind and apiVersion just read (see classFor)
            DIRECT.increment();
            JsonDeserializer<Object> bean = deserializers.get(type);
            if (bean == null) {
                bean = ctxt.findRootValueDeserializer(ctxt.constructType(type));
                deserializers.put(type, bean);
            }
            return bean.deserialize(p, ctxt);
        }
        // fabric8's way, with the fields read so far replayed first
        JsonParser object = JsonParserSequence.createFlattened(true, head.asParser(p), p);
        object.nextToken();
        return ctxt.readValue(object, KubernetesResource.class);
    }

    private Class<? extends KubernetesResource> classFor(String apiVersion, String kind) {
        return classes.computeIfAbsent(apiVersion + "/" + kind, k -> {
            Class<? extends KubernetesResource> c = registry.apply(apiVersion, kind);
            // only plain model classes whose new instance already says this kind and apiVersion bind
            // directly (the fields were consumed); anything else keeps fabric8's way
            if (c == null || !HasMetadata.class.isAssignableFrom(c) || c.isInterface()) {
                return UNKNOWN;
            }
            try {
                HasMetadata blank = (HasMetadata) c.getDeclaredConstructor().newInstance();
                return kind.equals(blank.getKind()) && apiVersion.equals(blank.getApiVersion()) ? Optional.of(c) : UNKNOWN;
            } catch (ReflectiveOperationException | RuntimeException e) {
                return UNKNOWN;
            }
        }).orElse(null);
    }
}
