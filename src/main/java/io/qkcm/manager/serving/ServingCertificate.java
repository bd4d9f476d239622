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
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Date;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x500.X500NameBuilder;
import org.bouncycastle.asn1.x500.style.BCStyle;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.cert.X509CertificateHolder;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.ContentSigner;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * The serving certificate and key, PEM-encoded: from {@code --tls-cert-file}/{@code --tls-private-key-file},
 * or generated in memory at startup as upstream's {@code MaybeDefaultWithSelfSignedCerts("localhost", nil,
 * [127.0.0.1])} does (valid one year, from an hour ago, for DNS {@code localhost} and IP {@code 127.0.0.1},
 * plus the bind address when it is a specific address).
 *
 * <p>
 * Generated keys are ECDSA P-256 rather than upstream's RSA 2048: generating an EC key takes about a
 * millisecond instead of tens to hundreds (upstream generates two RSA keys, CA and leaf), which matters for
 * a native binary that starts in milliseconds, and every TLS client that talks to a controller manager
 * (Go's crypto/tls in kubelet and Prometheus, curl, Java) accepts ECDSA server certificates. The certificate
 * is self-signed (no separate CA): nothing can pin upstream's throw-away CA either.
 *
 * <p>
 * Only JCA algorithms of the JDK (SunEC, SHA256withECDSA) and BouncyCastle's ASN.1 builders are used, no
 * provider registration and no reflection, so this works in a native image.
 */
public record ServingCertificate(String certificatePem, String privateKeyPem) {

    static final Duration MAX_AGE = Duration.ofDays(365);

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
            generator.initialize(new ECGenParameterSpec("secp256r1"), new SecureRandom());
            KeyPair keys = generator.generateKeyPair();

            Instant now = Instant.now();
            Instant validFrom = now.minus(Duration.ofHours(1)); // clock skew, as upstream
            X500Name subject = new X500NameBuilder(BCStyle.INSTANCE)
                    .addRDN(BCStyle.CN, host + "@" + now.getEpochSecond()).build();
            BigInteger serial = new BigInteger(63, new SecureRandom()).add(BigInteger.ONE);
            X509v3CertificateBuilder builder = new JcaX509v3CertificateBuilder(subject, serial,
                    Date.from(validFrom), Date.from(validFrom.plus(MAX_AGE)), subject, keys.getPublic());

            Set<String> dns = new LinkedHashSet<>();
            Set<String> ips = new LinkedHashSet<>();
            addName(host, dns, ips);
            ips.add("127.0.0.1");
            for (String a : extraAddresses) {
                if (!a.isBlank() && !a.equals("0.0.0.0") && !a.equals("::") && !a.equals("[::]")) {
                    addName(a, dns, ips);
                }
            }
            List<GeneralName> names = new ArrayList<>();
            dns.forEach(d -> names.add(new GeneralName(GeneralName.dNSName, d)));
            ips.forEach(i -> names.add(new GeneralName(GeneralName.iPAddress, i)));
            builder.addExtension(Extension.subjectAlternativeName, false,
                    new GeneralNames(names.toArray(GeneralName[]::new)));
            builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
            builder.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature));
            builder.addExtension(Extension.extendedKeyUsage, false, new ExtendedKeyUsage(KeyPurposeId.id_kp_serverAuth));

            ContentSigner signer = new JcaContentSignerBuilder("SHA256withECDSA").build(keys.getPrivate());
            X509CertificateHolder cert = builder.build(signer);
            return new ServingCertificate(pem("CERTIFICATE", cert.getEncoded()),
                    pem("PRIVATE KEY", keys.getPrivate().getEncoded())); // PKCS#8
        } catch (GeneralSecurityException | OperatorCreationException | IOException e) {
            throw new IllegalStateException("unable to generate self signed cert: " + e.getMessage(), e);
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
            return true; // IPv6
        }
        if (!s.matches("\\d{1,3}(\\.\\d{1,3}){3}")) {
            return false;
        }
        try {
            InetAddress.getByName(s); // literal: no lookup
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    private static String pem(String type, byte[] der) {
        String body = Base64.getMimeEncoder(64, "\n".getBytes(StandardCharsets.US_ASCII)).encodeToString(der);
        return "-----BEGIN " + type + "-----\n" + body + "\n-----END " + type + "-----\n";
    }
}
