package io.qkcm.pki;

import java.io.IOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.AlgorithmParameters;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.MessageDigest;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.spec.ECFieldFp;
import java.security.spec.ECGenParameterSpec;
import java.security.spec.ECParameterSpec;
import java.security.spec.ECPoint;
import java.security.spec.ECPrivateKeySpec;
import java.security.spec.ECPublicKeySpec;
import java.security.spec.RSAPrivateCrtKeySpec;
import java.security.spec.RSAPublicKeySpec;
import java.util.Base64;
import java.util.regex.Matcher;
import java.util.regex.Pattern;


/**
 * client-go's keyutil.PrivateKeyFromFile for the service-account signing key: the first RSA
 * (PKCS#1 or PKCS#8) or EC (SEC1 or PKCS#8) private key in a PEM file, with its public key.
 * Key material never reaches a log or an exception message.
 *
 * <p>
 * As keyutil.ParsePrivateKeyPEM, PEM blocks are tried in order and any block that is not a parsable,
 * unencrypted key of those types (certificates, public keys, "EC PARAMETERS", encrypted keys) is skipped.
 * Decoding uses qkcm's {@link Der} reader and the JDK's KeyFactory, not BouncyCastle, whose signed jars
 * cost seconds of CPU for the JVM's jar signature verification at startup; no reflection (native image).
 */
public final class PrivateKeys {

    private static final String OID_RSA_ENCRYPTION = "1.2.840.113549.1.1.1";
    private static final String OID_EC_PUBLIC_KEY = "1.2.840.10045.2.1";

    /** A PEM block: type and base64 body, which may begin with RFC 1421 headers (encrypted keys). */
    private static final Pattern PEM_BLOCK = Pattern.compile(
            "^-----BEGIN ([^\\r\\n]*?)-----[ \\t]*\\r?$(.*?)^-----END \\1-----", Pattern.MULTILINE | Pattern.DOTALL);

    /** A private key and its public half. */
    public record KeyPair(PrivateKey privateKey, PublicKey publicKey) {
        @Override
        public String toString() {
            return "KeyPair[" + privateKey.getAlgorithm() + "]";
        }
    }

    private PrivateKeys() {
    }

    public static KeyPair fromFile(Path file) throws IOException {
        return fromPem(Files.readString(file, StandardCharsets.US_ASCII), file.toString());
    }

    public static KeyPair fromPem(String pem, String source) throws IOException {
        Matcher m = PEM_BLOCK.matcher(pem);
        while (m.find()) {
            String body = m.group(2);
            if (body.indexOf(':') >= 0) {
                continue; // RFC 1421 headers: an encrypted ("Proc-Type: 4,ENCRYPTED") key
            }
            try {
                byte[] der = Base64.getDecoder().decode(body.replaceAll("\\s+", ""));
                KeyPair key = switch (m.group(1)) {
                    case "RSA PRIVATE KEY" -> pkcs1(Der.decode(der));
                    case "EC PRIVATE KEY" -> sec1(Der.decode(der), null);
                    case "PRIVATE KEY" -> pkcs8(Der.decode(der));
                    default -> null;
                };
                if (key != null) {
                    return key;
                }
            } catch (GeneralSecurityException | IllegalArgumentException | ArithmeticException e) {
                // not a valid key: try the next block, as upstream (no details: they could echo key material)
            }
        }
        throw new IOException("data does not contain a valid RSA or ECDSA private key (" + source + ")");
    }

    /**
     * PKCS#8 PrivateKeyInfo ::= SEQUENCE { version, privateKeyAlgorithm AlgorithmIdentifier,
     * privateKey OCTET STRING, [0] attributes OPTIONAL, [1] publicKey OPTIONAL (v2) } with an RSA or
     * named-curve EC key; null for other algorithms.
     */
    private static KeyPair pkcs8(Der.Value info) throws GeneralSecurityException {
        Der.Reader r = info.reader();
        BigInteger version = r.next().integer();
        if (version.signum() < 0 || version.compareTo(BigInteger.ONE) > 0) {
            throw new GeneralSecurityException("unsupported PKCS#8 version");
        }
        Der.Reader algorithm = r.next(Der.SEQUENCE).reader();
        String oid = algorithm.next().oid();
        Der.Value parameters = algorithm.hasNext() ? algorithm.next() : null;
        byte[] privateKey = r.next(Der.OCTET_STRING).octetString();
        return switch (oid) {
            case OID_RSA_ENCRYPTION -> pkcs1(Der.decode(privateKey));
            case OID_EC_PUBLIC_KEY -> {
                if (parameters == null || parameters.tag() != Der.OID) {
                    throw new GeneralSecurityException("EC key without a named curve");
                }
                yield sec1(Der.decode(privateKey), parameters.oid());
            }
            default -> null;
        };
    }

    /**
     * PKCS#1 RSAPrivateKey ::= SEQUENCE { version 0, n, e, d, p, q, dP, dQ, qInv } (two primes only, as
     * before with BouncyCastle and the JDK).
     */
    private static KeyPair pkcs1(Der.Value key) throws GeneralSecurityException {
        Der.Reader r = key.reader();
        BigInteger[] f = new BigInteger[9];
        for (int i = 0; i < f.length; i++) {
            f[i] = r.next().integer();
        }
        if (r.hasNext() || f[0].signum() != 0) {
            throw new GeneralSecurityException("unsupported RSA private key version");
        }
        for (int i = 1; i < f.length; i++) {
            if (f[i].signum() <= 0) {
                throw new GeneralSecurityException("invalid RSA private key");
            }
        }
        KeyFactory kf = KeyFactory.getInstance("RSA");
        PrivateKey priv = kf.generatePrivate(new RSAPrivateCrtKeySpec(f[1], f[2], f[3], f[4], f[5], f[6], f[7], f[8]));
        PublicKey pub = kf.generatePublic(new RSAPublicKeySpec(f[1], f[2]));
        return new KeyPair(priv, pub);
    }

    /**
     * SEC1 ECPrivateKey ::= SEQUENCE { version 1, privateKey OCTET STRING, [0] ECParameters OPTIONAL,
     * [1] publicKey BIT STRING OPTIONAL }. The curve is PKCS#8's (when wrapped, as Go) or the named curve
     * in [0]; any curve the JDK's EC AlgorithmParameters knows by OID (over a prime field). The public key
     * is computed as d·G, as Go does, rather than trusting the optional embedded one.
     */
    private static KeyPair sec1(Der.Value key, String pkcs8Curve) throws GeneralSecurityException {
        Der.Reader r = key.reader();
        if (!r.next().integer().equals(BigInteger.ONE)) {
            throw new GeneralSecurityException("unsupported EC private key version");
        }
        byte[] privateKey = r.next(Der.OCTET_STRING).octetString();
        String curve = pkcs8Curve;
        Der.Value parameters = r.optional(0xa0);
        if (curve == null && parameters != null) {
            Der.Value named = parameters.reader().next();
            if (named.tag() == Der.OID) {
                curve = named.oid(); // not implicitCurve or specifiedCurve: unsupported, as upstream
            }
        }
        if (curve == null) {
            throw new GeneralSecurityException("EC key without a named curve");
        }
        AlgorithmParameters ap = AlgorithmParameters.getInstance("EC");
        ap.init(new ECGenParameterSpec(curve)); // the JDK's curve table accepts OIDs as names
        ECParameterSpec spec = ap.getParameterSpec(ECParameterSpec.class);
        BigInteger d = new BigInteger(1, privateKey);
        if (d.signum() <= 0 || d.compareTo(spec.getOrder()) >= 0
                || privateKey.length > (spec.getOrder().bitLength() + 7) / 8) {
            throw new GeneralSecurityException("invalid EC private key");
        }
        KeyFactory kf = KeyFactory.getInstance("EC");
        PrivateKey priv = kf.generatePrivate(new ECPrivateKeySpec(d, spec));
        PublicKey pub = kf.generatePublic(new ECPublicKeySpec(multiplyGenerator(spec, d), spec));
        return new KeyPair(priv, pub);
    }

    /**
     * d·G by double-and-add in Jacobian coordinates (one inversion at the end). The JDK has no public
     * API for it. Not constant-time: it runs once, at startup, on a key read from a local file.
     */
    static ECPoint multiplyGenerator(ECParameterSpec spec, BigInteger d) throws GeneralSecurityException {
        if (!(spec.getCurve().getField() instanceof ECFieldFp field)) {
            throw new GeneralSecurityException("unsupported EC curve over a binary field");
        }
        BigInteger p = field.getP();
        BigInteger a = spec.getCurve().getA().mod(p);
        ECPoint g = spec.getGenerator();
        BigInteger[] base = { g.getAffineX(), g.getAffineY(), BigInteger.ONE };
        BigInteger[] acc = null; // the point at infinity
        for (int i = d.bitLength() - 1; i >= 0; i--) {
            acc = twice(acc, a, p);
            if (d.testBit(i)) {
                acc = add(acc, base, a, p);
            }
        }
        if (acc == null) {
            throw new GeneralSecurityException("invalid EC private key");
        }
        BigInteger zInv = acc[2].modInverse(p);
        BigInteger zInv2 = zInv.multiply(zInv).mod(p);
        return new ECPoint(acc[0].multiply(zInv2).mod(p), acc[1].multiply(zInv2).multiply(zInv).mod(p));
    }

    private static BigInteger[] twice(BigInteger[] pt, BigInteger a, BigInteger p) {
        if (pt == null || pt[1].signum() == 0) {
            return null;
        }
        BigInteger x = pt[0];
        BigInteger y = pt[1];
        BigInteger z = pt[2];
        BigInteger yy = y.multiply(y).mod(p);
        BigInteger s = x.multiply(yy).shiftLeft(2).mod(p);
        BigInteger zz = z.multiply(z).mod(p);
        BigInteger m = x.multiply(x).multiply(BigInteger.valueOf(3)).add(a.multiply(zz).multiply(zz)).mod(p);
        BigInteger x3 = m.multiply(m).subtract(s.shiftLeft(1)).mod(p);
        BigInteger y3 = m.multiply(s.subtract(x3)).subtract(yy.multiply(yy).shiftLeft(3)).mod(p);
        BigInteger z3 = y.multiply(z).shiftLeft(1).mod(p);
        return new BigInteger[] { x3, y3, z3 };
    }

    private static BigInteger[] add(BigInteger[] p1, BigInteger[] p2, BigInteger a, BigInteger p) {
        if (p1 == null) {
            return p2;
        }
        if (p2 == null) {
            return p1;
        }
        BigInteger z1z1 = p1[2].multiply(p1[2]).mod(p);
        BigInteger z2z2 = p2[2].multiply(p2[2]).mod(p);
        BigInteger u1 = p1[0].multiply(z2z2).mod(p);
        BigInteger u2 = p2[0].multiply(z1z1).mod(p);
        BigInteger s1 = p1[1].multiply(p2[2]).multiply(z2z2).mod(p);
        BigInteger s2 = p2[1].multiply(p1[2]).multiply(z1z1).mod(p);
        if (u1.equals(u2)) {
            return s1.equals(s2) ? twice(p1, a, p) : null;
        }
        BigInteger h = u2.subtract(u1).mod(p);
        BigInteger rr = s2.subtract(s1).mod(p);
        BigInteger hh = h.multiply(h).mod(p);
        BigInteger hhh = h.multiply(hh).mod(p);
        BigInteger v = u1.multiply(hh).mod(p);
        BigInteger x3 = rr.multiply(rr).subtract(hhh).subtract(v.shiftLeft(1)).mod(p);
        BigInteger y3 = rr.multiply(v.subtract(x3)).subtract(s1.multiply(hhh)).mod(p);
        BigInteger z3 = p1[2].multiply(p2[2]).multiply(h).mod(p);
        return new BigInteger[] { x3, y3, z3 };
    }

    /** Upstream's keyIDFromPublicKey: base64url (unpadded) SHA-256 of the PKIX DER public key. */
    public static String keyId(PublicKey publicKey) {
        try {
            byte[] hash = MessageDigest.getInstance("SHA-256").digest(publicKey.getEncoded());
            return Base64.getUrlEncoder().withoutPadding().encodeToString(hash);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("SHA-256 unavailable", e);
        }
    }
}
