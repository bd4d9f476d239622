package io.qkcm.controller.certificates.signer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.certificates.v1.CertificateSigningRequest;
import io.fabric8.kubernetes.api.model.certificates.v1.CertificateSigningRequestCondition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.qkcm.testing.TestCsrs;
import io.qkcm.testing.RealApiServerResource;
import io.qkcm.testing.ReferenceComparison;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;

/**
 * Reference comparison: the same requests against qkcm's signing and approving controllers and against
 * upstream kube-controller-manager v1.34.4 (the reference binary, on a second real API server), both
 * with the same CA, then each request's conditions and its certificate's fields compared (serials and
 * times left out; validity compared as a duration).
 */
@QuarkusTest
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
@TestProfile(CSRReferenceComparisonTest.Profile.class)
class CSRReferenceComparisonTest {

    static final TestCsrs.TestCa CA;
    static final Map<String, String> PEMS = new TreeMap<>();

    static {
        try {
            CA = TestCsrs.ca(Files.createTempDirectory("qkcm-csr-refcmp"), "qkcm-refcmp-ca", Duration.ofDays(365));
            PEMS.put("client", TestCsrs.csrPem(TestCsrs.ecKey(), "O=system:nodes,CN=system:node:ref"));
            PEMS.put("serving", TestCsrs.csrPem(TestCsrs.rsaKey(), "O=system:nodes,CN=system:node:ref",
                    TestCsrs.dns("ref.example"), TestCsrs.ip("10.9.8.7")));
            PEMS.put("apiclient", TestCsrs.csrPem(TestCsrs.ecKey(), "CN=alice,O=dev,O=ops"));
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    public static class Profile implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("qkcm.controllers", "csrsigning,csrapproving",
                    "qkcm.cluster-signing-cert-file", CA.certFile().toString(),
                    "qkcm.cluster-signing-key-file", CA.keyFile().toString());
        }
    }

    private static final List<String> NAMES = List.of("client", "serving", "serving-bad-usage", "apiclient-bad-usage",
            "apiclient-short", "foreign");

    @Test
    void sameConditionsAndCertificatesAsUpstream() throws Exception {
        ReferenceComparison.Result r = ReferenceComparison.run("csr-refcmp", "csrsigning,csrapproving",
                List.of("--cluster-signing-cert-file=" + CA.certFile(), "--cluster-signing-key-file=" + CA.keyFile()),
                CSRReferenceComparisonTest::scenario, Duration.ofSeconds(3), CSRReferenceComparisonTest::snapshot,
                Path.of("target/csr-reference-comparison.txt"));
        assertThat(r.mine()).containsKey("client.certificate").containsKey("serving.certificate")
                .containsKey("apiclient-short.certificate");
        assertThat(r.diffs()).as("field-level differences from upstream").isEmpty();
    }

    static void scenario(KubernetesClient c, String prefix) throws Exception {
        // approved by the approving controller (its requester, the admin, may create nodeclient requests)
        TestCsrs.create(c, prefix + "-client", "kubernetes.io/kube-apiserver-client-kubelet",
                List.of("digital signature", "key encipherment", "client auth"), 3600, PEMS.get("client"));
        for (String[] s : new String[][] {
                { "serving", "kubernetes.io/kubelet-serving", "digital signature,key encipherment,server auth", "serving" },
                { "serving-bad-usage", "kubernetes.io/kubelet-serving", "digital signature,client auth", "serving" },
                { "apiclient-bad-usage", "kubernetes.io/kube-apiserver-client", "client auth,code signing", "apiclient" },
                { "apiclient-short", "kubernetes.io/kube-apiserver-client", "client auth,digital signature", "apiclient" },
                { "foreign", "example.com/other", "client auth", "apiclient" } }) {
            TestCsrs.create(c, prefix + "-" + s[0], s[1], Arrays.asList(s[2].split(",")),
                    s[0].equals("apiclient-short") ? 700 : null, PEMS.get(s[3]));
            TestCsrs.approve(c, prefix + "-" + s[0]);
        }
        for (String n : NAMES) {
            if (n.equals("foreign")) {
                continue;
            }
            await().atMost(Duration.ofSeconds(60)).until(() -> TestCsrs.get(c, prefix + "-" + n),
                    csr -> TestCsrs.certificatePem(csr) != null || csr.getStatus().getConditions().stream()
                            .anyMatch(x -> x.getType().equals("Failed")));
        }
    }

    static Map<String, Object> snapshot(KubernetesClient c, String prefix) throws Exception {
        Map<String, Object> out = new TreeMap<>();
        for (String n : NAMES) {
            CertificateSigningRequest csr = TestCsrs.get(c, prefix + "-" + n);
            List<String> conditions = new ArrayList<>();
            for (CertificateSigningRequestCondition x : csr.getStatus().getConditions()) {
                conditions.add(x.getType() + "/" + x.getStatus() + "/" + x.getReason() + "/" + x.getMessage());
            }
            out.put(n + ".conditions", conditions);
            String pem = TestCsrs.certificatePem(csr);
            if (pem == null) {
                continue;
            }
            X509Certificate cert = TestCsrs.parse(pem);
            Map<String, Object> f = new TreeMap<>();
            f.put("version", cert.getVersion());
            f.put("subject", cert.getSubjectX500Principal().getName());
            f.put("issuer", cert.getIssuerX500Principal().getName());
            f.put("sigAlg", cert.getSigAlgOID());
            f.put("validitySeconds", (cert.getNotAfter().getTime() - cert.getNotBefore().getTime()) / 1000);
            f.put("keyUsage", cert.getKeyUsage() == null ? null : Arrays.toString(cert.getKeyUsage()));
            f.put("extKeyUsage", cert.getExtendedKeyUsage());
            f.put("basicConstraints", cert.getBasicConstraints());
            f.put("san", cert.getSubjectAlternativeNames() == null ? null : cert.getSubjectAlternativeNames().toString());
            f.put("critical", new TreeSet<>(cert.getCriticalExtensionOIDs()));
            f.put("nonCritical", cert.getNonCriticalExtensionOIDs() == null ? null
                    : new TreeSet<>(cert.getNonCriticalExtensionOIDs()));
            f.put("authorityKeyId", io.qkcm.pki.Der.hex(cert.getExtensionValue("2.5.29.35")));
            f.put("publicKey", io.qkcm.pki.Der.hex(cert.getPublicKey().getEncoded()));
            f.put("serialBits<=128", cert.getSerialNumber().bitLength() <= 128);
            out.put(n + ".certificate", f);
        }
        return out;
    }
}
