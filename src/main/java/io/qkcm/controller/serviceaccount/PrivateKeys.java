package io.qkcm.controller.serviceaccount;

import java.io.IOException;
import java.io.Reader;
import java.io.StringReader;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.MessageDigest;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.interfaces.ECPrivateKey;
import java.security.interfaces.RSAPrivateCrtKey;
import java.security.spec.RSAPublicKeySpec;
import java.security.spec.X509EncodedKeySpec;
import java.util.Base64;

import org.bouncycastle.asn1.ASN1ObjectIdentifier;
import org.bouncycastle.asn1.pkcs.PrivateKeyInfo;
import org.bouncycastle.asn1.x509.AlgorithmIdentifier;
import org.bouncycastle.asn1.x509.SubjectPublicKeyInfo;
import org.bouncycastle.asn1.x9.ECNamedCurveTable;
import org.bouncycastle.asn1.x9.X9ECParameters;
import org.bouncycastle.asn1.x9.X9ObjectIdentifiers;
import org.bouncycastle.openssl.PEMKeyPair;
import org.bouncycastle.openssl.PEMParser;
import org.bouncycastle.openssl.jcajce.JcaPEMKeyConverter;

/**
 * client-go's keyutil.PrivateKeyFromFile for the service-account signing key: the first RSA
 * (PKCS#1 or PKCS#8) or EC (SEC1 or PKCS#8) private key in a PEM file, with its public key.
 * Key material never reaches a log or an exception message.
 */
public final class PrivateKeys {

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
        JcaPEMKeyConverter converter = new JcaPEMKeyConverter();
        try (Reader r = new StringReader(pem); PEMParser parser = new PEMParser(r)) {
            Object o;
            while ((o = parser.readObject()) != null) {
                if (o instanceof PEMKeyPair kp) {
                    java.security.KeyPair pair = converter.getKeyPair(kp);
                    return new KeyPair(pair.getPrivate(), pair.getPublic());
                }
                if (o instanceof PrivateKeyInfo info) {
                    PrivateKey key = converter.getPrivateKey(info);
                    return new KeyPair(key, publicKeyOf(key, info));
                }
            }
        } catch (GeneralSecurityException | RuntimeException e) {
            throw new IOException("data does not contain a valid RSA or ECDSA private key (" + source + ")");
        }
        throw new IOException("data does not contain a valid RSA or ECDSA private key (" + source + ")");
    }

    private static PublicKey publicKeyOf(PrivateKey key, PrivateKeyInfo info) throws GeneralSecurityException,
            IOException {
        if (key instanceof RSAPrivateCrtKey rsa) {
            return KeyFactory.getInstance("RSA")
                    .generatePublic(new RSAPublicKeySpec(rsa.getModulus(), rsa.getPublicExponent()));
        }
        if (key instanceof ECPrivateKey ec) {
            // Q = d·G on the key's named curve
            ASN1ObjectIdentifier curve = ASN1ObjectIdentifier
                    .getInstance(info.getPrivateKeyAlgorithm().getParameters());
            X9ECParameters params = ECNamedCurveTable.getByOID(curve);
            BigInteger d = ec.getS();
            byte[] point = params.getG().multiply(d).normalize().getEncoded(false);
            SubjectPublicKeyInfo spki = new SubjectPublicKeyInfo(
                    new AlgorithmIdentifier(X9ObjectIdentifiers.id_ecPublicKey, curve), point);
            return KeyFactory.getInstance("EC").generatePublic(new X509EncodedKeySpec(spki.getEncoded()));
        }
        throw new GeneralSecurityException("unsupported private key type " + key.getAlgorithm());
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
