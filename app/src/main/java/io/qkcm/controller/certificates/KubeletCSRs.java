package io.qkcm.controller.certificates;

import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * Upstream's kubelet CSR rules (pkg/apis/certificates helpers.go: ValidateKubeletServingCSR,
 * ValidateKubeletClientCSR, IsKubeletClientCSR), used by the signer to fail a request and by the
 * approver to recognise one. Each returns null when the request passes, else upstream's error text, in
 * upstream's order of checks.
 */
public final class KubeletCSRs {

    static final String ORGANIZATION_NOT_SYSTEM_NODES = "subject organization is not system:nodes";
    static final String COMMON_NAME_NOT_SYSTEM_NODE = "subject common name does not begin with system:node:";
    static final String DNS_OR_IP_SAN_REQUIRED = "DNS or IP subjectAltName is required";
    static final String DNS_SAN_NOT_ALLOWED = "DNS subjectAltNames are not allowed";
    static final String EMAIL_SAN_NOT_ALLOWED = "Email subjectAltNames are not allowed";
    static final String IP_SAN_NOT_ALLOWED = "IP subjectAltNames are not allowed";
    static final String URI_SAN_NOT_ALLOWED = "URI subjectAltNames are not allowed";

    private static final Set<String> SERVING_USAGES = Set.of("digital signature", "key encipherment", "server auth");
    private static final Set<String> SERVING_USAGES_NO_RSA = Set.of("digital signature", "server auth");
    private static final Set<String> CLIENT_USAGES = Set.of("digital signature", "key encipherment", "client auth");
    private static final Set<String> CLIENT_USAGES_NO_RSA = Set.of("digital signature", "client auth");

    private KubeletCSRs() {
    }

    /** Upstream's ValidateKubeletServingCSR. */
    public static String validateKubeletServingCSR(X509CertificateRequest req, Collection<String> usages) {
        if (!List.of("system:nodes").equals(req.subject().organization())) {
            return ORGANIZATION_NOT_SYSTEM_NODES;
        }
        if (req.dnsNames().isEmpty() && req.ipAddresses().isEmpty()) {
            return DNS_OR_IP_SAN_REQUIRED;
        }
        if (!req.emailAddresses().isEmpty()) {
            return EMAIL_SAN_NOT_ALLOWED;
        }
        if (!req.uris().isEmpty()) {
            return URI_SAN_NOT_ALLOWED;
        }
        Set<String> set = Set.copyOf(usages);
        if (!SERVING_USAGES.equals(set) && !SERVING_USAGES_NO_RSA.equals(set)) {
            return "usages did not match " + goList(SERVING_USAGES);
        }
        if (!req.subject().commonName().startsWith("system:node:")) {
            return COMMON_NAME_NOT_SYSTEM_NODE;
        }
        return null;
    }

    /** Upstream's ValidateKubeletClientCSR. */
    public static String validateKubeletClientCSR(X509CertificateRequest req, Collection<String> usages) {
        if (!List.of("system:nodes").equals(req.subject().organization())) {
            return ORGANIZATION_NOT_SYSTEM_NODES;
        }
        if (!req.dnsNames().isEmpty()) {
            return DNS_SAN_NOT_ALLOWED;
        }
        if (!req.emailAddresses().isEmpty()) {
            return EMAIL_SAN_NOT_ALLOWED;
        }
        if (!req.ipAddresses().isEmpty()) {
            return IP_SAN_NOT_ALLOWED;
        }
        if (!req.uris().isEmpty()) {
            return URI_SAN_NOT_ALLOWED;
        }
        if (!req.subject().commonName().startsWith("system:node:")) {
            return COMMON_NAME_NOT_SYSTEM_NODE;
        }
        Set<String> set = Set.copyOf(usages);
        if (!CLIENT_USAGES.equals(set) && !CLIENT_USAGES_NO_RSA.equals(set)) {
            return "usages did not match " + goList(CLIENT_USAGES);
        }
        return null;
    }

    /** Upstream's IsKubeletClientCSR. */
    public static boolean isKubeletClientCSR(X509CertificateRequest req, Collection<String> usages) {
        return validateKubeletClientCSR(req, usages) == null;
    }

    /** Go's %v of a sorted []string: {@code [a b c]}. */
    static String goList(Set<String> values) {
        return "[" + String.join(" ", new TreeSet<>(values)) + "]";
    }
}
