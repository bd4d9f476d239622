package io.qkcm.runtime.protobuf;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import com.google.protobuf.CodedInputStream;
import com.google.protobuf.WireFormat;

import io.fabric8.kubernetes.api.model.FieldsV1;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Quantity;
import io.qkcm.runtime.Json;

/**
 * What the generated decoders call for the API machinery's own wire types (Go types with hand-written
 * protobuf marshalling upstream) and for the wire's plumbing. Each value comes out exactly as fabric8's JSON
 * decoding of the API server's JSON for the same field would make it.
 */
final class Decoding {

    /** RFC 3339 in UTC, seconds only: metav1.Time's JSON form. */
    private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("yyyy-MM-dd'T'HH:mm:ss'Z'")
            .withZone(ZoneOffset.UTC);
    /** RFC 3339 in UTC with 6 fraction digits: metav1.MicroTime's JSON form (RFC3339Micro). */
    private static final DateTimeFormatter MICRO_TIME = DateTimeFormatter
            .ofPattern("yyyy-MM-dd'T'HH:mm:ss.SSSSSS'Z'").withZone(ZoneOffset.UTC);

    private Decoding() {
    }

    /** Set while objects bound for an informer's cache are decoded: their managedFields are skipped unread. */
    private static final ThreadLocal<Boolean> FOR_CACHE = ThreadLocal.withInitial(() -> Boolean.FALSE);

    /** Skipped unless shadow mode taps them ({@link io.qkcm.runtime.ManagedFieldsTap}): then decoded, handed over, dropped. */
    static boolean skipsManagedFields() {
        return FOR_CACHE.get() && io.qkcm.runtime.ManagedFieldsTap.installed() == null;
    }

    /**
     * After an object for a cache is decoded: shadow mode's tap sees its metadata with the managedFields (the
     * last field of ObjectMeta on the wire, so everything else is there), which are then dropped, as the JSON
     * decoding for caches does.
     */
    static void tapped(Object decoded) {
        io.qkcm.runtime.ManagedFieldsTap tap = io.qkcm.runtime.ManagedFieldsTap.installed();
        if (tap == null) {
            return;
        }
        if (decoded instanceof io.fabric8.kubernetes.api.model.KubernetesResourceList<?> list && list.getItems() != null) {
            list.getItems().forEach(Decoding::tapped);
        } else if (decoded instanceof io.fabric8.kubernetes.api.model.HasMetadata o && o.getMetadata() != null) {
            try {
                tap.observe(o.getMetadata());
            } finally {
                o.getMetadata().setManagedFields(null);
            }
        }
    }

    static void forCache(boolean forCache) {
        FOR_CACHE.set(forCache);
    }

    /** Enters a length-delimited embedded message; returns the limit to give back to {@link #leave}. */
    /** {@code qkcm.tuning.shared-strings}, set once at startup ({@link ProtobufWire#sharedStrings}). */
    static volatile boolean sharedStrings = true;

    /**
     * A {@code string} field: as {@code readString} (malformed UTF-8 becomes U+FFFD), through {@link SharedStrings}
     * when short.
     */
    static String string(CodedInputStream in) throws IOException {
        if (!sharedStrings) {
            return in.readString();
        }
        int size = in.readRawVarint32();
        if (size > 0 && size <= SharedStrings.MAX_BYTES) {
            return SharedStrings.of(in.readRawBytes(size), size);
        }
        if (size == 0) {
            return "";
        }
        if (size < 0) {
            throw malformed("negative length");
        }
        return new String(in.readRawBytes(size), StandardCharsets.UTF_8);
    }

    static int enter(CodedInputStream in) throws IOException {
        int length = in.readRawVarint32();
        if (length < 0) {
            throw malformed("negative length");
        }
        return in.pushLimit(length);
    }

    static void leave(CodedInputStream in, int oldLimit) throws IOException {
        if (!in.isAtEnd()) {
            throw malformed("embedded message not read to its end");
        }
        in.popLimit(oldLimit);
    }

    /**
     * A tag the message's descriptor does not have (a field of a newer API, or a known field number with
     * another wire type): never skipped, so nothing is lost without the caller knowing.
     */
    static ProtobufDecodingException unknownField(int tag, String message) {
        return new ProtobufDecodingException(ProtobufDecodingException.Reason.UNKNOWN_FIELD,
                message + " has no field " + WireFormat.getTagFieldNumber(tag) + " (wire type "
                        + WireFormat.getTagWireType(tag) + ") in this build's descriptors");
    }

    static ProtobufDecodingException malformed(String what) {
        return new ProtobufDecodingException(ProtobufDecodingException.Reason.MALFORMED, what);
    }

    /** Proto {@code bytes} as JSON gives them: the base64 string ([]byte's JSON form), which fabric8 keeps. */
    static String base64(CodedInputStream in) throws IOException {
        return Base64.getEncoder().encodeToString(in.readByteArray());
    }

    /** resource.Quantity: {@code optional string string = 1}, the canonical string JSON also carries. */
    static Quantity quantity(CodedInputStream in) throws IOException {
        int limit = enter(in);
        String value = "";
        for (int tag; (tag = in.readTag()) != 0;) {
            if (tag == (1 << 3 | WireFormat.WIRETYPE_LENGTH_DELIMITED)) {
                value = in.readString();
            } else {
                throw unknownField(tag, "resource.Quantity");
            }
        }
        leave(in, limit);
        return new Quantity(value);
    }

    /** intstr.IntOrString: type (0 int, 1 string), intVal, strVal; JSON carries the one the type names. */
    static IntOrString intOrString(CodedInputStream in) throws IOException {
        int limit = enter(in);
        long type = 0;
        int intVal = 0;
        String strVal = "";
        for (int tag; (tag = in.readTag()) != 0;) {
            switch (tag) {
                case 1 << 3 | WireFormat.WIRETYPE_VARINT -> type = in.readInt64();
                case 2 << 3 | WireFormat.WIRETYPE_VARINT -> intVal = in.readInt32();
                case 3 << 3 | WireFormat.WIRETYPE_LENGTH_DELIMITED -> strVal = in.readString();
                default -> throw unknownField(tag, "intstr.IntOrString");
            }
        }
        leave(in, limit);
        return type == 1 ? new IntOrString(strVal) : new IntOrString(intVal);
    }

    /** The seconds and nanos of a metav1.Timestamp (the wire form of Time and MicroTime). */
    private static Instant timestamp(CodedInputStream in, String message) throws IOException {
        int length = in.readRawVarint32();
        if (length == 0) {
            return null; // upstream: an empty message unmarshals into the zero time
        }
        if (length < 0) {
            throw malformed("negative length");
        }
        int limit = in.pushLimit(length);
        long seconds = 0;
        int nanos = 0;
        for (int tag; (tag = in.readTag()) != 0;) {
            switch (tag) {
                case 1 << 3 | WireFormat.WIRETYPE_VARINT -> seconds = in.readInt64();
                case 2 << 3 | WireFormat.WIRETYPE_VARINT -> nanos = in.readInt32();
                default -> throw unknownField(tag, message);
            }
        }
        leave(in, limit);
        return Instant.ofEpochSecond(seconds, nanos);
    }

    /**
     * metav1.Time: JSON has whole seconds (RFC 3339, UTC); upstream's proto unmarshalling reads the nanos
     * and drops them too (time_proto.go), so a Time with nanos reads as its second. An empty message is
     * the zero Time, which JSON writes as null: null.
     */
    static String time(CodedInputStream in) throws IOException {
        Instant t = timestamp(in, "meta.v1.Time");
        return t == null ? null : Seconds.text(t.getEpochSecond());
    }

    /**
     * metav1.MicroTime: RFC 3339 with 6 fraction digits, UTC; nanos truncated to microseconds as upstream;
     * the zero MicroTime (an empty message) is null.
     */
    static String microTime(CodedInputStream in) throws IOException {
        Instant t = timestamp(in, "meta.v1.MicroTime");
        if (t == null) {
            return null;
        }
        String seconds = Seconds.text(t.getEpochSecond());
        if (seconds.length() != 20) {
            return MICRO_TIME.format(t); // a year outside 0000–9999
        }
        int micros = t.getNano() / 1000;
        byte[] b = new byte[27];
        for (int i = 0; i < 19; i++) {
            b[i] = (byte) seconds.charAt(i);
        }
        b[19] = '.';
        for (int i = 25; i >= 20; i--) {
            b[i] = (byte) ('0' + micros % 10);
            micros /= 10;
        }
        b[26] = 'Z';
        return new String(b, java.nio.charset.StandardCharsets.ISO_8859_1);
    }

    /**
     * metav1.Time's text for an epoch second, written without DateTimeFormatter (a kwok pod carries 7 Times;
     * protobuf decoding per pod went from 8.2 to 6.0 µs of CPU, bench/results/2026-11-28-decode-times) and
     * shared: the last text made for each of
     * 1024 slots (second modulo 1024) is kept, so the many Times of one second (a scale-up's pods, their
     * conditions) are one String, as the shared-strings cache would make them, and made once.
     */
    static final class Seconds {
        private static final int SLOTS = 1024;
        private static final Entry[] RECENT = new Entry[SLOTS];

        /** Immutable (final fields): entries can be read and replaced by any thread without locks. */
        private record Entry(long second, String text) {
        }

        private Seconds() {
        }

        static String text(long epochSecond) {
            int slot = (int) (epochSecond & (SLOTS - 1));
            Entry e = RECENT[slot];
            if (e != null && e.second == epochSecond) {
                return e.text;
            }
            String text = format(epochSecond);
            RECENT[slot] = new Entry(epochSecond, text);
            return text;
        }

        /** yyyy-MM-ddTHH:mm:ssZ in UTC; years outside 0000–9999 as DateTimeFormatter writes them. */
        static String format(long epochSecond) {
            java.time.LocalDateTime t = java.time.LocalDateTime.ofEpochSecond(epochSecond, 0, ZoneOffset.UTC);
            int year = t.getYear();
            if (year < 0 || year > 9999) {
                return TIME.format(Instant.ofEpochSecond(epochSecond));
            }
            byte[] b = new byte[20];
            digits(b, 0, year, 4);
            b[4] = '-';
            digits(b, 5, t.getMonthValue(), 2);
            b[7] = '-';
            digits(b, 8, t.getDayOfMonth(), 2);
            b[10] = 'T';
            digits(b, 11, t.getHour(), 2);
            b[13] = ':';
            digits(b, 14, t.getMinute(), 2);
            b[16] = ':';
            digits(b, 17, t.getSecond(), 2);
            b[19] = 'Z';
            return new String(b, java.nio.charset.StandardCharsets.ISO_8859_1);
        }

        private static void digits(byte[] b, int at, int value, int width) {
            for (int i = at + width - 1; i >= at; i--) {
                b[i] = (byte) ('0' + value % 10);
                value /= 10;
            }
        }
    }

    /**
     * A MicroTime where fabric8's property is a ZonedDateTime (a Lease's acquireTime and renewTime, whose
     * JSON pattern ends in a literal 'Z'): in the zone Jackson gives such a value, read once from Jackson itself.
     */
    static java.time.ZonedDateTime microTimeZoned(CodedInputStream in) throws IOException {
        Instant t = timestamp(in, "meta.v1.MicroTime");
        return t == null ? null
                : java.time.ZonedDateTime.ofInstant(Instant.ofEpochSecond(t.getEpochSecond(), t.getNano() / 1000 * 1000),
                        JACKSON_ZONE);
    }

    /**
     * The zone fabric8's Jackson gives a decoded ZonedDateTime: the offset "Z" of the RFC 3339 text, ZoneOffset.UTC
     * (not the ZoneRegion "UTC"), so objects decoded either way are equal ({@code ProtobufSpecialTypesTest} pins it
     * against Jackson). Learnt once by decoding a LeaseSpec in JSON, it cost the start's first write, the
     * Lease's, ~10 ms of Jackson defining its accessors for LeaseSpec.
     */
    private static final java.time.ZoneId JACKSON_ZONE = java.time.ZoneOffset.UTC;

    /** A MicroTime where fabric8's property is its MicroTime class. */
    static io.fabric8.kubernetes.api.model.MicroTime microTimeObject(CodedInputStream in) throws IOException {
        String t = microTime(in);
        return t == null ? null : new io.fabric8.kubernetes.api.model.MicroTime(t);
    }

    /** The zero of an untyped scalar: "", false, 0. */
    static boolean isZero(Object v) {
        return v instanceof String s ? s.isEmpty()
                : v instanceof Boolean b ? !b
                        : v instanceof Number n && n.doubleValue() == 0;
    }

    /** metav1.Duration: {@code optional int64 duration = 1} nanoseconds; JSON has Go's Duration.String(). */
    static String duration(CodedInputStream in) throws IOException {
        int limit = enter(in);
        long nanos = 0;
        for (int tag; (tag = in.readTag()) != 0;) {
            if (tag == (1 << 3 | WireFormat.WIRETYPE_VARINT)) {
                nanos = in.readInt64();
            } else {
                throw unknownField(tag, "meta.v1.Duration");
            }
        }
        leave(in, limit);
        return goDuration(nanos);
    }

    /** Go's time.Duration.String(): "1h2m3.5s", "1.5ms", "0s". */
    static String goDuration(long d) {
        if (d == 0) {
            return "0s";
        }
        boolean negative = d < 0;
        // the magnitude as unsigned, so that Long.MIN_VALUE prints as Go prints it
        long u = negative ? -d : d;
        StringBuilder out = new StringBuilder();
        if (Long.compareUnsigned(u, 1_000_000_000L) < 0) {
            // under a second: the largest unit that keeps a non-zero integer part
            String unit;
            int precision;
            if (u < 1_000L) {
                return (negative ? "-" : "") + u + "ns";
            } else if (u < 1_000_000L) {
                unit = "µs";
                precision = 3;
            } else {
                unit = "ms";
                precision = 6;
            }
            out.append(fraction(u, precision)).append(unit);
        } else {
            long seconds = Long.divideUnsigned(u, 1_000_000_000L);
            long frac = Long.remainderUnsigned(u, 1_000_000_000L);
            StringBuilder s = new StringBuilder();
            s.append(seconds % 60);
            if (frac != 0) {
                String f = String.format("%09d", frac).replaceAll("0+$", "");
                s.append('.').append(f);
            }
            s.append('s');
            long minutes = seconds / 60;
            if (minutes > 0) {
                s.insert(0, (minutes % 60) + "m");
                long hours = minutes / 60;
                if (hours > 0) {
                    s.insert(0, hours + "h");
                }
            }
            out.append(s);
        }
        return (negative ? "-" : "") + out;
    }

    /** v / 10^precision with the fraction's trailing zeros dropped, as Go's fmtFrac does. */
    private static String fraction(long v, int precision) {
        long scale = (long) Math.pow(10, precision);
        long whole = v / scale;
        long frac = v % scale;
        if (frac == 0) {
            return Long.toString(whole);
        }
        String f = String.format("%0" + precision + "d", frac).replaceAll("0+$", "");
        return whole + "." + f;
    }

    /** metav1.FieldsV1: {@code optional bytes Raw = 1}, the JSON object JSON embeds as it is. */
    static FieldsV1 fieldsV1(CodedInputStream in) throws IOException {
        byte[] raw = rawBytes(in, "meta.v1.FieldsV1");
        return raw == null ? new FieldsV1() : Json.api().unmarshal(new String(raw, StandardCharsets.UTF_8), FieldsV1.class);
    }

    /**
     * runtime.RawExtension ({@code optional bytes raw = 1}) read into {@code type}: its bytes are JSON where
     * a built-in type embeds arbitrary content (a ControllerRevision's data), which is what JSON embeds too.
     */
    static <T> T rawExtension(CodedInputStream in, Class<T> type) throws IOException {
        byte[] raw = rawBytes(in, "runtime.RawExtension");
        if (raw == null || raw.length == 0) {
            return null;
        }
        if (KubernetesProtobuf.hasMagic(raw)) {
            // an object in its own protobuf envelope (a watch event's object): decoded by kind
            return type.cast(KubernetesProtobuf.decode(raw));
        }
        return Json.api().unmarshal(new String(raw, StandardCharsets.UTF_8), type);
    }

    /**
     * runtime.RawExtension into a property fabric8 types as Object (a ControllerRevision's data): what
     * fabric8's JSON decoding of {@code {"property": raw}} into the owner puts there.
     */
    static <O> Object rawExtensionProperty(CodedInputStream in, Class<O> owner, String property,
            java.util.function.Function<O, Object> getter) throws IOException {
        byte[] raw = rawBytes(in, "runtime.RawExtension");
        if (raw == null || raw.length == 0) {
            return null;
        }
        if (KubernetesProtobuf.hasMagic(raw)) {
            return KubernetesProtobuf.decode(raw);
        }
        String json = "{\"" + property + "\":" + new String(raw, StandardCharsets.UTF_8) + "}";
        return getter.apply(Json.api().unmarshal(json, owner));
    }

    /** The {@code bytes} field 1 of a one-field wrapper message (FieldsV1, RawExtension), or null if absent. */
    static byte[] rawBytes(CodedInputStream in, String message) throws IOException {
        int limit = enter(in);
        byte[] raw = null;
        for (int tag; (tag = in.readTag()) != 0;) {
            if (tag == (1 << 3 | WireFormat.WIRETYPE_LENGTH_DELIMITED)) {
                raw = in.readByteArray();
            } else {
                throw unknownField(tag, message);
            }
        }
        leave(in, limit);
        return raw;
    }

    /** An int64 where JSON decoding has no declared type (additionalProperties): Integer if it fits, as Jackson. */
    static Object untypedInteger(long v) {
        return v == (int) v ? (Object) (int) v : (Object) v;
    }

    /** Appends to a list kept in additionalProperties (a repeated proto field fabric8 has no property for). */
    @SuppressWarnings("unchecked")
    static void addAdditional(Map<String, Object> additional, String name, Object value) {
        Object list = additional.get(name);
        if (!(list instanceof List)) {
            list = new ArrayList<>();
            additional.put(name, list);
        }
        ((List<Object>) list).add(value);
    }

    /** Puts into a map kept in additionalProperties (a proto map field fabric8 has no property for). */
    @SuppressWarnings("unchecked")
    static void putAdditional(Map<String, Object> additional, String name, String key, Object value) {
        Object map = additional.get(name);
        if (!(map instanceof Map)) {
            map = new LinkedHashMap<>();
            additional.put(name, map);
        }
        ((Map<String, Object>) map).put(key, value);
    }

    /**
     * A Go named slice of strings (certificates' ExtraValue): proto wraps it in a message with
     * {@code repeated string items = 1}; JSON has the bare list.
     */
    static List<String> stringItems(CodedInputStream in) throws IOException {
        int limit = enter(in);
        List<String> items = new ArrayList<>();
        for (int tag; (tag = in.readTag()) != 0;) {
            if (tag == (1 << 3 | WireFormat.WIRETYPE_LENGTH_DELIMITED)) {
                items.add(in.readString());
            } else {
                throw unknownField(tag, "string items");
            }
        }
        leave(in, limit);
        return items;
    }
}
