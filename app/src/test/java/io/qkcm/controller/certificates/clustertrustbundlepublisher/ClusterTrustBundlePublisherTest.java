package io.qkcm.controller.certificates.clustertrustbundlepublisher;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

import jakarta.inject.Inject;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.certificates.v1beta1.ClusterTrustBundle;
import io.fabric8.kubernetes.api.model.certificates.v1beta1.ClusterTrustBundleBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.qkcm.testing.TestCsrs;
import io.qkcm.testing.AlphaApisApiServer;
import io.qkcm.testing.Conflicts;
import io.qkcm.testing.ControllerHarness;
import io.qkcm.testing.ManagerOffProfile;
import io.qkcm.testing.QueueProbe;
import io.qkcm.testing.RealApiServer;
import io.qkcm.testing.RealApiServerResource;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.vertx.core.Vertx;

/**
 * kube-apiserver-serving-clustertrustbundle-publisher-controller against a real API server serving
 * certificates.k8s.io/v1beta1: upstream's TestCTBPublisherSync table (each case under a signer of its own,
 * its outcome read back from the API server), the running controller putting its bundle back, and the
 * discovery that picks the API version.
 */
@QuarkusTest
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
@TestProfile(ManagerOffProfile.class)
class ClusterTrustBundlePublisherTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    @Inject
    Vertx vertx;

    static RealApiServer server;
    static KubernetesClient client;
    static String ca;
    static String otherCa;
    static Path caFile;

    @BeforeAll
    static void setUp() throws Exception {
        server = AlphaApisApiServer.get();
        client = server.newClient();
        Path dir = Files.createTempDirectory("ctb-publisher");
        caFile = TestCsrs.ca(dir.resolve("ca"), "test-ca", Duration.ofDays(1)).certFile();
        ca = Files.readString(caFile);
        otherCa = TestCsrs.pem(TestCsrs.ca(dir.resolve("other"), "other-ca", Duration.ofDays(1)).certificate());
    }

    @AfterAll
    static void tearDown() {
        client.close();
    }

    private ControllerHarness<ClusterTrustBundlePublisher<ClusterTrustBundle>> harness(String signer) {
        return ControllerHarness.create(vertx, ClusterTrustBundlePublisher.NAME,
                "kube-apiserver-serving-clustertrustbundle-publisher",
                Map.of("qkcm.kubeconfig", server.kubeconfig().toString()),
                ctx -> ClusterTrustBundlePublisher.beta(ctx, signer, ca));
    }

    private static ClusterTrustBundle bundle(String name, String signer, String trustBundle) {
        return client.resource(new ClusterTrustBundleBuilder().withMetadata(new ObjectMetaBuilder().withName(name).build())
                .withNewSpec().withSignerName(signer).withTrustBundle(trustBundle).endSpec().build()).create();
    }

    private static List<ClusterTrustBundle> bundlesOf(String signer) {
        return client.resources(ClusterTrustBundle.class).list().getItems().stream()
                .filter(b -> signer.equals(b.getSpec().getSignerName())).toList();
    }

    private static ClusterTrustBundle get(String name) {
        return client.resources(ClusterTrustBundle.class).withName(name).get();
    }

    @Test
    void bundleNameIsTheSignerAndTwelveBytesOfTheBundlesHash() throws Exception {
        byte[] hash = MessageDigest.getInstance("SHA-256").digest(ca.getBytes(java.nio.charset.StandardCharsets.UTF_8));
        assertThat(ClusterTrustBundlePublisher.constructBundleName("kubernetes.io/kube-apiserver-serving", ca))
                .isEqualTo("kubernetes.io:kube-apiserver-serving:" + HexFormat.of().formatHex(hash).substring(0, 24));
    }

    /** One case of upstream's table: the bundles there before the sync, and what the API server holds after it. */
    private void syncCase(String desc, Consumer<String> existing, Consumer<String> expect) throws Exception {
        String signer = "test.test/signer-" + System.nanoTime();
        existing.accept(signer);
        try (var h = harness(signer)) {
            h.startInformers();
            var informer = h.informers.informerFor(ClusterTrustBundle.class);
            for (ClusterTrustBundle b : client.resources(ClusterTrustBundle.class).list().getItems()) {
                await().atMost(TIMEOUT).until(QueueProbe.cacheHolds(informer, b, false)::getAsBoolean);
            }
            h.controller.syncClusterTrustBundle();
        }
        expect.accept(signer);
    }

    private static String prefix(String signer) {
        return signer.replace("/", ":") + ":";
    }

    private static String expectedName(String signer) {
        return ClusterTrustBundlePublisher.constructBundleName(signer, ca);
    }

    private static void onlyThePublishedBundle(String signer) {
        assertThat(bundlesOf(signer)).singleElement().satisfies(b -> {
            assertThat(b.getMetadata().getName()).isEqualTo(expectedName(signer));
            assertThat(b.getSpec().getTrustBundle()).isEqualTo(ca);
        });
    }

    @Test
    void noCTBsExist() throws Exception {
        syncCase("no CTBs exist", signer -> {
        }, ClusterTrustBundlePublisherTest::onlyThePublishedBundle);
    }

    @Test
    void noCTBsForTheCurrentSignerExist() throws Exception {
        String n = Long.toString(System.nanoTime());
        syncCase("no CTBs for the current signer exist", signer -> {
            bundle("nosigner-" + n, "", otherCa);
            bundle("other.test:signer:one-" + n, "other.test/signer", otherCa);
        }, signer -> {
            onlyThePublishedBundle(signer);
            // bundles of other signers, or of none, are not this publisher's
            assertThat(get("nosigner-" + n)).isNotNull();
            assertThat(get("other.test:signer:one-" + n)).isNotNull();
        });
    }

    @Test
    void ctbForTheSignerExistsWithDifferentContent() throws Exception {
        String[] uid = new String[1];
        syncCase("CTB for the signer exists with different content", signer -> {
            uid[0] = bundle(expectedName(signer), signer, otherCa).getMetadata().getUid();
        }, signer -> {
            onlyThePublishedBundle(signer);
            // updated in place, not replaced
            assertThat(get(expectedName(signer)).getMetadata().getUid()).isEqualTo(uid[0]);
        });
    }

    @Test
    void multipleCTBsForTheSigner() throws Exception {
        syncCase("multiple CTBs for the signer", signer -> {
            bundle(expectedName(signer), signer, ca);
            bundle(prefix(signer) + "name2", signer, ca);
        }, ClusterTrustBundlePublisherTest::onlyThePublishedBundle);
    }

    @Test
    void multipleCTBsForTheSignerTheOneWithTheProperNameNeedsChanging() throws Exception {
        syncCase("multiple CTBs for the signer - the one with the proper name needs changing", signer -> {
            bundle(expectedName(signer), signer, otherCa);
            bundle(prefix(signer) + "name2", signer, ca);
        }, ClusterTrustBundlePublisherTest::onlyThePublishedBundle);
    }

    @Test
    void anotherCTBWithADifferentNameExistsForTheSigner() throws Exception {
        syncCase("another CTB with a different name exists for the signer", signer -> {
            bundle(prefix(signer) + "preexisting", signer, ca);
        }, ClusterTrustBundlePublisherTest::onlyThePublishedBundle);
    }

    @Test
    void ctbAtTheCorrectStateIsANoop() throws Exception {
        String[] rv = new String[1];
        syncCase("CTB at the correct state - noop", signer -> {
            rv[0] = bundle(expectedName(signer), signer, ca).getMetadata().getResourceVersion();
        }, signer -> {
            onlyThePublishedBundle(signer);
            assertThat(get(expectedName(signer)).getMetadata().getResourceVersion()).isEqualTo(rv[0]);
        });
    }

    @Test
    void runningPublisherKeepsTheKubeAPIServerServingBundle() throws Exception {
        String signer = KubeAPIServerClusterTrustBundlePublisherControllerDescriptor.SIGNER_NAME;
        String name = expectedName(signer);
        try (var h = harness(signer).start()) {
            await().atMost(TIMEOUT).until(() -> get(name) != null);
            onlyThePublishedBundle(signer);
            // clustertrustbundle_publisher_sync_total{code="200"} and its duration histogram
            await().atMost(TIMEOUT).until(() -> {
                var c = h.context.metrics().find("clustertrustbundle.publisher.sync").tag("code", "200").counter();
                return c != null && c.count() >= 1;
            });
            assertThat(h.context.metrics().find("clustertrustbundle.publisher.sync.duration.seconds").tag("code", "200")
                    .summary().count()).isGreaterThanOrEqualTo(1);

            // edited: put back
            Conflicts.retry(() -> client.resources(ClusterTrustBundle.class).withName(name)
                    .edit(b -> {
                        b.getSpec().setTrustBundle(otherCa);
                        return b;
                    }));
            await().atMost(TIMEOUT).until(() -> ca.equals(get(name).getSpec().getTrustBundle()));

            // deleted: recreated
            String uid = get(name).getMetadata().getUid();
            client.resources(ClusterTrustBundle.class).withName(name).delete();
            await().atMost(TIMEOUT).until(() -> get(name) != null && !uid.equals(get(name).getMetadata().getUid()));

            // another bundle of the signer: removed
            bundle(prefix(signer) + "stale", signer, otherCa);
            await().atMost(TIMEOUT).until(() -> get(prefix(signer) + "stale") == null);
            onlyThePublishedBundle(signer);
        } finally {
            client.resources(ClusterTrustBundle.class).withName(name).delete();
        }
    }

    @Test
    void discoveryPicksTheServedVersion() throws Exception {
        try (var h = harness("test.test/discovery")) {
            assertThat(KubeAPIServerClusterTrustBundlePublisherControllerDescriptor.clusterTrustBundlesAvailable(h.context,
                    KubeAPIServerClusterTrustBundlePublisherControllerDescriptor.BETA)).isTrue();
            assertThat(KubeAPIServerClusterTrustBundlePublisherControllerDescriptor.clusterTrustBundlesAvailable(h.context,
                    KubeAPIServerClusterTrustBundlePublisherControllerDescriptor.ALPHA)).isTrue();
        }
        // the default API server serves neither (both versions are off by default in v1.34)
        try (var h = ControllerHarness.create(vertx, ClusterTrustBundlePublisher.NAME,
                ctx -> ClusterTrustBundlePublisher.beta(ctx, "test.test/discovery", ca))) {
            assertThat(KubeAPIServerClusterTrustBundlePublisherControllerDescriptor.clusterTrustBundlesAvailable(h.context,
                    KubeAPIServerClusterTrustBundlePublisherControllerDescriptor.BETA)).isFalse();
            assertThat(KubeAPIServerClusterTrustBundlePublisherControllerDescriptor.start(h.context)).isNull();
        }
    }
}
