package io.qkcm.manager.serving;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.security.KeyFactory;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.security.spec.PKCS8EncodedKeySpec;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Date;
import java.util.List;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSession;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLParameters;

import org.junit.jupiter.api.Test;

/** The self-signed serving certificate generated when no --tls-cert-file is given. */
class ServingCertificateTest {

    @Test
    void selfSignedCertificateIsValidForLocalhostAndLoopback() throws Exception {
        ServingCertificate pem = ServingCertificate.selfSigned("localhost", List.of("0.0.0.0"));
        X509Certificate cert = parse(pem.certificatePem());

        cert.checkValidity(new Date());
        cert.checkValidity(Date.from(Instant.now().plus(Duration.ofDays(364))));
        cert.verify(cert.getPublicKey()); // self-signed
        assertThat(cert.getSubjectX500Principal().getName()).startsWith("CN=localhost@");
        assertThat(sans(cert))
                .containsExactlyInAnyOrder("localhost", "127.0.0.1"); // the wildcard bind address is skipped
        assertThat(cert.getExtendedKeyUsage()).contains("1.3.6.1.5.5.7.3.1"); // serverAuth
        assertThat(cert.getBasicConstraints()).isEqualTo(-1);
        assertThat(cert.getPublicKey().getAlgorithm()).isEqualTo("EC");
        // P-384: the JDK's first P-256 key costs a precomputed table (~35 ms of a fresh JVM)
        assertThat(((java.security.interfaces.ECPublicKey) cert.getPublicKey()).getParams().getCurve().getField()
                .getFieldSize()).isEqualTo(384);

        PrivateKey key = KeyFactory.getInstance("EC").generatePrivate(new PKCS8EncodedKeySpec(der(pem.privateKeyPem())));
        Signature s = Signature.getInstance("SHA384withECDSA");
        s.initSign(key);
        s.update("x".getBytes(StandardCharsets.UTF_8));
        byte[] sig = s.sign();
        s.initVerify(cert.getPublicKey());
        s.update("x".getBytes(StandardCharsets.UTF_8));
        assertThat(s.verify(sig)).as("the key belongs to the certificate").isTrue();

        // a TLS client that trusts the certificate and checks the host name accepts it for "localhost"
        assertThat(handshake(cert, key, "localhost")).isTrue();
    }

    @Test
    void specificBindAddressIsAddedAsIpSan() throws Exception {
        X509Certificate cert = parse(ServingCertificate.selfSigned("localhost", List.of("10.1.2.3")).certificatePem());
        assertThat(sans(cert))
                .containsExactlyInAnyOrder("localhost", "127.0.0.1", "10.1.2.3");
    }

    @Test
    void certificateFieldsAndExtensionsAreThoseOfUpstreamsSelfSignedCert() throws Exception {
        Instant before = Instant.now();
        X509Certificate cert = parse(ServingCertificate.selfSigned("localhost", List.of("[fd00::1]", "::ffff:10.0.0.1",
                "node-1.example")).certificatePem());
        assertThat(cert.getVersion()).isEqualTo(3);
        assertThat(cert.getSigAlgOID()).isEqualTo("1.2.840.10045.4.3.3"); // ecdsa-with-SHA384
        assertThat(cert.getSigAlgParams()).isNull();
        assertThat(cert.getSerialNumber().signum()).isPositive();
        assertThat(cert.getSerialNumber().bitLength()).isLessThanOrEqualTo(64);
        assertThat(cert.getIssuerX500Principal()).isEqualTo(cert.getSubjectX500Principal());
        assertThat(cert.getSubjectX500Principal().getName()).matches("CN=localhost@\\d+");
        long epoch = Long.parseLong(cert.getSubjectX500Principal().getName().substring("CN=localhost@".length()));
        assertThat(epoch).isBetween(before.getEpochSecond(), Instant.now().getEpochSecond());
        assertThat(cert.getNotBefore().toInstant()).isEqualTo(Instant.ofEpochSecond(epoch).minus(Duration.ofHours(1)));
        assertThat(Duration.between(cert.getNotBefore().toInstant(), cert.getNotAfter().toInstant()))
                .isEqualTo(Duration.ofDays(365));
        assertThat(cert.getCriticalExtensionOIDs()).containsExactlyInAnyOrder("2.5.29.19", "2.5.29.15");
        assertThat(cert.getNonCriticalExtensionOIDs()).containsExactlyInAnyOrder("2.5.29.17", "2.5.29.37");
        assertThat(cert.getKeyUsage()).startsWith(true).containsOnlyOnce(true);
        assertThat(cert.getExtendedKeyUsage()).containsExactly("1.3.6.1.5.5.7.3.1");
        assertThat(cert.getBasicConstraints()).isEqualTo(-1);
        assertThat(cert.getSubjectAlternativeNames().stream().map(l -> l.get(0) + "=" + l.get(1)).toList())
                .containsExactly("2=localhost", "2=node-1.example", "7=127.0.0.1", "7=fd00:0:0:0:0:0:0:1",
                        "7=10.0.0.1"); // the JDK shows ::ffff:10.0.0.1 as IPv4; its encoding has 16 bytes:
        assertThat(org.bouncycastle.asn1.x509.GeneralNames.fromExtensions(
                new org.bouncycastle.cert.X509CertificateHolder(cert.getEncoded()).getExtensions(),
                org.bouncycastle.asn1.x509.Extension.subjectAlternativeName).getNames()[4].getName()
                .toASN1Primitive().getEncoded()).hasSize(2 + 16);

        // an independent parser (BouncyCastle, test scope only) agrees
        org.bouncycastle.cert.X509CertificateHolder bc = new org.bouncycastle.cert.X509CertificateHolder(cert.getEncoded());
        assertThat(bc.isSignatureValid(new org.bouncycastle.operator.jcajce.JcaContentVerifierProviderBuilder()
                .build(cert.getPublicKey()))).isTrue();
        assertThat(org.bouncycastle.asn1.x509.BasicConstraints.fromExtensions(bc.getExtensions()).isCA()).isFalse();
        assertThat(bc.getExtensions().getExtensionOIDs()).extracting(Object::toString)
                .containsExactly("2.5.29.17", "2.5.29.19", "2.5.29.15", "2.5.29.37");
        assertThat(org.bouncycastle.asn1.x509.KeyUsage.fromExtensions(bc.getExtensions())
                .getBytes()).containsExactly((byte) 0x80);
    }

    @Test
    void ipAddressesAreEncodedWithoutLookups() {
        assertThat(ServingCertificate.ipAddress("10.1.2.255")).containsExactly(10, 1, 2, -1);
        assertThat(ServingCertificate.ipAddress("::1")).hasSize(16).endsWith(1);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> ServingCertificate.ipAddress("10.1.2.256"))
                .isInstanceOf(IllegalArgumentException.class);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> ServingCertificate.ipAddress("fe80::1%eth0"))
                .isInstanceOf(IllegalArgumentException.class);
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> ServingCertificate.selfSigned("localhost",
                List.of("fe80::1%eth0"))).isInstanceOf(IllegalStateException.class);
    }

    private static boolean handshake(X509Certificate cert, PrivateKey key, String host) throws Exception {
        java.security.KeyStore ks = java.security.KeyStore.getInstance("PKCS12");
        ks.load(null, null);
        ks.setKeyEntry("k", key, "p".toCharArray(), new X509Certificate[] { cert });
        KeyManagerFactory kmf = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
        kmf.init(ks, "p".toCharArray());
        SSLContext server = SSLContext.getInstance("TLS");
        server.init(kmf.getKeyManagers(), null, null);

        java.security.KeyStore ts = java.security.KeyStore.getInstance("PKCS12");
        ts.load(null, null);
        ts.setCertificateEntry("c", cert);
        TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
        tmf.init(ts);
        SSLContext client = SSLContext.getInstance("TLS");
        client.init(null, tmf.getTrustManagers(), null);

        try (SSLServerSocket ss = (SSLServerSocket) server.getServerSocketFactory().createServerSocket(0, 1,
                java.net.InetAddress.getLoopbackAddress())) {
            Thread t = new Thread(() -> {
                try (SSLSocket s = (SSLSocket) ss.accept()) {
                    s.startHandshake();
                    s.getOutputStream().write(1);
                } catch (Exception ignored) {
                    // the client reports the outcome
                }
            });
            t.start();
            try (SSLSocket c = (SSLSocket) client.getSocketFactory().createSocket(host, ss.getLocalPort())) {
                SSLParameters p = c.getSSLParameters();
                p.setEndpointIdentificationAlgorithm("HTTPS");
                c.setSSLParameters(p);
                c.startHandshake();
                SSLSession session = c.getSession();
                return session.isValid() && c.getInputStream().read() == 1;
            } finally {
                t.join(5000);
            }
        }
    }

    private static List<String> sans(X509Certificate cert) throws Exception {
        return cert.getSubjectAlternativeNames().stream().map(l -> String.valueOf(l.get(1))).toList();
    }

    static X509Certificate parse(String pem) throws Exception {
        return (X509Certificate) CertificateFactory.getInstance("X.509")
                .generateCertificate(new ByteArrayInputStream(pem.getBytes(StandardCharsets.US_ASCII)));
    }

    private static byte[] der(String pem) {
        String body = pem.replaceAll("-----[A-Z ]+-----", "").replaceAll("\\s", "");
        return Base64.getDecoder().decode(body);
    }
}
