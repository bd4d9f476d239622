package io.qkcm.controller.bootstrap;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.Secret;

/**
 * What both bootstrap controllers read from a bootstrap token Secret: k8s.io/cluster-bootstrap's
 * token/api names and its util/secrets helpers (GetData, ParseName, GetExpiration), and the signer's
 * validateSecretForSigning.
 */
final class BootstrapTokens {

    static final String SECRET_TYPE = "bootstrap.kubernetes.io/token";
    static final String SECRET_PREFIX = "bootstrap-token-";
    static final String TOKEN_ID_KEY = "token-id";
    static final String TOKEN_SECRET_KEY = "token-secret";
    static final String EXPIRATION_KEY = "expiration";
    static final String USAGE_SIGNING_KEY = "usage-bootstrap-signing";
    static final String TOKEN_NAMESPACE = "kube-system";
    static final String CLUSTER_INFO_NAMESPACE = "kube-public";
    static final String CLUSTER_INFO = "cluster-info";
    static final String KUBECONFIG_KEY = "kubeconfig";
    static final String JWS_SIGNATURE_PREFIX = "jws-kubeconfig-";

    private static final Logger LOG = Logger.getLogger(BootstrapTokens.class);
    private static final Pattern SECRET_NAME = Pattern.compile("^" + Pattern.quote(SECRET_PREFIX) + "([a-z0-9]{6})$");

    private BootstrapTokens() {
    }

    /** The filter of both controllers' Secret handlers: a bootstrap token in the token namespace. */
    static boolean isTokenSecret(Secret secret) {
        return SECRET_TYPE.equals(secret.getType()) && TOKEN_NAMESPACE.equals(secret.getMetadata().getNamespace());
    }

    /** GetData's bytes: the value of {@code key}, empty when absent. */
    static byte[] dataBytes(Secret secret, String key) {
        Map<String, String> data = secret.getData();
        String encoded = data == null ? null : data.get(key);
        if (encoded == null) {
            return new byte[0];
        }
        return Base64.getMimeDecoder().decode(encoded);
    }

    /** GetData: the value of {@code key} as a string, empty when absent. */
    static String data(Secret secret, String key) {
        return new String(dataBytes(secret, key), StandardCharsets.UTF_8);
    }

    /** ParseName: the token ID of a Secret named {@code bootstrap-token-<id>}. */
    static Optional<String> parseName(String name) {
        Matcher m = SECRET_NAME.matcher(name == null ? "" : name);
        return m.matches() ? Optional.of(m.group(1)) : Optional.empty();
    }

    /** GetExpiration's answer: the time left (zero when none or expired) and whether it has expired. */
    record Expiration(Duration remaining, boolean expired) {
    }

    /**
     * GetExpiration: no {@code expiration} never expires; one Go's RFC 3339 parsing cannot read counts as
     * expired; otherwise the time left until it, expired at zero or less.
     */
    static Expiration expiration(Secret secret, Instant now) {
        String expiration = data(secret, EXPIRATION_KEY);
        if (expiration.isEmpty()) {
            return new Expiration(Duration.ZERO, false);
        }
        Optional<Instant> expTime = GoRfc3339.parse(expiration);
        if (expTime.isEmpty()) {
            LOG.debugf("Unparseable expiration time (%s) in %s/%s Secret. Treating as expired.", expiration,
                    secret.getMetadata().getNamespace(), secret.getMetadata().getName());
            return new Expiration(Duration.ZERO, true);
        }
        Duration remaining = goSub(expTime.get(), now);
        if (remaining.isNegative() || remaining.isZero()) {
            LOG.debugf("Expired bootstrap token in %s/%s Secret: %s", secret.getMetadata().getNamespace(),
                    secret.getMetadata().getName(), expiration);
            return new Expiration(Duration.ZERO, true);
        }
        return new Expiration(remaining, false);
    }

    /** Go's Time.Sub: a time.Duration, saturated at its int64-nanosecond bounds. */
    static Duration goSub(Instant t, Instant u) {
        Duration d = Duration.between(u, t);
        if (d.compareTo(MAX_GO_DURATION) > 0) {
            return MAX_GO_DURATION;
        }
        if (d.compareTo(MIN_GO_DURATION) < 0) {
            return MIN_GO_DURATION;
        }
        return d;
    }

    static final Duration MAX_GO_DURATION = Duration.ofNanos(Long.MAX_VALUE);
    static final Duration MIN_GO_DURATION = Duration.ofNanos(Long.MIN_VALUE);

    /** A token the signer may sign with: its ID and secret. */
    record SigningToken(String tokenId, byte[] tokenSecret) {
    }

    /**
     * validateSecretForSigning: the name names the token, token-id matches it, token-secret is set, the
     * token has not expired and usage-bootstrap-signing is "true".
     */
    static Optional<SigningToken> validateForSigning(Secret secret, Instant now) {
        String name = secret.getMetadata().getName();
        Optional<String> nameTokenId = parseName(name);
        if (nameTokenId.isEmpty()) {
            LOG.debugf("Invalid secret name, must be of the form %s<secret-id>: secretName %s", SECRET_PREFIX, name);
            return Optional.empty();
        }
        String tokenId = data(secret, TOKEN_ID_KEY);
        if (tokenId.isEmpty()) {
            LOG.debugf("No key in Secret: key %s secret %s/%s", TOKEN_ID_KEY, secret.getMetadata().getNamespace(), name);
            return Optional.empty();
        }
        if (!nameTokenId.get().equals(tokenId)) {
            LOG.debugf("Token ID doesn't match secret name: tokenID %s secretName %s", tokenId, name);
            return Optional.empty();
        }
        byte[] tokenSecret = dataBytes(secret, TOKEN_SECRET_KEY);
        if (tokenSecret.length == 0) {
            LOG.debugf("No key in secret: key %s secret %s/%s", TOKEN_SECRET_KEY, secret.getMetadata().getNamespace(),
                    name);
            return Optional.empty();
        }
        // the token cleaner deletes it; until it has, an expired token signs nothing
        if (expiration(secret, now).expired()) {
            return Optional.empty();
        }
        if (!"true".equals(data(secret, USAGE_SIGNING_KEY))) {
            return Optional.empty();
        }
        return Optional.of(new SigningToken(tokenId, tokenSecret));
    }
}
