package io.qkcm.controller.bootstrap;

import java.time.Instant;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

import io.fabric8.kubernetes.api.model.DeleteOptions;
import io.fabric8.kubernetes.api.model.Preconditions;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.Status;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.HttpResponse;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.utils.URLUtils;
import io.javaoperatorsdk.operator.api.reconciler.Ignore;
import io.javaoperatorsdk.operator.processing.event.source.filter.GenericFilter;
import io.qkcm.controller.ApiErrors;
import io.qkcm.runtime.Json;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.KeyReconciler;

/**
 * token-cleaner-controller (upstream pkg/controller/bootstrap, tokencleaner.go): deletes bootstrap
 * token Secrets of kube-system whose {@code expiration} has passed (or cannot be read: see
 * {@link BootstrapTokens#expiration}), with the Secret's UID as precondition, and queues a token that
 * has not expired yet again for the time it has left.
 *
 * <p>Upstream's handler queues the adds and updates of bootstrap token Secrets of kube-system; here
 * that is the primary filter and JOSDK's own events do the queueing (a delete syncs a key no longer
 * cached, which ends at upstream's "has been deleted").
 */
@Ignore // runs in its own Operator, not quarkus-operator-sdk's default one
public final class TokenCleaner extends KeyReconciler<Secret> {

    public static final String NAME = "token-cleaner-controller";
    public static final String QUEUE = "token_cleaner";

    private final SharedIndexInformer<Secret> secrets;
    private final Supplier<Instant> clock;

    /** {@code clock}: the time expirations are compared with. */
    public TokenCleaner(ControllerContext context, Supplier<Instant> clock) {
        super(context, Secret.class, QUEUE, 1);
        this.clock = clock;
        this.secrets = context.informers().informerFor(Secret.class);
    }

    @Override
    protected GenericFilter<? super Secret> primaryFilter() {
        return BootstrapTokens::isTokenSecret;
    }

    @Override
    protected List<SharedIndexInformer<?>> informers() {
        return List.of(secrets);
    }

    @Override
    public void onStart() {
        log.info("Starting token cleaner controller");
    }

    @Override
    public void onShutdown() {
        log.info("Shutting down token cleaner controller");
    }

    @Override
    protected void sync(String key) throws InterruptedException {
        Secret secret = secrets.getStore().getByKey(key);
        if (secret == null) {
            log.debugf("Secret has been deleted: secret %s", key);
            return;
        }
        if (BootstrapTokens.SECRET_TYPE.equals(secret.getType())) {
            evalSecret(key, secret);
        }
    }

    /**
     * evalSecret. A delete refused for a conflict (another Secret of that name now) or not found (gone
     * already) is done, as upstream; any other failure is retried with the queue's backoff (upstream
     * only logs it) — a retry cannot delete anything else, the UID precondition sees to that.
     */
    void evalSecret(String key, Secret secret) throws InterruptedException {
        BootstrapTokens.Expiration expiration = BootstrapTokens.expiration(secret, clock.get());
        if (expiration.expired()) {
            log.debugf("Deleting expired secret: secret %s", key);
            try {
                delete(secret.getMetadata().getNamespace(), secret.getMetadata().getName(),
                        secret.getMetadata().getUid());
            } catch (KubernetesClientException e) {
                if (ApiErrors.isConflict(e) || ApiErrors.isNotFound(e)) {
                    log.debugf("Error deleting secret: %s", KeyReconciler.shortMessage(e));
                    return;
                }
                throw e;
            }
        } else if (!expiration.remaining().isZero() && !expiration.remaining().isNegative()) {
            queue.addAfter(key, expiration.remaining());
        }
    }

    /** DELETE with upstream's options: the Secret's UID as precondition when it has one. */
    private void delete(String namespace, String name, String uid) throws InterruptedException {
        DeleteOptions opts = new DeleteOptions();
        opts.setApiVersion("v1");
        opts.setKind("DeleteOptions");
        if (uid != null && !uid.isEmpty()) {
            Preconditions p = new Preconditions();
            p.setUid(uid);
            opts.setPreconditions(p);
        }
        var client = context.client();
        String url = URLUtils.join(client.getMasterUrl().toString(), "api", "v1", "namespaces", namespace, "secrets",
                name);
        HttpRequest request = client.getHttpClient().newHttpRequestBuilder().uri(url)
                .delete("application/json", Json.api().asJson(opts)).build();
        HttpResponse<String> response;
        try {
            response = client.getHttpClient().sendAsync(request, String.class).get(60, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            throw new KubernetesClientException("deleting secret " + namespace + "/" + name + ": " + e.getCause(),
                    e.getCause());
        } catch (TimeoutException e) {
            throw new KubernetesClientException("deleting secret " + namespace + "/" + name + ": timed out");
        }
        int code = response.code();
        if (code >= 200 && code < 300) {
            return;
        }
        Status status = null;
        try {
            status = Json.api().unmarshal(response.body(), Status.class);
        } catch (RuntimeException ignored) {
            // not a Status: the code says enough
        }
        String message = status != null && status.getMessage() != null ? status.getMessage() : "HTTP " + code;
        throw new KubernetesClientException(message, code, status);
    }
}
