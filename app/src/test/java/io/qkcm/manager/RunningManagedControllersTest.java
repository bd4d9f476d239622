package io.qkcm.manager;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.Map;
import java.util.Set;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.qkcm.testing.RealApiServer;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;

/**
 * running_managed_controllers{manager,name} has a series for every controller qkcm built and is 1
 * exactly for those whose workers run: here a probe implementation of a default-off controller,
 * named in --controllers, started once this in-process manager takes its leader lease.
 */
@QuarkusTest
@TestProfile(RunningManagedControllersTest.Profile.class)
class RunningManagedControllersTest {

    static final String LEASE = "qkcm-running-controllers-" + Long.toString(System.nanoTime() % 1_000_000, 36);

    public static class Profile implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("qkcm.controllers", "*,bootstrapsigner,-replicaset,-deployment",
                    "qkcm.leader-elect", "true",
                    "qkcm.leader-elect-resource-name", LEASE,
                    "qkcm.leader-elect-lease-duration", "4s",
                    "qkcm.leader-elect-renew-deadline", "3s",
                    "qkcm.leader-elect-retry-period", "1s");
        }

        @Override
        public Set<Class<?>> getEnabledAlternatives() {
            return Set.of(ProbeControllerImplementation.class);
        }
    }

    @Inject
    MeterRegistry registry;
    @Inject
    ControllerManager manager;
    @Inject
    ProbeControllerImplementation probe;

    private Double running(String name) {
        Gauge g = registry.find("running.managed.controllers").tags("manager", "kube-controller-manager", "name", name)
                .gauge();
        return g == null ? null : g.value();
    }

    @Test
    void reflectsWhatRunsOnceLeading() {
        assertThat(manager.options().leaderElect()).as("leader election on in this profile").isTrue();
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            assertThat(running(ProbeControllerImplementation.NAME)).isEqualTo(1.0);
            assertThat(registry.find("leader.election.master.status").tag("name", LEASE).gauge().value())
                    .isEqualTo(1.0);
        });
        assertThat(probe.wasStarted()).isTrue();
        assertThat(manager.leaderElection().orElseThrow().leading()).isTrue();
        try (KubernetesClient client = RealApiServer.get().newClient()) {
            assertThat(client.leases().inNamespace("kube-system").withName(LEASE).get().getSpec().getHolderIdentity())
                    .isEqualTo(manager.leaderElection().orElseThrow().identity());
        }
        // every controller of the default set is implemented: nothing enabled is left unimplemented; the ones
        // removed or off by default have no series pretending they run
        assertThat(manager.selection().notImplemented()).isEmpty();
        for (String name : new String[] { "replicaset-controller", "deployment-controller", "token-cleaner-controller" }) {
            assertThat(running(name)).as(name).isNull();
        }
        assertThat(manager.controllers()).extracting(c -> c.name())
                .contains(ProbeControllerImplementation.NAME, "namespace-controller", "garbage-collector-controller",
                        "job-controller", "ttl-controller", "taint-eviction-controller",
                        "horizontal-pod-autoscaler-controller", "persistentvolume-binder-controller")
                .allSatisfy(name -> assertThat(running(name)).as(name).isEqualTo(1.0));
    }
}
