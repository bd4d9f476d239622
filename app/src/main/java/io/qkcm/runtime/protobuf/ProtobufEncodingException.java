package io.qkcm.runtime.protobuf;

import java.io.IOException;

/** An object this codec cannot write in protobuf without losing a value: the caller writes it in JSON. */
public final class ProtobufEncodingException extends IOException {

    private static final long serialVersionUID = 1L;

    public ProtobufEncodingException(String message) {
        super(message);
    }
}
