package io.qkcm.manager.serving;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;

import org.junit.jupiter.api.Test;

/** The healthz output format of k8s.io/apiserver's handler. */
class HealthzServingTest {

    private static Map<String, BooleanSupplier> checks(boolean secondOk) {
        Map<String, BooleanSupplier> m = new LinkedHashMap<>();
        m.put("leaderElection", () -> true);
        m.put("replicaset-controller", () -> secondOk);
        return m;
    }

    @Test
    void okAndVerbose() {
        Healthz.Response r = Healthz.handle("/healthz", null, Map.of(), checks(true));
        assertThat(r.status()).isEqualTo(200);
        assertThat(r.body()).isEqualTo("ok");
        assertThat(r.contentType()).isEqualTo("text/plain; charset=utf-8");

        r = Healthz.handle("/healthz", null, Map.of("verbose", List.of("")), checks(true));
        assertThat(r.body()).isEqualTo("[+]leaderElection ok\n[+]replicaset-controller ok\nhealthz check passed\n");
        r = Healthz.handle("/readyz", null, Map.of("verbose", List.of("")), checks(true));
        assertThat(r.body()).endsWith("readyz check passed\n");
    }

    @Test
    void failureListsChecksWithReasonWithheld() {
        Healthz.Response r = Healthz.handle("/healthz", null, Map.of(), checks(false));
        assertThat(r.status()).isEqualTo(500);
        assertThat(r.body()).isEqualTo(
                "[+]leaderElection ok\n[-]replicaset-controller failed: reason withheld\nhealthz check failed\n");
    }

    @Test
    void excludeAndSingleChecks() {
        Healthz.Response r = Healthz.handle("/healthz", null,
                Map.of("verbose", List.of(""), "exclude", List.of("replicaset-controller", "nope")), checks(false));
        assertThat(r.status()).isEqualTo(200);
        assertThat(r.body()).isEqualTo("[+]leaderElection ok\n[+]replicaset-controller excluded: ok\n"
                + "warn: some health checks cannot be excluded: no matches for \"nope\"\nhealthz check passed\n");

        assertThat(Healthz.handle("/healthz", "leaderElection", Map.of(), checks(false)).body()).isEqualTo("ok");
        Healthz.Response failed = Healthz.handle("/healthz", "replicaset-controller", Map.of(), checks(false));
        assertThat(failed.status()).isEqualTo(500);
        assertThat(failed.body()).startsWith("internal server error: ");
        assertThat(Healthz.handle("/healthz", "nope", Map.of(), checks(true)).status()).isEqualTo(404);
    }

    @Test
    void pingWhenNothingIsRegistered() {
        Healthz.Response r = Healthz.handle("/healthz", null, Map.of("verbose", List.of("")), Map.of());
        assertThat(r.body()).isEqualTo("[+]ping ok\nhealthz check passed\n");
    }

    @Test
    void alwaysAllowPathsAsUpstream() {
        DelegatingAuthorizer a = new DelegatingAuthorizer(List.of("/healthz", "/readyz", "/livez", "/debug/*"), null,
                java.time.Duration.ofSeconds(10), java.time.Duration.ofSeconds(10));
        assertThat(a.alwaysAllowed("/healthz")).isTrue();
        assertThat(a.alwaysAllowed("/healthz/leaderElection")).isFalse();
        assertThat(a.alwaysAllowed("/debug/pprof/heap")).isTrue();
        assertThat(a.alwaysAllowed("/metrics")).isFalse();
        UserInfo anonymous = UserInfo.anonymous();
        assertThat(a.authorize(anonymous, "get", "/metrics").allowed()).isFalse();
        assertThat(a.authorize(new UserInfo("admin", "", List.of("system:masters"), Map.of()), "get", "/metrics")
                .allowed()).isTrue();
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> new DelegatingAuthorizer(List.of("/a*b"), null,
                java.time.Duration.ZERO, java.time.Duration.ZERO)).hasMessageContaining("only trailing * allowed");
    }

    @Test
    void bearerTokenParsing() {
        assertThat(DelegatingAuthenticator.bearerToken("Bearer abc")).isEqualTo("abc");
        assertThat(DelegatingAuthenticator.bearerToken("  bearer abc  ")).isEqualTo("abc");
        assertThat(DelegatingAuthenticator.bearerToken("Basic abc")).isNull();
        assertThat(DelegatingAuthenticator.bearerToken("Bearer")).isNull();
        assertThat(DelegatingAuthenticator.bearerToken(null)).isNull();
    }
}
