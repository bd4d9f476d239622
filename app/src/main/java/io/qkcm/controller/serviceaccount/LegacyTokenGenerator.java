package io.qkcm.controller.serviceaccount;

import io.qkcm.pki.PrivateKeys;
import java.security.interfaces.ECPublicKey;
import java.security.interfaces.RSAPublicKey;

import org.jose4j.jws.AlgorithmIdentifiers;
import org.jose4j.jws.JsonWebSignature;
import org.jose4j.jwt.JwtClaims;
import org.jose4j.lang.JoseException;

import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.ServiceAccount;

/**
 * Upstream's JWTTokenGenerator with the legacy issuer and LegacyClaims (pkg/serviceaccount/jwt.go,
 * legacy.go): a compact JWS, RS256 for RSA keys or ES256/384/512 by EC curve, {@code kid} the
 * SHA-256 of the public key, claims {@code iss=kubernetes/serviceaccount}, {@code sub} and the four
 * {@code kubernetes.io/serviceaccount/*} claims; no expiry, as legacy tokens have none. Signed with
 * jose4j.
 */
public final class LegacyTokenGenerator {

    public static final String LEGACY_ISSUER = "kubernetes/serviceaccount";

    private final PrivateKeys.KeyPair key;
    private final String algorithm;
    private final String keyId;

    public LegacyTokenGenerator(PrivateKeys.KeyPair key) {
        this.key = key;
        if (key.publicKey() instanceof RSAPublicKey) {
            this.algorithm = AlgorithmIdentifiers.RSA_USING_SHA256;
        } else if (key.publicKey() instanceof ECPublicKey ec) {
            int bits = ec.getParams().getCurve().getField().getFieldSize();
            this.algorithm = switch (bits) {
                case 256 -> AlgorithmIdentifiers.ECDSA_USING_P256_CURVE_AND_SHA256;
                case 384 -> AlgorithmIdentifiers.ECDSA_USING_P384_CURVE_AND_SHA384;
                case 521 -> AlgorithmIdentifiers.ECDSA_USING_P521_CURVE_AND_SHA512;
                default -> throw new IllegalArgumentException("unknown private key curve, must be 256, 384, or 521");
            };
        } else {
            throw new IllegalArgumentException("unknown private key type " + key.privateKey().getAlgorithm()
                    + ", must be RSA or ECDSA");
        }
        this.keyId = PrivateKeys.keyId(key.publicKey());
    }

    public String keyId() {
        return keyId;
    }

    /** The token for {@code secret} of {@code sa}, as upstream's LegacyClaims + GenerateToken. */
    public String generate(ServiceAccount sa, Secret secret) throws JoseException {
        String ns = sa.getMetadata().getNamespace();
        String name = sa.getMetadata().getName();
        // added in the order Go's JSON encoding of the merged claims has them (sorted keys)
        JwtClaims claims = new JwtClaims();
        claims.setIssuer(LEGACY_ISSUER);
        claims.setClaim("kubernetes.io/serviceaccount/namespace", ns);
        claims.setClaim("kubernetes.io/serviceaccount/secret.name", secret.getMetadata().getName());
        claims.setClaim("kubernetes.io/serviceaccount/service-account.name", name);
        claims.setClaim("kubernetes.io/serviceaccount/service-account.uid",
                sa.getMetadata().getUid() == null ? "" : sa.getMetadata().getUid());
        claims.setSubject("system:serviceaccount:" + ns + ":" + name);
        JsonWebSignature jws = new JsonWebSignature();
        jws.setAlgorithmHeaderValue(algorithm);
        jws.setKeyIdHeaderValue(keyId);
        jws.setPayload(claims.toJson());
        jws.setKey(key.privateKey());
        return jws.getCompactSerialization();
    }
}
