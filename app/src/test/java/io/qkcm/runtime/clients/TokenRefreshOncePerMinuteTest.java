package io.qkcm.runtime.clients;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.http.BasicBuilder;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.Interceptor;
import io.fabric8.kubernetes.client.utils.TokenRefreshInterceptor;

class TokenRefreshOncePerMinuteTest {

    /** A kubeconfig whose user authenticates with a client certificate: no token, as kube-controller-manager's. */
    private static String kubeconfig(String tokenLine) {
        return """
                apiVersion: v1
                kind: Config
                clusters:
                - name: c
                  cluster:
                    server: https://127.0.0.1:6443
                contexts:
                - name: x
                  context: {cluster: c, user: u}
                current-context: x
                users:
                - name: u
                  user:
                    client-certificate-data: ZHVtbXk=
                    client-key-data: ZHVtbXk=
                """ + tokenLine;
    }

    private static final class Headers implements BasicBuilder {
        final Map<String, String> values = new HashMap<>();

        @Override
        public BasicBuilder uri(URI uri) {
            return this;
        }

        @Override
        public BasicBuilder header(String name, String value) {
            values.put(name, value);
            return this;
        }

        @Override
        public BasicBuilder setHeader(String name, String value) {
            values.put(name, value);
            return this;
        }
    }

    private static Map<String, String> before(Interceptor i) {
        Headers h = new Headers();
        i.before(h, null, null);
        return h.values;
    }

    /**
     * Pins fabric8 7.4's behaviour that the wrapper exists for: once its minute has passed, a refresh that finds no
     * token leaves its stamp as it was, so the next request reads the kubeconfig again, and the next.
     */
    @Test
    void fabric8ReadsTheKubeconfigOnEveryRequestOnceAMinuteHasPassedWithoutAToken(@TempDir Path dir) throws IOException {
        Path file = dir.resolve("kubeconfig");
        Files.writeString(file, kubeconfig(""));
        Config config = Config.fromKubeconfig(file.toFile());
        TokenRefreshInterceptor bare = new TokenRefreshInterceptor(config, null, Instant.now().minus(Duration.ofMinutes(2)));
        assertThat(before(bare)).doesNotContainKey("Authorization"); // refreshed: no token in the file
        Files.writeString(file, kubeconfig("    token: t2\n"));
        // a moment later, not a minute: read again all the same
        assertThat(before(bare)).containsEntry("Authorization", "Bearer t2");
    }

    @Test
    void theSameKubeconfigIsReadAtMostOnceAMinuteThroughTheWrapper(@TempDir Path dir) throws IOException {
        Path file = dir.resolve("kubeconfig");
        Files.writeString(file, kubeconfig(""));
        Config config = Config.fromKubeconfig(file.toFile());
        // fabric8's interceptor, made by the wrapper two minutes ago: due at the first request
        MutableClock clock = new MutableClock(Instant.now().minus(Duration.ofMinutes(2)));
        TokenRefreshOncePerMinute due = new TokenRefreshOncePerMinute(
                stamp -> new TokenRefreshInterceptor(config, null, stamp), clock);
        clock.now = Instant.now();
        // it refreshes (no token), and the wrapper stamps the next interceptor now
        assertThat(before(due)).doesNotContainKey("Authorization");
        Files.writeString(file, kubeconfig("    token: t2\n"));
        // unlike the bare interceptor above: not read again on the next request
        assertThat(before(due)).doesNotContainKey("Authorization");
    }

    @Test
    void oneAttemptPerMinuteAndEveryRequestGoesThroughFabric8sInterceptor() {
        MutableClock clock = new MutableClock(Instant.parse("2026-11-28T06:00:00Z"));
        List<Instant> stamps = new ArrayList<>();
        List<Instant> attempts = new ArrayList<>();
        int[] calls = {0};
        // fabric8's rule: a refresh is attempted when the stamp is over a minute old; a failed attempt keeps the stamp
        TokenRefreshOncePerMinute wrapper = new TokenRefreshOncePerMinute(stamp -> {
            stamps.add(stamp);
            return new Interceptor() {
                @Override
                public void before(BasicBuilder b, HttpRequest r, RequestTags t) {
                    calls[0]++;
                    if (stamp.plus(Duration.ofMinutes(1)).isBefore(clock.instant())) {
                        attempts.add(clock.instant());
                    }
                }
            };
        }, clock);
        for (int i = 0; i < 1800; i++) { // a request every 100 ms for three minutes
            clock.now = clock.now.plusMillis(100);
            before(wrapper);
        }
        assertThat(calls[0]).isEqualTo(1800);
        assertThat(attempts).hasSizeBetween(2, 3);
        for (int i = 1; i < attempts.size(); i++) {
            assertThat(Duration.between(attempts.get(i - 1), attempts.get(i))).isGreaterThanOrEqualTo(Duration.ofMinutes(1));
        }
        assertThat(stamps).hasSize(attempts.size() + 1);
    }

    private static final class MutableClock extends Clock {
        Instant now;

        MutableClock(Instant now) {
            this.now = now;
        }

        @Override
        public Instant instant() {
            return now;
        }

        @Override
        public java.time.ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(java.time.ZoneId zone) {
            return this;
        }
    }
}
