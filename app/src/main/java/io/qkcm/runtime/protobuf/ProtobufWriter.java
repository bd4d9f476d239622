package io.qkcm.runtime.protobuf;

import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.Arrays;
import java.util.Base64;
import java.util.Collection;
import java.util.List;
import java.util.Map;

import io.fabric8.kubernetes.api.model.FieldsV1;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.MicroTime;
import io.fabric8.kubernetes.api.model.Quantity;
import io.qkcm.runtime.Json;

/**
 * A protobuf message written back to front (as gogo-protobuf's MarshalToSizedBuffer does): an embedded
 * message's length is known once its fields are written, so one pass needs no sizes computed first. The
 * generated encoders therefore write fields, list elements and map entries in reverse order; the bytes read
 * front to back in the descriptor's order.
 */
final class ProtobufWriter {

    private byte[] buf = new byte[4096];
    /** The data is buf[pos..buf.length). */
    private int pos = buf.length;

    /** Bytes written so far: a mark for {@link #endMessage}. */
    int mark() {
        return buf.length - pos;
    }

    byte[] toByteArray() {
        return Arrays.copyOfRange(buf, pos, buf.length);
    }

    private void ensure(int n) {
        if (pos < n) {
            int used = buf.length - pos;
            int size = Math.max(buf.length * 2, used + n + 16);
            byte[] grown = new byte[size];
            System.arraycopy(buf, pos, grown, size - used, used);
            buf = grown;
            pos = size - used;
        }
    }

    private void raw(byte[] b) {
        ensure(b.length);
        pos -= b.length;
        System.arraycopy(b, 0, buf, pos, b.length);
    }

    private void varint(long v) {
        // its bytes front to back, then copied in before what is written
        byte[] tmp = new byte[10];
        int n = 0;
        while ((v & ~0x7FL) != 0) {
            tmp[n++] = (byte) ((v & 0x7F) | 0x80);
            v >>>= 7;
        }
        tmp[n++] = (byte) v;
        ensure(n);
        pos -= n;
        System.arraycopy(tmp, 0, buf, pos, n);
    }

    private void tag(int field, int wireType) {
        varint(field << 3 | wireType);
    }

    /** Closes an embedded message begun at {@code mark}: its length and tag go before it. */
    void endMessage(int field, int mark) {
        varint(mark() - mark);
        tag(field, 2);
    }

    void string(int field, String s) {
        bytes(field, s.getBytes(StandardCharsets.UTF_8));
    }

    void bytes(int field, byte[] b) {
        raw(b);
        varint(b.length);
        tag(field, 2);
    }

    void bool(int field, boolean v) {
        varint(v ? 1 : 0);
        tag(field, 0);
    }

    /** int32 and int64 alike: a negative int32 is sign-extended to ten bytes, as protobuf writes it. */
    void int64(int field, long v) {
        varint(v);
        tag(field, 0);
    }

    void dbl(int field, double v) {
        long bits = Double.doubleToRawLongBits(v);
        ensure(8);
        pos -= 8;
        for (int i = 0; i < 8; i++) {
            buf[pos + i] = (byte) (bits >>> (8 * i));
        }
        tag(field, 1);
    }

    // the API machinery's types

    /** Proto bytes are base64 in fabric8's model (JSON's form of []byte). */
    void base64(int field, String v) {
        bytes(field, Base64.getDecoder().decode(v));
    }

    void quantity(int field, Quantity q) {
        int m = mark();
        string(1, q.toString());
        endMessage(field, m);
    }

    void intOrString(int field, IntOrString v) {
        int m = mark();
        if (v.getStrVal() != null) {
            string(3, v.getStrVal());
            int64(2, 0);
            int64(1, 1);
        } else {
            int64(2, v.getIntVal() == null ? 0 : v.getIntVal());
            int64(1, 0);
        }
        endMessage(field, m);
    }

    /** metav1.Time from its RFC 3339 string: whole seconds, as upstream writes it. */
    void time(int field, String v) {
        int m = mark();
        int64(1, OffsetDateTime.parse(v).toEpochSecond());
        endMessage(field, m);
    }

    void microTime(int field, String v) {
        Instant t = OffsetDateTime.parse(v).toInstant();
        int m = mark();
        int nanos = t.getNano() / 1000 * 1000;
        if (nanos != 0) {
            int64(2, nanos);
        }
        int64(1, t.getEpochSecond());
        endMessage(field, m);
    }

    void microTime(int field, java.time.ZonedDateTime v) {
        Instant t = v.toInstant();
        int m = mark();
        int nanos = t.getNano() / 1000 * 1000;
        if (nanos != 0) {
            int64(2, nanos);
        }
        int64(1, t.getEpochSecond());
        endMessage(field, m);
    }

    void microTime(int field, MicroTime v) {
        if (v.getTime() != null) {
            microTime(field, v.getTime());
        }
    }

    /** FieldsV1 and RawExtension: {@code bytes raw = 1} holding the JSON that JSON embeds. */
    void fieldsV1(int field, FieldsV1 v) {
        rawJson(field, v);
    }

    void rawJson(int field, Object v) {
        int m = mark();
        bytes(1, Json.api().asJson(v).getBytes(StandardCharsets.UTF_8));
        endMessage(field, m);
    }

    /** A Go named slice of strings: the message {@code repeated string items = 1}. */
    void stringItems(int field, List<String> items) {
        int m = mark();
        for (int i = items.size() - 1; i >= 0; i--) {
            string(1, items.get(i));
        }
        endMessage(field, m);
    }

    /**
     * A model property (or additionalProperties) protobuf has no field for: writing the object would drop it,
     * so a non-empty one refuses the encoding (the caller writes JSON).
     */
    static void mustBeEmpty(Object value, String property) throws ProtobufEncodingException {
        boolean empty = value == null || value instanceof Collection<?> c && c.isEmpty()
                || value instanceof Map<?, ?> map && map.isEmpty();
        if (!empty) {
            throw new ProtobufEncodingException(property + " has no protobuf field: not encodable without loss");
        }
    }
}
