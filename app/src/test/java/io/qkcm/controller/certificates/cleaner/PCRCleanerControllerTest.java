package io.qkcm.controller.certificates.cleaner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.charset.StandardCharsets;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.Signature;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;

import jakarta.inject.Inject;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConditionBuilder;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.qkcm.testing.AlphaApisApiServer;
import io.qkcm.testing.ControllerHarness;
import io.qkcm.testing.ManagerOffProfile;
import io.qkcm.testing.QueueProbe;
import io.qkcm.testing.RealApiServer;
import io.qkcm.testing.RealApiServerResource;
import io.qkcm.testing.TestNamespaces;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.vertx.core.Vertx;

/**
 * podcertificaterequest-cleaner-controller against a real API server serving certificates.k8s.io/v1alpha1:
 * upstream's table (pending and terminal requests, one second inside and outside the 15 minute threshold)
 * through handle on a set clock, then the running controller's periodic pass.
 */
@QuarkusTest
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
@TestProfile(ManagerOffProfile.class)
class PCRCleanerControllerTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final Duration THRESHOLD = Duration.ofMinutes(15);

    @Inject
    Vertx vertx;

    static RealApiServer server;
    static KubernetesClient client;

    @BeforeAll
    static void setUp() {
        server = AlphaApisApiServer.get();
        client = server.newClient();
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

    private ControllerHarness<PCRCleanerController> harness(TestClock clock) {
        return ControllerHarness.create(vertx, PCRCleanerController.NAME, "podcertificaterequestcleaner",
                Map.of("qkcm.kubeconfig", server.kubeconfig().toString()),
                ctx -> new PCRCleanerController(ctx, clock, THRESHOLD, Duration.ofMinutes(1)));
    }

    /** A request the API server accepts: an Ed25519 key and its signature over the pod UID as proof of possession. */
    private static PodCertificateRequest create(String namespace, String name) throws Exception {
        String podUID = UUID.randomUUID().toString();
        KeyPair key = KeyPairGenerator.getInstance("Ed25519").generateKeyPair();
        Signature signer = Signature.getInstance("Ed25519");
        signer.initSign(key.getPrivate());
        signer.update(podUID.getBytes(StandardCharsets.UTF_8));
        PodCertificateRequest pcr = new PodCertificateRequest();
        pcr.setMetadata(new ObjectMetaBuilder().withNamespace(namespace).withName(name).build());
        PodCertificateRequest.Spec spec = new PodCertificateRequest.Spec();
        spec.signerName = "foo.com/abc";
        spec.podName = "pod-1";
        spec.podUID = podUID;
        spec.serviceAccountName = "sa-1";
        spec.serviceAccountUID = "sa-uid-1";
        spec.nodeName = "node-1";
        spec.nodeUID = "node-uid-1";
        spec.maxExpirationSeconds = 86400;
        spec.pkixPublicKey = key.getPublic().getEncoded();
        spec.proofOfPossession = signer.sign();
        pcr.setSpec(spec);
        pcr.setStatus(null);
        return client.resources(PodCertificateRequest.class).inNamespace(namespace).resource(pcr).create();
    }

    /** Denies the request, as its signer would: a terminal request. */
    private static PodCertificateRequest deny(PodCertificateRequest pcr) {
        Condition denied = new ConditionBuilder().withType("Denied").withStatus("True").withReason("Foo")
                .withMessage("abc").withLastTransitionTime(Instant.now().truncatedTo(java.time.temporal.ChronoUnit.SECONDS)
                        .toString()).build();
        pcr.getStatus().conditions = List.of(denied);
        return client.resources(PodCertificateRequest.class).inNamespace(pcr.getMetadata().getNamespace())
                .resource(pcr).updateStatus();
    }

    private static boolean exists(PodCertificateRequest pcr) {
        return client.resources(PodCertificateRequest.class).inNamespace(pcr.getMetadata().getNamespace())
                .withName(pcr.getMetadata().getName()).get() != null;
    }

    private static Instant created(PodCertificateRequest pcr) {
        return Instant.parse(pcr.getMetadata().getCreationTimestamp());
    }

    record Case(String desc, boolean terminal, Duration age, boolean deleted) {
    }

    @Test
    void upstreamsTable() throws Exception {
        String ns = TestNamespaces.newNamespace(client, "pcr-cleaner");
        // upstream: now 00:30:00, created 00:15:01 (kept) or 00:14:59 (deleted)
        List<Case> cases = List.of(
                new Case("Pending request within the threshold should be left alone", false, Duration.ofSeconds(899), false),
                new Case("Pending request outside the threshold should be deleted", false, Duration.ofSeconds(901), true),
                new Case("Terminal request within the threshold should be left alone", true, Duration.ofSeconds(899), false),
                new Case("Terminal request outside the threshold should be deleted", true, Duration.ofSeconds(901), true),
                // upstream deletes once now is not before creation + threshold
                new Case("Request exactly at the threshold is deleted", false, THRESHOLD, true));
        TestClock clock = new TestClock();
        try (var h = harness(clock)) {
            int i = 0;
            for (Case c : cases) {
                PodCertificateRequest pcr = create(ns, "pcr-" + i++);
                if (c.terminal()) {
                    pcr = deny(pcr);
                    assertThat(pcr.getStatus().conditions).extracting(Condition::getType).containsExactly("Denied");
                }
                clock.now.set(created(pcr).plus(c.age()));
                h.controller.handle(pcr);
                assertThat(exists(pcr)).as(c.desc()).isEqualTo(!c.deleted());
            }
        }
    }

    @Test
    void alreadyDeletedRequestIsNotAnError() throws Exception {
        String ns = TestNamespaces.newNamespace(client, "pcr-cleaner");
        PodCertificateRequest pcr = create(ns, "gone");
        client.resources(PodCertificateRequest.class).inNamespace(ns).withName("gone").delete();
        await().atMost(TIMEOUT).until(() -> !exists(pcr));
        TestClock clock = new TestClock();
        clock.now.set(created(pcr).plus(Duration.ofHours(1)));
        try (var h = harness(clock)) {
            h.controller.handle(pcr); // NotFound: nothing to clean, no exception
        }
    }

    @Test
    void replacedRequestOfTheSameNameIsNotDeletedByTheOldOnesPass() throws Exception {
        String ns = TestNamespaces.newNamespace(client, "pcr-cleaner");
        PodCertificateRequest old = create(ns, "same");
        client.resources(PodCertificateRequest.class).inNamespace(ns).withName("same").delete();
        await().atMost(TIMEOUT).until(() -> !exists(old));
        PodCertificateRequest replacement = create(ns, "same");
        TestClock clock = new TestClock();
        clock.now.set(created(old).plus(Duration.ofHours(1)));
        try (var h = harness(clock)) {
            // the UID precondition: the old request's stale copy cannot delete its successor
            assertThat(catchConflict(() -> h.controller.handle(old))).isTrue();
        }
        assertThat(exists(replacement)).isTrue();
    }

    private static boolean catchConflict(Runnable r) {
        try {
            r.run();
            return false;
        } catch (io.fabric8.kubernetes.client.KubernetesClientException e) {
            return e.getCode() == 409;
        }
    }

    @Test
    void periodicPassDeletesOldRequestsAndKeepsYoungOnes() throws Exception {
        String ns = TestNamespaces.newNamespace(client, "pcr-cleaner");
        PodCertificateRequest older = deny(create(ns, "older"));
        // creation timestamps have a resolution of one second: the younger one is created two seconds later
        await().pollDelay(Duration.ofMillis(2100)).until(() -> true);
        PodCertificateRequest younger = create(ns, "younger");
        assertThat(Duration.between(created(older), created(younger))).isGreaterThanOrEqualTo(Duration.ofSeconds(2));
        TestClock clock = new TestClock();
        // one second inside the threshold for the younger, past it for the older
        clock.now.set(created(younger).plus(THRESHOLD).minusSeconds(1));
        try (var h = harness(clock)) {
            QueueProbe probe = QueueProbe.of(h.context.metrics(), "pcr-cleaner");
            var informer = h.informers.informerFor(PodCertificateRequest.class);
            h.start();
            await().atMost(TIMEOUT).until(() -> !exists(older));
            // a pass that has seen the younger request in its cache, finished: it is still there
            QueueProbe.Mark mark = probe.mark();
            h.controller.resync();
            probe.awaitProcessedSince(mark, QueueProbe.cacheHolds(informer, younger, false), TIMEOUT);
            assertThat(exists(younger)).isTrue();

            // a second past the threshold, the next pass deletes it
            clock.now.set(created(younger).plus(THRESHOLD).plusSeconds(1));
            h.controller.resync();
            await().atMost(TIMEOUT).until(() -> !exists(younger));
        }
    }
}
