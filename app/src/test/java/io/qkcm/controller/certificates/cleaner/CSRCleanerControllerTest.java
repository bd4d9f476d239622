package io.qkcm.controller.certificates.cleaner;

import static io.qkcm.testing.TestCsrs.approve;
import static io.qkcm.testing.TestCsrs.create;
import static io.qkcm.testing.TestCsrs.csrPem;
import static io.qkcm.testing.TestCsrs.get;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.security.KeyPair;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Date;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;

import jakarta.inject.Inject;

import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.certificates.v1.CertificateSigningRequest;
import io.fabric8.kubernetes.api.model.certificates.v1.CertificateSigningRequestConditionBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.qkcm.testing.TestCsrs;
import io.qkcm.testing.ControllerHarness;
import io.qkcm.testing.ManagerOffProfile;
import io.qkcm.testing.RealApiServer;
import io.qkcm.testing.RealApiServerResource;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.vertx.core.Vertx;

/**
 * certificatesigningrequest-cleaner-controller against a real API server, on a clock the test moves:
 * approved-and-issued, denied and failed requests go 1 h after their condition's lastUpdateTime, pending
 * ones 24 h after creation, issued ones as soon as their certificate has expired; the rest stay.
 */
@QuarkusTest
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
@TestProfile(ManagerOffProfile.class)
class CSRCleanerControllerTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(30);

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

    /** A clock the test sets. */
    static final class TestClock extends Clock {
        final AtomicReference<Instant> now = new AtomicReference<>(Instant.now());

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            return this;
        }

        @Override
        public Instant instant() {
            return now.get();
        }
    }

    private static String request(String name) throws Exception {
        create(client, name, "example.com/cleaner-test", List.of("client auth"), null, csrPem(TestCsrs.ecKey(), "CN=" + name));
        return name;
    }

    /** Writes a certificate valid until {@code notAfter} as the request's, as a signer would. */
    private static void issue(String name, Instant notAfter) throws Exception {
        KeyPair key = TestCsrs.rsaKey();
        X500Name subject = new X500Name("CN=" + name);
        var cert = new JcaX509v3CertificateBuilder(subject, BigInteger.ONE, Date.from(notAfter.minus(Duration.ofDays(2))),
                Date.from(notAfter), subject, key.getPublic())
                .build(new JcaContentSignerBuilder("SHA256WithRSA").build(key.getPrivate()));
        CertificateSigningRequest csr = get(client, name);
        csr.getStatus().setCertificate(Base64.getEncoder().encodeToString(
                TestCsrs.pem(cert).getBytes(StandardCharsets.US_ASCII)));
        client.certificates().v1().certificateSigningRequests().resource(csr).updateStatus();
    }

    private static void fail(String name) {
        CertificateSigningRequest csr = get(client, name);
        csr.getStatus().getConditions().add(new CertificateSigningRequestConditionBuilder().withType("Failed")
                .withStatus("True").withReason("SignerValidationFailure").withMessage("test")
                .withLastUpdateTime(Instant.now().truncatedTo(ChronoUnit.SECONDS).toString()).build());
        client.certificates().v1().certificateSigningRequests().resource(csr).updateStatus();
    }

    private static List<String> remaining(List<String> names) {
        List<String> out = new ArrayList<>();
        for (String n : names) {
            if (get(client, n) != null) {
                out.add(n);
            }
        }
        return out;
    }

    @Test
    void requestsAreDeletedPastUpstreamsDeadlines() throws Exception {
        long n = System.nanoTime();
        Instant start = Instant.now();
        String pending = request("pending-" + n);
        String approvedOnly = request("approved-not-issued-" + n);
        approve(client, approvedOnly);
        String issued = request("issued-" + n);
        approve(client, issued);
        issue(issued, start.plus(Duration.ofDays(30)));
        String issuedShort = request("issued-short-" + n);
        approve(client, issuedShort);
        issue(issuedShort, start.plus(Duration.ofMinutes(30)));
        String denied = request("denied-" + n);
        TestCsrs.deny(client, denied);
        String failed = request("failed-" + n);
        approve(client, failed);
        fail(failed);
        List<String> all = List.of(pending, approvedOnly, issued, issuedShort, denied, failed);

        TestClock clock = new TestClock();
        // 50 minutes on: only the certificate that has expired
        clock.now.set(start.plus(Duration.ofMinutes(50)));
        try (var h = ControllerHarness.create(vertx, CSRCleanerController.NAME, "certificate-controller", Map.of(),
                ctx -> new CSRCleanerController(ctx, clock)).start()) {
            await().atMost(TIMEOUT).until(() -> get(client, issuedShort) == null);
            assertThat(remaining(all)).containsExactly(pending, approvedOnly, issued, denied, failed);

            // 70 minutes on: issued, denied and failed past 1 h; approved without a certificate and pending stay
            clock.now.set(start.plus(Duration.ofMinutes(70)));
            h.controller.resync();
            await().atMost(TIMEOUT).until(() -> remaining(all).size() == 2);
            assertThat(remaining(all)).containsExactly(pending, approvedOnly);

            // past 24 h: the pending one goes, the approved one without a certificate never does
            clock.now.set(start.plus(Duration.ofHours(24)).plusSeconds(90));
            h.controller.resync();
            await().atMost(TIMEOUT).until(() -> get(client, pending) == null);
            assertThat(remaining(all)).containsExactly(approvedOnly);
        } finally {
            client.certificates().v1().certificateSigningRequests().withName(approvedOnly).delete();
        }
    }
}
