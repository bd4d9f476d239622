package io.qkcm.controller.serviceaccount;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.ObjectReference;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.qkcm.runtime.josdk.ControllerContext;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.Ignore;
import io.javaoperatorsdk.operator.processing.event.source.filter.GenericFilter;
import io.qkcm.runtime.josdk.KeyReconciler;

/**
 * serviceaccount-token-controller (upstream tokens_controller.go): Secrets of type
 * {@code kubernetes.io/service-account-token} get {@code token} (a legacy JWT for their
 * ServiceAccount), {@code ca.crt} and {@code namespace}; they are deleted when their ServiceAccount
 * is; a deleted token Secret is dropped from its ServiceAccount's {@code secrets}. Two queues as
 * upstream (service accounts, secrets), each retried at most {@code maxRetries} times.
 *
 * <p>Two JOSDK reconcilers, as upstream has two queues: {@link ServiceAccountWorkers} (primary
 * ServiceAccount, queue {@code serviceaccount_tokens_service}) and {@link SecretWorkers} (primary
 * service-account-token Secrets, queue {@code serviceaccount_tokens_secret}), run in one Operator
 * ({@link #reconcilers()}). Upstream's keys carry the UIDs of the object as it was when queued; here they
 * are read from the primary JOSDK hands the reconcile — the cached object, or the last state of a
 * deleted one — which is the same object upstream's handler saw last.
 */
public final class TokensController {

    public static final String NAME = "serviceaccount-token-controller";
    static final int MAX_RETRIES = 10;

    private static final Logger LOG = Logger.getLogger(TokensController.class);

    record ServiceAccountKey(String namespace, String name, String uid) {
    }

    record SecretKey(String namespace, String name, String uid, String saName, String saUid) {
    }

    /** Thrown by a sync that should be retried (upstream's retry=true). */
    static final class RetryException extends Exception {
        RetryException(String message) {
            super(message);
        }
    }

    private final ControllerContext context;
    private final LegacyTokenGenerator tokens;
    private final byte[] rootCA;
    private final SharedIndexInformer<ServiceAccount> serviceAccounts;
    private final SharedIndexInformer<Secret> secrets;
    private final ServiceAccountWorkers saWorkers;
    private final SecretWorkers secretWorkers;

    /** {@code workers}: --concurrent-serviceaccount-token-syncs, for each of the two queues. */
    public TokensController(ControllerContext context, LegacyTokenGenerator tokens, byte[] rootCA, int workers) {
        this.context = context;
        this.tokens = tokens;
        this.rootCA = rootCA == null ? new byte[0] : rootCA;
        this.serviceAccounts = context.informers().informerFor(ServiceAccount.class);
        this.secrets = context.informers().informerFor(Secret.class);
        this.saWorkers = new ServiceAccountWorkers(workers);
        this.secretWorkers = new SecretWorkers(workers);
    }

    /** The two reconcilers, for the controller's Operator. */
    public KeyReconciler<?>[] reconcilers() {
        return new KeyReconciler<?>[] { saWorkers, secretWorkers };
    }

    /**
     * Upstream's retryOrForget, shared by both queues: only a {@link RetryException} is retried, at most
     * {@link #MAX_RETRIES} times; any other error is logged and forgotten.
     */
    @Ignore
    abstract class TokenWorkers<P extends HasMetadata> extends KeyReconciler<P> {

        TokenWorkers(Class<P> type, String queueName, int workers) {
            super(TokensController.this.context, type, queueName, workers);
        }

        @Override
        protected int maxRetries() {
            return MAX_RETRIES;
        }

        @Override
        protected boolean handleErrorFirst(String key, Exception e) {
            if (e instanceof RetryException) {
                return false;
            }
            LOG.errorf("%s: %s", key, e.getMessage());
            queue.forget(key);
            return true;
        }

        @Override
        protected void logRetry(String key, int requeues, Exception e) {
            LOG.debugf("%s: %s, retrying", key, e.getMessage());
        }

        @Override
        protected void logDropped(String key, Exception e) {
            LOG.debugf("retried several times: %s (%d)", key, MAX_RETRIES);
        }
    }

    /** Upstream queues every ServiceAccount add, update and delete: JOSDK's primary events. */
    @Ignore // runs in its own Operator (io.qkcm.runtime.josdk), not quarkus-operator-sdk's default one
    final class ServiceAccountWorkers extends TokenWorkers<ServiceAccount> {

        ServiceAccountWorkers(int workers) {
            super(ServiceAccount.class, "serviceaccount_tokens_service", workers);
        }

        @Override
        protected void sync(String key, ServiceAccount sa, Context<ServiceAccount> ctx) throws Exception {
            sync(new ServiceAccountKey(sa.getMetadata().getNamespace(), sa.getMetadata().getName(),
                    sa.getMetadata().getUid()));
        }

        @Override
        protected List<SharedIndexInformer<?>> informers() {
            return List.of(serviceAccounts, secrets);
        }

        private void sync(ServiceAccountKey key) throws Exception {
            if (empty(key.namespace()) || empty(key.name()) || empty(key.uid())) {
                LOG.errorf("invalid serviceaccount key: %s", key);
                return;
            }
            ServiceAccount sa;
            try {
                sa = getServiceAccount(key.namespace(), key.name(), key.uid(), false);
            } catch (KubernetesClientException e) {
                throw new RetryException("Getting service account: " + e.getMessage());
            }
            if (sa == null) {
                LOG.debugf("Service account %s/%s deleted, removing tokens", key.namespace(), key.name());
                deleteTokens(key);
            }
        }
    }

    /** Upstream queues service-account-token Secrets on add, update and delete: JOSDK's primary events. */
    @Ignore // runs in its own Operator (io.qkcm.runtime.josdk), not quarkus-operator-sdk's default one
    final class SecretWorkers extends TokenWorkers<Secret> {

        SecretWorkers(int workers) {
            super(Secret.class, "serviceaccount_tokens_secret", workers);
        }

        @Override
        protected GenericFilter<? super Secret> primaryFilter() {
            return s -> Secrets.TYPE_SERVICE_ACCOUNT_TOKEN.equals(s.getType());
        }

        @Override
        protected void sync(String key, Secret s, Context<Secret> ctx) throws Exception {
            sync(new SecretKey(s.getMetadata().getNamespace(), s.getMetadata().getName(),
                    s.getMetadata().getUid(), Secrets.annotation(s, Secrets.SERVICE_ACCOUNT_NAME_KEY),
                    Secrets.annotation(s, Secrets.SERVICE_ACCOUNT_UID_KEY)));
        }

        @Override
        protected List<SharedIndexInformer<?>> informers() {
            return List.of(serviceAccounts, secrets);
        }

        private void sync(SecretKey key) throws Exception {
            if (empty(key.namespace()) || empty(key.name()) || empty(key.uid()) || empty(key.saName())) {
                LOG.errorf("invalid secret key: %s", key);
                return;
            }
            Secret secret = cachedSecret(key.namespace(), key.name(), key.uid());
            if (secret == null) {
                // the secret is gone: drop it from its service account's secrets, if still listed
                ServiceAccount sa = getServiceAccount(key.namespace(), key.saName(), key.saUid(), false);
                if (sa != null) {
                    try {
                        removeSecretReferenceWithRetry(key);
                    } catch (KubernetesClientException e) {
                        LOG.errorf("Removing secret reference %s/%s: %s", key.namespace(), key.name(), e.getMessage());
                    }
                }
                return;
            }
            ServiceAccount sa;
            try {
                sa = getServiceAccount(key.namespace(), key.saName(), key.saUid(), true);
            } catch (KubernetesClientException e) {
                throw new RetryException("Getting service account: " + e.getMessage());
            }
            if (sa == null) {
                LOG.debugf("Service account %s/%s does not exist, deleting token %s", key.namespace(), key.saName(),
                        key.name());
                deleteToken(key.namespace(), key.name(), key.uid());
                return;
            }
            generateTokenIfNeeded(sa, secret);
        }
    }

    private static boolean empty(String s) {
        return s == null || s.isEmpty();
    }

    private void deleteTokens(ServiceAccountKey sa) throws RetryException {
        List<String> errors = new ArrayList<>();
        boolean retry = false;
        for (Secret s : secrets.getStore().list()) {
            if (!sa.namespace().equals(s.getMetadata().getNamespace())
                    || !isServiceAccountToken(s, sa.name(), sa.uid())) {
                continue;
            }
            try {
                deleteToken(s.getMetadata().getNamespace(), s.getMetadata().getName(), s.getMetadata().getUid());
            } catch (RetryException e) {
                retry = true;
                errors.add(e.getMessage());
            }
        }
        if (retry) {
            throw new RetryException(String.join("; ", errors));
        }
    }

    /** apiserver's serviceaccount.IsServiceAccountToken. */
    static boolean isServiceAccountToken(Secret secret, String saName, String saUid) {
        if (!Secrets.TYPE_SERVICE_ACCOUNT_TOKEN.equals(secret.getType())) {
            return false;
        }
        if (!saName.equals(Secrets.annotation(secret, Secrets.SERVICE_ACCOUNT_NAME_KEY))) {
            return false;
        }
        String uid = Secrets.annotation(secret, Secrets.SERVICE_ACCOUNT_UID_KEY);
        return empty(uid) || uid.equals(saUid);
    }

    private void deleteToken(String ns, String name, String uid) throws RetryException {
        try {
            Secrets.deleteWithPreconditions(context.client(), ns, name, uid, null);
        } catch (KubernetesClientException e) {
            if (e.getCode() == 404 || e.getCode() == 409) {
                return;
            }
            throw new RetryException("Deleting serviceaccount token " + ns + "/" + name + ": " + e.getMessage());
        }
    }

    private boolean[] secretUpdateNeeded(Secret secret) {
        boolean needsCA = rootCA.length > 0 && !Arrays.equals(Secrets.data(secret, Secrets.ROOT_CA_KEY), rootCA);
        boolean needsNamespace = Secrets.data(secret, Secrets.NAMESPACE_KEY).length == 0;
        boolean needsToken = Secrets.data(secret, Secrets.TOKEN_KEY).length == 0;
        return new boolean[] { needsCA, needsNamespace, needsToken };
    }

    private void generateTokenIfNeeded(ServiceAccount sa, Secret cached) throws Exception {
        boolean[] needs = secretUpdateNeeded(cached);
        if (!needs[0] && !needs[1] && !needs[2]) {
            return;
        }
        String ns = cached.getMetadata().getNamespace();
        Secret live;
        try {
            live = context.client().secrets().inNamespace(ns).withName(cached.getMetadata().getName()).get();
        } catch (KubernetesClientException e) {
            throw new RetryException("Populating serviceaccount token " + ns + "/" + cached.getMetadata().getName()
                    + ": " + e.getMessage());
        }
        if (live == null) {
            return;
        }
        if (!live.getMetadata().getResourceVersion().equals(cached.getMetadata().getResourceVersion())) {
            LOG.debugf("Secret %s/%s is not up to date, skipping token population", ns, live.getMetadata().getName());
            return;
        }
        needs = secretUpdateNeeded(live);
        if (!needs[0] && !needs[1] && !needs[2]) {
            return;
        }
        if (live.getMetadata().getAnnotations() == null) {
            live.getMetadata().setAnnotations(new HashMap<>());
        } else {
            live.getMetadata().setAnnotations(new HashMap<>(live.getMetadata().getAnnotations()));
        }
        live.setData(live.getData() == null ? new HashMap<>() : new HashMap<>(live.getData()));
        if (needs[0]) {
            live.getData().put(Secrets.ROOT_CA_KEY, Secrets.encode(rootCA));
        }
        if (needs[1]) {
            live.getData().put(Secrets.NAMESPACE_KEY, Secrets.encode(ns));
        }
        if (needs[2]) {
            // a signing failure is not retried, as upstream
            live.getData().put(Secrets.TOKEN_KEY, Secrets.encode(tokens.generate(sa, live)));
        }
        live.getMetadata().getAnnotations().put(Secrets.SERVICE_ACCOUNT_NAME_KEY, sa.getMetadata().getName());
        live.getMetadata().getAnnotations().put(Secrets.SERVICE_ACCOUNT_UID_KEY, sa.getMetadata().getUid());
        try {
            context.client().secrets().inNamespace(ns).resource(live).update();
        } catch (KubernetesClientException e) {
            if (e.getCode() == 409 || e.getCode() == 404) {
                return;
            }
            throw new RetryException("Populating serviceaccount token " + ns + "/" + live.getMetadata().getName()
                    + ": " + e.getMessage());
        }
    }

    /** RetryOnConflict with upstream's RemoveTokenBackoff (10 steps from 100ms, jitter 1.0). */
    private void removeSecretReferenceWithRetry(SecretKey key) throws InterruptedException {
        long delay = 100;
        for (int step = 0; ; step++) {
            try {
                removeSecretReference(key);
                return;
            } catch (KubernetesClientException e) {
                if (e.getCode() != 409 || step >= 9) {
                    throw e;
                }
            }
            Thread.sleep(delay + (long) (ThreadLocalRandom.current().nextDouble() * delay));
        }
    }

    private void removeSecretReference(SecretKey key) {
        ServiceAccount sa = context.client().serviceAccounts().inNamespace(key.namespace()).withName(key.saName()).get();
        if (sa == null) {
            return;
        }
        if (!empty(key.saUid()) && !key.saUid().equals(sa.getMetadata().getUid())) {
            return;
        }
        List<ObjectReference> refs = sa.getSecrets() == null ? List.of() : sa.getSecrets();
        if (refs.stream().noneMatch(r -> key.name().equals(r.getName()))) {
            return;
        }
        sa.setSecrets(new ArrayList<>(refs.stream().filter(r -> !key.name().equals(r.getName())).toList()));
        try {
            context.client().serviceAccounts().inNamespace(key.namespace()).resource(sa).update();
        } catch (KubernetesClientException e) {
            if (e.getCode() != 404) {
                throw e;
            }
        }
    }

    private ServiceAccount getServiceAccount(String ns, String name, String uid, boolean fetchOnCacheMiss) {
        ServiceAccount sa = serviceAccounts.getStore().getByKey(ns + "/" + name);
        if (sa != null && (empty(uid) || uid.equals(sa.getMetadata().getUid()))) {
            return sa;
        }
        if (!fetchOnCacheMiss) {
            return null;
        }
        sa = context.client().serviceAccounts().inNamespace(ns).withName(name).get();
        if (sa != null && (empty(uid) || uid.equals(sa.getMetadata().getUid()))) {
            return sa;
        }
        return null;
    }

    private Secret cachedSecret(String ns, String name, String uid) {
        Secret s = secrets.getStore().getByKey(ns + "/" + name);
        if (s != null && (empty(uid) || uid.equals(s.getMetadata().getUid()))) {
            return s;
        }
        return null;
    }
}
