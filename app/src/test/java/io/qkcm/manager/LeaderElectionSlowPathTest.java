package io.qkcm.manager;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.qkcm.runtime.options.ControllerManagerOptions;
import io.qkcm.runtime.options.Flags;
import io.qkcm.testing.RealApiServer;

/**
 * client-go's {@code leader_election_slowpath_total{name}}: absent until the leader first renews
 * through the slow path, then counted — here because another writer touched the Lease, so the
 * leader's optimistic update (on its last written copy) conflicts and it reads before writing.
 */
class LeaderElectionSlowPathTest {

    private static java.time.ZonedDateTime renewTime(KubernetesClient admin, String lease) {
        return admin.leases().inNamespace("kube-system").withName(lease).get().getSpec().getRenewTime();
    }

    @Test
    void aRenewalAfterAnotherWriteToTheLeaseGoesThroughTheSlowPathAndIsCounted() throws Exception {
        String lease = "slowpath-" + Long.toString(System.nanoTime() % 1_000_000, 36);
        Map<String, String> config = Map.of("qkcm.leader-elect-resource-name", lease,
                "qkcm.leader-elect-lease-duration", "4s", "qkcm.leader-elect-renew-deadline", "3s",
                "qkcm.leader-elect-retry-period", "1s");
        ControllerManagerOptions options = new ControllerManagerOptions(Flags.upstream(),
                flag -> Optional.ofNullable(config.get(flag)));
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        try (KubernetesClient admin = RealApiServer.get().newClient()) {
            LeaderElection election = new LeaderElection(admin, options, (object, type, reason, message) -> {
            }, registry);
            CountDownLatch leading = new CountDownLatch(1);
            election.start(leading::countDown, () -> {
            });
            try {
                assertThat(leading.await(30, TimeUnit.SECONDS)).isTrue();
                // two renewals on the fast path (the holder's renewTime moves twice): no series yet
                java.time.ZonedDateTime first = renewTime(admin, lease);
                await().atMost(Duration.ofSeconds(10)).until(() -> renewTime(admin, lease).isAfter(first));
                java.time.ZonedDateTime second = renewTime(admin, lease);
                await().atMost(Duration.ofSeconds(10)).until(() -> renewTime(admin, lease).isAfter(second));
                assertThat(registry.find("leader.election.slowpath").counter()).isNull();

                admin.leases().inNamespace("kube-system").withName(lease).edit(l -> {
                    l.getMetadata().setLabels(Map.of("touched", "by-another-writer"));
                    return l;
                });
                await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
                    Counter c = registry.find("leader.election.slowpath").tag("name", lease).counter();
                    assertThat(c).isNotNull();
                    assertThat(c.count()).isGreaterThanOrEqualTo(1);
                });
                assertThat(election.leading()).isTrue();
            } finally {
                election.stop();
            }
        }
    }

    /**
     * SIGTERM during a renewal whose answer is lost (LeaderElectionIT's flake): the Lease on the server has
     * moved past the copy the elector holds. The release must still give it up, from a fresh read, instead
     * of failing on the conflict and leaving a standby to wait out the whole lease.
     */
    @Test
    void aReleaseAfterTheLeaseMovedOnWithoutTheElectorStillGivesItUp() throws Exception {
        String lease = "release-" + Long.toString(System.nanoTime() % 1_000_000, 36);
        // a long retry period: no renewal refreshes the elector's copy before the release
        Map<String, String> config = Map.of("qkcm.leader-elect-resource-name", lease,
                "qkcm.leader-elect-lease-duration", "60s", "qkcm.leader-elect-renew-deadline", "45s",
                "qkcm.leader-elect-retry-period", "30s");
        ControllerManagerOptions options = new ControllerManagerOptions(Flags.upstream(),
                flag -> Optional.ofNullable(config.get(flag)));
        try (KubernetesClient admin = RealApiServer.get().newClient()) {
            LeaderElection election = new LeaderElection(admin, options, (object, type, reason, message) -> {
            }, new SimpleMeterRegistry());
            CountDownLatch leading = new CountDownLatch(1);
            election.start(leading::countDown, () -> {
            });
            try {
                assertThat(leading.await(30, TimeUnit.SECONDS)).isTrue();
                String holder = admin.leases().inNamespace("kube-system").withName(lease).get().getSpec()
                        .getHolderIdentity();
                assertThat(holder).isNotEmpty();
                // the elector renews once right after acquiring (client-go's renew loop starts at once); the other
                // writer edits after that renewal (retrying a conflict with it), so the elector's copy is stale
                await().atMost(Duration.ofSeconds(20)).until(() -> {
                    var spec = admin.leases().inNamespace("kube-system").withName(lease).get().getSpec();
                    return spec.getRenewTime().isAfter(spec.getAcquireTime());
                });
                await().atMost(Duration.ofSeconds(20)).ignoreExceptionsInstanceOf(KubernetesClientException.class)
                        .until(() -> admin.leases().inNamespace("kube-system").withName(lease).edit(l -> {
                            l.getMetadata().setLabels(Map.of("touched", "by-another-writer"));
                            return l;
                        }) != null);
            } finally {
                election.stop();
            }
            assertThat(admin.leases().inNamespace("kube-system").withName(lease).get().getMetadata().getLabels())
                    .containsEntry("touched", "by-another-writer");
            assertThat(admin.leases().inNamespace("kube-system").withName(lease).get().getSpec()
                    .getHolderIdentity()).isNullOrEmpty();
        }
    }
}
