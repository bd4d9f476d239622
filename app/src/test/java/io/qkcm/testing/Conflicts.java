package io.qkcm.testing;

import java.util.function.Supplier;

import io.fabric8.kubernetes.client.KubernetesClientException;

/**
 * client-go's {@code retry.RetryOnConflict} for tests: a read-modify-write on an object a controller
 * also writes (a Deployment's status, a Pod's owner references) may meet a 409 — the test simply
 * re-reads and tries again, as any well-behaved client does.
 */
public final class Conflicts {

    private Conflicts() {
    }

    public static <T> T retry(Supplier<T> write) {
        KubernetesClientException last = null;
        for (int attempt = 0; attempt < 10; attempt++) {
            try {
                return write.get();
            } catch (KubernetesClientException e) {
                if (e.getCode() != 409) {
                    throw e;
                }
                last = e;
                try {
                    Thread.sleep(10L << Math.min(attempt, 5));
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    throw e;
                }
            }
        }
        throw last;
    }
}
