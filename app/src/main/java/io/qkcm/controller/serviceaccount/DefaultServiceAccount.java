package io.qkcm.controller.serviceaccount;

import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.informers.cache.Store;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.processing.dependent.Creator;
import io.qkcm.runtime.josdk.SharedCacheDependent;

/**
 * The ServiceAccount {@code default} of a Namespace, as a JOSDK dependent: created when missing,
 * never updated (upstream's serviceaccounts controller only ensures it exists). A create that finds it
 * already there, or the namespace terminating, is not an error, as upstream.
 */
final class DefaultServiceAccount extends SharedCacheDependent<ServiceAccount, Namespace>
        implements Creator<ServiceAccount, Namespace> {

    static final String NAME = "default";

    DefaultServiceAccount(Store<ServiceAccount> cache) {
        super(ServiceAccount.class, "default-serviceaccount", cache);
    }

    @Override
    protected String key(Namespace ns) {
        return ns.getMetadata().getName() + "/" + NAME;
    }

    @Override
    protected ServiceAccount desired(Namespace ns, Context<Namespace> context) {
        return new ServiceAccountBuilder().withNewMetadata().withName(NAME).withNamespace(ns.getMetadata().getName())
                .endMetadata().build();
    }

    @Override
    public ServiceAccount create(ServiceAccount desired, Namespace ns, Context<Namespace> context) {
        try {
            return super.create(desired, ns, context);
        } catch (KubernetesClientException e) {
            if (ServiceAccountsController.isAlreadyExists(e) || ServiceAccountsController.isNamespaceTerminating(e)) {
                return desired;
            }
            throw e;
        }
    }
}
