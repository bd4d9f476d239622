package io.qkcm.controller.certificates.clustertrustbundlepublisher;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.util.List;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.APIResource;
import io.fabric8.kubernetes.api.model.APIResourceList;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.qkcm.controller.RootCA;
import io.qkcm.runtime.josdk.Controller;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.ControllerDescriptor;

/**
 * kube-apiserver-serving-clustertrustbundle-publisher-controller's descriptor and start function (upstream's
 * {@code newKubeAPIServerSignerClusterTrustBundledPublisherDescriptor} and
 * {@code newKubeAPIServerSignerClusterTrustBundledPublisherController} in cmd/kube-controller-manager/app/
 * certificates.go): the kube-apiserver CA (--root-ca-file, else the API client's CA data, as the root CA
 * publisher) published for the signer {@value #SIGNER_NAME} through the first of certificates.k8s.io/v1beta1,
 * v1alpha1 whose discovery lists clustertrustbundles; not started without a CA or without either version.
 */
public final class KubeAPIServerClusterTrustBundlePublisherControllerDescriptor {

    private static final Logger LOG = Logger.getLogger(KubeAPIServerClusterTrustBundlePublisherControllerDescriptor.class);

    static final String SIGNER_NAME = "kubernetes.io/kube-apiserver-serving";
    static final String BETA = "certificates.k8s.io/v1beta1";
    static final String ALPHA = "certificates.k8s.io/v1alpha1";

    public static final ControllerDescriptor DESCRIPTOR = ControllerDescriptor.of(ClusterTrustBundlePublisher.NAME)
            .withClientName("kube-apiserver-serving-clustertrustbundle-publisher")
            .requiringFeatureGates("ClusterTrustBundle")
            .startedBy(KubeAPIServerClusterTrustBundlePublisherControllerDescriptor::start);

    private KubeAPIServerClusterTrustBundlePublisherControllerDescriptor() {
    }

    static Controller start(ControllerContext context) {
        byte[] rootCA = RootCA.load(context);
        if (rootCA.length == 0) {
            return null;
        }
        // upstream's dynamiccertificates.NewStaticCAContent: the bundle must hold certificates
        try {
            if (CertificateFactory.getInstance("X.509").generateCertificates(new ByteArrayInputStream(rootCA)).isEmpty()) {
                throw new CertificateException("data does not contain any valid RSA or ECDSA certificates");
            }
        } catch (CertificateException e) {
            throw new IllegalStateException("failed to create a static CA content provider for the kube-apiserver-serving "
                    + "signer: " + e.getMessage(), e);
        }
        String caBundle = new String(rootCA, StandardCharsets.UTF_8);
        for (String gv : List.of(BETA, ALPHA)) {
            if (!clusterTrustBundlesAvailable(context, gv)) {
                continue;
            }
            ClusterTrustBundlePublisher<?> publisher = gv.equals(BETA)
                    ? ClusterTrustBundlePublisher.beta(context, SIGNER_NAME, caBundle)
                    : ClusterTrustBundlePublisher.alpha(context, SIGNER_NAME, caBundle);
            return context.operate(publisher);
        }
        LOG.info("no known scheme version was found for clustertrustbundles, cannot start "
                + "kube-apiserver-serving-clustertrustbundle-publisher-controller");
        return null;
    }

    /** Upstream's clusterTrustBundlesAvailable: the group version's discovery lists clustertrustbundles. */
    static boolean clusterTrustBundlesAvailable(ControllerContext context, String groupVersion) {
        APIResourceList resources;
        try {
            resources = context.client().getApiResources(groupVersion);
        } catch (KubernetesClientException e) {
            if (e.getCode() == 404) {
                return false;
            }
            throw new IllegalStateException("discovery failed for ClusterTrustBundle: " + e.getMessage(), e);
        }
        if (resources == null || resources.getResources() == null) {
            return false;
        }
        for (APIResource r : resources.getResources()) {
            if ("clustertrustbundles".equals(r.getName())) {
                return true;
            }
        }
        return false;
    }
}
