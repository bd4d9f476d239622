package io.qkcm.manager.serving;

import java.io.ByteArrayInputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.security.cert.CertPathBuilder;
import java.security.cert.CertStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.CollectionCertStoreParameters;
import java.security.cert.PKIXBuilderParameters;
import java.security.cert.TrustAnchor;
import java.security.cert.X509CertSelector;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Date;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import javax.net.ssl.SSLEngine;
import javax.net.ssl.X509ExtendedTrustManager;

/**
 * Client certificates as upstream's secure serving takes them: the TLS handshake only <em>requests</em>
 * a certificate (Go's {@code tls.RequestClientCert}, naming the client CAs) and accepts whatever the
 * client sends; the x509 authenticator then verifies the chain against the client CA, for client
 * authentication, at the current time. A certificate that does not verify (unknown CA, expired, wrong
 * key usage) is an authentication error, answered 401, not a failed handshake.
 */
final class ClientCertificates {

    private static final String CLIENT_AUTH = "1.3.6.1.5.5.7.3.2";
    private static final String ANY_EKU = "2.5.29.37.0";

    private final List<X509Certificate> cas;
    private final Set<TrustAnchor> anchors = new HashSet<>();

    private ClientCertificates(List<X509Certificate> cas) {
        this.cas = List.copyOf(cas);
        cas.forEach(ca -> anchors.add(new TrustAnchor(ca, null)));
    }

    /** The CA bundle (PEM, one or more certificates). */
    static ClientCertificates fromPem(String pem) {
        try {
            List<X509Certificate> cas = new ArrayList<>();
            for (Certificate c : CertificateFactory.getInstance("X.509")
                    .generateCertificates(new ByteArrayInputStream(pem.getBytes(StandardCharsets.US_ASCII)))) {
                cas.add((X509Certificate) c);
            }
            if (cas.isEmpty()) {
                throw new IllegalStateException("unable to load client CA provider: no certificate in the bundle");
            }
            return new ClientCertificates(cas);
        } catch (CertificateException e) {
            throw new IllegalStateException("unable to load client CA provider: " + e.getMessage(), e);
        }
    }

    /**
     * Verifies the chain the client sent (leaf first). Null when it verifies; otherwise the error, as
     * upstream words it (no certificate content beyond the subject and the reason).
     */
    String verify(List<X509Certificate> chain) {
        X509Certificate leaf = chain.get(0);
        try {
            X509CertSelector target = new X509CertSelector();
            target.setCertificate(leaf);
            PKIXBuilderParameters params = new PKIXBuilderParameters(anchors, target);
            params.setRevocationEnabled(false);
            params.setDate(new Date());
            params.addCertStore(CertStore.getInstance("Collection", new CollectionCertStoreParameters(chain)));
            CertPathBuilder.getInstance("PKIX").build(params);
            for (X509Certificate c : chain) {
                if (c.getBasicConstraints() >= 0 && anchors.stream().anyMatch(a -> a.getTrustedCert().equals(c))) {
                    break; // the CA itself, when the client sends it along
                }
                List<String> eku = c.getExtendedKeyUsage();
                if (eku != null && !eku.contains(CLIENT_AUTH) && !eku.contains(ANY_EKU)) {
                    return verifyError(leaf, "certificate specifies an incompatible key usage");
                }
            }
            return null;
        } catch (java.security.GeneralSecurityException | RuntimeException e) {
            return verifyError(leaf, reason(leaf, e));
        }
    }

    private static String reason(X509Certificate leaf, Exception e) {
        Date now = new Date();
        if (now.after(leaf.getNotAfter()) || now.before(leaf.getNotBefore())) {
            return "certificate has expired or is not yet valid";
        }
        return "certificate signed by unknown authority";
    }

    private static String verifyError(X509Certificate leaf, String reason) {
        return "verifying certificate " + leaf.getSubjectX500Principal().getName() + " failed: x509: " + reason;
    }

    /** The handshake's trust manager: names the client CAs, accepts any client chain, trusts no server. */
    X509ExtendedTrustManager requestingTrustManager() {
        X509Certificate[] issuers = cas.toArray(new X509Certificate[0]);
        return new X509ExtendedTrustManager() {
            @Override
            public void checkClientTrusted(X509Certificate[] chain, String authType) {
            }

            @Override
            public void checkClientTrusted(X509Certificate[] chain, String authType, Socket socket) {
            }

            @Override
            public void checkClientTrusted(X509Certificate[] chain, String authType, SSLEngine engine) {
            }

            @Override
            public void checkServerTrusted(X509Certificate[] chain, String authType) throws CertificateException {
                throw new CertificateException("not a client");
            }

            @Override
            public void checkServerTrusted(X509Certificate[] chain, String authType, Socket socket)
                    throws CertificateException {
                throw new CertificateException("not a client");
            }

            @Override
            public void checkServerTrusted(X509Certificate[] chain, String authType, SSLEngine engine)
                    throws CertificateException {
                throw new CertificateException("not a client");
            }

            @Override
            public X509Certificate[] getAcceptedIssuers() {
                return issuers.clone();
            }
        };
    }
}
