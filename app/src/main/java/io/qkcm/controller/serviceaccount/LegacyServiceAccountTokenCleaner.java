package io.qkcm.controller.serviceaccount;

import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.time.ZoneOffset;
import java.time.format.DateTimeParseException;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvFromSource;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.EphemeralContainer;
import io.fabric8.kubernetes.api.model.LocalObjectReference;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.Volume;
import io.fabric8.kubernetes.api.model.VolumeProjection;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.Ignore;
import io.javaoperatorsdk.operator.processing.event.source.filter.GenericFilter;
import io.javaoperatorsdk.operator.processing.event.source.filter.OnUpdateFilter;
import io.qkcm.runtime.josdk.KeyReconciler;
import io.qkcm.runtime.josdk.ControllerContext;

/**
 * legacy-serviceaccount-token-cleaner-controller (upstream legacy_serviceaccount_token_cleaner.go):
 * once legacy token tracking has covered {@code --legacy-service-account-token-clean-up-period},
 * auto-generated token Secrets (referenced by their ServiceAccount, not mounted by any pod) unused for
 * that period are labelled {@code kubernetes.io/legacy-token-invalid-since=<today>}, and deleted once
 * they have been invalid for the period. Runs at start and then every sync interval (upstream: 24h).
 *
 * <p>Upstream runs one evaluation of all tokens every sync interval, with no queue. As a JOSDK
 * reconciler its primary is the one object each evaluation starts from: kube-apiserver's tracking
 * ConfigMap ({@code kube-system/kube-apiserver-legacy-service-account-token-tracking}); its add (at
 * start, or when the API server first writes it) runs the first evaluation, and each evaluation
 * queues the next one a sync interval later. Its updates and other ConfigMaps queue nothing, so the
 * rhythm stays upstream's. One difference: while the ConfigMap does not exist, upstream logs an error
 * every interval and qkcm waits silently for it.
 */
@Ignore // runs in its own Operator (io.qkcm.runtime.josdk), not quarkus-operator-sdk's default one
public final class LegacyServiceAccountTokenCleaner extends KeyReconciler<ConfigMap> {

    public static final String NAME = "legacy-serviceaccount-token-cleaner-controller";
    public static final String LAST_USED_LABEL_KEY = "kubernetes.io/legacy-token-last-used";
    public static final String INVALID_SINCE_LABEL_KEY = "kubernetes.io/legacy-token-invalid-since";
    /** Written by kube-apiserver's legacytokentracking controller. */
    static final String TRACKING_CONFIG_MAP = "kube-apiserver-legacy-service-account-token-tracking";
    static final String TRACKING_DATA_KEY = "since";

    private static final Logger LOG = Logger.getLogger(LegacyServiceAccountTokenCleaner.class);

    private final Duration minimumSinceLastUsed;
    private final Duration syncInterval;
    private final SharedIndexInformer<ServiceAccount> serviceAccounts;
    private final SharedIndexInformer<Secret> secrets;
    private final SharedIndexInformer<Pod> pods;
    private final SharedIndexInformer<ConfigMap> configMaps;

    public LegacyServiceAccountTokenCleaner(ControllerContext context, Duration cleanUpPeriod, Duration syncInterval) {
        super(checked(context, cleanUpPeriod, syncInterval), ConfigMap.class, "legacy_serviceaccount_token_cleaner", 1);
        this.minimumSinceLastUsed = cleanUpPeriod;
        this.syncInterval = syncInterval;
        this.serviceAccounts = context.informers().informerFor(ServiceAccount.class);
        this.secrets = context.informers().informerFor(Secret.class);
        this.pods = context.informers().informerFor(Pod.class);
        this.configMaps = context.informers().informerFor(ConfigMap.class);
    }

    /** The cleaner's constructor checks come before the reconciler's: upstream's start errors first. */
    private static ControllerContext checked(ControllerContext context, Duration cleanUpPeriod, Duration syncInterval) {
        if (cleanUpPeriod.isZero() || cleanUpPeriod.isNegative()) {
            throw new IllegalArgumentException("failed to start the legacy service account token cleaner: "
                    + "invalid CleanUpPeriod: " + cleanUpPeriod);
        }
        if (syncInterval.isZero() || syncInterval.isNegative()) {
            throw new IllegalArgumentException("failed to start the legacy service account token cleaner: "
                    + "invalid SyncInterval: " + syncInterval);
        }
        return context;
    }

    @Override
    protected GenericFilter<? super ConfigMap> primaryFilter() {
        return cm -> "kube-system".equals(cm.getMetadata().getNamespace())
                && TRACKING_CONFIG_MAP.equals(cm.getMetadata().getName());
    }

    @Override
    protected OnUpdateFilter<? super ConfigMap> primaryUpdateFilter() {
        return (newCm, oldCm) -> false;
    }

    @Override
    protected List<SharedIndexInformer<?>> informers() {
        return List.of(serviceAccounts, secrets, pods, configMaps);
    }

    @Override
    protected void sync(String key, ConfigMap tracking, Context<ConfigMap> ctx) {
        if (ctx.isPrimaryResourceDeleted()) {
            return;
        }
        try {
            evaluateSATokens(Instant.now());
        } catch (RuntimeException e) {
            LOG.errorf("legacy token evaluation failed: %s", e.toString());
        }
        // wait.Until: the period runs from the end of one evaluation to the start of the next
        queue.addAfter(key, syncInterval);
    }

    void evaluateSATokens(Instant nowInstant) {
        LocalDate today = nowInstant.atOffset(ZoneOffset.UTC).toLocalDate();
        Instant trackedSince;
        try {
            trackedSince = latestPossibleTrackedSinceTime();
        } catch (RuntimeException e) {
            LOG.errorf("Getting lastest possible tracked_since time: %s", e.getMessage());
            return;
        }
        if (nowInstant.isBefore(trackedSince.plus(minimumSinceLastUsed))) {
            // the token tracking has not been on for long enough
            return;
        }
        Instant preserveCreatedOnOrAfter = nowInstant.minus(minimumSinceLastUsed);
        String preserveUsedOnOrAfter = preserveCreatedOnOrAfter.atOffset(ZoneOffset.UTC).toLocalDate().toString();

        Map<String, Set<String>> namespaceToUsedSecretNames = new HashMap<>();
        for (Secret secret : secrets.getStore().list()) {
            if (!Secrets.TYPE_SERVICE_ACCOUNT_TOKEN.equals(secret.getType())) {
                continue;
            }
            String ns = secret.getMetadata().getNamespace();
            String name = secret.getMetadata().getName();
            if (!Instant.parse(secret.getMetadata().getCreationTimestamp()).isBefore(preserveCreatedOnOrAfter)) {
                continue;
            }
            if (secret.getMetadata().getDeletionTimestamp() != null) {
                continue;
            }
            Map<String, String> labels = secret.getMetadata().getLabels() == null ? Map.of()
                    : secret.getMetadata().getLabels();
            String lastUsed = labels.get(LAST_USED_LABEL_KEY);
            if (lastUsed != null) {
                if (!isDate(lastUsed)) {
                    LOG.errorf("Parsing lastUsed time of secret %s/%s: %s", ns, name, lastUsed);
                    continue;
                }
                if (lastUsed.compareTo(preserveUsedOnOrAfter) >= 0) {
                    continue;
                }
            }
            ServiceAccount sa = serviceAccountOf(secret);
            if (sa == null || sa.getSecrets() == null
                    || sa.getSecrets().stream().noneMatch(r -> name.equals(r.getName()))) {
                continue; // only auto-generated tokens, referenced by their service account
            }
            Set<String> mounted = namespaceToUsedSecretNames.computeIfAbsent(ns, this::mountedSecretNames);
            if (mounted.contains(name)) {
                continue;
            }
            String invalidSince = labels.get(INVALID_SINCE_LABEL_KEY);
            if (invalidSince == null || !isDate(invalidSince)) {
                invalidSince = today.toString();
                LOG.infof("Mark the auto-generated service account token as invalid: secret %s/%s invalidSince %s", ns,
                        name, invalidSince);
                Map<String, Object> patch = Map.of("kind", "Secret", "apiVersion", "v1", "metadata",
                        Map.of("name", name, "namespace", ns, "uid", secret.getMetadata().getUid(), "labels",
                                Map.of(INVALID_SINCE_LABEL_KEY, invalidSince)));
                try {
                    context.client().secrets().inNamespace(ns).withName(name)
                            .patch(PatchContext.of(PatchType.JSON_MERGE), io.qkcm.runtime.Json.api().asJson(patch));
                } catch (KubernetesClientException e) {
                    LOG.errorf("Failed to label legacy service account token secret %s/%s with invalid since date: %s",
                            ns, name, e.getMessage());
                }
                continue;
            }
            if (invalidSince.compareTo(preserveUsedOnOrAfter) >= 0) {
                continue;
            }
            LOG.infof("Delete auto-generated service account token: secret %s/%s creationTime %s lastUsed %s "
                    + "invalidSince %s", ns, name, secret.getMetadata().getCreationTimestamp(), lastUsed, invalidSince);
            try {
                Secrets.deleteWithPreconditions(context.client(), ns, name, null,
                        secret.getMetadata().getResourceVersion());
            } catch (KubernetesClientException e) {
                if (e.getCode() != 409 && e.getCode() != 404) {
                    LOG.errorf("Deleting legacy service account token %s/%s (serviceaccount %s): %s", ns, name,
                            sa.getMetadata().getName(), e.getMessage());
                }
            }
        }
    }

    private static boolean isDate(String s) {
        try {
            LocalDate.parse(s);
            return s.length() == 10;
        } catch (DateTimeParseException e) {
            return false;
        }
    }

    private ServiceAccount serviceAccountOf(Secret secret) {
        String saName = Secrets.annotation(secret, Secrets.SERVICE_ACCOUNT_NAME_KEY);
        if (saName == null || saName.isEmpty()) {
            return null;
        }
        String saUid = Secrets.annotation(secret, Secrets.SERVICE_ACCOUNT_UID_KEY);
        ServiceAccount sa = serviceAccounts.getStore().getByKey(secret.getMetadata().getNamespace() + "/" + saName);
        if (sa == null) {
            return null;
        }
        if (saUid == null || saUid.isEmpty() || saUid.equals(sa.getMetadata().getUid())) {
            return sa;
        }
        return null;
    }

    /** The day after kube-apiserver started tracking legacy token use, from its ConfigMap. */
    private Instant latestPossibleTrackedSinceTime() {
        ConfigMap cm = context.client().configMaps().inNamespace("kube-system").withName(TRACKING_CONFIG_MAP).get();
        if (cm == null) {
            throw new IllegalStateException("configmaps \"" + TRACKING_CONFIG_MAP + "\" not found");
        }
        String since = cm.getData() == null ? null : cm.getData().get(TRACKING_DATA_KEY);
        if (since == null) {
            throw new IllegalStateException("configMap does not have since label");
        }
        try {
            return LocalDate.parse(since).plusDays(1).atStartOfDay(ZoneOffset.UTC).toInstant();
        } catch (DateTimeParseException e) {
            throw new IllegalStateException("error parsing trackedSince time: " + e.getMessage());
        }
    }

    private Set<String> mountedSecretNames(String namespace) {
        Set<String> names = new HashSet<>();
        for (Pod pod : pods.getStore().list()) {
            if (namespace.equals(pod.getMetadata().getNamespace()) && pod.getSpec() != null) {
                visitPodSecretNames(pod.getSpec(), names::add);
            }
        }
        return names;
    }

    /** Upstream's podutil.VisitPodSecretNames: every Secret a pod spec refers to. */
    static void visitPodSecretNames(PodSpec spec, Consumer<String> visitor) {
        if (spec.getImagePullSecrets() != null) {
            for (LocalObjectReference r : spec.getImagePullSecrets()) {
                visit(visitor, r.getName());
            }
        }
        for (List<? extends Container> list : List.of(nullSafe(spec.getInitContainers()), nullSafe(spec.getContainers()))) {
            for (Container c : list) {
                visitEnv(c.getEnv(), c.getEnvFrom(), visitor);
            }
        }
        for (EphemeralContainer c : nullSafe(spec.getEphemeralContainers())) {
            visitEnv(c.getEnv(), c.getEnvFrom(), visitor);
        }
        for (Volume v : nullSafe(spec.getVolumes())) {
            if (v.getAzureFile() != null) {
                visit(visitor, v.getAzureFile().getSecretName());
            } else if (v.getCephfs() != null && v.getCephfs().getSecretRef() != null) {
                visit(visitor, v.getCephfs().getSecretRef().getName());
            } else if (v.getCinder() != null && v.getCinder().getSecretRef() != null) {
                visit(visitor, v.getCinder().getSecretRef().getName());
            } else if (v.getFlexVolume() != null && v.getFlexVolume().getSecretRef() != null) {
                visit(visitor, v.getFlexVolume().getSecretRef().getName());
            } else if (v.getProjected() != null) {
                for (VolumeProjection p : nullSafe(v.getProjected().getSources())) {
                    if (p.getSecret() != null) {
                        visit(visitor, p.getSecret().getName());
                    }
                }
            } else if (v.getRbd() != null && v.getRbd().getSecretRef() != null) {
                visit(visitor, v.getRbd().getSecretRef().getName());
            } else if (v.getSecret() != null) {
                visit(visitor, v.getSecret().getSecretName());
            } else if (v.getScaleIO() != null && v.getScaleIO().getSecretRef() != null) {
                visit(visitor, v.getScaleIO().getSecretRef().getName());
            } else if (v.getIscsi() != null && v.getIscsi().getSecretRef() != null) {
                visit(visitor, v.getIscsi().getSecretRef().getName());
            } else if (v.getStorageos() != null && v.getStorageos().getSecretRef() != null) {
                visit(visitor, v.getStorageos().getSecretRef().getName());
            } else if (v.getCsi() != null && v.getCsi().getNodePublishSecretRef() != null) {
                visit(visitor, v.getCsi().getNodePublishSecretRef().getName());
            }
        }
    }

    private static void visitEnv(List<EnvVar> env, List<EnvFromSource> envFrom, Consumer<String> visitor) {
        for (EnvFromSource e : nullSafe(envFrom)) {
            if (e.getSecretRef() != null) {
                visit(visitor, e.getSecretRef().getName());
            }
        }
        for (EnvVar e : nullSafe(env)) {
            if (e.getValueFrom() != null && e.getValueFrom().getSecretKeyRef() != null) {
                visit(visitor, e.getValueFrom().getSecretKeyRef().getName());
            }
        }
    }

    private static void visit(Consumer<String> visitor, String name) {
        if (name != null && !name.isEmpty()) {
            visitor.accept(name);
        }
    }

    private static <T> List<T> nullSafe(List<T> l) {
        return l == null ? List.of() : l;
    }
}
