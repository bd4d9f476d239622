package io.qkcm.manager;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.ServerSocket;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.qkcm.runtime.clients.ProtobufWrites;
import io.qkcm.runtime.options.ControllerManagerOptions;
import io.qkcm.runtime.options.Flags;
import io.qkcm.testing.RealApiServer;

/**
 * The start waits for the campaign's first answer before it builds informers and controllers
 * ({@link LeaderElection#awaitFirstAttempt}): answered once the first Lease request is (the Lease then exists,
 * read and written in protobuf, as upstream's elector sends them), and not before, however long the API server
 * keeps it waiting.
 */
class LeaderElectionFirstAttemptTest {

    private static ControllerManagerOptions options(String lease) {
        Map<String, String> config = Map.of("qkcm.leader-elect-resource-name", lease,
                "qkcm.leader-elect-lease-duration", "15s", "qkcm.leader-elect-renew-deadline", "10s",
                "qkcm.leader-elect-retry-period", "2s");
        return new ControllerManagerOptions(Flags.upstream(), flag -> Optional.ofNullable(config.get(flag)));
    }

    private static LeaderElection election(KubernetesClient client, String lease) {
        return new LeaderElection(client, options(lease), (object, type, reason, message) -> {
        }, new SimpleMeterRegistry());
    }

    @Test
    void theFirstAnswerComesWithTheLeaseWrittenInProtobuf() throws Exception {
        String lease = "first-" + Long.toString(System.nanoTime() % 1_000_000, 36);
        try (KubernetesClient admin = RealApiServer.get().newClient()) {
            LeaderElection election = election(admin, lease);
            long gets = ProtobufWrites.GETS.sum();
            long writes = ProtobufWrites.SENT.sum();
            election.start(() -> {
            }, () -> {
            });
            try {
                assertThat(election.awaitFirstAttempt(Duration.ofSeconds(30))).isTrue();
                Lease written = admin.leases().inNamespace("kube-system").withName(lease).get();
                assertThat(written).isNotNull();
                assertThat(written.getSpec().getHolderIdentity()).isNotEmpty();
                assertThat(ProtobufWrites.GETS.sum()).isGreaterThan(gets);
                assertThat(ProtobufWrites.SENT.sum()).isGreaterThan(writes);
            } finally {
                election.stop();
            }
        }
    }

    @Test
    void anApiServerThatDoesNotAnswerKeepsTheWaitToItsBound() throws Exception {
        try (ServerSocket silent = new ServerSocket(0)) {
            KubernetesClient client = new KubernetesClientBuilder().withConfig(new ConfigBuilder()
                    .withMasterUrl("http://127.0.0.1:" + silent.getLocalPort()).withRequestTimeout(60_000)
                    .withRequestRetryBackoffLimit(0).build()).build();
            LeaderElection election = election(client, "silent");
            election.start(() -> {
            }, () -> {
            });
            try {
                long t0 = System.nanoTime();
                assertThat(election.awaitFirstAttempt(Duration.ofMillis(500))).isFalse();
                assertThat(Duration.ofNanos(System.nanoTime() - t0)).isGreaterThanOrEqualTo(Duration.ofMillis(500));
            } finally {
                election.stop();
                client.close();
            }
        }
    }
}
