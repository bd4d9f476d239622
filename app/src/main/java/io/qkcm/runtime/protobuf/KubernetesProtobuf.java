package io.qkcm.runtime.protobuf;

import java.io.IOException;
import java.util.Map;

import com.google.protobuf.ByteString;
import com.google.protobuf.CodedInputStream;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.WireFormat;

import io.fabric8.kubernetes.api.model.KubernetesResource;
import io.fabric8.kubernetes.api.model.WatchEvent;

/**
 * Kubernetes' protobuf wire format ({@value #MEDIA_TYPE}), read straight into fabric8's model classes.
 * <p>
 * A body is the magic {@code k8s\0} and a {@code runtime.Unknown}: the object's apiVersion and kind, and
 * its own message's bytes (upstream's k8s.io/apimachinery/pkg/runtime/serializer/protobuf). Watch streams
 * are frames of a 4-byte big-endian length and a {@code meta.v1.WatchEvent} message whose object's raw
 * bytes are such a body ({@link ProtobufWatchFrames}).
 * <p>
 * The decoders are generated, not written: {@code ProtobufDecoderGenerator} (app/src/test/java, same
 * package) walks Kubernetes' protobuf descriptors (those k8s.io/api v0.34.4's Go types register, exported by
 * hack/protobuf-fields; see the package javadoc) and writes, for every message reachable from the kinds it lists, a static method
 * that switches on the wire tag and calls the fabric8 model's setter for the JSON property of the same name
 * (no reflection at run time: native-image safe). Regenerate with
 * {@code nice ./mvnw -B -ntp -o -pl app test -Dqkcm.control-plane.skip=true
 * -Dtest=ProtobufGeneratedSourcesTest -Dqkcm.protobuf.regenerate=true}; without the property that test
 * fails when the committed sources differ from what the generator writes.
 * <p>
 * Nothing is lost silently:
 * <ul>
 * <li>a proto field fabric8 has no property for: a scalar (or repeated scalar) goes into the object's
 * additionalProperties as JSON decoding would put it; an embedded message JSON inlines (Volume's
 * VolumeSource) lands on the enclosing object; any other such field makes the generator leave the whole
 * kind out ({@link #notDecodable()}, with the reason), so the caller uses JSON for it;</li>
 * <li>a field number (or wire type) the descriptors do not have — a newer API server's field — fails the
 * decoding with {@link ProtobufDecodingException.Reason#UNKNOWN_FIELD}: the caller decodes that response in
 * JSON instead (and may switch the kind to JSON for good). Skipping it would drop data a later write of the
 * object would erase.</li>
 * </ul>
 */
public final class KubernetesProtobuf {

    /** The Accept / Content-Type of Kubernetes' protobuf encoding. */
    public static final String MEDIA_TYPE = "application/vnd.kubernetes.protobuf";
    /** The watch stream's content type. */
    public static final String WATCH_MEDIA_TYPE = MEDIA_TYPE + ";stream=watch";

    private static final byte[] MAGIC = { 'k', '8', 's', 0 };

    private KubernetesProtobuf() {
    }

    /** Whether {@code type} (a fabric8 model class) has a generated decoder. */
    public static boolean canDecode(Class<?> type) {
        return kindOf(type) != null;
    }

    /** apiVersion/kind → why there is no decoder for it (JSON for those). */
    public static Map<String, String> notDecodable() {
        return ProtobufDecoders.NOT_DECODABLE;
    }

    /** Model class → its kind: asked on every write and watch start, so a lookup, not a scan of the kinds. */
    private static final Map<Class<?>, ProtobufKind<?>> BY_TYPE;

    static {
        Map<Class<?>, ProtobufKind<?>> byType = new java.util.HashMap<>();
        for (ProtobufKind<?> k : ProtobufDecoders.KINDS.values()) {
            byType.putIfAbsent(k.type(), k);
        }
        BY_TYPE = Map.copyOf(byType);
    }

    private static ProtobufKind<?> kindOf(Class<?> type) {
        return BY_TYPE.get(type);
    }

    static boolean hasMagic(byte[] body) {
        return body.length >= MAGIC.length && body[0] == MAGIC[0] && body[1] == MAGIC[1] && body[2] == MAGIC[2]
                && body[3] == MAGIC[3];
    }

    /** An API response body (an object, a list, a Status), decoded by the kind its envelope names. */
    public static Object decode(byte[] body) throws ProtobufDecodingException {
        return decode(body, Object.class);
    }

    /** An API response body, which must be a {@code type} (or a Status, thrown as a mismatch). */
    public static <T> T decode(byte[] body, Class<T> type) throws ProtobufDecodingException {
        if (!hasMagic(body)) {
            throw Decoding.malformed("no protobuf envelope (k8s\\0) at the start of the body");
        }
        try {
            CodedInputStream in = CodedInputStream.newInstance(body, MAGIC.length, body.length - MAGIC.length);
            in.enableAliasing(true);
            String apiVersion = "";
            String kind = "";
            ByteString raw = ByteString.EMPTY;
            String contentEncoding = "";
            for (int tag; (tag = in.readTag()) != 0;) {
                switch (tag) {
                    case 1 << 3 | WireFormat.WIRETYPE_LENGTH_DELIMITED -> { // typeMeta
                        int limit = Decoding.enter(in);
                        for (int t; (t = in.readTag()) != 0;) {
                            switch (t) {
                                case 1 << 3 | WireFormat.WIRETYPE_LENGTH_DELIMITED -> apiVersion = in.readString();
                                case 2 << 3 | WireFormat.WIRETYPE_LENGTH_DELIMITED -> kind = in.readString();
                                default -> throw Decoding.unknownField(t, "runtime.TypeMeta");
                            }
                        }
                        Decoding.leave(in, limit);
                    }
                    case 2 << 3 | WireFormat.WIRETYPE_LENGTH_DELIMITED -> raw = in.readBytes();
                    case 3 << 3 | WireFormat.WIRETYPE_LENGTH_DELIMITED -> contentEncoding = in.readString();
                    case 4 << 3 | WireFormat.WIRETYPE_LENGTH_DELIMITED -> in.readString(); // contentType: protobuf
                    default -> throw Decoding.unknownField(tag, "runtime.Unknown");
                }
            }
            if (!contentEncoding.isEmpty()) {
                throw Decoding.malformed("content encoding " + contentEncoding + " of " + apiVersion + "/" + kind);
            }
            String key = apiVersion + "/" + kind;
            ProtobufKind<?> decoder = ProtobufDecoders.KINDS.get(key);
            if (decoder == null) {
                String why = ProtobufDecoders.NOT_DECODABLE.get(key);
                throw new ProtobufDecodingException(ProtobufDecodingException.Reason.NOT_DECODABLE,
                        key + ": " + (why != null ? why : "not a kind this build decodes"));
            }
            if (!type.isAssignableFrom(decoder.type())) {
                throw new ProtobufDecodingException(ProtobufDecodingException.Reason.NOT_DECODABLE,
                        "a " + key + " where a " + type.getSimpleName() + " was expected");
            }
            CodedInputStream object = raw.newCodedInput();
            object.enableAliasing(true);
            return type.cast(decoder.decode(object));
        } catch (ProtobufDecodingException e) {
            throw e;
        } catch (InvalidProtocolBufferException e) {
            throw Decoding.malformed(e.getMessage());
        } catch (IOException e) {
            throw Decoding.malformed(e.toString());
        }
    }

    /**
     * {@code object} as a protobuf request body (envelope and message), for a create or an update with
     * Content-Type {@value #MEDIA_TYPE}. Refused ({@link ProtobufEncodingException}) when its kind has no
     * encoder or a value of it has no protobuf field (additionalProperties, a property newer than the
     * descriptors): the caller writes JSON then.
     */
    public static byte[] encode(Object object) throws ProtobufEncodingException {
        ProtobufKind<?> kind = kindOf(object.getClass());
        if (kind == null) {
            throw new ProtobufEncodingException(object.getClass().getName() + ": no protobuf encoder");
        }
        return encode(kind, object);
    }

    private static <T> byte[] encode(ProtobufKind<T> kind, Object object) throws ProtobufEncodingException {
        ProtobufWriter message = new ProtobufWriter();
        kind.write().write(message, kind.type().cast(object));
        ProtobufWriter envelope = new ProtobufWriter();
        // back to front: raw (2) last, typeMeta (1) first
        envelope.bytes(2, message.toByteArray());
        int typeMeta = envelope.mark();
        envelope.string(2, kind.kind());
        envelope.string(1, kind.apiVersion());
        envelope.endMessage(1, typeMeta);
        byte[] unknown = envelope.toByteArray();
        byte[] body = new byte[MAGIC.length + unknown.length];
        System.arraycopy(MAGIC, 0, body, 0, MAGIC.length);
        System.arraycopy(unknown, 0, body, MAGIC.length, unknown.length);
        return body;
    }

    /**
     * A watch frame's event for an informer's cache: as {@link #decodeWatchEvent}, but its object's
     * managedFields are skipped unread, as qkcm's JSON decoding of watch events does (never read by a
     * controller; decoding each FieldsV1 into maps would cost more than the rest of the object).
     */
    public static WatchEvent decodeWatchEventForCache(byte[] frame) throws ProtobufDecodingException {
        Decoding.forCache(true);
        try {
            WatchEvent event = decodeWatchEvent(frame);
            Decoding.tapped(event.getObject());
            return event;
        } finally {
            Decoding.forCache(false);
        }
    }

    /** A list for an informer's cache: as {@link #decode(byte[], Class)}, its items without managedFields. */
    public static <T> T decodeForCache(byte[] body, Class<T> type) throws ProtobufDecodingException {
        Decoding.forCache(true);
        try {
            T decoded = decode(body, type);
            Decoding.tapped(decoded);
            return decoded;
        } finally {
            Decoding.forCache(false);
        }
    }

    /**
     * One frame of a watch stream: a {@code meta.v1.WatchEvent} (type, and the object in its own envelope).
     * A frame that is itself in an envelope (kind WatchEvent) is accepted too.
     */
    public static WatchEvent decodeWatchEvent(byte[] frame) throws ProtobufDecodingException {
        try {
            CodedInputStream in;
            if (hasMagic(frame)) {
                in = unwrapWatchEvent(frame);
            } else {
                in = CodedInputStream.newInstance(frame);
            }
            String type = "";
            KubernetesResource object = null;
            for (int tag; (tag = in.readTag()) != 0;) {
                switch (tag) {
                    case 1 << 3 | WireFormat.WIRETYPE_LENGTH_DELIMITED -> type = in.readString();
                    case 2 << 3 | WireFormat.WIRETYPE_LENGTH_DELIMITED -> {
                        byte[] raw = Decoding.rawBytes(in, "runtime.RawExtension");
                        object = raw == null ? null : (KubernetesResource) decode(raw);
                    }
                    default -> throw Decoding.unknownField(tag, "meta.v1.WatchEvent");
                }
            }
            return new WatchEvent(object, type);
        } catch (ProtobufDecodingException e) {
            throw e;
        } catch (IOException | ClassCastException e) {
            throw Decoding.malformed(e.toString());
        }
    }

    private static CodedInputStream unwrapWatchEvent(byte[] frame) throws IOException {
        CodedInputStream in = CodedInputStream.newInstance(frame, MAGIC.length, frame.length - MAGIC.length);
        ByteString raw = null;
        for (int tag; (tag = in.readTag()) != 0;) {
            if (tag == (2 << 3 | WireFormat.WIRETYPE_LENGTH_DELIMITED)) {
                raw = in.readBytes();
            } else {
                in.skipField(tag); // typeMeta (WatchEvent), contentType
            }
        }
        if (raw == null) {
            throw Decoding.malformed("watch event envelope without raw bytes");
        }
        return raw.newCodedInput();
    }
}
