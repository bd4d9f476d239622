package io.qkcm.controller.certificates.clustertrustbundlepublisher;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.qkcm.runtime.DeepCopy;

/**
 * Upstream's clusterTrustBundleHandlers: what the publisher needs to know of one API version's
 * ClusterTrustBundle model (v1beta1, or v1alpha1 where only that one is served).
 */
interface ClusterTrustBundleHandlers<T extends HasMetadata> {

    Class<T> type();

    T createClusterTrustBundle(String bundleName, String signerName, String trustBundle);

    T updateWithTrustBundle(T bundle, String newBundle);

    boolean containsTrustBundle(T bundle, String trustBundle);

    /** The bundle's spec.signerName (upstream's informer selects on it; the shared one here does not). */
    String signerName(T bundle);

    ClusterTrustBundleHandlers<io.fabric8.kubernetes.api.model.certificates.v1beta1.ClusterTrustBundle> BETA =
            new ClusterTrustBundleHandlers<>() {
                @Override
                public Class<io.fabric8.kubernetes.api.model.certificates.v1beta1.ClusterTrustBundle> type() {
                    return io.fabric8.kubernetes.api.model.certificates.v1beta1.ClusterTrustBundle.class;
                }

                @Override
                public io.fabric8.kubernetes.api.model.certificates.v1beta1.ClusterTrustBundle createClusterTrustBundle(
                        String bundleName, String signerName, String trustBundle) {
                    var ctb = new io.fabric8.kubernetes.api.model.certificates.v1beta1.ClusterTrustBundle();
                    ctb.setMetadata(new ObjectMetaBuilder().withName(bundleName).build());
                    var spec = new io.fabric8.kubernetes.api.model.certificates.v1beta1.ClusterTrustBundleSpec();
                    spec.setSignerName(signerName);
                    spec.setTrustBundle(trustBundle);
                    ctb.setSpec(spec);
                    return ctb;
                }

                @Override
                public io.fabric8.kubernetes.api.model.certificates.v1beta1.ClusterTrustBundle updateWithTrustBundle(
                        io.fabric8.kubernetes.api.model.certificates.v1beta1.ClusterTrustBundle bundle, String newBundle) {
                    var copy = DeepCopy.of(bundle);
                    copy.getSpec().setTrustBundle(newBundle);
                    return copy;
                }

                @Override
                public boolean containsTrustBundle(io.fabric8.kubernetes.api.model.certificates.v1beta1.ClusterTrustBundle bundle,
                        String trustBundle) {
                    return bundle.getSpec() != null && trustBundle.equals(bundle.getSpec().getTrustBundle());
                }

                @Override
                public String signerName(io.fabric8.kubernetes.api.model.certificates.v1beta1.ClusterTrustBundle bundle) {
                    return bundle.getSpec() == null || bundle.getSpec().getSignerName() == null ? ""
                            : bundle.getSpec().getSignerName();
                }
            };

    ClusterTrustBundleHandlers<io.fabric8.kubernetes.api.model.certificates.v1alpha1.ClusterTrustBundle> ALPHA =
            new ClusterTrustBundleHandlers<>() {
                @Override
                public Class<io.fabric8.kubernetes.api.model.certificates.v1alpha1.ClusterTrustBundle> type() {
                    return io.fabric8.kubernetes.api.model.certificates.v1alpha1.ClusterTrustBundle.class;
                }

                @Override
                public io.fabric8.kubernetes.api.model.certificates.v1alpha1.ClusterTrustBundle createClusterTrustBundle(
                        String bundleName, String signerName, String trustBundle) {
                    var ctb = new io.fabric8.kubernetes.api.model.certificates.v1alpha1.ClusterTrustBundle();
                    ctb.setMetadata(new ObjectMetaBuilder().withName(bundleName).build());
                    var spec = new io.fabric8.kubernetes.api.model.certificates.v1alpha1.ClusterTrustBundleSpec();
                    spec.setSignerName(signerName);
                    spec.setTrustBundle(trustBundle);
                    ctb.setSpec(spec);
                    return ctb;
                }

                @Override
                public io.fabric8.kubernetes.api.model.certificates.v1alpha1.ClusterTrustBundle updateWithTrustBundle(
                        io.fabric8.kubernetes.api.model.certificates.v1alpha1.ClusterTrustBundle bundle, String newBundle) {
                    var copy = DeepCopy.of(bundle);
                    copy.getSpec().setTrustBundle(newBundle);
                    return copy;
                }

                @Override
                public boolean containsTrustBundle(io.fabric8.kubernetes.api.model.certificates.v1alpha1.ClusterTrustBundle bundle,
                        String trustBundle) {
                    return bundle.getSpec() != null && trustBundle.equals(bundle.getSpec().getTrustBundle());
                }

                @Override
                public String signerName(io.fabric8.kubernetes.api.model.certificates.v1alpha1.ClusterTrustBundle bundle) {
                    return bundle.getSpec() == null || bundle.getSpec().getSignerName() == null ? ""
                            : bundle.getSpec().getSignerName();
                }
            };
}
