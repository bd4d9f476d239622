package io.qkcm.runtime.clients;

import java.util.function.Function;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.RequestConfig;
import io.fabric8.kubernetes.client.RequestConfigBuilder;

/**
 * Creations sent as client-go sends them. fabric8 re-sends any request, a POST included, after an I/O
 * error (the connection reset after the request went out) and after any 429 or 5xx answer
 * ({@code StandardHttpClient.shouldRetry}); an object created from {@code generateName} and re-sent is
 * a second object. client-go never re-sends a write after a transport error and re-sends after 429/5xx
 * only when the server says when ({@code Retry-After}), at most {@link #MAX_RETRIES} times
 * ({@code rest.Request}'s maxRetries). One instance per client: it holds a view of that client with
 * fabric8's retries off.
 */
public final class ClientGoCreates {

    private static final Logger LOG = Logger.getLogger(ClientGoCreates.class);

    /** client-go's most retries of one request ({@code rest.Request}'s maxRetries). */
    public static final int MAX_RETRIES = 10;

    private final KubernetesClient withoutRetries;

    public ClientGoCreates(KubernetesClient client) {
        this.withoutRetries = withoutRequestRetries(client);
    }

    /** {@code client} with fabric8's request retries off (same HTTP client, same configuration otherwise). */
    static KubernetesClient withoutRequestRetries(KubernetesClient client) {
        RequestConfig config = new RequestConfigBuilder(client.getConfiguration().getRequestConfig())
                .withRequestRetryBackoffLimit(0).build();
        return client.newClient(config).adapt(KubernetesClient.class);
    }

    /**
     * Sends {@code post} (one request on the client given) and re-sends it only after a 429 or 5xx
     * answer carrying a Retry-After, waiting that long; any other failure is thrown as it came.
     */
    public <T> T create(Function<KubernetesClient, T> post) {
        for (int retries = 0;; retries++) {
            try {
                return post.apply(withoutRetries);
            } catch (KubernetesClientException e) {
                int after = retryAfterSeconds(e);
                if (after <= 0 || retries >= MAX_RETRIES) {
                    throw e;
                }
                LOG.debugf("creation answered %d, retrying after %ds", e.getCode(), after);
                try {
                    Thread.sleep(after * 1000L);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    throw e;
                }
            }
        }
    }

    /** The Retry-After of a 429 or 5xx answer (the API server puts it in the status details too), else 0. */
    static int retryAfterSeconds(KubernetesClientException e) {
        int code = e.getCode();
        if (code != 429 && (code < 500 || code > 599)) {
            return 0;
        }
        if (e.getStatus() == null || e.getStatus().getDetails() == null
                || e.getStatus().getDetails().getRetryAfterSeconds() == null) {
            return 0;
        }
        return Math.max(0, e.getStatus().getDetails().getRetryAfterSeconds());
    }
}
