package io.qkcm.controller.certificates.approver;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiPredicate;

import io.fabric8.kubernetes.api.model.authorization.v1.ResourceAttributes;
import io.fabric8.kubernetes.api.model.authorization.v1.ResourceAttributesBuilder;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReview;
import io.fabric8.kubernetes.api.model.authorization.v1.SubjectAccessReviewBuilder;
import io.fabric8.kubernetes.api.model.certificates.v1.CertificateSigningRequest;
import io.fabric8.kubernetes.api.model.certificates.v1.CertificateSigningRequestConditionBuilder;
import io.fabric8.kubernetes.api.model.certificates.v1.CertificateSigningRequestStatus;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.javaoperatorsdk.operator.api.reconciler.Ignore;
import io.qkcm.controller.certificates.CertificateController;
import io.qkcm.controller.certificates.CertificateControllerUtils;
import io.qkcm.controller.certificates.KubeletCSRs;
import io.qkcm.controller.certificates.X509CertificateRequest;
import io.qkcm.runtime.josdk.ControllerContext;

/**
 * certificatesigningrequest-approving-controller (upstream pkg/controller/certificates/approver,
 * sarapprove.go): a pending kubelet client request (signer kubernetes.io/kube-apiserver-client-kubelet,
 * subject O=system:nodes, CN=system:node:..., no SANs, the kubelet client usages) is approved — condition
 * Approved, reason AutoApproved — when a SubjectAccessReview says its requester may create
 * certificatesigningrequests/selfnodeclient (the CN is the requester's own name) or
 * certificatesigningrequests/nodeclient. A recognised request the review denies is retried with the
 * queue's backoff, quietly.
 */
@Ignore // runs in its own Operator, not quarkus-operator-sdk's default one
public final class CSRApprovingController extends CertificateController {

    public static final String NAME = "certificatesigningrequest-approving-controller";
    /** Upstream's worker count (hard-coded in its start function). */
    static final int WORKERS = 5;

    record Recognizer(BiPredicate<CertificateSigningRequest, X509CertificateRequest> recognize,
            ResourceAttributes permission, String successMessage) {
    }

    private final List<Recognizer> recognizers = recognizers();

    public CSRApprovingController(ControllerContext context) {
        super(context, "csrapproving", WORKERS);
    }

    static List<Recognizer> recognizers() {
        return List.of(
                new Recognizer(CSRApprovingController::isSelfNodeClientCert, permission("selfnodeclient"),
                        "Auto approving self kubelet client certificate after SubjectAccessReview."),
                new Recognizer(CSRApprovingController::isNodeClientCert, permission("nodeclient"),
                        "Auto approving kubelet client certificate after SubjectAccessReview."));
    }

    private static ResourceAttributes permission(String subresource) {
        return new ResourceAttributesBuilder().withGroup("certificates.k8s.io").withResource("certificatesigningrequests")
                .withVerb("create").withSubresource(subresource).withVersion("*").build();
    }

    /** Upstream's sarApprover.handle. */
    @Override
    protected void handle(CertificateSigningRequest csr) throws Exception {
        if (csr.getStatus() != null && csr.getStatus().getCertificate() != null
                && !csr.getStatus().getCertificate().isEmpty()) {
            return;
        }
        boolean[] approvedDenied = CertificateControllerUtils.getCertApprovalCondition(csr);
        if (approvedDenied[0] || approvedDenied[1]) {
            return;
        }
        String name = csr.getMetadata().getName();
        X509CertificateRequest x509cr;
        try {
            x509cr = X509CertificateRequest.parseCSRBase64(csr.getSpec().getRequest());
        } catch (X509CertificateRequest.ParseException e) {
            throw new Exception("unable to parse csr \"" + name + "\": " + e.getMessage(), null);
        }
        List<String> tried = new ArrayList<>();
        for (Recognizer r : recognizers) {
            if (!r.recognize().test(csr, x509cr)) {
                continue;
            }
            tried.add(r.permission().getSubresource());
            if (authorize(csr, r.permission())) {
                appendApprovalCondition(csr, r.successMessage());
                try {
                    context.client().certificates().v1().certificateSigningRequests().resource(csr)
                            .subresource("approval").update();
                } catch (KubernetesClientException e) {
                    throw new Exception("error updating approval for csr: " + e.getMessage(), e);
                }
                return;
            }
        }
        if (!tried.isEmpty()) {
            throw new IgnorableError("recognized csr \"" + name + "\" as " + "[" + String.join(" ", tried)
                    + "] but subject access review was not approved");
        }
    }

    /** Upstream's authorize: a SubjectAccessReview for the requester (user, UID, groups, extra). */
    private boolean authorize(CertificateSigningRequest csr, ResourceAttributes permission) {
        Map<String, List<String>> extra = new HashMap<>();
        if (csr.getSpec().getExtra() != null) {
            extra.putAll(csr.getSpec().getExtra());
        }
        SubjectAccessReview sar = new SubjectAccessReviewBuilder().withNewSpec()
                .withUser(csr.getSpec().getUsername()).withUid(csr.getSpec().getUid())
                .withGroups(csr.getSpec().getGroups()).withExtra(extra)
                .withResourceAttributes(new ResourceAttributesBuilder(permission).build()).endSpec().build();
        SubjectAccessReview answer = context.client().authorization().v1().subjectAccessReview().create(sar);
        return answer.getStatus() != null && Boolean.TRUE.equals(answer.getStatus().getAllowed());
    }

    private static void appendApprovalCondition(CertificateSigningRequest csr, String message) {
        if (csr.getStatus() == null) {
            csr.setStatus(new CertificateSigningRequestStatus());
        }
        if (csr.getStatus().getConditions() == null) {
            csr.getStatus().setConditions(new ArrayList<>());
        }
        csr.getStatus().getConditions().add(new CertificateSigningRequestConditionBuilder()
                .withType(CertificateControllerUtils.APPROVED).withStatus("True").withReason("AutoApproved")
                .withMessage(message).build());
    }

    /** Upstream's isNodeClientCert. */
    static boolean isNodeClientCert(CertificateSigningRequest csr, X509CertificateRequest x509cr) {
        if (!"kubernetes.io/kube-apiserver-client-kubelet".equals(csr.getSpec().getSignerName())) {
            return false;
        }
        List<String> usages = csr.getSpec().getUsages() == null ? List.of() : csr.getSpec().getUsages();
        return KubeletCSRs.isKubeletClientCSR(x509cr, usages);
    }

    /** Upstream's isSelfNodeClientCert: also the requester's own name in the CN. */
    static boolean isSelfNodeClientCert(CertificateSigningRequest csr, X509CertificateRequest x509cr) {
        String username = csr.getSpec().getUsername() == null ? "" : csr.getSpec().getUsername();
        if (!username.equals(x509cr.subject().commonName())) {
            return false;
        }
        return isNodeClientCert(csr, x509cr);
    }
}
