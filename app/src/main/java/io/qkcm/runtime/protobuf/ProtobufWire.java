package io.qkcm.runtime.protobuf;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import org.jboss.logging.Logger;

/**
 * Which resource types qkcm reads and writes in protobuf: upstream's {@code --kube-api-content-type}
 * (default {@value KubernetesProtobuf#MEDIA_TYPE}) for every kind this build has a generated decoder for,
 * JSON for the others (custom resources, kinds without a fabric8 model at the served version) and for a
 * kind whose protobuf could not be decoded once (a newer API server's field, say): from then on that
 * kind is JSON for the life of the process, and the log says so, once. Nothing is lost: the read that
 * failed is asked again in JSON.
 */
public final class ProtobufWire {

    private static final Logger LOG = Logger.getLogger(ProtobufWire.class);
    private static volatile boolean enabled = true;
    private static volatile boolean writes = true;
    private static final Map<Class<?>, String> FELL_BACK = new ConcurrentHashMap<>();
    private static volatile boolean watchesOverWebSocket = false;

    private ProtobufWire() {
    }

    /** Upstream's {@code --kube-api-content-type}: protobuf unless it names another media type. */
    public static void contentType(String mediaType) {
        enabled = mediaType == null || mediaType.isEmpty() || mediaType.trim().startsWith(KubernetesProtobuf.MEDIA_TYPE);
    }

    public static boolean enabled() {
        return enabled;
    }

    /** Whether reads and writes of {@code type} go in protobuf now. */
    public static boolean forType(Class<?> type) {
        return enabled && KubernetesProtobuf.canDecode(type) && !FELL_BACK.containsKey(type);
    }

    /**
     * Writes stay JSON whatever the content type when {@code false}: shadow mode compares the bodies qkcm would
     * write with upstream's, as JSON.
     */
    public static void writesInProtobuf(boolean inProtobuf) {
        writes = inProtobuf;
    }

    /**
     * How protobuf watches travel ({@code qkcm.tuning.protobuf-watch}): {@code false} (the default) a streaming
     * GET of length-prefixed frames (client-go's), {@code true} a WebSocket, one binary message per event
     * (fabric8's watch transport). Over HTTP/2 watches are always streaming GETs, as fabric8's.
     */
    public static void watchesOverWebSocket(boolean webSocket) {
        watchesOverWebSocket = webSocket;
    }

    public static boolean watchesOverWebSocket() {
        return watchesOverWebSocket;
    }

    /** Whether creates and updates of {@code type} go in protobuf now. */
    public static boolean writes(Class<?> type) {
        return writes && forType(type);
    }

    /** Why {@code type} is JSON (for the startup line), or null when it is protobuf. */
    public static String whyJson(Class<?> type) {
        if (!enabled) {
            return "--kube-api-content-type is not " + KubernetesProtobuf.MEDIA_TYPE;
        }
        if (!KubernetesProtobuf.canDecode(type)) {
            return "no protobuf decoder for " + type.getSimpleName() + " in this build";
        }
        return FELL_BACK.get(type);
    }

    /** {@code type}'s protobuf could not be decoded or encoded: JSON from now on. */
    public static void fallBack(Class<?> type, Exception why) {
        if (FELL_BACK.putIfAbsent(type, why.getMessage() == null ? why.toString() : why.getMessage()) == null) {
            LOG.warnf("%s: protobuf could not be decoded (%s); reading and writing it in JSON from now on",
                    type.getSimpleName(), why.getMessage());
        }
    }

    /** {@code qkcm.tuning.shared-strings}: short decoded strings through {@link SharedStrings} (the default). */
    public static void sharedStrings(boolean shared) {
        Decoding.sharedStrings = shared;
    }

    /** For tests: every kind protobuf again, strings shared. */
    public static void reset() {
        FELL_BACK.clear();
        enabled = true;
        writes = true;
        Decoding.sharedStrings = true;
        watchesOverWebSocket = false;
    }
}
