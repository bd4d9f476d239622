package io.qkcm.controller.certificates.rootcacertpublisher;

import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.Ignore;
import io.javaoperatorsdk.operator.processing.event.source.filter.OnUpdateFilter;
import io.qkcm.runtime.josdk.KeyReconciler;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.StatusCause;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.qkcm.runtime.josdk.ControllerContext;

/**
 * root-ca-certificate-publisher-controller (upstream pkg/controller/certificates/rootcacertpublisher):
 * the ConfigMap {@code kube-root-ca.crt} with the API server's CA bundle under {@code ca.crt} and
 * upstream's description annotation, in every namespace; recreated when deleted, restored when edited.
 * Keyed by namespace name.
 *
 * <p>The ConfigMap is what JOSDK would model as a dependent resource of each Namespace, but JOSDK would
 * open a second Namespace and ConfigMap cache next to the process' shared informers; this controller
 * reads the shared informers, as upstream reads the shared informer factory.
 */
@Ignore // runs in its own Operator (io.qkcm.runtime.josdk), not quarkus-operator-sdk's default one
public final class RootCACertPublisher extends KeyReconciler<Namespace> {

    public static final String NAME = "root-ca-certificate-publisher-controller";
    public static final String ROOT_CA_CERT_CONFIG_MAP_NAME = "kube-root-ca.crt";
    public static final String DESCRIPTION_ANNOTATION = "kubernetes.io/description";
    public static final String DESCRIPTION = "Contains a CA bundle that can be used to verify the kube-apiserver "
            + "when using internal endpoints such as the internal service IP or kubernetes.default.svc. "
            + "No other usage is guaranteed across distributions of Kubernetes clusters.";

    private final RootCAConfigMap configMap;
    private final SharedIndexInformer<ConfigMap> configMaps;
    private final SharedIndexInformer<Namespace> namespaces;

    public RootCACertPublisher(ControllerContext context, String rootCA) {
        super(context, Namespace.class, "root_ca_cert_publisher", 1);
        this.configMaps = context.informers().informerFor(ConfigMap.class);
        this.namespaces = context.informers().informerFor(Namespace.class);
        this.configMap = new RootCAConfigMap(configMaps.getStore(), rootCA);
        configMaps.addEventHandler(new ResourceEventHandler<>() {
            @Override
            public void onAdd(ConfigMap cm) {
            }

            @Override
            public void onUpdate(ConfigMap oldCm, ConfigMap newCm) {
                if (ROOT_CA_CERT_CONFIG_MAP_NAME.equals(newCm.getMetadata().getName())) {
                    queue.add(newCm.getMetadata().getNamespace());
                }
            }

            @Override
            public void onDelete(ConfigMap cm, boolean deletedFinalStateUnknown) {
                if (ROOT_CA_CERT_CONFIG_MAP_NAME.equals(cm.getMetadata().getName())) {
                    queue.add(cm.getMetadata().getNamespace());
                }
            }
        });
    }

    /** Upstream queues a namespace on update only while it is Active; adds always (JOSDK's primary events). */
    @Override
    protected OnUpdateFilter<? super Namespace> primaryUpdateFilter() {
        return (newNs, oldNs) -> newNs.getStatus() != null && "Active".equals(newNs.getStatus().getPhase());
    }

    @Override
    protected List<SharedIndexInformer<?>> informers() {
        // upstream waits for the ConfigMap cache only
        return List.of(configMaps);
    }

    @Override
    protected void sync(String ns, Namespace primary, Context<Namespace> ctx) {
        if (ctx.isPrimaryResourceDeleted()) {
            return; // upstream does not queue a deleted namespace
        }
        long start = System.nanoTime();
        try {
            configMap.reconcile(primary, ctx);
        } finally {
            log.tracef("Finished syncing namespace %s (%dms)", ns, (System.nanoTime() - start) / 1_000_000);
        }
    }
}
