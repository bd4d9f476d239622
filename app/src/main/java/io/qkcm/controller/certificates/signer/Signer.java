package io.qkcm.controller.certificates.signer;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;

import io.fabric8.kubernetes.api.model.certificates.v1.CertificateSigningRequest;
import io.fabric8.kubernetes.api.model.certificates.v1.CertificateSigningRequestCondition;
import io.fabric8.kubernetes.api.model.certificates.v1.CertificateSigningRequestConditionBuilder;
import io.fabric8.kubernetes.api.model.certificates.v1.CertificateSigningRequestStatus;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.qkcm.controller.certificates.CertificateControllerUtils;
import io.qkcm.controller.certificates.KubeletCSRs;
import io.qkcm.controller.certificates.X509CertificateRequest;

/**
 * Upstream's signer (signer/signer.go) for one signer name: an approved, not failed request for that
 * name is checked against the signer's rules (a violation gets the Failed condition, reason
 * SignerValidationFailure, and no certificate) and signed by the CA under upstream's permissive policy:
 * the requested usages, NotBefore backdated 5 minutes, NotAfter the TTL later (less the backdate for
 * certificates of 8 h or more), the TTL being {@code spec.expirationSeconds} within [10 min,
 * --cluster-signing-duration], and never past the CA's own NotAfter.
 */
final class Signer {

    static final String KUBELET_SERVING = "kubernetes.io/kubelet-serving";
    static final String KUBE_APISERVER_CLIENT_KUBELET = "kubernetes.io/kube-apiserver-client-kubelet";
    static final String KUBE_APISERVER_CLIENT = "kubernetes.io/kube-apiserver-client";
    static final String LEGACY_UNKNOWN = "kubernetes.io/legacy-unknown";

    static final Duration BACKDATE = Duration.ofMinutes(5);
    static final Duration SHORT = Duration.ofHours(8);
    static final Duration MIN_DURATION = Duration.ofMinutes(10);

    /** Thrown by {@link #handle} for a request to retry; its message is upstream's. */
    static final class SignerException extends Exception {
        SignerException(String message, Throwable cause) {
            super(message, cause, false, false);
        }
    }

    private final String signerName;
    private final CAProvider caProvider;
    private final KubernetesClient client;
    private final Duration certTTL;
    private final Clock clock;

    /** Upstream's newSigner (the verification function is chosen by {@link #isRequestForSigner}). */
    Signer(String signerName, CAProvider caProvider, KubernetesClient client, Duration certTTL, Clock clock) {
        if (!List.of(KUBELET_SERVING, KUBE_APISERVER_CLIENT_KUBELET, KUBE_APISERVER_CLIENT, LEGACY_UNKNOWN)
                .contains(signerName)) {
            throw new IllegalArgumentException("unrecognized signerName: \"" + signerName + "\"");
        }
        this.signerName = signerName;
        this.caProvider = caProvider;
        this.client = client;
        this.certTTL = certTTL;
        this.clock = clock;
    }

    String signerName() {
        return signerName;
    }

    /** Upstream's handle. */
    void handle(CertificateSigningRequest csr) throws Exception {
        // ignore unapproved or failed requests
        if (!CertificateControllerUtils.isCertificateRequestApproved(csr)
                || CertificateControllerUtils.hasTrueCondition(csr, CertificateControllerUtils.FAILED)) {
            return;
        }
        // fast path: not for this signer
        if (!signerName.equals(csr.getSpec().getSignerName())) {
            return;
        }
        String name = csr.getMetadata().getName();
        X509CertificateRequest x509cr;
        try {
            x509cr = X509CertificateRequest.parseCSRBase64(csr.getSpec().getRequest());
        } catch (X509CertificateRequest.ParseException e) {
            throw new SignerException("unable to parse csr \"" + name + "\": " + e.getMessage(), null);
        }
        List<String> usages = usages(csr);
        String invalid = isRequestForSigner(x509cr, usages);
        if (invalid != null) {
            CertificateSigningRequestCondition failed = new CertificateSigningRequestConditionBuilder()
                    .withType(CertificateControllerUtils.FAILED).withStatus("True")
                    .withReason("SignerValidationFailure").withMessage(invalid)
                    .withLastUpdateTime(clock.instant().truncatedTo(ChronoUnit.SECONDS).toString()).build();
            status(csr).getConditions().add(failed);
            try {
                updateStatus(csr);
            } catch (KubernetesClientException e) {
                throw new SignerException("error adding failure condition for csr: " + e.getMessage(), e);
            }
            return;
        }
        byte[] cert;
        try {
            cert = sign(x509cr, usages, csr.getSpec().getExpirationSeconds(), clock.instant());
        } catch (CAProvider.CAException | CertificateAuthority.SigningException e) {
            throw new SignerException("error auto signing csr: " + e.getMessage(), null);
        }
        status(csr).setCertificate(Base64.getEncoder().encodeToString(cert));
        try {
            updateStatus(csr);
        } catch (KubernetesClientException e) {
            throw new SignerException("error updating signature for csr: " + e.getMessage(), e);
        }
    }

    /** PUT of the status subresource with the cached resourceVersion (upstream's UpdateStatus). */
    private void updateStatus(CertificateSigningRequest csr) {
        client.certificates().v1().certificateSigningRequests().resource(csr).updateStatus();
    }

    /**
     * The signer's rule (upstream's getCSRVerificationFuncForSignerName and isKubeletServing, isKubeletClient,
     * isKubeAPIServerClient, isLegacyUnknown): null when the request may be signed, else why not.
     */
    String isRequestForSigner(X509CertificateRequest req, List<String> usages) {
        return switch (signerName) {
            case KUBELET_SERVING -> KubeletCSRs.validateKubeletServingCSR(req, usages);
            case KUBE_APISERVER_CLIENT_KUBELET -> KubeletCSRs.validateKubeletClientCSR(req, usages);
            case KUBE_APISERVER_CLIENT -> validAPIServerClientUsages(usages);
            default -> null; // legacy-unknown: no restriction, for backward compatibility
        };
    }

    /** Upstream's validAPIServerClientUsages. */
    static String validAPIServerClientUsages(List<String> usages) {
        boolean hasClientAuth = false;
        for (String u : usages) {
            switch (u) {
                case "digital signature", "key encipherment" -> {
                    // optional
                }
                case "client auth" -> hasClientAuth = true;
                default -> {
                    return "invalid usage for client certificate: " + u;
                }
            }
        }
        if (!hasClientAuth) {
            return "missing required usage for client certificate: client auth";
        }
        return null;
    }

    /** Upstream's sign: the PEM certificate. */
    byte[] sign(X509CertificateRequest x509cr, List<String> usages, Integer expirationSeconds, Instant now)
            throws CAProvider.CAException, CertificateAuthority.SigningException {
        CertificateAuthority ca = caProvider.currentCA();
        byte[] der = ca.sign(x509cr, new CertificateAuthority.PermissiveSigningPolicy(duration(expirationSeconds),
                usages, BACKDATE, SHORT, now));
        String body = Base64.getMimeEncoder(64, new byte[] { '\n' }).encodeToString(der);
        return ("-----BEGIN CERTIFICATE-----\n" + body + "\n-----END CERTIFICATE-----\n")
                .getBytes(StandardCharsets.US_ASCII);
    }

    /** Upstream's duration: the requested one within [10 min, --cluster-signing-duration]. */
    Duration duration(Integer expirationSeconds) {
        if (expirationSeconds == null) {
            return certTTL;
        }
        Duration requested = Duration.ofSeconds(expirationSeconds);
        if (requested.compareTo(certTTL) > 0) {
            return certTTL;
        }
        if (requested.compareTo(MIN_DURATION) < 0) {
            return MIN_DURATION;
        }
        return requested;
    }

    private static List<String> usages(CertificateSigningRequest csr) {
        List<String> usages = csr.getSpec().getUsages();
        return usages == null ? List.of() : usages;
    }

    private static CertificateSigningRequestStatus status(CertificateSigningRequest csr) {
        if (csr.getStatus() == null) {
            csr.setStatus(new CertificateSigningRequestStatus());
        }
        if (csr.getStatus().getConditions() == null) {
            csr.getStatus().setConditions(new ArrayList<>());
        }
        return csr.getStatus();
    }
}
