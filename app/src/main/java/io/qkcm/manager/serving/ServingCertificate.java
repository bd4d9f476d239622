package io.qkcm.manager.serving;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

import io.qkcm.pki.Der;

/**
 * The serving certificate and key, PEM-encoded: from {@code --tls-cert-file}/{@code --tls-private-key-file},
 * or generated in memory at startup as upstream's {@code MaybeDefaultWithSelfSignedCerts("localhost", nil,
 * [127.0.0.1])} does (valid one year, from an hour ago, for DNS {@code localhost} and IP {@code 127.0.0.1},
 * plus the bind address when it is a specific address).
 *
 * <p>
 * Generated keys are ECDSA P-384 rather than upstream's RSA 2048: generating an EC key takes milliseconds
 * instead of tens to hundreds (upstream generates two RSA keys, CA and leaf), and every TLS client that
 * talks to a controller manager (Go's crypto/tls in kubelet and Prometheus, curl, Java) accepts ECDSA server
 * certificates. P-384, not P-256: the JDK's first P-256 key generation builds a precomputed table of the
 * curve's generator (Secp256R1GeneratorMontgomeryMultiplier), a quarter of the main thread's samples
 * before /healthz in a JFR of one start, and ~35 ms more than P-384 in a fresh JVM
 * (bench/results/2026-11-28-startup). The certificate is self-signed (no separate CA): nothing can pin
 * upstream's throw-away CA either.
 *
 * <p>
 * Only JCA algorithms of the JDK (SunEC, SHA384withECDSA) and qkcm's small DER encoder ({@link Der}) are
 * used, no provider registration and no reflection, so this works in a native image. Not BouncyCastle: its
 * signed jars cost seconds of CPU at startup for the JVM's jar signature verification.
 */
public record ServingCertificate(String certificatePem, String privateKeyPem) {

    static final Duration MAX_AGE = Duration.ofDays(365);

    private static final String OID_CN = "2.5.4.3";
    private static final String OID_SUBJECT_ALT_NAME = "2.5.29.17";
    private static final String OID_BASIC_CONSTRAINTS = "2.5.29.19";
    private static final String OID_KEY_USAGE = "2.5.29.15";
    private static final String OID_EXT_KEY_USAGE = "2.5.29.37";
    private static final String OID_SERVER_AUTH = "1.3.6.1.5.5.7.3.1";
    private static final String OID_ECDSA_WITH_SHA384 = "1.2.840.10045.4.3.3";

    /** Reads both PEM files; fails with a message naming the file that cannot be read. */
    public static ServingCertificate fromFiles(Path certFile, Path keyFile) {
        return new ServingCertificate(read(certFile, "--tls-cert-file"), read(keyFile, "--tls-private-key-file"));
    }

    private static String read(Path file, String flag) {
        try {
            return Files.readString(file, StandardCharsets.US_ASCII);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read " + flag + " " + file + ": " + e.getMessage(), e);
        }
    }

    /**
     * A self-signed serving certificate for {@code host} (as upstream, "localhost"), IP 127.0.0.1 and the
     * given extra addresses (wildcards are skipped).
     */
    public static ServingCertificate selfSigned(String host, List<String> extraAddresses) {
        try {
            KeyPairGenerator generator = KeyPairGenerator.getInstance("EC");
            generator.initialize(new ECGenParameterSpec("secp384r1"), new SecureRandom());
            KeyPair keys = generator.generateKeyPair();

            Instant now = Instant.now();
            Instant validFrom = now.minus(Duration.ofHours(1)); // clock skew, as upstream
            // Name ::= SEQUENCE OF RDN; RDN ::= SET OF AttributeTypeAndValue; CN as UTF8String
            byte[] subject = Der.sequence(Der.set(Der.sequence(Der.oid(OID_CN),
                    Der.utf8String(host + "@" + now.getEpochSecond()))));
            BigInteger serial = new BigInteger(63, new SecureRandom()).add(BigInteger.ONE);

            Set<String> dns = new LinkedHashSet<>();
            Set<String> ips = new LinkedHashSet<>();
            addName(host, dns, ips);
            ips.add("127.0.0.1");
            for (String a : extraAddresses) {
                if (!a.isBlank() && !a.equals("0.0.0.0") && !a.equals("::") && !a.equals("[::]")) {
                    addName(a, dns, ips);
                }
            }
            List<byte[]> names = new ArrayList<>();
            // GeneralName: dNSName [2] IMPLICIT IA5String, iPAddress [7] IMPLICIT OCTET STRING
            dns.forEach(d -> names.add(Der.implicit(2, Der.ia5String(d))));
            ips.forEach(ip -> names.add(Der.implicit(7, Der.octetString(ipAddress(ip)))));
            byte[] extensions = Der.explicit(3, Der.sequence(
                    extension(OID_SUBJECT_ALT_NAME, false, Der.sequence(names)),
                    extension(OID_BASIC_CONSTRAINTS, true, Der.sequence()), // cA FALSE (the default, omitted)
                    extension(OID_KEY_USAGE, true, Der.bitString(new byte[] { (byte) 0x80 }, 7)), // digitalSignature
                    extension(OID_EXT_KEY_USAGE, false, Der.sequence(Der.oid(OID_SERVER_AUTH)))));

            byte[] signatureAlgorithm = Der.sequence(Der.oid(OID_ECDSA_WITH_SHA384)); // no parameters (RFC 5758)
            byte[] tbs = Der.sequence(
                    Der.explicit(0, Der.integer(2)), // v3
                    Der.integer(serial),
                    signatureAlgorithm,
                    subject, // issuer: self-signed
                    Der.sequence(Der.time(validFrom), Der.time(validFrom.plus(MAX_AGE))),
                    subject,
                    keys.getPublic().getEncoded(), // SubjectPublicKeyInfo
                    extensions);
            Signature signer = Signature.getInstance("SHA384withECDSA");
            signer.initSign(keys.getPrivate());
            signer.update(tbs);
            byte[] cert = Der.sequence(tbs, signatureAlgorithm, Der.bitString(signer.sign()));
            return new ServingCertificate(pem("CERTIFICATE", cert),
                    pem("PRIVATE KEY", keys.getPrivate().getEncoded())); // PKCS#8
        } catch (GeneralSecurityException | IllegalArgumentException e) {
            throw new IllegalStateException("unable to generate self signed cert: " + e.getMessage(), e);
        }
    }

    /** Extension ::= SEQUENCE { extnID, critical BOOLEAN DEFAULT FALSE, extnValue OCTET STRING }. */
    private static byte[] extension(String oid, boolean critical, byte[] value) {
        return critical ? Der.sequence(Der.oid(oid), Der.bool(true), Der.octetString(value))
                : Der.sequence(Der.oid(oid), Der.octetString(value));
    }

    /** The 4 (IPv4) or 16 (IPv6) address bytes of an IP literal; never a name lookup. */
    static byte[] ipAddress(String ip) {
        if (ip.indexOf(':') < 0) {
            String[] parts = ip.split("\\.", -1);
            if (parts.length != 4) {
                throw new IllegalArgumentException("invalid IP address " + ip);
            }
            byte[] b = new byte[4];
            for (int i = 0; i < 4; i++) {
                if (!parts[i].matches("\\d{1,3}") || Integer.parseInt(parts[i]) > 255) {
                    throw new IllegalArgumentException("invalid IP address " + ip);
                }
                b[i] = (byte) Integer.parseInt(parts[i]);
            }
            return b;
        }
        if (!ip.matches("[0-9A-Fa-f:.]+")) {
            throw new IllegalArgumentException("invalid IP address " + ip); // e.g. a zone (%eth0)
        }
        try {
            byte[] b = InetAddress.getByName(ip).getAddress(); // an IPv6 literal: parsed, not looked up
            if (b.length == 4) { // the JDK turns ::ffff:a.b.c.d into an IPv4 address; keep the 16 bytes
                byte[] v6 = new byte[16];
                v6[10] = (byte) 0xff;
                v6[11] = (byte) 0xff;
                System.arraycopy(b, 0, v6, 12, 4);
                return v6;
            }
            return b;
        } catch (IOException e) {
            throw new IllegalArgumentException("invalid IP address " + ip, e);
        }
    }

    private static void addName(String name, Set<String> dns, Set<String> ips) {
        String n = name.startsWith("[") && name.endsWith("]") ? name.substring(1, name.length() - 1) : name;
        if (isIpLiteral(n)) {
            ips.add(n);
        } else {
            dns.add(n);
        }
    }

    static boolean isIpLiteral(String s) {
        if (s.indexOf(':') >= 0) {
            return true; // IPv6 (an invalid one fails in ipAddress, rather than becoming a DNS name)
        }
        try {
            ipAddress(s); // parses literals only: never a name lookup
            return true;
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    private static String pem(String type, byte[] der) {
        String body = Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(der);
        return "-----BEGIN " + type + "-----\n" + body + "\n-----END " + type + "-----\n";
    }
}
