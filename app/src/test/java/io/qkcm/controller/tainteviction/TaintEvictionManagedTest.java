package io.qkcm.controller.tainteviction;

import static io.qkcm.testing.TestNamespaces.newNamespace;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.TaintBuilder;
import io.fabric8.kubernetes.api.model.Toleration;
import io.fabric8.kubernetes.api.model.TolerationBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import io.qkcm.testing.Conflicts;
import io.qkcm.testing.RealApiServer;
import io.qkcm.testing.RealApiServerResource;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;

/**
 * taint-eviction-controller as the manager starts it (its descriptor, the wall clock, the
 * node-controller client): {@code kubectl taint node <n> dedicated=db:NoExecute} on a node with pods
 * deletes the pod that does not tolerate it at once and the one tolerating it for 1 s a second later,
 * each with its DisruptionTarget condition, event and upstream's metrics; the pod tolerating it forever stays.
 */
@QuarkusTest
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
@TestProfile(TaintEvictionManagedTest.Profile.class)
class TaintEvictionManagedTest {

    public static class Profile implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("qkcm.controllers", "taint-eviction-controller");
        }
    }

    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    @Inject
    MeterRegistry registry;

    private static Toleration dedicated(Long seconds) {
        return new TolerationBuilder().withKey("dedicated").withOperator("Equal").withValue("db").withEffect("NoExecute")
                .withTolerationSeconds(seconds).build();
    }

    @Test
    void kubectlTaintNoExecuteEvictsThePodsThatDoNotTolerateIt() {
        try (KubernetesClient client = RealApiServer.get().newClient()) {
            String ns = newNamespace(client, "taint-managed");
            String node = "taint-managed-" + Long.toString(System.nanoTime() % 1_000_000_000L, 36);
            client.nodes().resource(new NodeBuilder().withNewMetadata().withName(node).endMetadata().build()).create();
            try {
                for (var entry : Map.of("plain", List.<Toleration>of(), "one-second", List.of(dedicated(1L)),
                        "forever", List.of(dedicated(null))).entrySet()) {
                    client.pods().inNamespace(ns).resource(new PodBuilder().withNewMetadata().withName(entry.getKey())
                            .endMetadata().withNewSpec().withNodeName(node).withTolerations(entry.getValue())
                            .addNewContainer().withName("main").withImage("registry.k8s.io/pause:3.10").endContainer()
                            .endSpec().build()).create();
                }
                Instant taintedAt = Instant.now();
                Conflicts.retry(() -> client.nodes().withName(node).edit(n -> new NodeBuilder(n).editSpec()
                        .addToTaints(new TaintBuilder().withKey("dedicated").withValue("db").withEffect("NoExecute")
                                .build())
                        .endSpec().build()));

                await().atMost(TIMEOUT).until(() -> deleting(client, ns, "plain") != null
                        && deleting(client, ns, "one-second") != null);
                Pod oneSecond = deleting(client, ns, "one-second");
                // not before its toleration ran out (the API server stamps whole seconds, truncated)
                assertThat(Instant.parse(oneSecond.getMetadata().getDeletionTimestamp()))
                        .isAfterOrEqualTo(taintedAt.truncatedTo(ChronoUnit.SECONDS).plusSeconds(1));
                for (String name : List.of("plain", "one-second")) {
                    Pod p = deleting(client, ns, name);
                    assertThat(p.getStatus().getConditions()).anySatisfy(c -> {
                        assertThat(c.getType()).isEqualTo("DisruptionTarget");
                        assertThat(c.getReason()).isEqualTo("DeletionByTaintManager");
                    });
                    await().atMost(TIMEOUT).untilAsserted(() -> assertThat(client.v1().events().inNamespace(ns).list()
                            .getItems().stream().filter(e -> name.equals(e.getInvolvedObject().getName()))
                            .map(Event::getMessage)).containsExactly("Marking for deletion Pod " + ns + "/" + name));
                }
                // taint_eviction_controller_pod_deletions_total and pod_deletion_duration_seconds
                await().atMost(TIMEOUT).untilAsserted(() -> {
                    Counter c = registry.find("taint.eviction.controller.pod.deletions").counter();
                    assertThat(c).isNotNull();
                    assertThat(c.count()).isGreaterThanOrEqualTo(2);
                    DistributionSummary d = registry.find("taint.eviction.controller.pod.deletion.duration.seconds")
                            .summary();
                    assertThat(d.count()).isGreaterThanOrEqualTo(2);
                });
                assertThat(deleting(client, ns, "forever")).isNull();
                assertThat(client.pods().inNamespace(ns).withName("forever").get()).isNotNull();
            } finally {
                client.nodes().withName(node).delete();
                client.pods().inNamespace(ns).withGracePeriod(0).delete();
            }
        }
    }

    /** The pod once marked for deletion; null before. */
    private static Pod deleting(KubernetesClient client, String ns, String name) {
        Pod p = client.pods().inNamespace(ns).withName(name).get();
        return p != null && p.getMetadata().getDeletionTimestamp() != null ? p : null;
    }
}
