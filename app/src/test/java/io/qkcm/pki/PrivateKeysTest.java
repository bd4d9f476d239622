package io.qkcm.pki;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.StringWriter;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.AlgorithmParameters;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.Signature;
import java.security.interfaces.ECPrivateKey;
import java.security.interfaces.ECPublicKey;
import java.security.interfaces.RSAPrivateCrtKey;
import java.security.spec.ECGenParameterSpec;
import java.security.spec.ECParameterSpec;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;


/**
 * {@link PrivateKeys} (keyutil.PrivateKeyFromFile): every supported PEM format, keys from the JDK, from
 * BouncyCastle's PEM writer (OpenSSL's traditional formats) and from the openssl CLI when installed.
 */
class PrivateKeysTest {

    private static final String NO_KEY = "data does not contain a valid RSA or ECDSA private key (test)";

    @TempDir
    Path tmp;

    private static java.security.KeyPair generate(String alg, Object param) throws Exception {
        KeyPairGenerator gen = KeyPairGenerator.getInstance(alg);
        if (param instanceof Integer bits) {
            gen.initialize(bits);
        } else {
            gen.initialize(new ECGenParameterSpec((String) param));
        }
        return gen.generateKeyPair();
    }

    private static String pem(String type, byte[] der) {
        return "-----BEGIN " + type + "-----\n" + Base64.getMimeEncoder(64, new byte[] { '\n' }).encodeToString(der)
                + "\n-----END " + type + "-----\n";
    }

    /** OpenSSL's traditional PEM ("RSA PRIVATE KEY", PKCS#1 for an RSA key), via BouncyCastle. */
    private static String traditional(java.security.KeyPair kp) throws IOException {
        StringWriter out = new StringWriter();
        try (JcaPEMWriter w = new JcaPEMWriter(out)) {
            w.writeObject(kp);
        }
        return out.toString();
    }

    /**
     * SEC1 "EC PRIVATE KEY" as OpenSSL writes it: version 1, d, [0] named curve, [1] public point.
     * (BouncyCastle's PEM writer copies the JDK's PKCS#8-inner SEC1, which has no curve.)
     */
    private static String sec1(java.security.KeyPair kp) throws Exception {
        ECPrivateKey priv = (ECPrivateKey) kp.getPrivate();
        int size = (priv.getParams().getOrder().bitLength() + 7) / 8;
        Der.Reader spki = Der.decode(kp.getPublic().getEncoded()).reader();
        Der.Reader alg = spki.next(Der.SEQUENCE).reader();
        alg.next();
        String curve = alg.next().oid();
        byte[] point = spki.next().bitString();
        return pem("EC PRIVATE KEY", Der.sequence(Der.integer(1), Der.octetString(unsigned(priv.getS(), size)),
                Der.explicit(0, Der.oid(curve)), Der.explicit(1, Der.bitString(point))));
    }

    private static void assertSamePair(PrivateKeys.KeyPair parsed, java.security.KeyPair expected) throws Exception {
        assertThat(parsed.publicKey().getEncoded()).isEqualTo(expected.getPublic().getEncoded());
        assertThat(PrivateKeys.keyId(parsed.publicKey())).isEqualTo(PrivateKeys.keyId(expected.getPublic()));
        assertThat(parsed.privateKey().getAlgorithm()).isEqualTo(expected.getPrivate().getAlgorithm());
        if (expected.getPrivate() instanceof RSAPrivateCrtKey rsa) {
            RSAPrivateCrtKey got = (RSAPrivateCrtKey) parsed.privateKey();
            assertThat(got.getPrivateExponent()).isEqualTo(rsa.getPrivateExponent());
            assertThat(got.getCrtCoefficient()).isEqualTo(rsa.getCrtCoefficient());
        } else {
            assertThat(((ECPrivateKey) parsed.privateKey()).getS()).isEqualTo(((ECPrivateKey) expected.getPrivate()).getS());
        }
        assertSignsFor(parsed.privateKey(), expected.getPublic());
        assertThat(parsed.toString()).doesNotContain("=").startsWith("KeyPair[");
    }

    private static void assertSignsFor(PrivateKey key, PublicKey pub) throws Exception {
        String alg = key.getAlgorithm().equals("RSA") ? "SHA256withRSA" : "SHA256withECDSA";
        Signature s = Signature.getInstance(alg);
        s.initSign(key);
        s.update(new byte[] { 1, 2, 3 });
        byte[] sig = s.sign();
        s.initVerify(pub);
        s.update(new byte[] { 1, 2, 3 });
        assertThat(s.verify(sig)).isTrue();
    }

    @Test
    void rsaPkcs8AndPkcs1() throws Exception {
        java.security.KeyPair kp = generate("RSA", 2048);
        assertSamePair(PrivateKeys.fromPem(pem("PRIVATE KEY", kp.getPrivate().getEncoded()), "test"), kp);
        String pkcs1 = traditional(kp);
        assertThat(pkcs1).startsWith("-----BEGIN RSA PRIVATE KEY-----");
        assertSamePair(PrivateKeys.fromPem(pkcs1, "test"), kp);
    }

    @Test
    void ecPkcs8AndSec1OnEveryNistCurve() throws Exception {
        for (String curve : List.of("secp256r1", "secp384r1", "secp521r1")) {
            java.security.KeyPair kp = generate("EC", curve);
            assertSamePair(PrivateKeys.fromPem(pem("PRIVATE KEY", kp.getPrivate().getEncoded()), "test"), kp);
            assertSamePair(PrivateKeys.fromPem(sec1(kp), "test"), kp);
        }
    }

    @Test
    void sec1WithoutEmbeddedPublicKeyOrWithCurveOnlyInPkcs8() throws Exception {
        java.security.KeyPair kp = generate("EC", "secp384r1");
        byte[] d = unsigned(((ECPrivateKey) kp.getPrivate()).getS(), 48);
        byte[] bare = Der.sequence(Der.integer(1), Der.octetString(d), Der.explicit(0, Der.oid("1.3.132.0.34")));
        assertSamePair(PrivateKeys.fromPem(pem("EC PRIVATE KEY", bare), "test"), kp);

        byte[] noCurve = Der.sequence(Der.integer(1), Der.octetString(d));
        byte[] pkcs8 = Der.sequence(Der.integer(0), Der.sequence(Der.oid("1.2.840.10045.2.1"), Der.oid("1.3.132.0.34")),
                Der.octetString(noCurve));
        assertSamePair(PrivateKeys.fromPem(pem("PRIVATE KEY", pkcs8), "test"), kp);

        assertThatThrownBy(() -> PrivateKeys.fromPem(pem("EC PRIVATE KEY", noCurve), "test"))
                .isInstanceOf(IOException.class).hasMessage(NO_KEY);
    }

    @Test
    void publicKeyIsComputedAsDTimesG() throws Exception {
        for (String curve : List.of("secp256r1", "secp384r1", "secp521r1")) {
            AlgorithmParameters ap = AlgorithmParameters.getInstance("EC");
            ap.init(new ECGenParameterSpec(curve));
            ECParameterSpec spec = ap.getParameterSpec(ECParameterSpec.class);
            for (int i = 0; i < 5; i++) {
                java.security.KeyPair kp = generate("EC", curve);
                assertThat(PrivateKeys.multiplyGenerator(spec, ((ECPrivateKey) kp.getPrivate()).getS()))
                        .isEqualTo(((ECPublicKey) kp.getPublic()).getW());
            }
            assertThat(PrivateKeys.multiplyGenerator(spec, BigInteger.ONE)).isEqualTo(spec.getGenerator());
            // (n-1)·G = -G
            assertThat(PrivateKeys.multiplyGenerator(spec, spec.getOrder().subtract(BigInteger.ONE)).getAffineY())
                    .isEqualTo(((java.security.spec.ECFieldFp) spec.getCurve().getField()).getP()
                            .subtract(spec.getGenerator().getAffineY()));
        }
    }

    @Test
    void firstKeyAmongOtherBlocksAndFromFile() throws Exception {
        java.security.KeyPair rsa = generate("RSA", 2048);
        java.security.KeyPair ec = generate("EC", "secp256r1");
        String file = "some text\n" + pem("CERTIFICATE", new byte[] { 0x30, 0 })
                + pem("PUBLIC KEY", rsa.getPublic().getEncoded())
                + pem("EC PARAMETERS", Der.oid("1.2.840.10045.3.1.7"))
                + pem("RSA PRIVATE KEY", new byte[] { 0x30, 3, 2, 1, 0 }) // malformed: skipped, as upstream
                + sec1(ec).replace("\n", "\r\n") + pem("PRIVATE KEY", rsa.getPrivate().getEncoded());
        Path p = tmp.resolve("sa.key");
        Files.writeString(p, file, StandardCharsets.US_ASCII);
        assertSamePair(PrivateKeys.fromFile(p), ec);
    }

    @Test
    void noUsableKeyFailsWithUpstreamsMessage() throws Exception {
        java.security.KeyPair rsa = generate("RSA", 2048);
        java.security.KeyPair ec = generate("EC", "secp256r1");
        byte[] dsaOrOther = Der.sequence(Der.integer(0), Der.sequence(Der.oid("1.3.101.112")),
                Der.octetString(Der.octetString(new byte[32]))); // Ed25519
        byte[] multiPrime = Der.sequence(Der.integer(1), Der.integer(1), Der.integer(1), Der.integer(1), Der.integer(1),
                Der.integer(1), Der.integer(1), Der.integer(1), Der.integer(1), Der.sequence());
        // legacy OpenSSL encryption: headers, then the encrypted PKCS#1 (here: the plain one, which must be skipped)
        String encrypted = pem("RSA PRIVATE KEY", new byte[0]).replace("\n\n", "\nProc-Type: 4,ENCRYPTED\n"
                + "DEK-Info: AES-128-CBC,00112233445566778899AABBCCDDEEFF\n\n"
                + Base64.getMimeEncoder().encodeToString(pkcs1(rsa)) + "\n")
                + pem("ENCRYPTED PRIVATE KEY", ec.getPrivate().getEncoded());
        byte[] zeroD = Der.sequence(Der.integer(1), Der.octetString(new byte[32]), Der.explicit(0, Der.oid("1.2.840.10045.3.1.7")));
        byte[] unknownCurve = Der.sequence(Der.integer(1), Der.octetString(new byte[] { 1 }), Der.explicit(0, Der.oid("1.2.3.4")));
        for (String pem : List.of("", "garbage", pem("PUBLIC KEY", rsa.getPublic().getEncoded()),
                pem("PRIVATE KEY", dsaOrOther), pem("RSA PRIVATE KEY", multiPrime), encrypted,
                pem("EC PRIVATE KEY", zeroD), pem("EC PRIVATE KEY", unknownCurve),
                "-----BEGIN PRIVATE KEY-----\n!!!!\n-----END PRIVATE KEY-----\n",
                pem("PRIVATE KEY", rsa.getPrivate().getEncoded()).replace("END PRIVATE KEY", "END RSA PRIVATE KEY"))) {
            assertThatThrownBy(() -> PrivateKeys.fromPem(pem, "test")).as(pem)
                    .isInstanceOf(IOException.class).hasMessage(NO_KEY).hasNoCause();
        }
        assertThatThrownBy(() -> PrivateKeys.fromFile(tmp.resolve("missing"))).isInstanceOf(IOException.class);
    }

    @Test
    void keysWrittenByTheOpensslCli() throws Exception {
        assumeTrue(openssl("version") != null, "openssl not installed");
        List<List<String>> commands = List.of(
                List.of("genrsa", "-traditional", "2048"), // RSA PRIVATE KEY (PKCS#1)
                List.of("genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"), // PRIVATE KEY
                List.of("ecparam", "-name", "prime256v1", "-genkey"), // EC PARAMETERS + EC PRIVATE KEY
                List.of("ecparam", "-name", "secp384r1", "-genkey", "-noout"),
                List.of("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-521")); // PRIVATE KEY
        for (List<String> cmd : commands) {
            Path key = tmp.resolve("k.pem");
            List<String> args = new java.util.ArrayList<>(List.of(cmd.get(0), "-out", key.toString()));
            args.addAll(cmd.subList(1, cmd.size())); // options before genrsa's positional key size
            assertThat(openssl(args.toArray(String[]::new))).as("openssl %s", cmd).isNotNull();
            PrivateKeys.KeyPair parsed = PrivateKeys.fromFile(key);
            Path pub = tmp.resolve("k.pub");
            assertThat(openssl("pkey", "-in", key.toString(), "-pubout", "-outform", "DER", "-out", pub.toString()))
                    .isNotNull();
            assertThat(parsed.publicKey().getEncoded()).as("openssl %s", cmd).isEqualTo(Files.readAllBytes(pub));
            assertSignsFor(parsed.privateKey(), parsed.publicKey());
        }
    }

    private static String openssl(String... args) throws Exception {
        List<String> cmd = new java.util.ArrayList<>(List.of("openssl"));
        cmd.addAll(List.of(args));
        Process p;
        try {
            p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        } catch (IOException e) {
            return null;
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        return p.waitFor(60, TimeUnit.SECONDS) && p.exitValue() == 0 ? out : null;
    }

    /** The PKCS#1 RSAPrivateKey inside the JDK's PKCS#8 encoding. */
    private static byte[] pkcs1(java.security.KeyPair kp) {
        Der.Reader r = Der.decode(kp.getPrivate().getEncoded()).reader();
        r.next();
        r.next();
        return r.next().octetString();
    }

    private static byte[] unsigned(BigInteger v, int length) {
        byte[] b = v.toByteArray();
        byte[] out = new byte[length];
        int n = Math.min(b.length, length);
        System.arraycopy(b, b.length - n, out, length - n, n);
        return out;
    }
}
