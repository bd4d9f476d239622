package io.qkcm.pki;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.HexFormat;
import java.util.List;

import org.bouncycastle.asn1.ASN1BitString;
import org.bouncycastle.asn1.ASN1Integer;
import org.bouncycastle.asn1.ASN1ObjectIdentifier;
import org.bouncycastle.asn1.ASN1Primitive;
import org.bouncycastle.asn1.ASN1Sequence;
import org.bouncycastle.asn1.ASN1UTCTime;
import org.bouncycastle.asn1.ASN1GeneralizedTime;
import org.bouncycastle.asn1.DERBMPString;
import org.bouncycastle.asn1.DEROctetString;
import org.bouncycastle.asn1.DERUniversalString;
import org.bouncycastle.asn1.DERT61String;
import org.junit.jupiter.api.Test;

/** {@link Der}, cross-checked against BouncyCastle (test scope only). */
class DerTest {

    private static byte[] hex(String h) {
        return HexFormat.of().parseHex(h);
    }

    @Test
    void integersAreMinimalTwosComplement() throws Exception {
        for (BigInteger v : List.of(BigInteger.ZERO, BigInteger.ONE, BigInteger.valueOf(127), BigInteger.valueOf(128),
                BigInteger.valueOf(255), BigInteger.valueOf(256), BigInteger.valueOf(-1), BigInteger.valueOf(-128),
                BigInteger.valueOf(-129), BigInteger.TWO.pow(63), BigInteger.TWO.pow(2048).subtract(BigInteger.ONE))) {
            byte[] enc = Der.integer(v);
            assertThat(enc).as("%s", v).isEqualTo(new ASN1Integer(v).getEncoded());
            assertThat(Der.decode(enc).integer()).isEqualTo(v);
        }
        assertThat(Der.integer(128)).isEqualTo(hex("02020080"));
    }

    @Test
    void lengthsUseShortAndLongForm() throws Exception {
        for (int n : new int[] { 0, 1, 127, 128, 255, 256, 65535, 65536, 300_000 }) {
            byte[] content = new byte[n];
            if (n > 0) {
                content[n - 1] = 7;
            }
            byte[] enc = Der.octetString(content);
            assertThat(enc).as("length %d", n).isEqualTo(new DEROctetString(content).getEncoded());
            assertThat(Der.decode(enc).octetString()).isEqualTo(content);
        }
        assertThat(Der.octetString(new byte[128])).startsWith(hex("048180"));
        assertThat(Der.octetString(new byte[256])).startsWith(hex("04820100"));
    }

    @Test
    void oidsRoundTripAndMatchBouncyCastle() throws Exception {
        for (String oid : List.of("2.5.4.3", "2.5.4.10", "1.2.840.113549.1.1.1", "1.2.840.10045.2.1",
                "1.3.132.0.34", "1.3.6.1.5.5.7.3.1", "0.9.2342.19200300.100.1.25", "2.999.3",
                "2.25.329800735698586629295641978511506172918", "1.2.3.4294967296")) {
            byte[] enc = Der.oid(oid);
            assertThat(enc).as(oid).isEqualTo(new ASN1ObjectIdentifier(oid).getEncoded());
            assertThat(Der.decode(enc).oid()).isEqualTo(oid);
        }
        assertThat(Der.oid("1.2.840.10045.4.3.2")).isEqualTo(hex("06082a8648ce3d040302"));
        assertThatThrownBy(() -> Der.oid("1.40")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Der.oid("3.1")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Der.oid("1")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Der.decode(hex("06028001")).oid()).as("non-minimal arc")
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Der.decode(hex("060181")).oid()).as("unterminated arc")
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void timesAreUtcTimeBefore2050AndGeneralizedTimeAfter() throws Exception {
        Instant t = Instant.parse("2026-03-04T05:06:07.891Z");
        byte[] utc = Der.time(t);
        assertThat(utc).isEqualTo(new ASN1UTCTime("260304050607Z").getEncoded());
        assertThat(new String(Der.decode(utc).contents(), StandardCharsets.US_ASCII)).isEqualTo("260304050607Z");
        Instant late = Instant.parse("2050-01-01T00:00:00Z");
        assertThat(Der.time(late)).isEqualTo(new ASN1GeneralizedTime("20500101000000Z").getEncoded());
        assertThat(Der.decode(Der.time(Instant.parse("1949-12-31T23:59:59Z"))).tag()).isEqualTo(Der.GENERALIZED_TIME);
    }

    @Test
    void bitStringsBooleansNullAndConstructedValues() throws Exception {
        assertThat(Der.bitString(new byte[] { (byte) 0x80 }, 7)).isEqualTo(hex("03020780"));
        assertThat(Der.bitString(new byte[] { 1, 2 })).isEqualTo(new org.bouncycastle.asn1.DERBitString(new byte[] { 1, 2 })
                .getEncoded());
        assertThat(Der.decode(Der.bitString(new byte[] { 1, 2 })).bitString()).containsExactly(1, 2);
        assertThatThrownBy(() -> Der.decode(hex("03020780")).bitString()).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Der.bitString(new byte[] { 1 }, 1)).isInstanceOf(IllegalArgumentException.class);
        assertThat(Der.bool(true)).isEqualTo(hex("0101ff"));
        assertThat(Der.bool(false)).isEqualTo(hex("010100"));
        assertThat(Der.nullValue()).isEqualTo(hex("0500"));

        byte[] seq = Der.sequence(Der.integer(1), Der.explicit(3, Der.sequence()), Der.set(Der.utf8String("x")),
                Der.implicit(2, Der.ia5String("example.com")));
        ASN1Sequence bc = (ASN1Sequence) ASN1Primitive.fromByteArray(seq);
        assertThat(bc.size()).isEqualTo(4);
        assertThat(bc.getEncoded()).isEqualTo(seq);

        Der.Reader r = Der.decode(seq).reader();
        assertThat(r.next().integer()).isEqualTo(1);
        assertThat(r.peekTag()).isEqualTo(0xa3);
        assertThat(r.optional(0xa0)).isNull();
        Der.Value tagged = r.next(0xa3);
        assertThat(tagged.reader().next(Der.SEQUENCE).reader().hasNext()).isFalse();
        assertThat(Der.children(r.next(Der.SET))).singleElement().satisfies(v -> assertThat(v.string()).isEqualTo("x"));
        Der.Value dns = r.next(0x82);
        assertThat(new String(dns.contents(), StandardCharsets.US_ASCII)).isEqualTo("example.com");
        assertThat(r.hasNext()).isFalse();
        assertThat(r.peekTag()).isEqualTo(-1);
        assertThatThrownBy(r::next).isInstanceOf(IllegalArgumentException.class);
        assertThat(Der.decode(seq).encoded()).isEqualTo(seq);
    }

    @Test
    void stringsOfEveryDirectoryStringType() throws Exception {
        assertThat(Der.decode(Der.utf8String("grüße, 世界")).string()).isEqualTo("grüße, 世界");
        assertThat(Der.decode(new DERBMPString("grüße 世界").getEncoded()).string()).isEqualTo("grüße 世界");
        assertThat(Der.decode(new DERT61String("caf\u00e9").getEncoded()).string()).isEqualTo("caf\u00e9");
        byte[] universal = Der.tlv(Der.UNIVERSAL_STRING, hex("000000610001f600"));
        assertThat(Der.decode(universal).string()).isEqualTo("a" + new String(Character.toChars(0x1F600)));
        assertThatThrownBy(() -> Der.decode(Der.tlv(Der.UNIVERSAL_STRING, hex("000061"))).string())
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(Der.decode(new DERUniversalString(hex("00000062")).getEncoded()).string()).isEqualTo("b");
        assertThat(Der.decode(Der.tlv(Der.PRINTABLE_STRING, "abc".getBytes(StandardCharsets.US_ASCII))).isString()).isTrue();
        assertThat(Der.decode(Der.integer(1)).isString()).isFalse();
        assertThatThrownBy(() -> Der.decode(Der.integer(1)).string()).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Der.ia5String("ü")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void malformedInputIsRejected() {
        for (String bad : List.of("", "30", "3004020101", "308002010100", "04850100000000", "3001", "1f0100",
                "300302010100", "0201", "0200")) {
            assertThatThrownBy(() -> {
                Der.Value v = Der.decode(hex(bad));
                if (v.tag() == Der.INTEGER) {
                    v.integer();
                }
                if (v.constructed()) {
                    Der.children(v);
                }
            }).as(bad).isInstanceOf(IllegalArgumentException.class);
        }
        assertThatThrownBy(() -> Der.decode(hex("0201017f")).integer()).as("trailing data")
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Der.decode(hex("020101")).reader()).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Der.decode(hex("020101")).oid()).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Der.decode(hex("3000")).reader().next(Der.INTEGER))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Der.decode(hex("30030401ff")).reader().next(Der.INTEGER))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void bouncyCastleReadsWhatDerWrites() throws Exception {
        byte[] enc = Der.sequence(Der.oid("2.5.4.3"), Der.bitString(new byte[] { 9 }), Der.time(Instant.EPOCH.plusSeconds(1L << 31)));
        ASN1Sequence s = ASN1Sequence.getInstance(enc);
        assertThat(s.getObjectAt(0)).isEqualTo(new ASN1ObjectIdentifier("2.5.4.3"));
        assertThat(((ASN1BitString) s.getObjectAt(1)).getOctets()).containsExactly(9);
        assertThat(((ASN1UTCTime) s.getObjectAt(2)).getAdjustedDate().toInstant()).isEqualTo(Instant.EPOCH.plusSeconds(1L << 31));
    }
}
