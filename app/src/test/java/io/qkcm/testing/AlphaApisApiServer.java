package io.qkcm.testing;

import java.util.List;

/**
 * The API server for the controllers of off-by-default APIs: a separate instance serving
 * certificates.k8s.io/v1alpha1 (PodCertificateRequest, ClusterTrustBundle), certificates.k8s.io/v1beta1
 * (ClusterTrustBundle) and internal.apiserver.k8s.io/v1alpha1 (StorageVersion), with the feature gates
 * those need. One instance per test JVM, shared by those controllers' tests.
 */
public final class AlphaApisApiServer {

    private AlphaApisApiServer() {
    }

    public static RealApiServer get() {
        return RealApiServer.withFlags(List.of(
                "--runtime-config=certificates.k8s.io/v1alpha1=true,certificates.k8s.io/v1beta1=true,"
                        + "internal.apiserver.k8s.io/v1alpha1=true",
                "--feature-gates=PodCertificateRequest=true,ClusterTrustBundle=true,APIServerIdentity=true,"
                        + "StorageVersionAPI=true"));
    }
}
