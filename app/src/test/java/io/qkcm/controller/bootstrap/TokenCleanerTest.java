package io.qkcm.controller.bootstrap;

import static io.qkcm.testing.TestNamespaces.newNamespace;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicReference;

import jakarta.inject.Inject;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.qkcm.testing.ControllerHarness;
import io.qkcm.testing.ManagerOffProfile;
import io.qkcm.testing.RealApiServer;
import io.qkcm.testing.RealApiServerResource;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.vertx.core.Vertx;

/**
 * token-cleaner-controller against a real API server, on a clock the test can move ahead: expired and
 * unreadable bootstrap tokens of kube-system are deleted, others kept; a token that expires later is
 * deleted when its time comes, not before.
 */
@QuarkusTest
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
@TestProfile(ManagerOffProfile.class)
class TokenCleanerTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(60);
    private static final String SYSTEM = "kube-system";
    private static final String TYPE = "bootstrap.kubernetes.io/token";

    @Inject
    Vertx vertx;

    static KubernetesClient client;
    /** How far the controller's clock is ahead of the wall clock. */
    static final AtomicReference<Duration> ahead = new AtomicReference<>(Duration.ZERO);
    static ControllerHarness<TokenCleaner> cleaner;

    @BeforeAll
    static void setUp() {
        client = RealApiServer.get().newClient();
    }

    @AfterAll
    static void tearDown() {
        if (cleaner != null) {
            cleaner.close();
            cleaner = null;
        }
        client.close();
    }

    @BeforeEach
    void start() throws InterruptedException {
        ahead.set(Duration.ZERO);
        if (cleaner == null) {
            cleaner = ControllerHarness.create(vertx, TokenCleaner.NAME, "token-cleaner", Map.of(),
                    context -> new TokenCleaner(context, () -> Instant.now().plus(ahead.get()))).start();
        }
    }

    static String id() {
        String chars = "abcdefghijklmnopqrstuvwxyz0123456789";
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < 6; i++) {
            b.append(chars.charAt(ThreadLocalRandom.current().nextInt(chars.length())));
        }
        return b.toString();
    }

    static Secret secret(String ns, String name, String type, String expiration) {
        SecretBuilder b = new SecretBuilder().withNewMetadata().withNamespace(ns).withName(name).endMetadata()
                .withType(type).addToStringData("token-id", name.substring(name.length() - 6))
                .addToStringData("token-secret", "0123456789abcdef");
        if (expiration != null) {
            b.addToStringData("expiration", expiration);
        }
        return client.secrets().inNamespace(ns).resource(b.build()).create();
    }

    static String at(Instant t) {
        return t.truncatedTo(ChronoUnit.SECONDS).toString();
    }

    static boolean exists(String ns, String name) {
        return client.secrets().inNamespace(ns).withName(name).get() != null;
    }

    @Test
    void deletesExpiredAndUnreadableTokensAndKeepsTheRest() {
        String ns = newNamespace(client, "tokencleaner");
        Instant now = Instant.now();
        String noExpiration = secret(SYSTEM, "bootstrap-token-" + id(), TYPE, null).getMetadata().getName();
        String future = secret(SYSTEM, "bootstrap-token-" + id(), TYPE, at(now.plus(Duration.ofHours(1))))
                .getMetadata().getName();
        String opaque = secret(SYSTEM, "bootstrap-token-" + id(), "Opaque", at(now.minus(Duration.ofHours(1))))
                .getMetadata().getName();
        String elsewhere = secret(ns, "bootstrap-token-" + id(), TYPE, at(now.minus(Duration.ofHours(1))))
                .getMetadata().getName();
        // created after the others: once these are gone, the cleaner has evaluated those
        String expired = secret(SYSTEM, "bootstrap-token-" + id(), TYPE, at(now.minus(Duration.ofHours(1))))
                .getMetadata().getName();
        String unreadable = secret(SYSTEM, "bootstrap-token-" + id(), TYPE, "next tuesday").getMetadata().getName();
        try {
            await().atMost(TIMEOUT).until(() -> !exists(SYSTEM, expired) && !exists(SYSTEM, unreadable));
            assertThat(exists(SYSTEM, noExpiration)).isTrue();
            assertThat(exists(SYSTEM, future)).isTrue();
            assertThat(exists(SYSTEM, opaque)).isTrue();
            assertThat(exists(ns, elsewhere)).isTrue();
        } finally {
            for (String name : new String[] { noExpiration, future, opaque }) {
                client.secrets().inNamespace(SYSTEM).withName(name).delete();
            }
        }
    }

    @Test
    void aTokenIsDeletedWhenItsTimeComesNotBefore() {
        Map<String, Instant> deletedAt = new ConcurrentHashMap<>();
        Watch watch = client.secrets().inNamespace(SYSTEM).watch(new Watcher<>() {
            @Override
            public void eventReceived(Action action, Secret s) {
                if (action == Action.DELETED) {
                    deletedAt.put(s.getMetadata().getName(), Instant.now());
                }
            }

            @Override
            public void onClose(WatcherException cause) {
            }
        });
        try {
            Instant expiresAt = Instant.now().truncatedTo(ChronoUnit.SECONDS).plusSeconds(4);
            String name = secret(SYSTEM, "bootstrap-token-" + id(), TYPE, at(expiresAt)).getMetadata().getName();
            await().atMost(TIMEOUT).until(() -> deletedAt.containsKey(name));
            // queued once for the time left when it was added, and deleted when that time came
            assertThat(deletedAt.get(name)).isAfterOrEqualTo(expiresAt);
        } finally {
            watch.close();
        }
    }

    @Test
    void theControllersClockDecidesWhatHasExpired() {
        String name = secret(SYSTEM, "bootstrap-token-" + id(), TYPE, at(Instant.now().plus(Duration.ofHours(1))))
                .getMetadata().getName();
        ahead.set(Duration.ofHours(2));
        try {
            // any event of the token: its add may also be synced only now, on the clock moved ahead
            client.secrets().inNamespace(SYSTEM).withName(name)
                    .edit(s -> new SecretBuilder(s).editMetadata().addToLabels("touched", "yes").endMetadata().build());
        } catch (KubernetesClientException e) {
            if (e.getCode() != 404) {
                throw e;
            }
            // the add's sync ran on the moved clock first and deleted it: the outcome under test
        }
        await().atMost(TIMEOUT).until(() -> !exists(SYSTEM, name));
    }
}
