package io.qkcm.controller.disruption;

import static io.qkcm.controller.disruption.DisruptionTestSupport.awaitEvent;
import static io.qkcm.controller.disruption.DisruptionTestSupport.awaitStatus;
import static io.qkcm.controller.disruption.DisruptionTestSupport.evict;
import static io.qkcm.controller.disruption.DisruptionTestSupport.fooBar;
import static io.qkcm.controller.disruption.DisruptionTestSupport.getPdb;
import static io.qkcm.controller.disruption.DisruptionTestSupport.pdb;
import static io.qkcm.controller.disruption.DisruptionTestSupport.pod;
import static io.qkcm.testing.TestNamespaces.newNamespace;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;


import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudgetStatus;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.qkcm.controller.PodStatusPatch;
import io.qkcm.testing.ManagerOffProfile;
import io.qkcm.testing.RealApiServerResource;
import io.qkcm.testing.TestKubelet;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;

/**
 * The disrupted-pods map between the API server's eviction subresource and the disruption controller, against
 * a real API server: the eviction is refused (429) while the controller's status allows no disruption and
 * granted while it allows one, the API server then records the pod in disruptedPods and decrements
 * disruptionsAllowed itself, and the controller prunes the map as upstream (TestUpdateDisruptedPods):
 * entries of pods being deleted, of pods that are gone, and of pods not deleted within DeletionTimeout
 * (with a NotDeleted event), the last ones found by the recheck queue without any change in the cluster.
 */
@QuarkusTest
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
@TestProfile(ManagerOffProfile.class)
class DisruptedPodsAndEvictionTest extends RunningDisruptionController {

    private static final String HOLD = "disruption.qkcm.test/hold";


    private static String at(Instant t) {
        return PodStatusPatch.metaTime(t);
    }

    // TestUpdateDisruptedPods, then the recheck of the entry still waiting
    @Test
    void disruptedPodsArePrunedAndAWaitingEntryExpiresOnItsRecheck() {
        Instant t = Instant.now().truncatedTo(ChronoUnit.SECONDS);
        clock.set(t);
        String ns = newNamespace(client, "pdb-disrupted");
        pdb(client, ns, "foobar", new IntOrString(1), null, fooBar());
        Pod p1 = client.pods().inNamespace(ns).resource(new PodBuilder().withNewMetadata().withName("p1")
                .withLabels(fooBar()).withFinalizers(HOLD).endMetadata().withNewSpec().addNewContainer()
                .withName("main").withImage("registry.k8s.io/pause:3.10").endContainer().endSpec().build()).create();
        DisruptionTestSupport.setReady(client, p1, true);
        pod(client, ns, "p2", fooBar(), null, true);
        pod(client, ns, "p3", fooBar(), null, true);
        try {
            client.pods().inNamespace(ns).withName("p1").delete();
            // p1 is being deleted: expected, not healthy
            PodDisruptionBudget synced = awaitStatus(client, ns, "foobar", 1, 2, 1, 3);

            // what evictions would have recorded
            Map<String, String> disrupted = new LinkedHashMap<>();
            disrupted.put("p1", at(t)); // pod deletion started: dropped
            disrupted.put("p2", at(t.minusSeconds(180))); // expired: dropped, NotDeleted
            disrupted.put("p3", at(t.minusSeconds(120 - 5))); // waits 5 more seconds
            disrupted.put("notthere", at(t)); // pod gone: dropped
            synced.getStatus().setDisruptedPods(disrupted);
            client.policy().v1().podDisruptionBudget().inNamespace(ns).resource(synced).updateStatus();

            PodDisruptionBudget pruned = awaitStatus(client, ns, "foobar", 0, 1, 1, 3);
            assertThat(pruned.getStatus().getDisruptedPods()).containsExactly(Map.entry("p3", at(t.minusSeconds(115))));
            var notDeleted = awaitEvent(client, ns, "NotDeleted", "p2");
            assertThat(notDeleted.getType()).isEqualTo("Warning");
            assertThat(notDeleted.getMessage())
                    .isEqualTo("Pod was expected by PDB " + ns + "/" + ns + " to be deleted but it wasn't");

            // nothing changes in the cluster: the recheck queue brings the PDB back once p3's entry expires
            clock.set(t.plusSeconds(6));
            PodDisruptionBudget expired = awaitStatus(client, ns, "foobar", 1, 2, 1, 3);
            assertThat(expired.getStatus().getDisruptedPods()).isNullOrEmpty();
            awaitEvent(client, ns, "NotDeleted", "p3");
        } finally {
            client.pods().inNamespace(ns).withName("p1").edit(p -> {
                p.getMetadata().setFinalizers(List.of());
                return p;
            });
        }
    }

    /** Every status the PDB had, in order. */
    static final class Statuses implements Watcher<PodDisruptionBudget>, AutoCloseable {
        final List<PodDisruptionBudgetStatus> seen = new CopyOnWriteArrayList<>();
        final Watch watch;

        Statuses(String ns, String name) {
            watch = client.policy().v1().podDisruptionBudget().inNamespace(ns).withName(name).watch(this);
        }

        @Override
        public void eventReceived(Action action, PodDisruptionBudget pdb) {
            if (pdb.getStatus() != null) {
                seen.add(pdb.getStatus());
            }
        }

        @Override
        public void onClose(WatcherException cause) {
        }

        @Override
        public void close() {
            watch.close();
        }
    }

    @Test
    void theEvictionApiFollowsTheComputedBudgetAndRecordsTheDisruptedPod() throws Exception {
        String ns = newNamespace(client, "pdb-evict");
        TestKubelet kubelet = new TestKubelet(client);
        // before the controller has computed anything the eviction API refuses (observedGeneration behind)
        pdb(client, ns, "foobar", new IntOrString(2), null, fooBar());
        for (int i = 0; i < 3; i++) {
            kubelet.runningAndReady(pod(client, ns, "p" + i, fooBar(), null, true));
        }
        awaitStatus(client, ns, "foobar", 1, 3, 2, 3);

        try (Statuses statuses = new Statuses(ns, "foobar")) {
            DisruptionTestSupport.Answer granted = evict(client, ns, "p0");
            assertThat(granted.code()).as(granted.body()).isEqualTo(201);
            // the API server took the one disruption allowed: the next eviction is refused at once
            DisruptionTestSupport.Answer refused = evict(client, ns, "p1");
            assertThat(refused.code()).as(refused.body()).isEqualTo(429);
            assertThat(refused.body()).contains("Cannot evict pod as it would violate the pod's disruption budget.");

            // the eviction's own write: p0 recorded as disrupted, disruptionsAllowed decremented
            await().atMost(DisruptionTestSupport.TIMEOUT).until(() -> statuses.seen.stream()
                    .anyMatch(s -> s.getDisruptedPods() != null && s.getDisruptedPods().containsKey("p0")
                            && s.getDisruptionsAllowed() == 0 && s.getCurrentHealthy() == 3));
            // the controller then sees p0 being deleted: no longer healthy, no longer in the map
            PodDisruptionBudget after = awaitStatus(client, ns, "foobar", 0, 2, 2, 3);
            assertThat(after.getStatus().getDisruptedPods()).isNullOrEmpty();
            assertThat(client.pods().inNamespace(ns).withName("p0").get().getMetadata().getDeletionTimestamp())
                    .isNotNull();
        }
        assertThat(evict(client, ns, "p1").code()).isEqualTo(429);

        // one more healthy pod: the controller allows one disruption again, and the eviction API grants it
        kubelet.runningAndReady(pod(client, ns, "p3", fooBar(), null, true));
        awaitStatus(client, ns, "foobar", 1, 3, 2, 4);
        DisruptionTestSupport.Answer again = evict(client, ns, "p1");
        assertThat(again.code()).as(again.body()).isEqualTo(201);
        awaitStatus(client, ns, "foobar", 0, 2, 2, 4);
        assertThat(getPdb(client, ns, "foobar").getStatus().getDisruptedPods()).isNullOrEmpty();
    }

    /**
     * unhealthyPodEvictionPolicy as the eviction API reads it: an unready pod goes when the computed
     * currentHealthy reaches desiredHealthy (IfHealthyBudget, the default), not when it is below, and always
     * with AlwaysAllow once the controller has observed that generation.
     */
    @Test
    void unreadyPodsAreEvictedAsTheirPolicyReadsTheComputedHealth() throws Exception {
        String ns = newNamespace(client, "pdb-unhealthy");
        TestKubelet kubelet = new TestKubelet(client);
        pdb(client, ns, "foobar", new IntOrString(2), null, fooBar());
        kubelet.runningAndReady(pod(client, ns, "p0", fooBar(), null, true));
        Pod p1 = kubelet.runningAndReady(pod(client, ns, "p1", fooBar(), null, true));
        kubelet.running(pod(client, ns, "unready", fooBar(), null, false), false, null);
        awaitStatus(client, ns, "foobar", 0, 2, 2, 3);

        DisruptionTestSupport.Answer unready = evict(client, ns, "unready");
        assertThat(unready.code()).as(unready.body()).isEqualTo(201);
        assertThat(evict(client, ns, "p0").code()).isEqualTo(429);

        kubelet.running(p1, false, null);
        awaitStatus(client, ns, "foobar", 0, 1, 2, 3);
        DisruptionTestSupport.Answer belowBudget = evict(client, ns, "p1");
        assertThat(belowBudget.code()).as(belowBudget.body()).isEqualTo(429);

        PodDisruptionBudget always = client.policy().v1().podDisruptionBudget().inNamespace(ns).withName("foobar")
                .edit(p -> {
                    p.getSpec().setUnhealthyPodEvictionPolicy("AlwaysAllow");
                    return p;
                });
        assertThat(always.getMetadata().getGeneration()).isEqualTo(2L);
        assertThat(awaitStatus(client, ns, "foobar", 0, 1, 2, 3).getStatus().getObservedGeneration()).isEqualTo(2L);
        DisruptionTestSupport.Answer alwaysAllowed = evict(client, ns, "p1");
        assertThat(alwaysAllowed.code()).as(alwaysAllowed.body()).isEqualTo(201);
        assertThat(client.pods().inNamespace(ns).withName("p0").get().getMetadata().getDeletionTimestamp()).isNull();
    }
}
