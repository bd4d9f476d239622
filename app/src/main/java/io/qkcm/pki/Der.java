package io.qkcm.pki;

import java.io.ByteArrayOutputStream;
import java.math.BigInteger;
import java.nio.charset.Charset;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;

/**
 * A minimal ASN.1 DER encoder and decoder: just what qkcm needs for X.509 certificates, distinguished
 * names and PEM private keys.
 *
 * <p>
 * Exists so that the production code needs no BouncyCastle: its jars are signed, and the JVM verifies a
 * signed jar's RSA signatures when the first class is loaded from it, which cost about 2.6 s of CPU at
 * startup. Plain JDK code, no reflection, so it also works in a native image.
 *
 * <p>
 * Only single-byte (low-number) tags and definite lengths are supported, which is all DER uses for the
 * structures above. The decoder checks every length against its enclosing value and throws
 * {@link IllegalArgumentException} on malformed input.
 */
public final class Der {

    public static final int BOOLEAN = 0x01;
    public static final int INTEGER = 0x02;
    public static final int BIT_STRING = 0x03;
    public static final int OCTET_STRING = 0x04;
    public static final int NULL = 0x05;
    public static final int OID = 0x06;
    public static final int UTF8_STRING = 0x0c;
    public static final int NUMERIC_STRING = 0x12;
    public static final int PRINTABLE_STRING = 0x13;
    public static final int T61_STRING = 0x14;
    public static final int IA5_STRING = 0x16;
    public static final int UTC_TIME = 0x17;
    public static final int GENERALIZED_TIME = 0x18;
    public static final int VISIBLE_STRING = 0x1a;
    public static final int UNIVERSAL_STRING = 0x1c;
    public static final int BMP_STRING = 0x1e;
    public static final int SEQUENCE = 0x30;
    public static final int SET = 0x31;

    private static final DateTimeFormatter UTC_TIME_FORMAT = DateTimeFormatter.ofPattern("yyMMddHHmmss'Z'");
    private static final DateTimeFormatter GENERALIZED_TIME_FORMAT = DateTimeFormatter.ofPattern("yyyyMMddHHmmss'Z'");

    private Der() {
    }

    // ---- encoding ----

    /** A TLV with the given (single-byte) tag and the concatenation of {@code contents}. */
    public static byte[] tlv(int tag, byte[]... contents) {
        if (tag < 0 || tag > 0xff || (tag & 0x1f) == 0x1f) {
            throw new IllegalArgumentException("unsupported tag " + tag);
        }
        int length = 0;
        for (byte[] c : contents) {
            length += c.length;
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream(length + 6);
        out.write(tag);
        if (length < 0x80) {
            out.write(length);
        } else {
            int bytes = (32 - Integer.numberOfLeadingZeros(length) + 7) / 8;
            out.write(0x80 | bytes);
            for (int i = bytes - 1; i >= 0; i--) {
                out.write(length >>> (8 * i));
            }
        }
        for (byte[] c : contents) {
            out.writeBytes(c);
        }
        return out.toByteArray();
    }

    public static byte[] sequence(byte[]... contents) {
        return tlv(SEQUENCE, contents);
    }

    public static byte[] sequence(List<byte[]> contents) {
        return tlv(SEQUENCE, contents.toArray(byte[][]::new));
    }

    public static byte[] set(byte[]... contents) {
        return tlv(SET, contents);
    }

    /** {@code [n] EXPLICIT}: a constructed context-specific tag around {@code contents}. */
    public static byte[] explicit(int n, byte[]... contents) {
        return tlv(0xa0 | checkTagNumber(n), contents);
    }

    /** {@code [n] IMPLICIT} of a primitive value: {@code primitive}'s encoding with its tag replaced. */
    public static byte[] implicit(int n, byte[] primitive) {
        if (primitive.length < 2 || (primitive[0] & 0x20) != 0) {
            throw new IllegalArgumentException("not a primitive DER value");
        }
        byte[] out = primitive.clone();
        out[0] = (byte) (0x80 | checkTagNumber(n));
        return out;
    }

    private static int checkTagNumber(int n) {
        if (n < 0 || n >= 0x1f) {
            throw new IllegalArgumentException("unsupported tag number " + n);
        }
        return n;
    }

    public static byte[] integer(BigInteger value) {
        return tlv(INTEGER, value.toByteArray()); // two's complement, minimal: DER
    }

    public static byte[] integer(long value) {
        return integer(BigInteger.valueOf(value));
    }

    public static byte[] bool(boolean value) {
        return tlv(BOOLEAN, new byte[] { value ? (byte) 0xff : 0 });
    }

    public static byte[] nullValue() {
        return tlv(NULL);
    }

    public static byte[] octetString(byte[] value) {
        return tlv(OCTET_STRING, value);
    }

    /** A BIT STRING of whole bytes (no unused bits). */
    public static byte[] bitString(byte[] value) {
        return bitString(value, 0);
    }

    /** A BIT STRING whose last byte has {@code unusedBits} (0-7) unused low-order bits, which must be zero. */
    public static byte[] bitString(byte[] value, int unusedBits) {
        if (unusedBits < 0 || unusedBits > 7 || (value.length == 0 && unusedBits != 0)
                || (value.length > 0 && (value[value.length - 1] & ((1 << unusedBits) - 1)) != 0)) {
            throw new IllegalArgumentException("invalid unused bits " + unusedBits);
        }
        byte[] c = new byte[value.length + 1];
        c[0] = (byte) unusedBits;
        System.arraycopy(value, 0, c, 1, value.length);
        return tlv(BIT_STRING, c);
    }

    public static byte[] utf8String(String value) {
        return tlv(UTF8_STRING, value.getBytes(StandardCharsets.UTF_8));
    }

    public static byte[] ia5String(String value) {
        for (int i = 0; i < value.length(); i++) {
            if (value.charAt(i) > 0x7f) {
                throw new IllegalArgumentException("not an IA5String: non-ASCII character");
            }
        }
        return tlv(IA5_STRING, value.getBytes(StandardCharsets.US_ASCII));
    }

    public static byte[] oid(String dotted) {
        String[] parts = dotted.split("\\.", -1);
        if (parts.length < 2) {
            throw new IllegalArgumentException("invalid OID " + dotted);
        }
        BigInteger first = new BigInteger(parts[0]);
        BigInteger second = new BigInteger(parts[1]);
        if (first.signum() < 0 || first.intValue() > 2 || second.signum() < 0
                || (first.intValue() < 2 && second.compareTo(BigInteger.valueOf(40)) >= 0)) {
            throw new IllegalArgumentException("invalid OID " + dotted);
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        base128(first.multiply(BigInteger.valueOf(40)).add(second), out);
        for (int i = 2; i < parts.length; i++) {
            BigInteger arc = new BigInteger(parts[i]);
            if (arc.signum() < 0) {
                throw new IllegalArgumentException("invalid OID " + dotted);
            }
            base128(arc, out);
        }
        return tlv(OID, out.toByteArray());
    }

    private static void base128(BigInteger v, ByteArrayOutputStream out) {
        int groups = Math.max(1, (v.bitLength() + 6) / 7);
        for (int i = groups - 1; i >= 0; i--) {
            int b = v.shiftRight(7 * i).intValue() & 0x7f;
            out.write(i == 0 ? b : b | 0x80);
        }
    }

    /**
     * RFC 5280's Time, to the second: UTCTime for years 1950-2049, GeneralizedTime otherwise (as
     * BouncyCastle's and Go's certificate builders do).
     */
    public static byte[] time(Instant instant) {
        ZonedDateTime t = instant.truncatedTo(ChronoUnit.SECONDS).atZone(ZoneOffset.UTC);
        if (t.getYear() >= 1950 && t.getYear() < 2050) {
            return tlv(UTC_TIME, UTC_TIME_FORMAT.format(t).getBytes(StandardCharsets.US_ASCII));
        }
        return tlv(GENERALIZED_TIME, GENERALIZED_TIME_FORMAT.format(t).getBytes(StandardCharsets.US_ASCII));
    }

    // ---- decoding ----

    /** Decodes exactly one value spanning all of {@code der}. */
    public static Value decode(byte[] der) {
        Reader r = new Reader(der, 0, der.length);
        Value v = r.next();
        if (r.hasNext()) {
            throw new IllegalArgumentException("trailing data after DER value");
        }
        return v;
    }

    /** Sequential reader over the values in a byte range (a whole buffer, or a constructed value's contents). */
    public static final class Reader {
        private final byte[] buf;
        private final int end;
        private int pos;

        Reader(byte[] buf, int offset, int end) {
            this.buf = buf;
            this.pos = offset;
            this.end = end;
        }

        public boolean hasNext() {
            return pos < end;
        }

        /** The next value's tag without consuming it, or -1 at the end. */
        public int peekTag() {
            return pos < end ? buf[pos] & 0xff : -1;
        }

        public Value next() {
            if (pos >= end) {
                throw new IllegalArgumentException("unexpected end of DER data");
            }
            int start = pos;
            int tag = buf[pos++] & 0xff;
            if ((tag & 0x1f) == 0x1f) {
                throw new IllegalArgumentException("unsupported high-number DER tag");
            }
            if (pos >= end) {
                throw new IllegalArgumentException("truncated DER length");
            }
            int first = buf[pos++] & 0xff;
            int length;
            if (first < 0x80) {
                length = first;
            } else {
                int n = first & 0x7f;
                if (n == 0) {
                    throw new IllegalArgumentException("indefinite length is not DER");
                }
                if (n > 4 || end - pos < n) {
                    throw new IllegalArgumentException("invalid DER length");
                }
                long l = 0;
                for (int i = 0; i < n; i++) {
                    l = (l << 8) | (buf[pos++] & 0xff);
                }
                if (l > Integer.MAX_VALUE) {
                    throw new IllegalArgumentException("invalid DER length");
                }
                length = (int) l;
            }
            if (length > end - pos) {
                throw new IllegalArgumentException("DER length exceeds the enclosing data");
            }
            Value v = new Value(tag, buf, start, pos, length);
            pos += length;
            return v;
        }

        /** The next value, which must have the given tag. */
        public Value next(int expectedTag) {
            Value v = next();
            if (v.tag() != expectedTag) {
                throw new IllegalArgumentException(String.format("expected DER tag 0x%02x, got 0x%02x", expectedTag, v.tag()));
            }
            return v;
        }

        /** The next value if it has the given tag, else null (and nothing is consumed). */
        public Value optional(int tag) {
            return peekTag() == tag ? next() : null;
        }
    }

    /** One decoded TLV; refers to (does not copy) the decoder's buffer. */
    public static final class Value {
        private final int tag;
        private final byte[] buf;
        private final int start;
        private final int offset;
        private final int length;

        Value(int tag, byte[] buf, int start, int offset, int length) {
            this.tag = tag;
            this.buf = buf;
            this.start = start;
            this.offset = offset;
            this.length = length;
        }

        public int tag() {
            return tag;
        }

        public boolean constructed() {
            return (tag & 0x20) != 0;
        }

        /** A copy of the contents octets. */
        public byte[] contents() {
            byte[] c = new byte[length];
            System.arraycopy(buf, offset, c, 0, length);
            return c;
        }

        /** A copy of the whole encoding: tag, length and contents. */
        public byte[] encoded() {
            byte[] c = new byte[offset + length - start];
            System.arraycopy(buf, start, c, 0, c.length);
            return c;
        }

        /** A reader over the contents, for SEQUENCE, SET and explicitly tagged values. */
        public Reader reader() {
            if (!constructed()) {
                throw new IllegalArgumentException(String.format("DER tag 0x%02x is not constructed", tag));
            }
            return new Reader(buf, offset, offset + length);
        }

        public BigInteger integer() {
            expect(INTEGER);
            if (length == 0) {
                throw new IllegalArgumentException("empty INTEGER");
            }
            return new BigInteger(buf, offset, length);
        }

        public String oid() {
            expect(OID);
            if (length == 0 || (buf[offset + length - 1] & 0x80) != 0) {
                throw new IllegalArgumentException("invalid OID encoding");
            }
            StringBuilder sb = new StringBuilder();
            BigInteger arc = BigInteger.ZERO;
            boolean first = true;
            boolean startOfArc = true;
            for (int i = offset; i < offset + length; i++) {
                int b = buf[i] & 0xff;
                if (startOfArc && b == 0x80) {
                    throw new IllegalArgumentException("invalid OID encoding"); // non-minimal
                }
                arc = arc.shiftLeft(7).or(BigInteger.valueOf(b & 0x7f));
                startOfArc = (b & 0x80) == 0;
                if (startOfArc) {
                    if (first) {
                        int a = arc.compareTo(BigInteger.valueOf(80)) >= 0 ? 2 : arc.intValue() / 40;
                        sb.append(a).append('.').append(arc.subtract(BigInteger.valueOf(40L * a)));
                        first = false;
                    } else {
                        sb.append('.').append(arc);
                    }
                    arc = BigInteger.ZERO;
                }
            }
            return sb.toString();
        }

        public byte[] octetString() {
            expect(OCTET_STRING);
            return contents();
        }

        /** A BIT STRING's bytes; the number of unused bits must be zero. */
        public byte[] bitString() {
            expect(BIT_STRING);
            if (length == 0 || buf[offset] != 0) {
                throw new IllegalArgumentException("BIT STRING with unused bits");
            }
            byte[] c = new byte[length - 1];
            System.arraycopy(buf, offset + 1, c, 0, c.length);
            return c;
        }

        /** Whether this is one of the ASN.1 character string types {@link #string()} decodes. */
        public boolean isString() {
            return switch (tag) {
                case UTF8_STRING, NUMERIC_STRING, PRINTABLE_STRING, T61_STRING, IA5_STRING, VISIBLE_STRING,
                        UNIVERSAL_STRING, BMP_STRING -> true;
                default -> false;
            };
        }

        /** A character string's value (UTF8String, PrintableString, IA5String, BMPString, ...). */
        public String string() {
            if (tag == UNIVERSAL_STRING) {
                return utf32(); // decoded by hand: a native image need not include the UTF-32 charset
            }
            Charset cs = switch (tag) {
                case UTF8_STRING -> StandardCharsets.UTF_8;
                case NUMERIC_STRING, PRINTABLE_STRING, IA5_STRING, VISIBLE_STRING -> StandardCharsets.US_ASCII;
                case T61_STRING -> StandardCharsets.ISO_8859_1; // as Go and BouncyCastle: one byte, one char
                case BMP_STRING -> StandardCharsets.UTF_16BE;
                default -> throw new IllegalArgumentException(String.format("DER tag 0x%02x is not a string", tag));
            };
            return new String(buf, offset, length, cs);
        }

        private String utf32() {
            if (length % 4 != 0) {
                throw new IllegalArgumentException("invalid UniversalString length");
            }
            StringBuilder sb = new StringBuilder(length / 4);
            for (int i = offset; i < offset + length; i += 4) {
                int cp = ((buf[i] & 0xff) << 24) | ((buf[i + 1] & 0xff) << 16) | ((buf[i + 2] & 0xff) << 8)
                        | (buf[i + 3] & 0xff);
                if (!Character.isValidCodePoint(cp)) {
                    throw new IllegalArgumentException("invalid UniversalString character");
                }
                sb.appendCodePoint(cp);
            }
            return sb.toString();
        }

        private void expect(int expected) {
            if (tag != expected) {
                throw new IllegalArgumentException(String.format("expected DER tag 0x%02x, got 0x%02x", expected, tag));
            }
        }
    }

    /** Hex of bytes, lower case. */
    public static String hex(byte[] bytes) {
        StringBuilder sb = new StringBuilder(bytes.length * 2);
        for (byte b : bytes) {
            sb.append(Character.forDigit((b >> 4) & 0xf, 16)).append(Character.forDigit(b & 0xf, 16));
        }
        return sb.toString();
    }

    /** The children of a constructed value, for convenience. */
    public static List<Value> children(Value constructed) {
        List<Value> out = new ArrayList<>();
        Reader r = constructed.reader();
        while (r.hasNext()) {
            out.add(r.next());
        }
        return out;
    }
}
