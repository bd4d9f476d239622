package io.qkcm.controller.certificates.rootcacertpublisher;

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
import io.qkcm.controller.ControllerContext;
import io.qkcm.controller.QueueController;

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
public final class RootCACertPublisher extends QueueController<String> {

    public static final String NAME = "root-ca-certificate-publisher-controller";
    public static final String ROOT_CA_CERT_CONFIG_MAP_NAME = "kube-root-ca.crt";
    public static final String DESCRIPTION_ANNOTATION = "kubernetes.io/description";
    public static final String DESCRIPTION = "Contains a CA bundle that can be used to verify the kube-apiserver "
            + "when using internal endpoints such as the internal service IP or kubernetes.default.svc. "
            + "No other usage is guaranteed across distributions of Kubernetes clusters.";

    private final String rootCA;
    private final SharedIndexInformer<ConfigMap> configMaps;
    private final SharedIndexInformer<Namespace> namespaces;

    public RootCACertPublisher(ControllerContext context, String rootCA) {
        super(context, NAME, "root_ca_cert_publisher", 1);
        this.rootCA = rootCA;
        this.configMaps = context.informers().informerFor(ConfigMap.class);
        this.namespaces = context.informers().informerFor(Namespace.class);
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
        namespaces.addEventHandler(new ResourceEventHandler<>() {
            @Override
            public void onAdd(Namespace ns) {
                queue.add(ns.getMetadata().getName());
            }

            @Override
            public void onUpdate(Namespace oldNs, Namespace newNs) {
                if (newNs.getStatus() == null || !"Active".equals(newNs.getStatus().getPhase())) {
                    return;
                }
                queue.add(newNs.getMetadata().getName());
            }

            @Override
            public void onDelete(Namespace ns, boolean deletedFinalStateUnknown) {
            }
        });
    }

    @Override
    protected List<SharedIndexInformer<?>> informers() {
        // upstream waits for the ConfigMap cache only
        return List.of(configMaps);
    }

    @Override
    protected void sync(String ns) throws Exception {
        long start = System.nanoTime();
        try {
            syncNamespace(ns);
        } finally {
            log.tracef("Finished syncing namespace %s (%dms)", ns, (System.nanoTime() - start) / 1_000_000);
        }
    }

    private void syncNamespace(String ns) {
        ConfigMap cm = configMaps.getStore().getByKey(ns + "/" + ROOT_CA_CERT_CONFIG_MAP_NAME);
        Map<String, String> data = Map.of("ca.crt", rootCA);
        if (cm == null) {
            ConfigMap created = new ConfigMapBuilder().withNewMetadata().withName(ROOT_CA_CERT_CONFIG_MAP_NAME)
                    .withNamespace(ns).withAnnotations(Map.of(DESCRIPTION_ANNOTATION, DESCRIPTION)).endMetadata()
                    .withData(data).build();
            try {
                context.client().configMaps().inNamespace(ns).resource(created).create();
            } catch (KubernetesClientException e) {
                if (e.getCode() == 404 || isNamespaceTerminating(e)) {
                    return;
                }
                throw e;
            }
            return;
        }
        Map<String, String> annotations = cm.getMetadata().getAnnotations();
        String description = annotations == null ? null : annotations.get(DESCRIPTION_ANNOTATION);
        Map<String, String> current = cm.getData() == null ? Map.of() : cm.getData();
        if (current.equals(data) && description != null && !description.isEmpty()) {
            return;
        }
        ConfigMap updated = new ConfigMapBuilder(cm).build();
        updated.setData(new HashMap<>(data));
        Map<String, String> newAnnotations = annotations == null ? new HashMap<>() : new HashMap<>(annotations);
        newAnnotations.put(DESCRIPTION_ANNOTATION, DESCRIPTION);
        updated.getMetadata().setAnnotations(newAnnotations);
        updated.setBinaryData(cm.getBinaryData());
        context.client().configMaps().inNamespace(ns).resource(updated).update();
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
