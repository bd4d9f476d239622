package io.qkcm.controller.certificates.signer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigInteger;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.qkcm.testing.TestCsrs;
import io.qkcm.controller.certificates.X509CertificateRequest;
import io.qkcm.pki.Der;

/**
 * The signer's certificates byte for byte as upstream's: golden/ holds a CA, requests and the certificates
 * Go's x509.CreateCertificate makes of upstream's template under the permissive policy (made by
 * golden/main.go.txt with a fixed serial and time; RSA PKCS#1 v1.5 signatures are deterministic, so the
 * whole DER compares). Then the CA's loading errors (upstream's messages, no key material), the policy's
 * refusals, and the signer's duration bounds.
 */
class CertificateAuthorityTest {

    private static Path golden(String name) throws Exception {
        return Path.of(CertificateAuthorityTest.class.getResource("golden/" + name).toURI());
    }

    private static byte[] pemDer(Path file) throws Exception {
        String pem = Files.readString(file);
        return Base64.getMimeDecoder().decode(pem.replaceAll("-----[A-Z ]+-----", ""));
    }

    @Test
    void certificatesAreGosCertificates() throws Exception {
        CAProvider provider = new CAProvider(golden("ca.crt").toString(), golden("ca.key").toString());
        List<String> cases = Files.readAllLines(golden("cases.tsv"));
        assertThat(cases).hasSize(5);
        for (String line : cases) {
            String[] f = line.split("\t");
            X509CertificateRequest request = X509CertificateRequest.parseCSR(Files.readAllBytes(golden(f[0] + ".csr")));
            byte[] ours = provider.currentCA().sign(request, new CertificateAuthority.PermissiveSigningPolicy(
                    Duration.ofSeconds(Long.parseLong(f[2])), Arrays.asList(f[1].split(",")), Signer.BACKDATE, Signer.SHORT,
                    Instant.ofEpochSecond(Long.parseLong(f[4]))), new BigInteger(f[3], 16));
            assertThat(Der.hex(ours)).as(f[0]).isEqualTo(Der.hex(pemDer(golden(f[0] + ".crt"))));
        }
    }

    @Test
    void policyRefusals() throws Exception {
        CertificateAuthority ca = new CAProvider(golden("ca.crt").toString(), golden("ca.key").toString()).currentCA();
        X509CertificateRequest request = X509CertificateRequest.parseCSR(Files.readAllBytes(golden("kubelet-client.csr")));
        Instant caNotAfter = ca.certificate().getNotAfter().toInstant();
        assertThatThrownBy(() -> ca.sign(request, new CertificateAuthority.PermissiveSigningPolicy(Duration.ofHours(1),
                List.of("client auth", "bogus", "other"), Signer.BACKDATE, Signer.SHORT, caNotAfter.minusSeconds(3600))))
                .hasMessage("unrecognized usage values: [\"bogus\" \"other\"]");
        assertThatThrownBy(() -> ca.sign(request, new CertificateAuthority.PermissiveSigningPolicy(Duration.ofHours(1),
                List.of("client auth"), Signer.BACKDATE, Signer.SHORT, caNotAfter.plusSeconds(3600))))
                .hasMessage("the signer has expired: NotAfter=" + CertificateAuthority.goTime(caNotAfter));
        assertThatThrownBy(() -> ca.sign(request, new CertificateAuthority.PermissiveSigningPolicy(Duration.ofHours(1),
                List.of("client auth"), Signer.BACKDATE, Signer.SHORT, caNotAfter.plusSeconds(60))))
                .hasMessage("refusing to sign a certificate that expired in the past: NotAfter=" + CertificateAuthority.goTime(caNotAfter));

        // a request whose signature does not verify (the API server refuses to store one; the signer checks anyway)
        byte[] der = pemDer(golden("kubelet-client.csr"));
        der[der.length - 3] ^= 0x01;
        X509CertificateRequest tampered = X509CertificateRequest.parseCSR(("-----BEGIN CERTIFICATE REQUEST-----\n"
                + Base64.getMimeEncoder().encodeToString(der) + "\n-----END CERTIFICATE REQUEST-----\n").getBytes());
        assertThatThrownBy(() -> ca.sign(tampered, new CertificateAuthority.PermissiveSigningPolicy(Duration.ofHours(1),
                List.of("client auth"), Signer.BACKDATE, Signer.SHORT, caNotAfter.minusSeconds(7200))))
                .hasMessage("unable to verify certificate request signature: x509: ECDSA verification failure");
        assertThatThrownBy(() -> X509CertificateRequest.parseCSR(Files.readAllBytes(golden("ca.crt"))))
                .hasMessage("PEM block type must be CERTIFICATE REQUEST");
    }

    @Test
    void caLoadingErrorsNameTheFilesButNotTheirContent(@TempDir Path dir) throws Exception {
        TestCsrs.TestCa ca = TestCsrs.ca(dir.resolve("ca"), "qkcm-test-ca", Duration.ofDays(1));
        TestCsrs.TestCa other = TestCsrs.ca(dir.resolve("other"), "qkcm-other-ca", Duration.ofDays(1));
        String keyPem = Files.readString(ca.keyFile());
        String keyBody = keyPem.split("\n")[1];

        assertThatThrownBy(() -> new CAProvider(ca.certFile().toString(), ""))
                .hasMessage("error reading CA cert file \"" + ca.certFile() + "\": missing filename for serving cert");
        Path missing = dir.resolve("missing.key");
        assertThatThrownBy(() -> new CAProvider(ca.certFile().toString(), missing.toString()))
                .hasMessage("error reading CA cert file \"" + ca.certFile() + "\": open " + missing + ": no such file or directory");
        Path unreadable = dir.resolve("unreadable.key");
        Files.writeString(unreadable, keyPem);
        Files.setPosixFilePermissions(unreadable, PosixFilePermissions.fromString("---------"));
        if (!Files.isReadable(unreadable)) { // root reads any file
            assertThatThrownBy(() -> new CAProvider(ca.certFile().toString(), unreadable.toString()))
                    .hasMessageEndingWith("open " + unreadable + ": permission denied");
        }
        Path garbage = dir.resolve("garbage.key");
        Files.writeString(garbage, "-----BEGIN RSA PRIVATE KEY-----\n" + keyBody.substring(0, 40) + "\n-----END RSA PRIVATE KEY-----\n");
        assertThatThrownBy(() -> new CAProvider(ca.certFile().toString(), garbage.toString()))
                .hasMessage("error reading CA cert file \"" + ca.certFile() + "\": tls: failed to parse private key")
                .satisfies(e -> assertThat(e.getMessage()).doesNotContain(keyBody.substring(0, 40)));
        assertThatThrownBy(() -> new CAProvider(ca.certFile().toString(), other.keyFile().toString()))
                .hasMessage("error reading CA cert file \"" + ca.certFile() + "\": tls: private key does not match public key");
        Path twoCerts = dir.resolve("two.crt");
        Files.writeString(twoCerts, Files.readString(ca.certFile()) + Files.readString(other.certFile()));
        assertThatThrownBy(() -> new CAProvider(twoCerts.toString(), ca.keyFile().toString()))
                .hasMessage("error reading CA cert file \"csr-controller::" + twoCerts + "::" + ca.keyFile()
                        + "\": expected 1 certificate, found 2");
    }

    @Test
    void durationIsTheRequestedOneWithinBounds() {
        Signer signer = new Signer(Signer.KUBE_APISERVER_CLIENT, null, null, Duration.ofHours(24), null);
        assertThat(signer.duration(null)).isEqualTo(Duration.ofHours(24));
        assertThat(signer.duration(3600)).isEqualTo(Duration.ofHours(1));
        assertThat(signer.duration(599)).isEqualTo(Duration.ofMinutes(10));
        assertThat(signer.duration(48 * 3600)).isEqualTo(Duration.ofHours(24));
        assertThatThrownBy(() -> new Signer("example.com/x", null, null, Duration.ofHours(1), null))
                .hasMessage("unrecognized signerName: \"example.com/x\"");
        assertThat(Signer.validAPIServerClientUsages(List.of("digital signature", "key encipherment"))).isEqualTo(
                "missing required usage for client certificate: client auth");
    }

    @Test
    void anEcdsaCaSignsWithItsCurvesHash(@TempDir Path dir) throws Exception {
        java.security.KeyPairGenerator gen = java.security.KeyPairGenerator.getInstance("EC");
        gen.initialize(384);
        java.security.KeyPair key = gen.generateKeyPair();
        org.bouncycastle.asn1.x500.X500Name name = new org.bouncycastle.asn1.x500.X500Name("CN=qkcm-ec-ca");
        Instant now = Instant.now();
        var builder = new org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder(name, BigInteger.TEN,
                java.util.Date.from(now.minusSeconds(3600)), java.util.Date.from(now.plus(Duration.ofDays(1))), name,
                key.getPublic());
        builder.addExtension(org.bouncycastle.asn1.x509.Extension.basicConstraints, true,
                new org.bouncycastle.asn1.x509.BasicConstraints(true));
        var caCert = new org.bouncycastle.cert.jcajce.JcaX509CertificateConverter()
                .getCertificate(builder.build(new org.bouncycastle.operator.jcajce.JcaContentSignerBuilder("SHA384withECDSA")
                        .build(key.getPrivate())));
        Path certFile = dir.resolve("ec.crt");
        Path keyFile = dir.resolve("ec.key");
        Files.writeString(certFile, TestCsrs.pem(caCert));
        // PKCS#8: BouncyCastle's SEC1 of a JDK key leaves the curve out, which Go refuses as well
        Files.writeString(keyFile, "-----BEGIN PRIVATE KEY-----\n"
                + Base64.getMimeEncoder(64, new byte[] { '\n' }).encodeToString(key.getPrivate().getEncoded())
                + "\n-----END PRIVATE KEY-----\n");
        CertificateAuthority ca = new CAProvider(certFile.toString(), keyFile.toString()).currentCA();
        X509CertificateRequest request = X509CertificateRequest.parseCSR(
                TestCsrs.csrPem(TestCsrs.rsaKey(), "CN=ec-signed").getBytes());
        byte[] der = ca.sign(request, new CertificateAuthority.PermissiveSigningPolicy(Duration.ofHours(1),
                List.of("client auth"), Signer.BACKDATE, Signer.SHORT, now));
        java.security.cert.X509Certificate cert = (java.security.cert.X509Certificate) java.security.cert.CertificateFactory
                .getInstance("X.509").generateCertificate(new java.io.ByteArrayInputStream(der));
        assertThat(cert.getSigAlgOID()).isEqualTo("1.2.840.10045.4.3.3");
        TestCsrs.pkixValidate(caCert, cert, new java.util.Date());
    }
}
