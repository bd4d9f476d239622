package io.qkcm.manager.serving;

import java.util.concurrent.Callable;
import java.util.concurrent.ThreadLocalRandom;

import io.fabric8.kubernetes.client.KubernetesClientException;

/**
 * The retry of upstream's delegated authn/authz webhooks ({@code DefaultAuthWebhookRetryBackoff}: 500ms,
 * factor 1.5, jitter 0.2, 5 steps) on errors worth retrying: connection failures, 429 and 5xx.
 */
final class Webhook {

    private static final long INITIAL_MILLIS = 500;
    private static final double FACTOR = 1.5;
    private static final double JITTER = 0.2;
    private static final int STEPS = 5;

    private Webhook() {
    }

    static <T> T withRetry(Callable<T> call) throws Exception {
        double delay = INITIAL_MILLIS;
        for (int step = 1;; step++) {
            try {
                return call.call();
            } catch (KubernetesClientException e) {
                if (step >= STEPS || !retriable(e)) {
                    throw e;
                }
            }
            long sleep = (long) (delay + delay * JITTER * ThreadLocalRandom.current().nextDouble());
            Thread.sleep(sleep);
            delay *= FACTOR;
        }
    }

    static boolean retriable(KubernetesClientException e) {
        int code = e.getCode();
        return code == 0 || code == 429 || code >= 500;
    }
}
