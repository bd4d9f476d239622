package io.qkcm.runtime.protobuf;

import java.io.IOException;
import java.util.function.Supplier;

import com.google.protobuf.CodedInputStream;

/** A kind with a generated decoder: its model class, how to make one, and how to read a message into it. */
record ProtobufKind<T>(String apiVersion, String kind, Class<T> type, Supplier<T> factory, Merge<T> merge,
        Write<T> write) {

    /** Writes {@code o}'s fields (back to front). */
    @FunctionalInterface
    interface Write<T> {
        void write(ProtobufWriter w, T o) throws ProtobufEncodingException;
    }

    /** Reads the fields of one message (up to the stream's limit or end) into {@code o}. */
    @FunctionalInterface
    interface Merge<T> {
        void merge(CodedInputStream in, T o) throws IOException;
    }

    T decode(CodedInputStream in) throws IOException {
        T o = factory.get();
        merge.merge(in, o);
        return o;
    }
}
