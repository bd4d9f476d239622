package io.qkcm.testing;

import java.io.IOException;
import java.io.StringWriter;
import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PublicKey;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Date;

import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * Key material the tests generate once per JVM: the service-account signing key pair (private key for
 * qkcm's --service-account-private-key-file, public key for the API server's
 * --service-account-key-file) and a CA certificate for --root-ca-file.
 */
public final class TestPki {

    private static TestPki instance;

    private final Path serviceAccountPrivateKey;
    private final Path serviceAccountPublicKey;
    private final PublicKey publicKey;
    private final Path rootCaFile;

    private TestPki() throws Exception {
        KeyPairGenerator gen = KeyPairGenerator.getInstance("RSA");
        gen.initialize(2048);
        KeyPair sa = gen.generateKeyPair();
        publicKey = sa.getPublic();
        serviceAccountPrivateKey = write("qkcm-test-sa", ".key", sa.getPrivate());
        serviceAccountPublicKey = write("qkcm-test-sa", ".pub", sa.getPublic());

        KeyPair ca = gen.generateKeyPair();
        X500Name name = new X500Name("CN=qkcm-test-ca");
        Instant now = Instant.now();
        JcaX509v3CertificateBuilder builder = new JcaX509v3CertificateBuilder(name, BigInteger.valueOf(now.toEpochMilli()),
                Date.from(now.minus(1, ChronoUnit.HOURS)), Date.from(now.plus(1, ChronoUnit.DAYS)), name, ca.getPublic());
        builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(true));
        org.bouncycastle.cert.X509CertificateHolder cert = builder
                .build(new JcaContentSignerBuilder("SHA256WithRSA").build(ca.getPrivate()));
        rootCaFile = write("qkcm-test-ca", ".crt", cert);
    }

    private static Path write(String prefix, String suffix, Object pemObject) throws IOException {
        StringWriter out = new StringWriter();
        try (JcaPEMWriter w = new JcaPEMWriter(out)) {
            w.writeObject(pemObject);
        }
        Path p = Files.createTempFile(prefix, suffix);
        Files.writeString(p, out.toString());
        p.toFile().deleteOnExit();
        return p;
    }

    public static synchronized TestPki get() {
        if (instance == null) {
            try {
                instance = new TestPki();
            } catch (Exception e) {
                throw new IllegalStateException("cannot generate test keys", e);
            }
        }
        return instance;
    }

    public Path serviceAccountPrivateKey() {
        return serviceAccountPrivateKey;
    }

    public Path serviceAccountPublicKey() {
        return serviceAccountPublicKey;
    }

    public PublicKey serviceAccountPublicKeyObject() {
        return publicKey;
    }

    public Path rootCaFile() {
        return rootCaFile;
    }
}
