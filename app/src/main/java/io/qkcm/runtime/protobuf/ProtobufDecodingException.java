package io.qkcm.runtime.protobuf;

import java.io.IOException;

/**
 * A protobuf body this codec will not turn into a model object without losing something: a field number its
 * descriptors do not know (a newer API server), a kind it has no decoder for, or bytes that are not a valid
 * message. Never a partial object: the caller asks for the same thing again in JSON.
 */
public final class ProtobufDecodingException extends IOException {

    private static final long serialVersionUID = 1L;

    /** Why the body was not decoded. */
    public enum Reason {
        /** a wire field whose number (or wire type) the message's descriptor does not have */
        UNKNOWN_FIELD,
        /** a kind (apiVersion/kind or model class) without a generated decoder */
        NOT_DECODABLE,
        /** not a protobuf envelope or message */
        MALFORMED
    }

    private final Reason reason;

    public ProtobufDecodingException(Reason reason, String message) {
        super(message);
        this.reason = reason;
    }

    public Reason reason() {
        return reason;
    }
}
