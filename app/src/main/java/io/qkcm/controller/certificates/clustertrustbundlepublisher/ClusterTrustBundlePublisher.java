package io.qkcm.controller.certificates.clustertrustbundlepublisher;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.javaoperatorsdk.operator.api.reconciler.Ignore;
import io.javaoperatorsdk.operator.processing.event.source.filter.GenericFilter;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.KeyReconciler;

/**
 * kube-apiserver-serving-clustertrustbundle-publisher-controller (upstream
 * pkg/controller/certificates/clustertrustbundlepublisher): keeps exactly one ClusterTrustBundle of the
 * signer, named {@code <signerName with '/' as ':'>:<hex of the first 12 bytes of the bundle's SHA-256>},
 * holding the signer's CA bundle, and deletes the signer's other bundles. Generic over the API version's
 * model (v1beta1, else v1alpha1), as upstream.
 *
 * <p>Upstream watches the signer's bundles through an informer of its own, selected on
 * {@code spec.signerName}; here the process's shared ClusterTrustBundle informer feeds the queue and the
 * cache is read for that signer's bundles only. Every event and the start queue the one key
 * ({@link #SYNC_KEY}; upstream's is the empty string, which no reconciler here can carry).
 *
 * <p>The CA bundle is fixed for the process's life, as upstream's start function hands the publisher a
 * static CA content provider (whose content-change listener never fires).
 */
@Ignore // runs in its own Operator, not quarkus-operator-sdk's default one
public final class ClusterTrustBundlePublisher<T extends HasMetadata> extends KeyReconciler<T> {

    public static final String NAME = "kube-apiserver-serving-clustertrustbundle-publisher-controller";
    static final String SYNC_KEY = "clustertrustbundle-publisher:signer";

    private final String signerName;
    private final String caBundle;
    private final ClusterTrustBundleHandlers<T> handlers;
    private final SharedIndexInformer<T> bundles;
    private final PublisherMetrics metrics;

    ClusterTrustBundlePublisher(ControllerContext context, String signerName, String caBundle,
            ClusterTrustBundleHandlers<T> handlers) {
        super(context, handlers.type(), "ca_cert_publisher_cluster_trust_bundles", 1);
        if (signerName == null || signerName.isEmpty()) {
            throw new IllegalArgumentException("signerName cannot be empty");
        }
        this.signerName = signerName;
        this.caBundle = caBundle;
        this.handlers = handlers;
        this.metrics = new PublisherMetrics(context.metrics());
        this.bundles = context.informers().informerFor(handlers.type());
        bundles.addEventHandler(new ResourceEventHandler<>() {
            @Override
            public void onAdd(T bundle) {
                enqueueIfSigners(bundle);
            }

            @Override
            public void onUpdate(T oldBundle, T newBundle) {
                enqueueIfSigners(newBundle);
            }

            @Override
            public void onDelete(T bundle, boolean deletedFinalStateUnknown) {
                enqueueIfSigners(bundle);
            }
        });
    }

    /** The beta API's publisher (upstream's NewBetaClusterTrustBundlePublisher). */
    public static ClusterTrustBundlePublisher<io.fabric8.kubernetes.api.model.certificates.v1beta1.ClusterTrustBundle> beta(
            ControllerContext context, String signerName, String caBundle) {
        return new ClusterTrustBundlePublisher<>(context, signerName, caBundle, ClusterTrustBundleHandlers.BETA);
    }

    /** The alpha API's publisher (upstream's NewAlphaClusterTrustBundlePublisher). */
    public static ClusterTrustBundlePublisher<io.fabric8.kubernetes.api.model.certificates.v1alpha1.ClusterTrustBundle> alpha(
            ControllerContext context, String signerName, String caBundle) {
        return new ClusterTrustBundlePublisher<>(context, signerName, caBundle, ClusterTrustBundleHandlers.ALPHA);
    }

    private void enqueueIfSigners(T bundle) {
        if (signerName.equals(handlers.signerName(bundle))) {
            queue.add(SYNC_KEY);
        }
    }

    @Override
    protected List<SharedIndexInformer<?>> informers() {
        return List.of(bundles);
    }

    /** The bundles' own events queue nothing by key: the handler above queues the signer's one key. */
    @Override
    protected GenericFilter<? super T> primaryFilter() {
        return bundle -> false;
    }

    @Override
    public void onStart() {
        log.info("Starting ClusterTrustBundle CA cert publisher controller");
        queue.add(SYNC_KEY); // init the signer syncer
    }

    @Override
    public void onShutdown() {
        log.info("Shutting down ClusterTrustBundle CA cert publisher controller");
    }

    @Override
    protected void sync(String key) {
        if (!SYNC_KEY.equals(key)) {
            return;
        }
        long start = System.nanoTime();
        RuntimeException failure = null;
        try {
            syncClusterTrustBundle();
        } catch (RuntimeException e) {
            failure = e;
            throw e;
        } finally {
            metrics.record((System.nanoTime() - start) / 1e9, failure);
            log.tracef("Finished syncing ClusterTrustBundle signerName %s (%dms)", signerName,
                    (System.nanoTime() - start) / 1_000_000);
        }
    }

    /** Upstream's syncClusterTrustBundle. */
    void syncClusterTrustBundle() {
        String bundleName = constructBundleName(signerName, caBundle);
        T bundle = signersBundle(bundleName);
        if (bundle == null) {
            context.client().resource(handlers.createClusterTrustBundle(bundleName, signerName, caBundle)).create();
        } else if (!handlers.containsTrustBundle(bundle, caBundle)) {
            context.client().resource(handlers.updateWithTrustBundle(bundle, caBundle)).update();
        }

        // a deletion error is returned at the end so that the key is retried
        KubernetesClientException deletionError = null;
        for (T other : bundles.getStore().list()) {
            if (!signerName.equals(handlers.signerName(other)) || bundleName.equals(other.getMetadata().getName())) {
                continue;
            }
            String deleteName = other.getMetadata().getName();
            try {
                context.client().resources(handlers.type()).withName(deleteName).delete();
            } catch (KubernetesClientException e) {
                if (e.getCode() != 404) {
                    log.errorf("failed to remove a cluster trust bundle: bundleName %s: %s", deleteName, shortMessage(e));
                    deletionError = e;
                }
            }
        }
        if (deletionError != null) {
            throw deletionError;
        }
    }

    /** The cached bundle named {@code name} if it is this signer's (upstream's lister sees no other). */
    private T signersBundle(String name) {
        T bundle = bundles.getStore().getByKey(name);
        return bundle != null && signerName.equals(handlers.signerName(bundle)) ? bundle : null;
    }

    /** Upstream's constructBundleName: the signer name with '/' as ':', ':', and the first 12 bytes of the bundle's SHA-256 in hex. */
    static String constructBundleName(String signerName, String bundle) {
        try {
            byte[] hash = MessageDigest.getInstance("SHA-256").digest(bundle.getBytes(StandardCharsets.UTF_8));
            return signerName.replace("/", ":") + ":" + HexFormat.of().formatHex(hash, 0, 12);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    String signerName() {
        return signerName;
    }
}
