package io.qkcm.manager.serving;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReview;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReviewBuilder;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReviewStatus;
import io.fabric8.kubernetes.client.KubernetesClient;

/**
 * Upstream's {@code DelegatingAuthorizationOptions.toAuthorizer}: a union of the privileged groups
 * ({@code system:masters}, always allowed), the {@code --authorization-always-allow-paths} authorizer
 * (exact paths, or prefixes with a trailing {@code *}) and, when there is an authorization client, a
 * SubjectAccessReview for the non-resource request (path, verb = lower-case HTTP method), cached
 * {@code --authorization-webhook-cache-authorized-ttl} when allowed and
 * {@code --authorization-webhook-cache-unauthorized-ttl} otherwise. No opinion from all of them is a denial.
 */
final class DelegatingAuthorizer {

    private static final Logger LOG = Logger.getLogger(DelegatingAuthorizer.class);

    static final Set<String> ALWAYS_ALLOW_GROUPS = Set.of("system:masters");

    /** Allowed, or not with a reason; {@code error} set when the SubjectAccessReview itself failed (500). */
    record Decision(boolean allowed, String reason, String error) {
        static final Decision ALLOW = new Decision(true, "", null);
        static final Decision NO_OPINION = new Decision(false, "", null);
    }

    private final Set<String> paths;
    private final List<String> prefixes;
    private final KubernetesClient reviews;
    private final Duration allowTtl;
    private final Duration denyTtl;
    private final TtlCache<String, Decision> cache = new TtlCache<>();

    DelegatingAuthorizer(List<String> alwaysAllowPaths, KubernetesClient reviews, Duration allowTtl, Duration denyTtl) {
        this.paths = new java.util.HashSet<>();
        this.prefixes = new ArrayList<>();
        for (String p : alwaysAllowPaths) {
            String t = p.startsWith("/") ? p.substring(1) : p;
            if (t.isEmpty()) {
                paths.add(t);
                continue;
            }
            if (t.substring(0, t.length() - 1).indexOf('*') >= 0) {
                throw new IllegalArgumentException("only trailing * allowed in \"" + t + "\"");
            }
            if (t.endsWith("*")) {
                prefixes.add(t.substring(0, t.length() - 1));
            } else {
                paths.add(t);
            }
        }
        this.reviews = reviews;
        this.allowTtl = allowTtl;
        this.denyTtl = denyTtl;
    }

    /** Checks the always-allow paths (usable before authentication decides anything). */
    boolean alwaysAllowed(String path) {
        String p = path.startsWith("/") ? path.substring(1) : path;
        if (paths.contains(p)) {
            return true;
        }
        for (String prefix : prefixes) {
            if (p.startsWith(prefix)) {
                return true;
            }
        }
        return false;
    }

    Decision authorize(UserInfo user, String verb, String path) {
        for (String g : user.groups()) {
            if (ALWAYS_ALLOW_GROUPS.contains(g)) {
                return Decision.ALLOW;
            }
        }
        if (alwaysAllowed(path)) {
            return Decision.ALLOW;
        }
        if (reviews == null) {
            return Decision.NO_OPINION;
        }
        String key = user.name() + "\u0000" + user.uid() + "\u0000" + user.groups() + "\u0000"
                + new TreeMap<>(user.extra()) + "\u0000" + verb + "\u0000" + path;
        Decision cached = cache.get(key);
        if (cached != null) {
            return cached;
        }
        SubjectAccessReview request = new SubjectAccessReviewBuilder().withNewSpec()
                .withUser(user.name()).withUid(user.uid().isEmpty() ? null : user.uid())
                .withGroups(user.groups().isEmpty() ? null : user.groups())
                .withExtra(user.extra().isEmpty() ? null : user.extra())
                .withNewNonResourceAttributes().withPath(path).withVerb(verb).endNonResourceAttributes()
                .endSpec().build();
        SubjectAccessReview response;
        try {
            response = Webhook.withRetry(() -> reviews.authorization().v1().subjectAccessReview().create(request));
        } catch (Exception e) {
            LOG.errorf("SubjectAccessReview for %s %s failed: %s", verb, path, e.getMessage());
            return new Decision(false, "", e.getMessage());
        }
        SubjectAccessReviewStatus status = response.getStatus();
        String reason = status == null || status.getReason() == null ? "" : status.getReason();
        Decision decision;
        if (status != null && Boolean.TRUE.equals(status.getAllowed())) {
            decision = new Decision(true, reason, null);
            cache.put(key, decision, allowTtl);
        } else {
            decision = new Decision(false, reason, null);
            cache.put(key, decision, denyTtl);
        }
        return decision;
    }
}
