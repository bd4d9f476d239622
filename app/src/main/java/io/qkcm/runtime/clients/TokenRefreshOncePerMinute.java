package io.qkcm.runtime.clients;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CompletableFuture;
import java.util.function.Function;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.http.BasicBuilder;
import io.fabric8.kubernetes.client.http.HttpClient;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.HttpResponse;
import io.fabric8.kubernetes.client.http.Interceptor;
import io.fabric8.kubernetes.client.utils.TokenRefreshInterceptor;

/**
 * fabric8's token refresh ({@link TokenRefreshInterceptor}, the interceptor named {@value TokenRefreshInterceptor#NAME}),
 * attempted at most once a minute.
 * <p>
 * Why: fabric8 7.4 re-reads the credentials once a minute ({@code Config.refresh()}: the kubeconfig file read and
 * parsed again, or the service account's token file), but it counts the minute from the last refresh that
 * <em>found a token</em>. A kubeconfig that authenticates with a client certificate, as kube-controller-manager's
 * does, has none: from the first minute on, every request read and parsed the kubeconfig, YAML and all. That was a
 * third of qkcm's CPU while the garbage collector deleted 1,000 pods and a tenth of it while the ReplicaSet
 * controller created 3,000 (bench/results/2026-11-28-ab/profile.md). client-go reads a kubeconfig once, and a token
 * file at most once a minute.
 * <p>
 * This keeps fabric8's interceptor and its behaviour (the Authorization header, the refresh after a 401, OIDC), and
 * only gives it a fresh one-minute stamp after each attempt, whatever the attempt found: the interceptor in use is
 * replaced by one made with the attempt's time.
 */
final class TokenRefreshOncePerMinute implements Interceptor {

    /** fabric8's REFRESH_INTERVAL_MINUTE. */
    static final Duration INTERVAL = Duration.ofMinutes(1);

    private final Function<Instant, Interceptor> factory;
    private final Clock clock;
    private volatile Interceptor current;
    /** When the interceptor in use will next try a refresh: a minute after its stamp. */
    private volatile Instant due;

    TokenRefreshOncePerMinute(Config config, HttpClient.Factory httpClientFactory) {
        this(stamp -> new TokenRefreshInterceptor(config, httpClientFactory, stamp), Clock.systemUTC());
    }

    TokenRefreshOncePerMinute(Function<Instant, Interceptor> factory, Clock clock) {
        this.factory = factory;
        this.clock = clock;
        Instant now = clock.instant();
        this.current = factory.apply(now);
        this.due = now.plus(INTERVAL);
    }

    @Override
    public void before(BasicBuilder builder, HttpRequest request, RequestTags tags) {
        Interceptor in = current;
        Instant now = clock.instant();
        in.before(builder, request, tags);
        if (now.isAfter(due)) {
            // fabric8's interceptor tried its refresh in the call above (its stamp is a minute old): the next one
            // is stamped now, found token or not (requests racing here make one interceptor each: harmless)
            due = now.plus(INTERVAL);
            current = factory.apply(now);
        }
    }

    @Override
    public CompletableFuture<Boolean> afterFailure(BasicBuilder builder, HttpResponse<?> response, RequestTags tags) {
        // a 401: fabric8 refreshes whatever the stamp, and the request is retried
        return current.afterFailure(builder, response, tags);
    }
}
