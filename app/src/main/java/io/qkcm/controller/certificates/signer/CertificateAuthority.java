package io.qkcm.controller.certificates.signer;

import java.math.BigInteger;
import java.security.GeneralSecurityException;
import java.security.PrivateKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.cert.X509Certificate;
import java.security.interfaces.ECKey;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

import io.qkcm.controller.certificates.X509CertificateRequest;
import io.qkcm.pki.Der;

/**
 * Upstream's authority package (pkg/controller/certificates/authority): a CA certificate and its key
 * signing a request under the {@link PermissiveSigningPolicy}. The certificate is what Go's
 * {@code x509.CreateCertificate} makes of upstream's template: v3, a random 128-bit serial, the CA's
 * subject as issuer, the request's subject re-encoded as Go's {@code pkix.Name} (known attributes only,
 * PrintableString where it fits, else UTF8String), the request's public key, and the extensions in Go's
 * order — key usage (critical), extended key usage, basic constraints CA:FALSE (critical), the CA's
 * subject key id as authority key id, the request's DNS/email/IP/URI names (critical when the subject is
 * empty) — signed SHA256withRSA, or ECDSA with the curve's hash.
 */
final class CertificateAuthority {

    private static final BigInteger SERIAL_LIMIT = BigInteger.ONE.shiftLeft(128);
    private static final SecureRandom RANDOM = new SecureRandom();

    private static final String OID_KEY_USAGE = "2.5.29.15";
    private static final String OID_EXT_KEY_USAGE = "2.5.29.37";
    private static final String OID_BASIC_CONSTRAINTS = "2.5.29.19";
    private static final String OID_SUBJECT_KEY_ID = "2.5.29.14";
    private static final String OID_AUTHORITY_KEY_ID = "2.5.29.35";
    private static final String OID_SUBJECT_ALT_NAME = "2.5.29.17";

    /** Go's x509.KeyUsage bits of the API's usages. */
    private static final Map<String, Integer> KEY_USAGES = Map.of("signing", 1, "digital signature", 1,
            "content commitment", 1 << 1, "key encipherment", 1 << 2, "key agreement", 1 << 4,
            "data encipherment", 1 << 3, "cert sign", 1 << 5, "crl sign", 1 << 6, "encipher only", 1 << 7,
            "decipher only", 1 << 8);

    /** Go's x509.ExtKeyUsage (its enum order, which sorts them) and OIDs. */
    private static final Map<String, Integer> EXT_KEY_USAGES = Map.ofEntries(Map.entry("any", 0),
            Map.entry("server auth", 1), Map.entry("client auth", 2), Map.entry("code signing", 3),
            Map.entry("email protection", 4), Map.entry("s/mime", 4), Map.entry("ipsec end system", 5),
            Map.entry("ipsec tunnel", 6), Map.entry("ipsec user", 7), Map.entry("timestamping", 8),
            Map.entry("ocsp signing", 9), Map.entry("microsoft sgc", 10), Map.entry("netscape sgc", 11));
    private static final String[] EXT_KEY_USAGE_OIDS = { "2.5.29.37.0", "1.3.6.1.5.5.7.3.1", "1.3.6.1.5.5.7.3.2",
            "1.3.6.1.5.5.7.3.3", "1.3.6.1.5.5.7.3.4", "1.3.6.1.5.5.7.3.5", "1.3.6.1.5.5.7.3.6", "1.3.6.1.5.5.7.3.7",
            "1.3.6.1.5.5.7.3.8", "1.3.6.1.5.5.7.3.9", "1.3.6.1.4.1.311.10.3.3", "2.16.840.1.113730.4.1" };

    /** Thrown when a request cannot be signed; the message is upstream's and carries no key material. */
    static final class SigningException extends Exception {
        SigningException(String message) {
            super(message, null, false, false);
        }
    }

    /** Upstream's PermissiveSigningPolicy. */
    record PermissiveSigningPolicy(Duration ttl, List<String> usages, Duration backdate, Duration shortLived,
            Instant now) {
    }

    private final X509Certificate certificate;
    private final PrivateKey privateKey;
    private final byte[] rawSubject;
    private final byte[] subjectKeyId;

    CertificateAuthority(X509Certificate certificate, PrivateKey privateKey) throws GeneralSecurityException {
        this.certificate = certificate;
        this.privateKey = privateKey;
        this.rawSubject = rawSubject(certificate);
        this.subjectKeyId = subjectKeyId(certificate);
    }

    X509Certificate certificate() {
        return certificate;
    }

    /** Upstream's Sign: the DER certificate for {@code request} under {@code policy}. */
    byte[] sign(X509CertificateRequest request, PermissiveSigningPolicy policy) throws SigningException {
        return sign(request, policy, new BigInteger(128, RANDOM).mod(SERIAL_LIMIT));
    }

    /** {@link #sign} with the serial given (tests compare with Go's certificate byte for byte). */
    byte[] sign(X509CertificateRequest request, PermissiveSigningPolicy policy, BigInteger serial)
            throws SigningException {
        try {
            request.checkSignature();
        } catch (GeneralSecurityException e) {
            throw new SigningException("unable to verify certificate request signature: " + e.getMessage());
        }

        // policy.apply
        int keyUsage = 0;
        TreeSet<Integer> extKeyUsages = new TreeSet<>();
        List<String> unrecognized = new ArrayList<>();
        for (String usage : policy.usages()) {
            if (KEY_USAGES.containsKey(usage)) {
                keyUsage |= KEY_USAGES.get(usage);
            } else if (EXT_KEY_USAGES.containsKey(usage)) {
                extKeyUsages.add(EXT_KEY_USAGES.get(usage));
            } else {
                unrecognized.add(usage);
            }
        }
        if (!unrecognized.isEmpty()) {
            throw new SigningException("unrecognized usage values: " + goQuoted(unrecognized));
        }
        Instant now = policy.now();
        Instant notBefore = now.minus(policy.backdate());
        Instant notAfter = policy.ttl().compareTo(policy.shortLived()) < 0 ? now.plus(policy.ttl())
                : now.plus(policy.ttl()).minus(policy.backdate());
        Instant signerNotAfter = certificate.getNotAfter().toInstant();
        if (!notAfter.isBefore(signerNotAfter)) {
            notAfter = signerNotAfter;
        }
        if (!notBefore.isBefore(signerNotAfter)) {
            throw new SigningException("the signer has expired: NotAfter=" + goTime(signerNotAfter));
        }
        if (!now.isBefore(signerNotAfter)) {
            throw new SigningException("refusing to sign a certificate that expired in the past: NotAfter="
                    + goTime(signerNotAfter));
        }

        byte[] subject = subject(request.subject());
        List<byte[]> extensions = new ArrayList<>();
        if (keyUsage != 0) {
            extensions.add(extension(OID_KEY_USAGE, true, keyUsage(keyUsage)));
        }
        if (!extKeyUsages.isEmpty()) {
            List<byte[]> oids = new ArrayList<>();
            extKeyUsages.forEach(u -> oids.add(Der.oid(EXT_KEY_USAGE_OIDS[u])));
            extensions.add(extension(OID_EXT_KEY_USAGE, false, Der.sequence(oids)));
        }
        extensions.add(extension(OID_BASIC_CONSTRAINTS, true, Der.sequence()));
        if (subjectKeyId != null && !Arrays.equals(rawSubject, subject)) {
            extensions.add(extension(OID_AUTHORITY_KEY_ID, false, Der.sequence(Der.implicit(0, Der.octetString(subjectKeyId)))));
        }
        List<byte[]> names = subjectAltNames(request);
        if (!names.isEmpty()) {
            boolean subjectIsEmpty = subject.length == 2;
            extensions.add(extension(OID_SUBJECT_ALT_NAME, subjectIsEmpty, Der.sequence(names)));
        }

        byte[] algorithm = signatureAlgorithm();
        byte[] tbs = Der.sequence(
                Der.explicit(0, Der.integer(2)),
                Der.integer(serial),
                algorithm,
                rawSubject,
                Der.sequence(Der.time(notBefore), Der.time(notAfter)),
                subject,
                request.rawSubjectPublicKeyInfo(),
                Der.explicit(3, Der.sequence(extensions)));
        try {
            Signature signer = Signature.getInstance(javaSignatureAlgorithm());
            signer.initSign(privateKey);
            signer.update(tbs);
            return Der.sequence(tbs, algorithm, Der.bitString(signer.sign()));
        } catch (GeneralSecurityException e) {
            throw new SigningException("failed to sign certificate: " + e.getClass().getSimpleName());
        }
    }

    /** Go's choice for the CA key: SHA256WithRSA, or ECDSA with SHA-256/384/512 by curve size. */
    private String javaSignatureAlgorithm() {
        if (privateKey instanceof ECKey ec) {
            int bits = ec.getParams().getCurve().getField().getFieldSize();
            return bits <= 256 ? "SHA256withECDSA" : bits <= 384 ? "SHA384withECDSA" : "SHA512withECDSA";
        }
        return "SHA256withRSA";
    }

    private byte[] signatureAlgorithm() {
        return switch (javaSignatureAlgorithm()) {
            case "SHA256withECDSA" -> Der.sequence(Der.oid("1.2.840.10045.4.3.2"));
            case "SHA384withECDSA" -> Der.sequence(Der.oid("1.2.840.10045.4.3.3"));
            case "SHA512withECDSA" -> Der.sequence(Der.oid("1.2.840.10045.4.3.4"));
            default -> Der.sequence(Der.oid("1.2.840.113549.1.1.11"), Der.nullValue());
        };
    }

    /** Go's marshalKeyUsage: the bits reversed into a BIT STRING, trailing zero bits unused. */
    static byte[] keyUsage(int ku) {
        byte a0 = (byte) (Integer.reverse(ku & 0xff) >>> 24);
        byte a1 = (byte) (Integer.reverse((ku >> 8) & 0xff) >>> 24);
        byte[] bits = a1 != 0 ? new byte[] { a0, a1 } : new byte[] { a0 };
        byte last = bits[bits.length - 1];
        int unused = last == 0 ? 0 : Integer.numberOfTrailingZeros(last & 0xff);
        return Der.bitString(bits, unused);
    }

    /** Go's marshalSANs: DNS names, emails, IPs (IPv4 in 4 bytes), URIs. */
    private static List<byte[]> subjectAltNames(X509CertificateRequest request) {
        List<byte[]> names = new ArrayList<>();
        request.dnsNames().forEach(d -> names.add(Der.implicit(2, Der.ia5String(d))));
        request.emailAddresses().forEach(e -> names.add(Der.implicit(1, Der.ia5String(e))));
        for (byte[] ip : request.ipAddresses()) {
            names.add(Der.implicit(7, Der.octetString(to4(ip))));
        }
        request.uris().forEach(u -> names.add(Der.implicit(6, Der.ia5String(u))));
        return names;
    }

    /** Go's net.IP.To4: an IPv4-mapped IPv6 address as its 4 bytes. */
    private static byte[] to4(byte[] ip) {
        if (ip.length == 16) {
            for (int i = 0; i < 10; i++) {
                if (ip[i] != 0) {
                    return ip;
                }
            }
            if (ip[10] == (byte) 0xff && ip[11] == (byte) 0xff) {
                return Arrays.copyOfRange(ip, 12, 16);
            }
        }
        return ip;
    }

    /** Go's pkix.Name.ToRDNSequence, marshalled: one RDN per attribute type, its values sorted as DER's SET OF. */
    static byte[] subject(X509CertificateRequest.Name n) {
        List<byte[]> rdns = new ArrayList<>();
        addRdn(rdns, "2.5.4.6", n.country());
        addRdn(rdns, "2.5.4.8", n.province());
        addRdn(rdns, "2.5.4.7", n.locality());
        addRdn(rdns, "2.5.4.9", n.streetAddress());
        addRdn(rdns, "2.5.4.17", n.postalCode());
        addRdn(rdns, "2.5.4.10", n.organization());
        addRdn(rdns, "2.5.4.11", n.organizationalUnit());
        if (!n.commonName().isEmpty()) {
            addRdn(rdns, "2.5.4.3", List.of(n.commonName()));
        }
        if (!n.serialNumber().isEmpty()) {
            addRdn(rdns, "2.5.4.5", List.of(n.serialNumber()));
        }
        return Der.sequence(rdns);
    }

    private static void addRdn(List<byte[]> rdns, String oid, List<String> values) {
        if (values.isEmpty()) {
            return;
        }
        List<byte[]> atvs = new ArrayList<>();
        for (String v : values) {
            atvs.add(Der.sequence(Der.oid(oid), goString(v)));
        }
        atvs.sort(CertificateAuthority::compareBytes);
        rdns.add(Der.set(atvs.toArray(byte[][]::new)));
    }

    /** Go's asn1 marshalling of a string: PrintableString when every character allows it, else UTF8String. */
    private static byte[] goString(String v) {
        for (int i = 0; i < v.length(); i++) {
            char c = v.charAt(i);
            boolean printable = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
                    || "'()+,-./:=? ".indexOf(c) >= 0;
            if (!printable) {
                return Der.utf8String(v);
            }
        }
        return Der.tlv(Der.PRINTABLE_STRING, v.getBytes(java.nio.charset.StandardCharsets.US_ASCII));
    }

    /** Go's bytes.Compare. */
    private static int compareBytes(byte[] a, byte[] b) {
        return Arrays.compareUnsigned(a, b);
    }

    private static byte[] extension(String oid, boolean critical, byte[] value) {
        return critical ? Der.sequence(Der.oid(oid), Der.bool(true), Der.octetString(value))
                : Der.sequence(Der.oid(oid), Der.octetString(value));
    }

    /** The CA certificate's subject exactly as encoded, for the issuer field (Go uses the parent's RawSubject). */
    private static byte[] rawSubject(X509Certificate ca) throws GeneralSecurityException {
        Der.Reader tbs = Der.decode(ca.getTBSCertificate()).reader();
        if (tbs.peekTag() == 0xa0) {
            tbs.next(); // version
        }
        tbs.next(); // serial
        tbs.next(); // signature algorithm
        tbs.next(); // issuer
        tbs.next(); // validity
        return tbs.next(Der.SEQUENCE).encoded();
    }

    /** The CA's subject key identifier, or null. */
    private static byte[] subjectKeyId(X509Certificate ca) {
        byte[] ext = ca.getExtensionValue(OID_SUBJECT_KEY_ID);
        if (ext == null) {
            return null;
        }
        byte[] id = Der.decode(Der.decode(ext).octetString()).octetString();
        return id.length == 0 ? null : id;
    }

    /** Go's %q of a []KeyUsage: {@code ["a" "b"]}. */
    private static String goQuoted(List<String> values) {
        List<String> quoted = new ArrayList<>();
        for (String v : values) {
            quoted.add('"' + v.replace("\\", "\\\\").replace("\"", "\\\"") + '"');
        }
        return "[" + String.join(" ", quoted) + "]";
    }

    /** Go's default time.Time formatting, in UTC: {@code 2006-01-02 15:04:05 +0000 UTC}. */
    static String goTime(Instant t) {
        return java.time.format.DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss '+0000 UTC'")
                .withZone(java.time.ZoneOffset.UTC).format(t);
    }
}
