package io.qkcm.controller.bootstrap;

import java.time.Instant;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.javaoperatorsdk.operator.api.reconciler.Ignore;
import io.javaoperatorsdk.operator.processing.event.source.filter.GenericFilter;
import io.qkcm.controller.ApiErrors;
import io.qkcm.runtime.DeepCopy;
import io.qkcm.runtime.informers.ResourceEventHandlerFuncs;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.KeyReconciler;

/**
 * bootstrap-signer-controller (upstream pkg/controller/bootstrap, bootstrapsigner.go): keeps one
 * detached JWS of {@code kube-public/cluster-info}'s {@code kubeconfig} under
 * {@code jws-kubeconfig-<token-id>} for every bootstrap token in kube-system that may sign (see
 * {@link BootstrapTokens#validateForSigning}), and removes the signatures of tokens that are gone,
 * expired or no longer for signing. It is what {@code kubeadm join} checks its discovery against.
 *
 * <p>Upstream has one key, the ConfigMap's: its add and update queue it (the primary filter lets only
 * that ConfigMap through), and so does every add, update and delete of a bootstrap token Secret (the
 * handler on the shared Secret informer). A sync reads both caches and writes the ConfigMap only when
 * a signature is new, changed or to be removed.
 */
@Ignore // runs in its own Operator, not quarkus-operator-sdk's default one
public final class BootstrapSigner extends KeyReconciler<ConfigMap> {

    public static final String NAME = "bootstrap-signer-controller";
    public static final String QUEUE = "bootstrap_signer_queue";
    static final String CONFIG_MAP_KEY = BootstrapTokens.CLUSTER_INFO_NAMESPACE + "/" + BootstrapTokens.CLUSTER_INFO;

    private final SharedIndexInformer<ConfigMap> configMaps;
    private final SharedIndexInformer<Secret> secrets;
    private final Supplier<Instant> clock;

    /** {@code clock}: the time tokens' expirations are compared with. */
    public BootstrapSigner(ControllerContext context, Supplier<Instant> clock) {
        super(context, ConfigMap.class, QUEUE, 1);
        this.clock = clock;
        this.configMaps = context.informers().informerFor(ConfigMap.class);
        this.secrets = context.informers().informerFor(Secret.class);
        secrets.addEventHandler(ResourceEventHandlerFuncs.<Secret>of(
                s -> pokeIfToken(s), (o, s) -> pokeIfToken(s), s -> pokeIfToken(s)));
    }

    private void pokeIfToken(Secret secret) {
        if (BootstrapTokens.isTokenSecret(secret)) {
            queue.add(CONFIG_MAP_KEY);
        }
    }

    @Override
    protected GenericFilter<? super ConfigMap> primaryFilter() {
        return cm -> BootstrapTokens.CLUSTER_INFO_NAMESPACE.equals(cm.getMetadata().getNamespace())
                && BootstrapTokens.CLUSTER_INFO.equals(cm.getMetadata().getName());
    }

    @Override
    protected List<SharedIndexInformer<?>> informers() {
        return List.of(configMaps, secrets);
    }

    @Override
    protected void sync(String key) {
        signConfigMap();
    }

    /**
     * signConfigMap: the signatures computed on the cached objects, written back when they differ. A
     * conflict or a ConfigMap gone is left to the event that follows it, as upstream; any other failed
     * write is retried with the queue's backoff (upstream only logs it and waits for the next event).
     */
    void signConfigMap() {
        ConfigMap orig = configMaps.getStore().getByKey(CONFIG_MAP_KEY);
        if (orig == null) {
            return;
        }
        Map<String, String> data = orig.getData() == null ? Map.of() : orig.getData();
        String content = data.get(BootstrapTokens.KUBECONFIG_KEY);
        if (content == null) {
            log.debugf("No key in ConfigMap: key %s configMap %s", BootstrapTokens.KUBECONFIG_KEY, CONFIG_MAP_KEY);
            return;
        }
        Map<String, String> newData = new LinkedHashMap<>();
        Map<String, String> oldSignatures = new HashMap<>();
        data.forEach((k, v) -> {
            if (k.startsWith(BootstrapTokens.JWS_SIGNATURE_PREFIX)) {
                oldSignatures.put(k.substring(BootstrapTokens.JWS_SIGNATURE_PREFIX.length()), v);
            } else {
                newData.put(k, v);
            }
        });
        boolean needUpdate = false;
        for (Map.Entry<String, byte[]> token : tokens().entrySet()) {
            String tokenId = token.getKey();
            String signature = Jws.computeDetachedSignature(content, tokenId, token.getValue());
            if (!signature.equals(oldSignatures.remove(tokenId))) {
                needUpdate = true;
            }
            newData.put(BootstrapTokens.JWS_SIGNATURE_PREFIX + tokenId, signature);
        }
        // signatures left over belong to tokens that no longer sign
        if (!oldSignatures.isEmpty()) {
            needUpdate = true;
        }
        if (needUpdate) {
            ConfigMap updated = DeepCopy.of(orig);
            updated.setData(newData);
            updateConfigMap(updated);
        }
    }

    private void updateConfigMap(ConfigMap cm) {
        try {
            // a PUT carrying the cached resourceVersion: a stale cache gets a conflict, never an overwrite
            context.client().configMaps().inNamespace(cm.getMetadata().getNamespace()).resource(cm).update();
        } catch (RuntimeException e) {
            if (ApiErrors.isConflict(e) || ApiErrors.isNotFound(e)) {
                log.debugf("Error updating ConfigMap: %s", KeyReconciler.shortMessage(e));
                return;
            }
            throw e;
        }
    }

    /** getTokens: token ID to token secret for every bootstrap token Secret that may sign. */
    private Map<String, byte[]> tokens() {
        Instant now = clock.get();
        Map<String, byte[]> tokens = new LinkedHashMap<>();
        for (Secret secret : secrets.getStore().list()) {
            if (!BootstrapTokens.TOKEN_NAMESPACE.equals(secret.getMetadata().getNamespace())
                    || !BootstrapTokens.SECRET_TYPE.equals(secret.getType())) {
                continue;
            }
            Optional<BootstrapTokens.SigningToken> token = BootstrapTokens.validateForSigning(secret, now);
            if (token.isEmpty()) {
                continue;
            }
            String tokenId = token.get().tokenId();
            if (tokens.containsKey(tokenId)) {
                // cannot happen while the name carries the ID; upstream keeps the first it lists
                log.debugf("Duplicate bootstrap tokens found for id, ignoring on the duplicate secret: tokenID %s "
                        + "ignoredSecret %s", tokenId, KeyReconciler.key(secret));
                continue;
            }
            tokens.put(tokenId, token.get().tokenSecret());
        }
        return tokens;
    }
}
