package io.qkcm.manager.serving;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.authentication.TokenReview;
import io.fabric8.kubernetes.api.model.authentication.TokenReviewBuilder;
import io.fabric8.kubernetes.api.model.authentication.TokenReviewStatus;
import io.fabric8.kubernetes.client.KubernetesClient;

/**
 * Upstream's {@code DelegatingAuthenticatorConfig}: a client certificate verified against the client CA,
 * else a bearer token checked with a TokenReview (answers cached for
 * {@code --authentication-token-webhook-cache-ttl}, authenticated or not), union'ed; a request carrying
 * credentials that fail (or a TokenReview that errors) is unauthenticated (401), one carrying none is
 * {@code system:anonymous}. Authenticated users get the {@code system:authenticated} group.
 */
final class DelegatingAuthenticator {

    private static final Logger LOG = Logger.getLogger(DelegatingAuthenticator.class);

    /** The outcome: a user, or a failure (401). */
    record Result(UserInfo user, String error) {
        static Result ok(UserInfo user) {
            return new Result(user, null);
        }

        static Result failed(String error) {
            return new Result(null, error);
        }

        boolean authenticated() {
            return user != null;
        }
    }

    private record Review(UserInfo user, String error) {
    }

    private final KubernetesClient tokenReviews;
    private final Duration cacheTtl;
    private final TtlCache<String, Review> cache = new TtlCache<>();

    /** @param tokenReviews the client for TokenReviews, or null: bearer tokens are then not looked at */
    DelegatingAuthenticator(KubernetesClient tokenReviews, Duration cacheTtl) {
        this.tokenReviews = tokenReviews;
        this.cacheTtl = cacheTtl;
    }

    /**
     * @param authorization the Authorization header, or null
     * @param clientCert    the user from a verified client certificate, or null
     */
    Result authenticate(String authorization, UserInfo clientCert) {
        return authenticate(authorization, clientCert, null);
    }

    /**
     * @param clientCertError why the client certificate did not verify, or null: upstream's union
     *                        authenticator then still tries the token, and fails (401) if that does not
     *                        authenticate either — never anonymous
     */
    Result authenticate(String authorization, UserInfo clientCert, String clientCertError) {
        List<String> errors = new ArrayList<>();
        if (clientCert != null) {
            return Result.ok(withAuthenticatedGroup(clientCert));
        }
        if (clientCertError != null) {
            errors.add(clientCertError);
        }
        if (tokenReviews != null) {
            String token = bearerToken(authorization);
            if (token != null) {
                Review review = review(token);
                if (review.user() != null) {
                    return Result.ok(withAuthenticatedGroup(review.user()));
                }
                errors.add(review.error());
            }
        }
        if (!errors.isEmpty()) {
            return Result.failed(String.join(", ", errors));
        }
        return Result.ok(UserInfo.anonymous());
    }

    /** bearertoken.go: "Bearer <token>" (case-insensitive scheme); anything else is no opinion. */
    static String bearerToken(String header) {
        if (header == null) {
            return null;
        }
        String auth = header.trim();
        if (auth.isEmpty()) {
            return null;
        }
        String[] parts = auth.split(" ", 3);
        if (parts.length < 2 || !parts[0].toLowerCase(Locale.ROOT).equals("bearer") || parts[1].isEmpty()) {
            return null;
        }
        return parts[1];
    }

    private Review review(String token) {
        String key = sha256(token);
        Review cached = cache.get(key);
        if (cached != null) {
            return cached;
        }
        TokenReview request = new TokenReviewBuilder().withNewSpec().withToken(token).endSpec().build();
        TokenReview response;
        try {
            response = Webhook.withRetry(() -> tokenReviews.authentication().v1().tokenReviews().create(request));
        } catch (Exception e) {
            // not cached: the next request asks again
            LOG.errorf("Unable to authenticate the request: TokenReview failed: %s", e.getMessage());
            return new Review(null, "TokenReview failed: " + e.getMessage());
        }
        TokenReviewStatus status = response.getStatus();
        Review review;
        if (status == null || !Boolean.TRUE.equals(status.getAuthenticated()) || status.getUser() == null) {
            String error = status != null && status.getError() != null && !status.getError().isEmpty()
                    ? status.getError()
                    : "invalid bearer token";
            LOG.debugf("Unable to authenticate the request: %s", error);
            review = new Review(null, error);
        } else {
            var u = status.getUser();
            review = new Review(new UserInfo(u.getUsername(), u.getUid(), u.getGroups(), u.getExtra()), null);
        }
        cache.put(key, review, cacheTtl);
        return review;
    }

    private static UserInfo withAuthenticatedGroup(UserInfo user) {
        if (user.groups().contains(UserInfo.AUTHENTICATED) || user.name().equals(UserInfo.ANONYMOUS)) {
            return user;
        }
        List<String> groups = new ArrayList<>(user.groups());
        groups.add(UserInfo.AUTHENTICATED);
        return new UserInfo(user.name(), user.uid(), groups, user.extra());
    }

    private static String sha256(String s) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(s.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
