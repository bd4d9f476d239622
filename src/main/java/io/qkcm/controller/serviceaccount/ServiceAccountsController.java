package io.qkcm.controller.serviceaccount;

import java.util.ArrayList;
import java.util.List;

import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.ServiceAccount;
import io.fabric8.kubernetes.api.model.ServiceAccountBuilder;
import io.fabric8.kubernetes.api.model.StatusCause;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.qkcm.controller.ControllerContext;
import io.qkcm.controller.QueueController;

/**
 * serviceaccount-controller (upstream serviceaccounts_controller.go): the {@code default}
 * ServiceAccount exists in every active namespace; it is recreated when deleted and never created
 * in a terminating namespace. Keyed by namespace name.
 *
 * <p>The per-namespace ServiceAccount is what JOSDK would model as a dependent resource, but a JOSDK
 * reconciler would open its own Namespace and ServiceAccount caches; this controller reads the
 * process' shared informers instead, as upstream reads the shared informer factory.
 */
public final class ServiceAccountsController extends QueueController<String> {

    public static final String NAME = "serviceaccount-controller";
    static final List<String> SERVICE_ACCOUNTS_TO_ENSURE = List.of("default");

    private final SharedIndexInformer<ServiceAccount> serviceAccounts;
    private final SharedIndexInformer<Namespace> namespaces;

    public ServiceAccountsController(ControllerContext context) {
        super(context, NAME, "serviceaccount", 1);
        this.serviceAccounts = context.informers().informerFor(ServiceAccount.class);
        this.namespaces = context.informers().informerFor(Namespace.class);
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
        namespaces.addEventHandler(new ResourceEventHandler<>() {
            @Override
            public void onAdd(Namespace ns) {
                queue.add(ns.getMetadata().getName());
            }

            @Override
            public void onUpdate(Namespace oldNs, Namespace newNs) {
                queue.add(newNs.getMetadata().getName());
            }

            @Override
            public void onDelete(Namespace ns, boolean deletedFinalStateUnknown) {
            }
        });
    }

    @Override
    protected List<SharedIndexInformer<?>> informers() {
        return List.of(serviceAccounts, namespaces);
    }

    @Override
    protected void sync(String namespace) throws Exception {
        Namespace ns = namespaces.getStore().getByKey(namespace);
        if (ns == null) {
            return;
        }
        if (ns.getStatus() == null || !"Active".equals(ns.getStatus().getPhase())) {
            return; // terminating namespaces get no new service accounts
        }
        List<String> failures = new ArrayList<>();
        for (String name : SERVICE_ACCOUNTS_TO_ENSURE) {
            if (serviceAccounts.getStore().getByKey(namespace + "/" + name) != null) {
                continue;
            }
            ServiceAccount sa = new ServiceAccountBuilder().withNewMetadata().withName(name).withNamespace(namespace)
                    .endMetadata().build();
            try {
                context.client().serviceAccounts().inNamespace(namespace).resource(sa).create();
            } catch (KubernetesClientException e) {
                if (isAlreadyExists(e)) {
                    continue;
                }
                if (!isNamespaceTerminating(e)) {
                    failures.add(e.getMessage());
                }
            }
        }
        if (!failures.isEmpty()) {
            throw new IllegalStateException(String.join("; ", failures));
        }
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
