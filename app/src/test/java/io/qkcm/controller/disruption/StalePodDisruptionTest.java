package io.qkcm.controller.disruption;

import static io.qkcm.testing.TestNamespaces.newNamespace;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;


import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.PodConditionBuilder;
import io.fabric8.kubernetes.api.model.PodStatus;
import io.qkcm.controller.PodStatusPatch;
import io.qkcm.controller.PodUtil;
import io.qkcm.testing.ManagerOffProfile;
import io.qkcm.testing.QueueProbe;
import io.qkcm.testing.RealApiServerResource;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;

/**
 * The stale DisruptionTarget clean-up against a real API server, mirroring upstream's TestStalePodDisruption
 * on the controller's clock: a pod marked as a disruption target and not deleted within the 2-minute
 * timeout gets the condition set to False; one marked less than 2 minutes ago waits (its queue looks again
 * when the time has come); pods being deleted, in a terminal phase, or marked by the kubelet are left alone.
 */
@QuarkusTest
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
@TestProfile(ManagerOffProfile.class)
class StalePodDisruptionTest extends RunningDisruptionController {

    private static final String HOLD = "disruption.qkcm.test/hold";


    private static Pod create(String ns, String name, boolean hold) {
        PodBuilder b = new PodBuilder().withNewMetadata().withName(name).endMetadata().withNewSpec().addNewContainer()
                .withName("main").withImage("registry.k8s.io/pause:3.10").endContainer().endSpec();
        if (hold) {
            b.editMetadata().withFinalizers(HOLD).endMetadata();
        }
        return client.pods().inNamespace(ns).resource(b.build()).create();
    }

    /** Writes the DisruptionTarget condition (and whatever else {@code more} changes) to the pod's status. */
    private static Pod markDisruptionTarget(Pod pod, Instant since, String reason, Consumer<PodStatus> more) {
        Pod current = client.pods().inNamespace(pod.getMetadata().getNamespace()).withName(pod.getMetadata().getName())
                .get();
        List<PodCondition> conditions = new ArrayList<>();
        conditions.add(new PodConditionBuilder().withType("DisruptionTarget").withStatus("True").withReason(reason)
                .withMessage("test").withLastTransitionTime(PodStatusPatch.metaTime(since)).build());
        current.getStatus().setConditions(conditions);
        more.accept(current.getStatus());
        return client.pods().inNamespace(pod.getMetadata().getNamespace()).resource(current).updateStatus();
    }

    private static PodCondition disruptionTarget(String ns, String name) {
        return PodUtil.condition(client.pods().inNamespace(ns).withName(name).get(), "DisruptionTarget");
    }

    private static PodCondition awaitDisruptionTarget(String ns, String name, String status) {
        return await().atMost(DisruptionTestSupport.TIMEOUT).until(() -> disruptionTarget(ns, name),
                c -> c != null && status.equals(c.getStatus()));
    }

    // "stale pod disruption", "pod disruption in progress"
    @Test
    void aDisruptionTargetNotDeletedWithinTheTimeoutIsResetToFalse() {
        String ns = newNamespace(client, "pdb-stale");
        Instant t = Instant.now().truncatedTo(ChronoUnit.SECONDS);

        clock.set(t.plusSeconds(121));
        Pod stale = create(ns, "stale", false);
        markDisruptionTarget(stale, t, "EvictionByEvictionAPI", s -> {
        });
        PodCondition reset = awaitDisruptionTarget(ns, "stale", "False");
        Pod after = client.pods().inNamespace(ns).withName("stale").get();
        assertThat(reset.getReason()).isNull();
        assertThat(reset.getMessage()).isNull();
        assertThat(reset.getLastTransitionTime()).isEqualTo(PodStatusPatch.metaTime(t.plusSeconds(121)));
        assertThat(reset.getObservedGeneration()).isEqualTo(after.getMetadata().getGeneration());

        // a minute and 59 seconds: the queue looks again after the second left, and again while the clock stands
        QueueProbe queue = QueueProbe.of(instance.context.metrics(), DisruptionController.STALE_POD_DISRUPTION_QUEUE);
        clock.set(t.plusSeconds(119));
        QueueProbe.Mark before = queue.mark();
        Pod waiting = create(ns, "in-progress", false);
        markDisruptionTarget(waiting, t, "EvictionByEvictionAPI", s -> {
        });
        await().atMost(DisruptionTestSupport.TIMEOUT).until(() -> queue.processed() >= before.processed() + 2);
        assertThat(disruptionTarget(ns, "in-progress").getStatus()).isEqualTo("True");
        clock.set(t.plusSeconds(121));
        awaitDisruptionTarget(ns, "in-progress", "False");
    }

    // "pod disruption actuated", and the conditions upstream never calls stale
    @Test
    void podsBeingDeletedTerminalOrMarkedByTheKubeletAreLeftAlone() {
        String ns = newNamespace(client, "pdb-notstale");
        Instant t = Instant.now().truncatedTo(ChronoUnit.SECONDS);
        clock.set(t.plusSeconds(3600));

        Pod deleting = create(ns, "deleting", true);
        client.pods().inNamespace(ns).withName("deleting").delete();
        markDisruptionTarget(deleting, t, "EvictionByEvictionAPI", s -> {
        });
        markDisruptionTarget(create(ns, "failed", false), t, "EvictionByEvictionAPI", s -> s.setPhase("Failed"));
        markDisruptionTarget(create(ns, "by-kubelet", false), t, "TerminationByKubelet", s -> {
        });
        try {
            // written after the others: the one queue would have reached them first had they been queued
            markDisruptionTarget(create(ns, "control", false), t, "EvictionByEvictionAPI", s -> {
            });
            awaitDisruptionTarget(ns, "control", "False");
            for (String name : List.of("deleting", "failed", "by-kubelet")) {
                assertThat(disruptionTarget(ns, name).getStatus()).as(name).isEqualTo("True");
            }
        } finally {
            client.pods().inNamespace(ns).withName("deleting").edit(p -> {
                p.getMetadata().setFinalizers(List.of());
                return p;
            });
        }
    }

}
