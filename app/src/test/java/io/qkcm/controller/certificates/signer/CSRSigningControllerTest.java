package io.qkcm.controller.certificates.signer;

import static io.qkcm.testing.TestCsrs.approve;
import static io.qkcm.testing.TestCsrs.certificatePem;
import static io.qkcm.testing.TestCsrs.create;
import static io.qkcm.testing.TestCsrs.csrPem;
import static io.qkcm.testing.TestCsrs.dns;
import static io.qkcm.testing.TestCsrs.get;
import static io.qkcm.testing.TestCsrs.ip;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Date;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.logging.Level;

import jakarta.inject.Inject;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.fabric8.kubernetes.api.model.authentication.SelfSubjectReview;
import io.fabric8.kubernetes.api.model.certificates.v1.CertificateSigningRequest;
import io.fabric8.kubernetes.api.model.certificates.v1.CertificateSigningRequestCondition;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.qkcm.testing.TestCsrs;
import io.qkcm.testing.ControllerHarness;
import io.qkcm.testing.LogCapture;
import io.qkcm.testing.ManagerOffProfile;
import io.qkcm.testing.RealApiServer;
import io.qkcm.testing.RealApiServerResource;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.vertx.core.Vertx;

/**
 * certificatesigningrequest-signing-controller against a real API server: certificates verified against
 * their CA (openssl and the JDK's PKIX), a kubelet client certificate that authenticates to the API server
 * (whose --client-ca-file is the signing CA), upstream's Failed conditions for requests a signer refuses,
 * requests of other signers left alone, and the CA files
 * reloaded when they change (the last good pair kept when they stop loading, nothing of them logged).
 */
@QuarkusTest
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
@TestProfile(ManagerOffProfile.class)
class CSRSigningControllerTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final List<String> KUBELET_CLIENT_USAGES = List.of("digital signature", "key encipherment", "client auth");
    private static final List<String> KUBELET_SERVING_USAGES = List.of("digital signature", "key encipherment", "server auth");

    @Inject
    Vertx vertx;

    static KubernetesClient client;

    @BeforeAll
    static void setUp() {
        client = RealApiServer.get().newClient();
    }

    @AfterAll
    static void tearDown() {
        client.close();
    }

    private ControllerHarness<CSRSigningController> signer(Map<String, String> flags) throws InterruptedException {
        Map<String, String> config = new HashMap<>();
        flags.forEach((k, v) -> config.put("qkcm." + k, v));
        return ControllerHarness.create(vertx, CSRSigningController.NAME, "certificate-controller", config,
                ctx -> CertificateSigningRequestSigningControllerDescriptor.newController(ctx, Clock.systemUTC())).start();
    }

    private static String name(String prefix) {
        return prefix + "-" + System.nanoTime();
    }

    private static CertificateSigningRequest awaitCertificate(String name) {
        return awaitCertificate(client, name);
    }

    private static CertificateSigningRequest awaitCertificate(KubernetesClient client, String name) {
        return await().atMost(TIMEOUT).until(() -> get(client, name), c -> certificatePem(c) != null);
    }

    private static CertificateSigningRequestCondition awaitFailed(String name) {
        return awaitFailed(client, name);
    }

    private static CertificateSigningRequestCondition awaitFailed(KubernetesClient client, String name) {
        CertificateSigningRequest csr = await().atMost(TIMEOUT).until(() -> get(client, name),
                c -> c.getStatus() != null && c.getStatus().getConditions().stream().anyMatch(x -> x.getType().equals("Failed")));
        assertThat(certificatePem(csr)).isNull();
        return csr.getStatus().getConditions().stream().filter(x -> x.getType().equals("Failed")).findFirst().orElseThrow();
    }

    @Test
    void kubeletClientCertificateIsIssuedAndAuthenticatesAsTheNode() throws Exception {
        // an API server whose --client-ca-file is the signing CA
        RealApiServer server = RealApiServer.withSigningClientCa();
        try (KubernetesClient client = server.newClient();
                var h = signer(Map.of("kubeconfig", server.kubeconfig().toString(),
                        "cluster-signing-cert-file", server.clientCaCertFile().toString(),
                        "cluster-signing-key-file", server.clientCaKeyFile().toString()))) {
            assertThat(h.controller.signerNames()).containsExactlyInAnyOrder("kubernetes.io/kubelet-serving",
                    "kubernetes.io/kube-apiserver-client-kubelet", "kubernetes.io/kube-apiserver-client",
                    "kubernetes.io/legacy-unknown");
            KeyPair key = TestCsrs.rsaKey();
            String node = name("csr-node");
            String csrName = name("node-client");
            create(client, csrName, "kubernetes.io/kube-apiserver-client-kubelet", KUBELET_CLIENT_USAGES, 3600,
                    csrPem(key, "O=system:nodes,CN=system:node:" + node));
            // not approved: not signed
            Thread.sleep(1000);
            assertThat(certificatePem(get(client, csrName))).isNull();
            Instant approvedAt = Instant.now();
            String kubectl = TestCsrs.kubectlApprove(client, server.kubeconfig(), csrName);
            if (kubectl != null) {
                assertThat(kubectl).contains(csrName).contains("approved");
            }
            String pem = certificatePem(awaitCertificate(client, csrName));
            X509Certificate cert = TestCsrs.parse(pem);
            X509Certificate ca = TestCsrs.parse(Files.readString(server.clientCaCertFile()));

            assertThat(cert.getSubjectX500Principal().getName()).isEqualTo("CN=system:node:" + node + ",O=system:nodes");
            assertThat(cert.getIssuerX500Principal()).isEqualTo(ca.getSubjectX500Principal());
            assertThat(cert.getPublicKey().getEncoded()).isEqualTo(key.getPublic().getEncoded());
            // short-lived (1 h < 8 h): NotAfter = now + TTL, NotBefore backdated 5 minutes
            assertThat(Duration.between(cert.getNotBefore().toInstant(), cert.getNotAfter().toInstant()))
                    .isEqualTo(Duration.ofMinutes(65));
            assertThat(cert.getNotBefore().toInstant()).isBetween(approvedAt.minusSeconds(5 * 60 + 2),
                    Instant.now().minusSeconds(5 * 60 - 1));
            assertThat(cert.getKeyUsage()).startsWith(true, false, true); // digitalSignature, keyEncipherment
            assertThat(cert.getExtendedKeyUsage()).containsExactly("1.3.6.1.5.5.7.3.2");
            assertThat(cert.getBasicConstraints()).isEqualTo(-1);
            assertThat(cert.getCriticalExtensionOIDs()).containsExactlyInAnyOrder("2.5.29.15", "2.5.29.19");
            assertThat(cert.getSerialNumber().bitLength()).isBetween(100, 128);
            TestCsrs.pkixValidate(ca, cert, new Date());

            // the issued certificate authenticates to the API server as the node
            Config config = Config.fromKubeconfig(server.kubeconfigYaml());
            config.setClientCertFile(null);
            config.setClientKeyFile(null);
            config.setClientCertData(Base64.getEncoder().encodeToString(pem.getBytes(StandardCharsets.US_ASCII)));
            config.setClientKeyData(Base64.getEncoder().encodeToString(
                    TestCsrs.pem(key.getPrivate()).getBytes(StandardCharsets.US_ASCII)));
            config.setClientKeyAlgo("RSA");
            try (KubernetesClient asNode = new KubernetesClientBuilder().withConfig(config).build()) {
                SelfSubjectReview review = asNode.authentication().v1().selfSubjectReviews().create(new SelfSubjectReview());
                assertThat(review.getStatus().getUserInfo().getUsername()).isEqualTo("system:node:" + node);
                assertThat(review.getStatus().getUserInfo().getGroups()).contains("system:nodes", "system:authenticated");
            }

            // kube-apiserver-client: a server usage is refused with upstream's condition
            String badUsage = name("client-bad-usage");
            create(client, badUsage, "kubernetes.io/kube-apiserver-client", List.of("digital signature", "server auth"),
                    null, csrPem(TestCsrs.ecKey(), "CN=someone"));
            approve(client, badUsage);
            CertificateSigningRequestCondition failed = awaitFailed(client, badUsage);
            assertThat(failed.getStatus()).isEqualTo("True");
            assertThat(failed.getReason()).isEqualTo("SignerValidationFailure");
            assertThat(failed.getMessage()).isEqualTo("invalid usage for client certificate: server auth");
            assertThat(failed.getLastUpdateTime()).isNotEmpty();

            // kube-apiserver-client-kubelet: a DNS name is not allowed
            String withDns = name("node-client-dns");
            create(client, withDns, "kubernetes.io/kube-apiserver-client-kubelet", KUBELET_CLIENT_USAGES, null,
                    csrPem(TestCsrs.ecKey(), "O=system:nodes,CN=system:node:" + node, dns("node.example")));
            approve(client, withDns);
            assertThat(awaitFailed(client, withDns).getMessage()).isEqualTo("DNS subjectAltNames are not allowed");

            // an ECDSA request for kube-apiserver-client is signed, 10 minutes at least
            String shortLived = name("client-short");
            create(client, shortLived, "kubernetes.io/kube-apiserver-client", List.of("client auth"), 600,
                    csrPem(TestCsrs.ecKey(), "CN=short,O=team-a,O=team-b"));
            approve(client, shortLived);
            X509Certificate shortCert = TestCsrs.parse(certificatePem(awaitCertificate(client, shortLived)));
            assertThat(Duration.between(shortCert.getNotBefore().toInstant(), shortCert.getNotAfter().toInstant()))
                    .isEqualTo(Duration.ofMinutes(15));
            assertThat(shortCert.getKeyUsage()).isNull();
            TestCsrs.pkixValidate(ca, shortCert, new Date());
        }
    }

    @Test
    void servingSignerFromItsOwnFilesVerifiesWithOpensslAndLeavesOtherSignersAlone(@TempDir Path dir) throws Exception {
        TestCsrs.TestCa ca = TestCsrs.ca(dir.resolve("serving"), "qkcm-test-serving-ca", Duration.ofDays(30));
        try (var h = signer(Map.of("cluster-signing-kubelet-serving-cert-file", ca.certFile().toString(),
                "cluster-signing-kubelet-serving-key-file", ca.keyFile().toString(),
                "cluster-signing-duration", "2h"))) {
            assertThat(h.controller.signerNames()).containsExactly("kubernetes.io/kubelet-serving");
            // signers qkcm does not run here, or does not own at all: left alone
            String foreign = name("foreign");
            create(client, foreign, "example.com/my-signer", List.of("client auth"), null, csrPem(TestCsrs.ecKey(), "CN=x"));
            approve(client, foreign);
            String notRunning = name("not-running");
            create(client, notRunning, "kubernetes.io/kube-apiserver-client", List.of("client auth"), null,
                    csrPem(TestCsrs.ecKey(), "CN=y"));
            approve(client, notRunning);
            String disallowed = name("serving-client-usage");
            create(client, disallowed, "kubernetes.io/kubelet-serving",
                    List.of("digital signature", "key encipherment", "client auth"), null,
                    csrPem(TestCsrs.ecKey(), "O=system:nodes,CN=system:node:s", dns("s.example")));
            approve(client, disallowed);
            String noSan = name("serving-no-san");
            create(client, noSan, "kubernetes.io/kubelet-serving", KUBELET_SERVING_USAGES, null,
                    csrPem(TestCsrs.ecKey(), "O=system:nodes,CN=system:node:s"));
            approve(client, noSan);

            String serving = name("serving");
            KeyPair key = TestCsrs.ecKey();
            Instant approvedAt = Instant.now();
            create(client, serving, "kubernetes.io/kubelet-serving", List.of("digital signature", "server auth"), 86400,
                    csrPem(key, "O=system:nodes,CN=system:node:s1", dns("s1.example"), ip("10.1.2.3")));
            approve(client, serving);
            String pem = certificatePem(awaitCertificate(serving));
            X509Certificate cert = TestCsrs.parse(pem);
            String verify = TestCsrs.opensslVerify(ca.certFile(), pem, "-purpose", "sslserver");
            if (verify != null) {
                assertThat(verify).startsWith("exit 0: ").endsWith(": OK");
            }
            TestCsrs.pkixValidate(ca.certificate(), cert, new Date());
            // expirationSeconds (24 h) capped by --cluster-signing-duration (2 h, short-lived: no backdating of NotAfter)
            assertThat(Duration.between(cert.getNotBefore().toInstant(), cert.getNotAfter().toInstant()))
                    .isEqualTo(Duration.ofMinutes(125));
            assertThat(cert.getNotBefore().toInstant()).isAfter(approvedAt.minusSeconds(5 * 60 + 2));
            assertThat(cert.getSubjectAlternativeNames()).containsExactlyInAnyOrder(List.of(2, "s1.example"),
                    List.of(7, "10.1.2.3"));
            assertThat(cert.getExtendedKeyUsage()).containsExactly("1.3.6.1.5.5.7.3.1");
            // the CA's subject key id is the certificate's authority key id
            byte[] aki = io.qkcm.pki.Der.decode(io.qkcm.pki.Der.decode(cert.getExtensionValue("2.5.29.35")).octetString())
                    .reader().next().contents();
            byte[] ski = io.qkcm.pki.Der.decode(io.qkcm.pki.Der.decode(ca.certificate().getExtensionValue("2.5.29.14"))
                    .octetString()).octetString();
            assertThat(aki).isEqualTo(ski);

            assertThat(awaitFailed(disallowed).getMessage())
                    .isEqualTo("usages did not match [digital signature key encipherment server auth]");
            assertThat(awaitFailed(noSan).getMessage()).isEqualTo("DNS or IP subjectAltName is required");
            for (String untouched : List.of(foreign, notRunning)) {
                CertificateSigningRequest csr = get(client, untouched);
                assertThat(certificatePem(csr)).as(untouched).isNull();
                assertThat(csr.getStatus().getConditions()).as(untouched).extracting(CertificateSigningRequestCondition::getType)
                        .containsExactly("Approved");
            }
        }
    }

    @Test
    void changedCaFilesAreUsedAndUnloadableOnesKeepTheLastGoodPair(@TempDir Path dir) throws Exception {
        TestCsrs.TestCa first = TestCsrs.ca(dir.resolve("first"), "qkcm-test-ca-first", Duration.ofDays(30));
        TestCsrs.TestCa second = TestCsrs.ca(dir.resolve("second"), "qkcm-test-ca-second", Duration.ofDays(30));
        Path certFile = dir.resolve("ca.crt");
        Path keyFile = dir.resolve("ca.key");
        Files.copy(first.certFile(), certFile);
        Files.copy(first.keyFile(), keyFile);
        try (var h = signer(Map.of("cluster-signing-cert-file", certFile.toString(), "cluster-signing-key-file",
                keyFile.toString()));
                LogCapture logs = LogCapture.start("io.qkcm.controller.certificates", Level.INFO)) {
            assertThat(issuerOf(signOne("ca-first"))).isEqualTo("CN=qkcm-test-ca-first");

            Files.copy(second.certFile(), certFile, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            Files.copy(second.keyFile(), keyFile, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            X509Certificate bySecond = TestCsrs.parse(signOne("ca-second"));
            assertThat(bySecond.getIssuerX500Principal().getName()).isEqualTo("CN=qkcm-test-ca-second");
            TestCsrs.pkixValidate(second.certificate(), bySecond, new Date());

            // a key that no longer loads (or matches): the last good pair signs on, the error is logged once
            String secretish = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQDqkcmsecret";
            Files.writeString(keyFile, "-----BEGIN PRIVATE KEY-----\n" + secretish + "\n-----END PRIVATE KEY-----\n");
            assertThat(issuerOf(signOne("ca-bad-key"))).isEqualTo("CN=qkcm-test-ca-second");
            Files.delete(keyFile);
            assertThat(issuerOf(signOne("ca-no-key"))).isEqualTo("CN=qkcm-test-ca-second");
            assertThat(logs.lines()).anyMatch(l -> l.contains("tls: failed to parse private key"));
            assertThat(logs.lines()).anyMatch(l -> l.contains("open " + keyFile + ": no such file or directory"));
            assertThat(logs.lines().stream().filter(l -> l.contains("tls: failed to parse private key"))).hasSize(1);
            String secondKey = Files.readString(second.keyFile());
            String keyBody = secondKey.split("\n")[1];
            assertThat(logs.lines()).noneMatch(l -> l.contains(secretish) || l.contains(keyBody));

            // the pair back: signed again by the file's CA
            Files.copy(first.keyFile(), keyFile);
            Files.copy(first.certFile(), certFile, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            assertThat(issuerOf(signOne("ca-first-again"))).isEqualTo("CN=qkcm-test-ca-first");
        }
    }

    private static String signOne(String prefix) throws Exception {
        String n = name(prefix);
        create(client, n, "kubernetes.io/kube-apiserver-client", List.of("client auth"), null,
                csrPem(TestCsrs.ecKey(), "CN=" + prefix));
        approve(client, n);
        return certificatePem(awaitCertificate(n));
    }

    private static String issuerOf(String pem) throws Exception {
        return TestCsrs.parse(pem).getIssuerX500Principal().getName();
    }
}
