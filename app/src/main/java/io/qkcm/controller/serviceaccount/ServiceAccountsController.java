package io.qkcm.controller.serviceaccount;

import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.Ignore;
import io.qkcm.runtime.josdk.KeyReconciler;
import java.util.List;

import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.api.model.StatusCause;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.qkcm.runtime.josdk.ControllerContext;

/**
 * serviceaccount-controller (upstream serviceaccounts_controller.go): the {@code default}
 * ServiceAccount exists in every active namespace; it is recreated when deleted and never created
 * in a terminating namespace. Keyed by namespace name.
 *
 * <p>The per-namespace ServiceAccount is a JOSDK dependent resource ({@link DefaultServiceAccount}),
 * read from the process' shared ServiceAccount cache.
 */
@Ignore // runs in its own Operator (io.qkcm.runtime.josdk), not quarkus-operator-sdk's default one
public final class ServiceAccountsController extends KeyReconciler<Namespace> {

    public static final String NAME = "serviceaccount-controller";
    static final List<String> SERVICE_ACCOUNTS_TO_ENSURE = List.of("default");

    private final SharedIndexInformer<ServiceAccount> serviceAccounts;
    private final SharedIndexInformer<Namespace> namespaces;
    private final DefaultServiceAccount defaultServiceAccount;

    public ServiceAccountsController(ControllerContext context) {
        super(context, Namespace.class, "serviceaccount", 1);
        this.serviceAccounts = context.informers().informerFor(ServiceAccount.class);
        this.namespaces = context.informers().informerFor(Namespace.class);
        this.defaultServiceAccount = new DefaultServiceAccount(serviceAccounts.getStore());
        // upstream queues the namespace when one of its service accounts is deleted; namespace adds and
        // updates reach the reconciler as JOSDK's primary events
        serviceAccounts.addEventHandler(new ResourceEventHandler<>() {
            @Override
            public void onAdd(ServiceAccount sa) {
            }

            @Override
            public void onUpdate(ServiceAccount oldSa, ServiceAccount newSa) {
            }

            @Override
            public void onDelete(ServiceAccount sa, boolean deletedFinalStateUnknown) {
                queue.add(sa.getMetadata().getNamespace());
            }
        });
    }

    @Override
    protected List<SharedIndexInformer<?>> informers() {
        return List.of(serviceAccounts, namespaces);
    }

    @Override
    protected void sync(String namespace, Namespace primary, Context<Namespace> ctx) {
        Namespace ns = namespaces.getStore().getByKey(namespace);
        if (ns == null) {
            return;
        }
        if (ns.getStatus() == null || !"Active".equals(ns.getStatus().getPhase())) {
            return; // terminating namespaces get no new service accounts
        }
        defaultServiceAccount.reconcile(ns, ctx);
    }

    static boolean isAlreadyExists(KubernetesClientException e) {
        return e.getCode() == 409 && (e.getStatus() == null || e.getStatus().getReason() == null
                || "AlreadyExists".equals(e.getStatus().getReason()));
    }

    /** apierrors.HasStatusCause(err, v1.NamespaceTerminatingCause). */
    static boolean isNamespaceTerminating(KubernetesClientException e) {
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
