package io.qkcm.controller.certificates;

import java.util.List;

import io.fabric8.kubernetes.api.model.certificates.v1.CertificateSigningRequest;
import io.fabric8.kubernetes.api.model.certificates.v1.CertificateSigningRequestCondition;

/** Upstream's certificate_controller_utils.go: reading a request's conditions. */
public final class CertificateControllerUtils {

    public static final String APPROVED = "Approved";
    public static final String DENIED = "Denied";
    public static final String FAILED = "Failed";

    private CertificateControllerUtils() {
    }

    /** Upstream's IsCertificateRequestApproved: approved and not denied. */
    public static boolean isCertificateRequestApproved(CertificateSigningRequest csr) {
        boolean[] approvedDenied = getCertApprovalCondition(csr);
        return approvedDenied[0] && !approvedDenied[1];
    }

    /** Upstream's HasTrueCondition: a condition of the type whose status is True or empty. */
    public static boolean hasTrueCondition(CertificateSigningRequest csr, String conditionType) {
        for (CertificateSigningRequestCondition c : conditions(csr)) {
            if (conditionType.equals(c.getType()) && (c.getStatus() == null || c.getStatus().isEmpty()
                    || "True".equals(c.getStatus()))) {
                return true;
            }
        }
        return false;
    }

    /** Upstream's GetCertApprovalCondition: {approved, denied}, whatever the conditions' status. */
    public static boolean[] getCertApprovalCondition(CertificateSigningRequest csr) {
        boolean approved = false;
        boolean denied = false;
        for (CertificateSigningRequestCondition c : conditions(csr)) {
            if (APPROVED.equals(c.getType())) {
                approved = true;
            }
            if (DENIED.equals(c.getType())) {
                denied = true;
            }
        }
        return new boolean[] { approved, denied };
    }

    public static List<CertificateSigningRequestCondition> conditions(CertificateSigningRequest csr) {
        if (csr.getStatus() == null || csr.getStatus().getConditions() == null) {
            return List.of();
        }
        return csr.getStatus().getConditions();
    }
}
