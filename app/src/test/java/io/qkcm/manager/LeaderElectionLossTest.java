package io.qkcm.manager;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.qkcm.runtime.options.ControllerManagerOptions;
import io.qkcm.runtime.options.Flags;
import io.qkcm.testing.RealApiServer;

/**
 * A lease lost while the manager is still starting its controllers is handled at once: client-go runs
 * OnStartedLeading in a goroutine of its own and OnStoppedLeading when the renew loop returns, so a slow
 * start never delays the exit. (LeaderElectionIT caught qkcm exiting seconds late on a loaded machine: the
 * loss was queued on the callback thread behind the start.)
 */
class LeaderElectionLossTest {

    @Test
    void aLossWhileTheStartStillRunsIsReportedAtTheRenewDeadline() throws Exception {
        String lease = "loss-" + Long.toString(System.nanoTime() % 1_000_000, 36);
        Map<String, String> config = Map.of("qkcm.leader-elect-resource-name", lease,
                "qkcm.leader-elect-lease-duration", "4s", "qkcm.leader-elect-renew-deadline", "3s",
                "qkcm.leader-elect-retry-period", "1s");
        ControllerManagerOptions options = new ControllerManagerOptions(Flags.upstream(),
                flag -> Optional.ofNullable(config.get(flag)));
        try (KubernetesClient admin = RealApiServer.get().newClient()) {
            LeaderElection election = new LeaderElection(admin, options, (object, type, reason, message) -> {
            }, new SimpleMeterRegistry());
            CountDownLatch starting = new CountDownLatch(1);
            CountDownLatch release = new CountDownLatch(1);
            AtomicLong lostAt = new AtomicLong();
            election.start(() -> {
                starting.countDown();
                try {
                    release.await(); // a start that takes longer than the whole test
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }, () -> lostAt.set(System.nanoTime()));
            try {
                assertThat(starting.await(30, TimeUnit.SECONDS)).isTrue();
                ZonedDateTime now = ZonedDateTime.now(ZoneOffset.UTC);
                // another holder takes the Lease for an hour: every renewal fails from here
                await().atMost(Duration.ofSeconds(10)).ignoreExceptionsInstanceOf(KubernetesClientException.class)
                        .until(() -> admin.leases().inNamespace("kube-system").withName(lease).edit(l -> {
                            l.getSpec().setHolderIdentity("thief");
                            l.getSpec().setLeaseDurationSeconds(3600);
                            l.getSpec().setAcquireTime(now);
                            l.getSpec().setRenewTime(now);
                            return l;
                        }) != null);
                long stolen = System.nanoTime();
                // retry period (1s) + renew deadline (3s), and scheduling margin
                await().atMost(Duration.ofSeconds(10)).until(() -> lostAt.get() != 0);
                assertThat(Duration.ofNanos(lostAt.get() - stolen)).isLessThan(Duration.ofSeconds(8));
                assertThat(election.healthy()).isFalse();
                assertThat(election.leading()).isFalse();
                assertThat(release.getCount()).as("the start is still running").isEqualTo(1);
            } finally {
                release.countDown();
                election.stop();
            }
            assertThat(admin.leases().inNamespace("kube-system").withName(lease).get().getSpec().getHolderIdentity())
                    .as("the lost Lease is not released or re-taken").isEqualTo("thief");
        }
    }
}
