package io.qkcm.controller.certificates.rootcacertpublisher;

import java.util.HashMap;
import java.util.Map;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.StatusCause;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.informers.cache.Store;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.processing.dependent.Creator;
import io.javaoperatorsdk.operator.processing.dependent.Matcher;
import io.javaoperatorsdk.operator.processing.dependent.Updater;
import io.qkcm.runtime.josdk.SharedCacheDependent;

/**
 * The ConfigMap {@code kube-root-ca.crt} of a Namespace, as a JOSDK dependent with upstream's rules:
 * created with the CA bundle and the description annotation; updated (PUT, the rest of the object
 * kept) when its {@code data} is not exactly the bundle or the description annotation is missing or
 * empty; a create refused because the namespace is gone or terminating is not an error.
 */
final class RootCAConfigMap extends SharedCacheDependent<ConfigMap, Namespace>
        implements Creator<ConfigMap, Namespace>, Updater<ConfigMap, Namespace> {

    private final Map<String, String> data;

    RootCAConfigMap(Store<ConfigMap> cache, String rootCA) {
        super(ConfigMap.class, "kube-root-ca.crt", cache);
        this.data = Map.of("ca.crt", rootCA);
    }

    @Override
    protected String key(Namespace ns) {
        return ns.getMetadata().getName() + "/" + RootCACertPublisher.ROOT_CA_CERT_CONFIG_MAP_NAME;
    }

    @Override
    protected ConfigMap desired(Namespace ns, Context<Namespace> context) {
        return new ConfigMapBuilder().withNewMetadata().withName(RootCACertPublisher.ROOT_CA_CERT_CONFIG_MAP_NAME)
                .withNamespace(ns.getMetadata().getName())
                .withAnnotations(Map.of(RootCACertPublisher.DESCRIPTION_ANNOTATION, RootCACertPublisher.DESCRIPTION))
                .endMetadata().withData(data).build();
    }

    @Override
    public Matcher.Result<ConfigMap> match(ConfigMap actual, Namespace ns, Context<Namespace> context) {
        Map<String, String> annotations = actual.getMetadata().getAnnotations();
        String description = annotations == null ? null : annotations.get(RootCACertPublisher.DESCRIPTION_ANNOTATION);
        Map<String, String> current = actual.getData() == null ? Map.of() : actual.getData();
        return Matcher.Result.nonComputed(current.equals(data) && description != null && !description.isEmpty());
    }

    @Override
    public ConfigMap create(ConfigMap desired, Namespace ns, Context<Namespace> context) {
        try {
            return super.create(desired, ns, context);
        } catch (KubernetesClientException e) {
            if (e.getCode() == 404 || isNamespaceTerminating(e)) {
                return desired;
            }
            throw e;
        }
    }

    /** Upstream's update: the cached object with the bundle as its data and the description added. */
    @Override
    public ConfigMap update(ConfigMap actual, ConfigMap desired, Namespace ns, Context<Namespace> context) {
        ConfigMap updated = io.qkcm.runtime.DeepCopy.of(actual);
        updated.setData(new HashMap<>(data));
        Map<String, String> annotations = actual.getMetadata().getAnnotations() == null ? new HashMap<>()
                : new HashMap<>(actual.getMetadata().getAnnotations());
        annotations.put(RootCACertPublisher.DESCRIPTION_ANNOTATION, RootCACertPublisher.DESCRIPTION);
        updated.getMetadata().setAnnotations(annotations);
        updated.setBinaryData(actual.getBinaryData());
        return context.getClient().resource(updated).update();
    }

    private static boolean isNamespaceTerminating(KubernetesClientException e) {
        if (e.getStatus() == null || e.getStatus().getDetails() == null
                || e.getStatus().getDetails().getCauses() == null) {
            return false;
        }
        for (StatusCause c : e.getStatus().getDetails().getCauses()) {
            if ("NamespaceTerminating".equals(c.getReason())) {
                return true;
            }
        }
        return false;
    }
}
