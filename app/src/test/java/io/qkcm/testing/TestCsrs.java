package io.qkcm.testing;

import java.io.IOException;
import java.io.StringWriter;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Base64;
import java.util.Date;
import java.util.List;

import org.bouncycastle.asn1.pkcs.PKCSObjectIdentifiers;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.ExtensionsGenerator;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509ExtensionUtils;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;
import org.bouncycastle.pkcs.PKCS10CertificationRequest;
import org.bouncycastle.pkcs.jcajce.JcaPKCS10CertificationRequestBuilder;

import io.fabric8.kubernetes.api.model.certificates.v1.CertificateSigningRequest;
import io.fabric8.kubernetes.api.model.certificates.v1.CertificateSigningRequestBuilder;
import io.fabric8.kubernetes.api.model.certificates.v1.CertificateSigningRequestConditionBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;

/**
 * Test material for the certificate controllers: key pairs, PKCS#10 requests (BouncyCastle, test scope
 * only), CAs written to PEM files, and CertificateSigningRequests created and approved as kubectl does.
 */
public final class TestCsrs {

    private TestCsrs() {
    }

    public static KeyPair rsaKey() throws Exception {
        KeyPairGenerator gen = KeyPairGenerator.getInstance("RSA");
        gen.initialize(2048);
        return gen.generateKeyPair();
    }

    public static KeyPair ecKey() throws Exception {
        KeyPairGenerator gen = KeyPairGenerator.getInstance("EC");
        gen.initialize(256);
        return gen.generateKeyPair();
    }

    /** A PEM request for {@code subject} (RFC 4514, e.g. "O=system:nodes,CN=system:node:n1") with these SANs. */
    public static String csrPem(KeyPair key, String subject, GeneralName... sans) throws Exception {
        JcaPKCS10CertificationRequestBuilder b = new JcaPKCS10CertificationRequestBuilder(new X500Name(subject),
                key.getPublic());
        if (sans.length > 0) {
            ExtensionsGenerator ext = new ExtensionsGenerator();
            ext.addExtension(Extension.subjectAlternativeName, false, new GeneralNames(sans));
            b.addAttribute(PKCSObjectIdentifiers.pkcs_9_at_extensionRequest, ext.generate());
        }
        String alg = key.getPrivate().getAlgorithm().equals("EC") ? "SHA256withECDSA" : "SHA256withRSA";
        PKCS10CertificationRequest csr = b.build(new JcaContentSignerBuilder(alg).build(key.getPrivate()));
        return pem(csr);
    }

    public static String pem(Object o) throws IOException {
        StringWriter out = new StringWriter();
        try (JcaPEMWriter w = new JcaPEMWriter(out)) {
            w.writeObject(o);
        }
        return out.toString();
    }

    /** A CA written to {@code dir}: ca.crt (CA:TRUE, with a subject key id) and ca.key. */
    public record TestCa(X509Certificate certificate, KeyPair key, Path certFile, Path keyFile) {
    }

    public static TestCa ca(Path dir, String cn, Duration validity) throws Exception {
        KeyPair key = rsaKey();
        X500Name name = new X500Name("CN=" + cn);
        Instant now = Instant.now();
        JcaX509v3CertificateBuilder builder = new JcaX509v3CertificateBuilder(name, BigInteger.valueOf(now.toEpochMilli()),
                Date.from(now.minus(1, ChronoUnit.HOURS)), Date.from(now.plus(validity)), name, key.getPublic());
        builder.addExtension(Extension.basicConstraints, true, new BasicConstraints(true));
        builder.addExtension(Extension.subjectKeyIdentifier, false,
                new JcaX509ExtensionUtils().createSubjectKeyIdentifier(key.getPublic()));
        X509Certificate cert = new JcaX509CertificateConverter().getCertificate(
                builder.build(new JcaContentSignerBuilder("SHA256WithRSA").build(key.getPrivate())));
        Files.createDirectories(dir);
        Path certFile = dir.resolve("ca.crt");
        Path keyFile = dir.resolve("ca.key");
        Files.writeString(certFile, pem(cert));
        Files.writeString(keyFile, pem(key.getPrivate()));
        return new TestCa(cert, key, certFile, keyFile);
    }

    /** Creates a request (as its creator, whom the API server records as spec.username). */
    public static CertificateSigningRequest create(KubernetesClient client, String name, String signerName,
            List<String> usages, Integer expirationSeconds, String pem) {
        return client.certificates().v1().certificateSigningRequests().resource(new CertificateSigningRequestBuilder()
                .withNewMetadata().withName(name).endMetadata().withNewSpec().withSignerName(signerName)
                .withUsages(usages).withExpirationSeconds(expirationSeconds)
                .withRequest(Base64.getEncoder().encodeToString(pem.getBytes(StandardCharsets.US_ASCII)))
                .endSpec().build()).create();
    }

    /** kubectl certificate approve. */
    public static void approve(KubernetesClient client, String name) {
        client.certificates().v1().certificateSigningRequests().withName(name).approve(
                new CertificateSigningRequestConditionBuilder().withType("Approved").withStatus("True")
                        .withReason("KubectlApprove").withMessage("This CSR was approved by kubectl certificate approve.")
                        .withLastUpdateTime(Instant.now().truncatedTo(ChronoUnit.SECONDS).toString()).build());
    }

    /**
     * {@code kubectl certificate approve} itself when kubectl is on the machine (its output), else the same
     * approval through the client (null).
     */
    public static String kubectlApprove(KubernetesClient client, Path kubeconfig, String name) throws Exception {
        Process p;
        try {
            p = new ProcessBuilder("kubectl", "--kubeconfig", kubeconfig.toString(), "certificate", "approve", name)
                    .redirectErrorStream(true).start();
        } catch (IOException e) {
            approve(client, name);
            return null;
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        if (p.waitFor() != 0) {
            throw new IllegalStateException("kubectl certificate approve failed: " + out);
        }
        return out;
    }

    /** kubectl certificate deny. */
    public static void deny(KubernetesClient client, String name) {
        client.certificates().v1().certificateSigningRequests().withName(name).deny(
                new CertificateSigningRequestConditionBuilder().withType("Denied").withStatus("True")
                        .withReason("KubectlDeny").withMessage("This CSR was denied by kubectl certificate deny.")
                        .withLastUpdateTime(Instant.now().truncatedTo(ChronoUnit.SECONDS).toString()).build());
    }

    public static CertificateSigningRequest get(KubernetesClient client, String name) {
        return client.certificates().v1().certificateSigningRequests().withName(name).get();
    }

    /** The issued certificate's PEM, or null. */
    public static String certificatePem(CertificateSigningRequest csr) {
        if (csr == null || csr.getStatus() == null || csr.getStatus().getCertificate() == null
                || csr.getStatus().getCertificate().isEmpty()) {
            return null;
        }
        return new String(Base64.getDecoder().decode(csr.getStatus().getCertificate()), StandardCharsets.US_ASCII);
    }

    public static X509Certificate parse(String pem) throws Exception {
        return (X509Certificate) java.security.cert.CertificateFactory.getInstance("X.509")
                .generateCertificate(new java.io.ByteArrayInputStream(pem.getBytes(StandardCharsets.US_ASCII)));
    }

    /** {@code openssl verify -CAfile ca cert}'s output, or null when openssl is not on the machine. */
    public static String opensslVerify(Path ca, String certPem, String... extra) throws Exception {
        Path cert = Files.createTempFile("qkcm-csr-cert", ".pem");
        try {
            Files.writeString(cert, certPem);
            List<String> cmd = new java.util.ArrayList<>(List.of("openssl", "verify"));
            cmd.addAll(List.of(extra));
            cmd.addAll(List.of("-CAfile", ca.toString(), cert.toString()));
            Process p;
            try {
                p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
            } catch (IOException e) {
                return null;
            }
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            p.waitFor();
            return "exit " + p.exitValue() + ": " + out.trim();
        } finally {
            Files.deleteIfExists(cert);
        }
    }

    /** The JDK's PKIX validation of {@code cert} against the single trust anchor {@code ca}. */
    public static void pkixValidate(X509Certificate ca, X509Certificate cert, Date at) throws Exception {
        java.security.cert.CertPathValidator v = java.security.cert.CertPathValidator.getInstance("PKIX");
        java.security.cert.PKIXParameters params = new java.security.cert.PKIXParameters(
                java.util.Set.of(new java.security.cert.TrustAnchor(ca, null)));
        params.setRevocationEnabled(false);
        params.setDate(at);
        v.validate(java.security.cert.CertificateFactory.getInstance("X.509").generateCertPath(List.of(cert)), params);
    }

    public static GeneralName dns(String name) {
        return new GeneralName(GeneralName.dNSName, name);
    }

    public static GeneralName ip(String ip) {
        return new GeneralName(GeneralName.iPAddress, ip);
    }
}
