package io.qkcm.controller.statefulset;

import static io.qkcm.controller.statefulset.StsTestSupport.get;
import static io.qkcm.controller.statefulset.StsTestSupport.n;
import static io.qkcm.controller.statefulset.StsTestSupport.podNames;
import static io.qkcm.controller.statefulset.StsTestSupport.pods;
import static io.qkcm.controller.statefulset.StsTestSupport.statefulSet;
import static io.qkcm.testing.TestNamespaces.newNamespace;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaimBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.ResourceQuota;
import io.fabric8.kubernetes.api.model.ResourceQuotaBuilder;
import io.fabric8.kubernetes.api.model.apps.ControllerRevision;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.qkcm.controller.history.ControllerHistory;
import io.qkcm.testing.RealApiServer;
import io.qkcm.testing.RealApiServerResource;
import io.qkcm.testing.TestKubelet;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;

/** The StatefulSet controller against a real API server (the test plays the kubelet). */
@QuarkusTest
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
@TestProfile(StatefulSetControllerTest.Profile.class)
class StatefulSetControllerTest {

    public static class Profile implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("qkcm.controllers", "statefulset-controller,garbage-collector-controller");
        }
    }

    private static final PatchContext MERGE = PatchContext.of(PatchType.JSON_MERGE);
    private static final Duration TIMEOUT = Duration.ofSeconds(90);
    private static final Map<String, String> LABELS = Map.of("app", "web");

    static KubernetesClient client;
    static TestKubelet kubelet;

    @jakarta.inject.Inject
    io.qkcm.manager.ControllerManager manager;

    @Test
    void runsWithUpstreamsWorkersAndQueueName() {
        assertThat(manager.controllers()).filteredOn(c -> c.name().equals("statefulset-controller")).singleElement()
                .satisfies(c -> {
                    io.qkcm.runtime.josdk.OperatorController oc = (io.qkcm.runtime.josdk.OperatorController) c;
                    assertThat(oc.workerCount()).isEqualTo(5);
                    assertThat(oc.reconcilers()).extracting(io.qkcm.runtime.josdk.KeyReconciler::queueName)
                            .containsExactly("statefulset");
                });
    }

    @BeforeAll
    static void setUp() {
        client = RealApiServer.get().newClient();
        kubelet = new TestKubelet(client);
    }

    @AfterAll
    static void tearDown() {
        client.close();
    }

    private static void patch(String ns, String name, String mergePatch) {
        client.apps().statefulSets().inNamespace(ns).withName(name).patch(MERGE, mergePatch);
    }

    private static List<Event> events(String ns, String involvedName) {
        return client.v1().events().inNamespace(ns).list().getItems().stream()
                .filter(e -> involvedName.equals(e.getInvolvedObject().getName())).toList();
    }

    private static List<String> eventMessages(String ns, String name, String reason) {
        return events(ns, name).stream().filter(e -> reason.equals(e.getReason())).map(Event::getMessage).toList();
    }

    /**
     * The pod, or an assertion failure while it does not exist (a pod being replaced during a rollout
     * is briefly absent; inside {@code untilAsserted} that is retried rather than fatal).
     */
    private static Pod podOrNull(String ns, String name) {
        return client.pods().inNamespace(ns).withName(name).get();
    }

    private static Pod pod(String ns, String name) {
        Pod pod = podOrNull(ns, name);
        assertThat(pod).as("pod %s/%s", ns, name).isNotNull();
        return pod;
    }

    private static List<ControllerRevision> revisions(String ns) {
        List<ControllerRevision> list = new ArrayList<>(client.apps().controllerRevisions().inNamespace(ns).list().getItems());
        ControllerHistory.sortControllerRevisions(list);
        return list;
    }

    /** Pod names in the order they were first seen terminating or deleted. */
    private static Watch watchDeletions(String ns, List<String> order) {
        return client.pods().inNamespace(ns).watch(new Watcher<Pod>() {
            @Override
            public void eventReceived(Action action, Pod pod) {
                if (action == Action.DELETED || pod.getMetadata().getDeletionTimestamp() != null) {
                    synchronized (order) {
                        if (!order.contains(pod.getMetadata().getName())) {
                            order.add(pod.getMetadata().getName());
                        }
                    }
                }
            }

            @Override
            public void onClose(WatcherException cause) {
            }
        });
    }

    @Test
    void orderedReadyScalesUpOneAtATimeAndDownInReverseOrder() {
        String ns = newNamespace(client, "sts-ordered");
        StatefulSet created = client.apps().statefulSets().inNamespace(ns)
                .resource(statefulSet("web", 3, LABELS).build()).create();
        try (StsTestSupport.KubeletLoop loop = new StsTestSupport.KubeletLoop(client, ns, false)) {
            for (int i = 0; i < 3; i++) {
                String name = "web-" + i;
                await().atMost(TIMEOUT).until(() -> podOrNull(ns, name) != null);
                int expected = i + 1;
                // the next ordinal waits for this one to be Running and Ready
                await().during(Duration.ofSeconds(2)).atMost(TIMEOUT).until(() -> pods(client, ns).size() == expected);
                Pod p = pod(ns, name);
                assertThat(p.getMetadata().getLabels()).containsAllEntriesOf(LABELS)
                        .containsEntry("statefulset.kubernetes.io/pod-name", name)
                        .containsEntry("apps.kubernetes.io/pod-index", Integer.toString(i))
                        .containsKey("controller-revision-hash");
                assertThat(p.getSpec().getHostname()).isEqualTo(name);
                assertThat(p.getSpec().getSubdomain()).isEqualTo("web");
                assertThat(p.getMetadata().getGenerateName()).isEqualTo("web-");
                OwnerReference ref = p.getMetadata().getOwnerReferences().get(0);
                assertThat(ref.getKind()).isEqualTo("StatefulSet");
                assertThat(ref.getUid()).isEqualTo(created.getMetadata().getUid());
                assertThat(ref.getController()).isTrue();
                assertThat(ref.getBlockOwnerDeletion()).isTrue();
                kubelet.runningAndReady(p);
            }
            await().atMost(TIMEOUT).untilAsserted(() -> {
                StatefulSet s = get(client, ns, "web");
                assertThat(n(s.getStatus().getReplicas())).isEqualTo(3);
                assertThat(n(s.getStatus().getReadyReplicas())).isEqualTo(3);
                assertThat(n(s.getStatus().getAvailableReplicas())).isEqualTo(3);
                assertThat(n(s.getStatus().getCurrentReplicas())).isEqualTo(3);
                assertThat(n(s.getStatus().getUpdatedReplicas())).isEqualTo(3);
                assertThat(s.getStatus().getObservedGeneration()).isEqualTo(s.getMetadata().getGeneration());
                assertThat(s.getStatus().getCollisionCount()).isZero();
                List<ControllerRevision> revs = revisions(ns);
                assertThat(revs).hasSize(1);
                assertThat(s.getStatus().getCurrentRevision()).isEqualTo(revs.get(0).getMetadata().getName())
                        .isEqualTo(s.getStatus().getUpdateRevision());
            });
            String revision = get(client, ns, "web").getStatus().getUpdateRevision();
            ControllerRevision rev = revisions(ns).get(0);
            assertThat(rev.getRevision()).isEqualTo(1L);
            assertThat(rev.getMetadata().getLabels()).containsAllEntriesOf(LABELS)
                    .containsEntry(ControllerHistory.REVISION_HASH_LABEL, revision.substring("web-".length()));
            assertThat(ControllerHistory.rawData(rev)).isEqualTo(StatefulSetUtils.getPatch(get(client, ns, "web")));
            assertThat(pods(client, ns)).allSatisfy(p -> assertThat(p.getMetadata().getLabels())
                    .containsEntry("controller-revision-hash", revision));
            assertThat(eventMessages(ns, "web", "SuccessfulCreate")).contains(
                    "create Pod web-0 in StatefulSet web successful", "create Pod web-1 in StatefulSet web successful",
                    "create Pod web-2 in StatefulSet web successful");
            assertThat(events(ns, "web").get(0).getSource().getComponent()).isEqualTo("statefulset-controller");

            List<String> order = Collections.synchronizedList(new ArrayList<>());
            Watch watch = watchDeletions(ns, order);
            try {
                loop.autoReady = true;
                patch(ns, "web", "{\"spec\":{\"replicas\":1}}");
                await().atMost(TIMEOUT).untilAsserted(() -> {
                    assertThat(podNames(client, ns)).containsExactly("web-0");
                    StatefulSet s = get(client, ns, "web");
                    assertThat(n(s.getStatus().getReplicas())).isEqualTo(1);
                    assertThat(n(s.getStatus().getReadyReplicas())).isEqualTo(1);
                });
                assertThat(order).containsExactly("web-2", "web-1");
                await().atMost(TIMEOUT).untilAsserted(() -> assertThat(eventMessages(ns, "web", "SuccessfulDelete"))
                        .contains("delete Pod web-2 in StatefulSet web successful",
                                "delete Pod web-1 in StatefulSet web successful"));
            } finally {
                watch.close();
            }
        }
    }

    @Test
    void parallelCreatesEveryPodAtOnceAndStartsAtOrdinalsStart() {
        String ns = newNamespace(client, "sts-parallel");
        client.apps().statefulSets().inNamespace(ns).resource(statefulSet("web", 3, LABELS).editSpec()
                .withPodManagementPolicy("Parallel").withNewOrdinals(5).endSpec().build()).create();
        // no kubelet: nothing becomes Ready, yet all three exist
        await().atMost(TIMEOUT).untilAsserted(() -> assertThat(podNames(client, ns))
                .containsExactly("web-5", "web-6", "web-7"));
        assertThat(pod(ns, "web-6").getMetadata().getLabels()).containsEntry("apps.kubernetes.io/pod-index", "6");
        await().atMost(TIMEOUT).untilAsserted(() -> {
            StatefulSet s = get(client, ns, "web");
            assertThat(n(s.getStatus().getReplicas())).isEqualTo(3);
            assertThat(n(s.getStatus().getReadyReplicas())).isZero();
            assertThat(n(s.getStatus().getAvailableReplicas())).isZero();
        });
        // Parallel scale-down does not wait either
        patch(ns, "web", "{\"spec\":{\"replicas\":1}}");
        await().atMost(TIMEOUT).untilAsserted(() -> assertThat(pods(client, ns).stream()
                .filter(p -> p.getMetadata().getDeletionTimestamp() == null).map(p -> p.getMetadata().getName()))
                .containsExactly("web-5"));
    }

    @Test
    void rollingUpdateWithPartitionThenOnDelete() {
        String ns = newNamespace(client, "sts-rolling");
        client.apps().statefulSets().inNamespace(ns).resource(statefulSet("web", 3, LABELS).editSpec()
                .withNewUpdateStrategy().withType("RollingUpdate").withNewRollingUpdate().withPartition(1)
                .endRollingUpdate().endUpdateStrategy().endSpec().build()).create();
        try (StsTestSupport.KubeletLoop loop = new StsTestSupport.KubeletLoop(client, ns, true)) {
            await().atMost(TIMEOUT).until(() -> n(get(client, ns, "web").getStatus().getReadyReplicas()) == 3);
            String rev1 = get(client, ns, "web").getStatus().getCurrentRevision();
            patch(ns, "web", "{\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"app\",\"image\":\"registry.k8s.io/pause:3.9\"}]}}}}");
            await().atMost(TIMEOUT).untilAsserted(() -> {
                StatefulSet s = get(client, ns, "web");
                String rev2 = s.getStatus().getUpdateRevision();
                assertThat(rev2).isNotEqualTo(rev1);
                assertThat(s.getStatus().getCurrentRevision()).isEqualTo(rev1);
                assertThat(pod(ns, "web-0").getMetadata().getLabels()).containsEntry("controller-revision-hash", rev1);
                assertThat(pod(ns, "web-1").getMetadata().getLabels()).containsEntry("controller-revision-hash", rev2);
                assertThat(pod(ns, "web-2").getMetadata().getLabels()).containsEntry("controller-revision-hash", rev2);
                assertThat(pod(ns, "web-1").getSpec().getContainers().get(0).getImage()).isEqualTo("registry.k8s.io/pause:3.9");
                assertThat(n(s.getStatus().getUpdatedReplicas())).isEqualTo(2);
                assertThat(n(s.getStatus().getCurrentReplicas())).isEqualTo(1);
                assertThat(n(s.getStatus().getReadyReplicas())).isEqualTo(3);
            });
            List<ControllerRevision> revs = revisions(ns);
            assertThat(revs).extracting(ControllerRevision::getRevision).containsExactly(1L, 2L);
            String rev2 = get(client, ns, "web").getStatus().getUpdateRevision();
            assertThat(revs.get(1).getMetadata().getName()).isEqualTo(rev2);
            assertThat(eventMessages(ns, "web", "SuccessfulDelete")).contains(
                    "delete Pod web-2 in StatefulSet web successful", "delete Pod web-1 in StatefulSet web successful")
                    .doesNotContain("delete Pod web-0 in StatefulSet web successful");

            // partition 0: the rollout completes, the current revision becomes the update revision
            patch(ns, "web", "{\"spec\":{\"updateStrategy\":{\"rollingUpdate\":{\"partition\":0}}}}");
            await().atMost(TIMEOUT).untilAsserted(() -> {
                StatefulSet s = get(client, ns, "web");
                assertThat(s.getStatus().getCurrentRevision()).isEqualTo(rev2);
                assertThat(s.getStatus().getUpdateRevision()).isEqualTo(rev2);
                assertThat(n(s.getStatus().getCurrentReplicas())).isEqualTo(3);
                assertThat(n(s.getStatus().getUpdatedReplicas())).isEqualTo(3);
                assertThat(pod(ns, "web-0").getMetadata().getLabels()).containsEntry("controller-revision-hash", rev2);
            });

            // OnDelete: a template change replaces nothing until a pod is deleted
            patch(ns, "web", "{\"spec\":{\"updateStrategy\":{\"type\":\"OnDelete\",\"rollingUpdate\":null},"
                    + "\"template\":{\"metadata\":{\"annotations\":{\"v\":\"3\"}}}}}");
            await().atMost(TIMEOUT).until(() -> {
                StatefulSet s = get(client, ns, "web");
                return !rev2.equals(s.getStatus().getUpdateRevision()) && n(s.getStatus().getUpdatedReplicas()) == 0;
            });
            String rev3 = get(client, ns, "web").getStatus().getUpdateRevision();
            await().during(Duration.ofSeconds(2)).atMost(TIMEOUT).until(() -> pods(client, ns).stream()
                    .allMatch(p -> rev2.equals(p.getMetadata().getLabels().get("controller-revision-hash"))));
            String oldUid = pod(ns, "web-1").getMetadata().getUid();
            client.pods().inNamespace(ns).withName("web-1").delete();
            await().atMost(TIMEOUT).untilAsserted(() -> {
                Pod p = pod(ns, "web-1");
                assertThat(p).isNotNull();
                assertThat(p.getMetadata().getUid()).isNotEqualTo(oldUid);
                assertThat(p.getMetadata().getLabels()).containsEntry("controller-revision-hash", rev3);
                assertThat(p.getMetadata().getAnnotations()).containsEntry("v", "3");
                StatefulSet s = get(client, ns, "web");
                assertThat(n(s.getStatus().getUpdatedReplicas())).isEqualTo(1);
                assertThat(n(s.getStatus().getCurrentReplicas())).isEqualTo(2);
            });
            assertThat(pod(ns, "web-0").getMetadata().getLabels()).containsEntry("controller-revision-hash", rev2);
        }
    }

    private static String kubectl(String... args) throws Exception {
        List<String> cmd = new ArrayList<>();
        cmd.add(System.getProperty("user.home") + "/.kubeapitest/k8s/1.34.4-linux-amd64/kubectl");
        cmd.add("--kubeconfig=" + RealApiServer.get().kubeconfig());
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        assertThat(p.waitFor(120, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
        String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        assertThat(p.exitValue()).as("kubectl %s: %s", String.join(" ", args), out).isZero();
        return out;
    }

    @Test
    void kubectlRolloutStatusHistoryAndUndoReadTheRevisions() throws Exception {
        String ns = newNamespace(client, "sts-kubectl");
        client.apps().statefulSets().inNamespace(ns).resource(statefulSet("web", 2, LABELS).build()).create();
        try (StsTestSupport.KubeletLoop loop = new StsTestSupport.KubeletLoop(client, ns, true)) {
            assertThat(kubectl("rollout", "status", "statefulset/web", "-n", ns, "--timeout=90s"))
                    .contains("partitioned roll out complete: 2 new pods have been updated");
            String rev1 = get(client, ns, "web").getStatus().getCurrentRevision();
            patch(ns, "web", "{\"spec\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"app\",\"image\":\"registry.k8s.io/pause:3.9\"}]}}}}");
            assertThat(kubectl("rollout", "status", "statefulset/web", "-n", ns, "--timeout=90s"))
                    .contains("partitioned roll out complete: 2 new pods have been updated");
            String rev2 = get(client, ns, "web").getStatus().getCurrentRevision();
            assertThat(rev2).isNotEqualTo(rev1);
            String history = kubectl("rollout", "history", "statefulset/web", "-n", ns);
            assertThat(history).containsPattern("(?m)^1\\s").containsPattern("(?m)^2\\s");
            assertThat(kubectl("rollout", "history", "statefulset/web", "-n", ns, "--revision=1"))
                    .contains("registry.k8s.io/pause:3.10");

            kubectl("rollout", "undo", "statefulset/web", "-n", ns);
            await().atMost(TIMEOUT).untilAsserted(() -> {
                StatefulSet s = get(client, ns, "web");
                assertThat(s.getSpec().getTemplate().getSpec().getContainers().get(0).getImage())
                        .isEqualTo("registry.k8s.io/pause:3.10");
                // the first revision is the update revision again, renumbered 3
                assertThat(s.getStatus().getUpdateRevision()).isEqualTo(rev1);
                assertThat(s.getStatus().getCurrentRevision()).isEqualTo(rev1);
                assertThat(n(s.getStatus().getUpdatedReplicas())).isEqualTo(2);
                List<ControllerRevision> revs = revisions(ns);
                assertThat(revs).extracting(r -> r.getMetadata().getName()).containsExactly(rev2, rev1);
                assertThat(revs).extracting(ControllerRevision::getRevision).containsExactly(2L, 3L);
            });
            assertThat(pods(client, ns)).allSatisfy(p -> assertThat(p.getMetadata().getLabels())
                    .containsEntry("controller-revision-hash", rev1));
        }
    }

    @Test
    void minReadySecondsGatesAvailableReplicas() {
        String ns = newNamespace(client, "sts-minready");
        client.apps().statefulSets().inNamespace(ns).resource(statefulSet("web", 1, LABELS).editSpec()
                .withMinReadySeconds(3600).endSpec().build()).create();
        await().atMost(TIMEOUT).until(() -> podOrNull(ns, "web-0") != null);
        kubelet.runningAndReady(pod(ns, "web-0"));
        await().atMost(TIMEOUT).untilAsserted(() -> {
            StatefulSet s = get(client, ns, "web");
            assertThat(n(s.getStatus().getReadyReplicas())).isEqualTo(1);
            assertThat(n(s.getStatus().getAvailableReplicas())).isZero();
        });
        // Ready for two hours already: available
        kubelet.running(pod(ns, "web-0"), true, java.time.Instant.now().minusSeconds(7200));
        await().atMost(TIMEOUT).untilAsserted(() -> {
            StatefulSet s = get(client, ns, "web");
            assertThat(n(s.getStatus().getAvailableReplicas())).isEqualTo(1);
        });
    }

    @Test
    void orphanedPodsAndRevisionsAreAdoptedByANewSet() {
        String ns = newNamespace(client, "sts-adopt");
        try (StsTestSupport.KubeletLoop loop = new StsTestSupport.KubeletLoop(client, ns, true)) {
            client.apps().statefulSets().inNamespace(ns).resource(statefulSet("web", 2, LABELS).build()).create();
            await().atMost(TIMEOUT).until(() -> n(get(client, ns, "web").getStatus().getReadyReplicas()) == 2);
            String revision = get(client, ns, "web").getStatus().getCurrentRevision();
            List<String> uids = pods(client, ns).stream().map(p -> p.getMetadata().getUid()).toList();
            // a pod matching the selector but not named after the set is never adopted
            client.pods().inNamespace(ns).resource(new io.fabric8.kubernetes.api.model.PodBuilder().withNewMetadata()
                    .withName("stranger-0").withLabels(LABELS).endMetadata().withNewSpec().addNewContainer()
                    .withName("app").withImage("registry.k8s.io/pause:3.10").endContainer().endSpec().build()).create();

            client.apps().statefulSets().inNamespace(ns).withName("web")
                    .withPropagationPolicy(io.fabric8.kubernetes.api.model.DeletionPropagation.ORPHAN).delete();
            await().atMost(TIMEOUT).untilAsserted(() -> {
                assertThat(get(client, ns, "web")).isNull();
                assertThat(pods(client, ns)).allSatisfy(p -> assertThat(p.getMetadata().getOwnerReferences()).isNullOrEmpty());
                assertThat(revisions(ns)).allSatisfy(r -> assertThat(r.getMetadata().getOwnerReferences()).isNullOrEmpty());
            });

            StatefulSet again = client.apps().statefulSets().inNamespace(ns)
                    .resource(statefulSet("web", 2, LABELS).build()).create();
            await().atMost(TIMEOUT).untilAsserted(() -> {
                for (Pod p : pods(client, ns)) {
                    if (p.getMetadata().getName().startsWith("web-")) {
                        assertThat(p.getMetadata().getOwnerReferences()).singleElement()
                                .satisfies(r -> assertThat(r.getUid()).isEqualTo(again.getMetadata().getUid()));
                    } else {
                        assertThat(p.getMetadata().getOwnerReferences()).isNullOrEmpty();
                    }
                }
                assertThat(revisions(ns)).singleElement().satisfies(r -> {
                    assertThat(r.getMetadata().getName()).isEqualTo(revision);
                    assertThat(r.getMetadata().getOwnerReferences()).singleElement()
                            .satisfies(ref -> assertThat(ref.getUid()).isEqualTo(again.getMetadata().getUid()));
                });
                StatefulSet s = get(client, ns, "web");
                assertThat(s.getStatus().getCurrentRevision()).isEqualTo(revision);
                assertThat(n(s.getStatus().getReadyReplicas())).isEqualTo(2);
            });
            // the same pods, adopted, not replaced
            assertThat(pods(client, ns).stream().filter(p -> p.getMetadata().getName().startsWith("web-"))
                    .map(p -> p.getMetadata().getUid())).containsExactlyInAnyOrderElementsOf(uids);
        }
    }

    @Test
    void aRevisionWrittenByAnOlderReleaseIsReusedNotRolled() {
        // the template as the API server defaults it, from a throwaway set
        String probeNs = newNamespace(client, "sts-semantic-probe");
        StatefulSet probe = client.apps().statefulSets().inNamespace(probeNs)
                .resource(statefulSet("web", 0, LABELS).build()).create();
        String current = StatefulSetUtils.getPatch(probe);
        assertThat(current).contains("\"metadata\":{\"labels\"");
        // upstream before 1.34 wrote the template's zero creationTimestamp as null
        String older = current.replace("\"metadata\":{\"labels\"", "\"metadata\":{\"creationTimestamp\":null,\"labels\"");

        String ns = newNamespace(client, "sts-semantic");
        ControllerRevision old = new ControllerRevision();
        old.setMetadata(new io.fabric8.kubernetes.api.model.ObjectMetaBuilder().withName("web-older").withNamespace(ns)
                .withLabels(LABELS).build());
        old.setData(new com.fasterxml.jackson.databind.util.RawValue(older));
        old.setRevision(1L);
        client.apps().controllerRevisions().inNamespace(ns).resource(old).create();
        try (StsTestSupport.KubeletLoop loop = new StsTestSupport.KubeletLoop(client, ns, true)) {
            StatefulSet set = client.apps().statefulSets().inNamespace(ns)
                    .resource(statefulSet("web", 2, LABELS).build()).create();
            await().atMost(TIMEOUT).untilAsserted(() -> {
                StatefulSet s = get(client, ns, "web");
                assertThat(s.getStatus().getUpdateRevision()).isEqualTo("web-older");
                assertThat(s.getStatus().getCurrentRevision()).isEqualTo("web-older");
                assertThat(n(s.getStatus().getReadyReplicas())).isEqualTo(2);
            });
            assertThat(revisions(ns)).singleElement().satisfies(r -> {
                assertThat(ControllerHistory.rawData(r)).isEqualTo(older);
                assertThat(r.getMetadata().getOwnerReferences()).singleElement()
                        .satisfies(ref -> assertThat(ref.getUid()).isEqualTo(set.getMetadata().getUid()));
            });
            assertThat(pods(client, ns)).allSatisfy(p -> assertThat(p.getMetadata().getLabels())
                    .containsEntry("controller-revision-hash", "web-older"));
        }
    }

    /** The web set with a template that leaves to the API server what it defaults (probe, port, env, volume, resources). */
    private static StatefulSet undefaultedSet(int replicas) {
        StatefulSet set = statefulSet("web", replicas, LABELS).build();
        io.fabric8.kubernetes.api.model.PodSpec spec = set.getSpec().getTemplate().getSpec();
        spec.setDnsPolicy(null);
        spec.setRestartPolicy(null);
        spec.setSecurityContext(null);
        spec.setTerminationGracePeriodSeconds(null);
        spec.setSchedulerName(null);
        io.fabric8.kubernetes.api.model.Container c = spec.getContainers().get(0);
        c.setImagePullPolicy(null);
        c.setTerminationMessagePath(null);
        c.setTerminationMessagePolicy(null);
        c.setPorts(List.of(new io.fabric8.kubernetes.api.model.ContainerPortBuilder().withName("http")
                .withContainerPort(8080).build()));
        c.setReadinessProbe(new io.fabric8.kubernetes.api.model.ProbeBuilder().withNewHttpGet()
                .withPort(new io.fabric8.kubernetes.api.model.IntOrString("http")).endHttpGet().build());
        c.setEnv(List.of(new io.fabric8.kubernetes.api.model.EnvVarBuilder().withName("POD").withNewValueFrom()
                .withNewFieldRef().withFieldPath("metadata.name").endFieldRef().endValueFrom().build()));
        c.setResources(new io.fabric8.kubernetes.api.model.ResourceRequirementsBuilder()
                .addToRequests("cpu", new Quantity("0.1")).addToLimits("memory", new Quantity("1.5Gi")).build());
        c.setVolumeMounts(List.of(new io.fabric8.kubernetes.api.model.VolumeMountBuilder().withName("cfg")
                .withMountPath("/cfg").build(), new io.fabric8.kubernetes.api.model.VolumeMountBuilder()
                        .withName("scratch").withMountPath("/scratch").build()));
        spec.setVolumes(List.of(new io.fabric8.kubernetes.api.model.VolumeBuilder().withName("cfg").withNewConfigMap()
                .withName("cfg").endConfigMap().build(),
                new io.fabric8.kubernetes.api.model.VolumeBuilder().withName("scratch").build()));
        return set;
    }

    @Test
    void aRevisionStoredWithoutTodaysDefaultsIsReusedNotRolled() {
        // the revision as a release that stored the template without the API server's defaults would have it
        StatefulSet local = undefaultedSet(2);
        String older = StatefulSetUtils.getPatch(local);
        assertThat(older).doesNotContain("imagePullPolicy").doesNotContain("dnsPolicy").doesNotContain("defaultMode");

        String ns = newNamespace(client, "sts-defaults");
        ControllerRevision old = new ControllerRevision();
        old.setMetadata(new io.fabric8.kubernetes.api.model.ObjectMetaBuilder().withName("web-undefaulted")
                .withNamespace(ns).withLabels(LABELS).build());
        old.setData(new com.fasterxml.jackson.databind.util.RawValue(older));
        old.setRevision(1L);
        client.apps().controllerRevisions().inNamespace(ns).resource(old).create();
        try (StsTestSupport.KubeletLoop loop = new StsTestSupport.KubeletLoop(client, ns, true)) {
            StatefulSet set = client.apps().statefulSets().inNamespace(ns).resource(undefaultedSet(2)).create();
            // the API server defaulted the set's template: only the defaulting makes the two revisions equal
            ControllerRevision proposed = StatefulSetUtils.newRevision(set, 2, null);
            assertThat(ControllerHistory.rawData(proposed)).isNotEqualTo(older).contains("\"imagePullPolicy\":\"IfNotPresent\"")
                    .contains("\"defaultMode\":420").contains("\"cpu\":\"100m\"");
            StatefulSet restored = StatefulSetUtils.applyRevision(set, old);
            assertThat(ControllerHistory.equalRevision(proposed, StatefulSetUtils.newRevision(restored, -1, null, null)))
                    .isFalse();
            assertThat(ControllerHistory.equalRevision(proposed, StatefulSetUtils.newRevision(restored, -1, null, PodTemplateDefaults.DEFAULT_GATES)))
                    .isTrue();

            await().atMost(TIMEOUT).untilAsserted(() -> {
                StatefulSet s = get(client, ns, "web");
                assertThat(s.getStatus().getUpdateRevision()).isEqualTo("web-undefaulted");
                assertThat(s.getStatus().getCurrentRevision()).isEqualTo("web-undefaulted");
                assertThat(n(s.getStatus().getReadyReplicas())).isEqualTo(2);
            });
            // scaling up syncs again: the same revision still serves, and nothing is rolled
            client.apps().statefulSets().inNamespace(ns).withName("web").scale(3);
            await().atMost(TIMEOUT).untilAsserted(() -> {
                StatefulSet s = get(client, ns, "web");
                assertThat(n(s.getStatus().getReadyReplicas())).isEqualTo(3);
                assertThat(s.getStatus().getUpdateRevision()).isEqualTo("web-undefaulted");
                assertThat(s.getStatus().getCurrentRevision()).isEqualTo("web-undefaulted");
                assertThat(n(s.getStatus().getUpdatedReplicas())).isEqualTo(3);
            });
            assertThat(revisions(ns)).singleElement().satisfies(r -> {
                assertThat(r.getMetadata().getName()).isEqualTo("web-undefaulted");
                assertThat(ControllerHistory.rawData(r)).isEqualTo(older);
                assertThat(r.getMetadata().getOwnerReferences()).singleElement()
                        .satisfies(ref -> assertThat(ref.getUid()).isEqualTo(set.getMetadata().getUid()));
            });
            assertThat(pods(client, ns)).hasSize(3).allSatisfy(p -> {
                assertThat(p.getMetadata().getLabels()).containsEntry("controller-revision-hash", "web-undefaulted");
                assertThat(p.getMetadata().getDeletionTimestamp()).isNull();
            });
        }
    }

    @Test
    void failedPodIsDeletedAndRecreated() {
        String ns = newNamespace(client, "sts-failed");
        client.apps().statefulSets().inNamespace(ns).resource(statefulSet("web", 2, LABELS).build()).create();
        try (StsTestSupport.KubeletLoop loop = new StsTestSupport.KubeletLoop(client, ns, true)) {
            await().atMost(TIMEOUT).until(() -> n(get(client, ns, "web").getStatus().getReadyReplicas()) == 2);
            loop.autoReady = false;
            String uid = pod(ns, "web-1").getMetadata().getUid();
            kubelet.failed(pod(ns, "web-1"));
            await().atMost(TIMEOUT).untilAsserted(() -> {
                Pod p = pod(ns, "web-1");
                assertThat(p).isNotNull();
                assertThat(p.getMetadata().getUid()).isNotEqualTo(uid);
            });
            assertThat(eventMessages(ns, "web", "SuccessfulDelete")).contains("delete Pod web-1 in StatefulSet web successful");
            loop.autoReady = true;
            await().atMost(TIMEOUT).until(() -> n(get(client, ns, "web").getStatus().getReadyReplicas()) == 2);
        }
    }

    private static PersistentVolumeClaim claimTemplate(String name) {
        return new PersistentVolumeClaimBuilder().withNewMetadata().withName(name).addToLabels("tier", "db")
                .endMetadata().withNewSpec().withAccessModes("ReadWriteOnce").withNewResources()
                .addToRequests("storage", new Quantity("1Gi")).endResources().endSpec().build();
    }

    private static PersistentVolumeClaim pvc(String ns, String name) {
        return client.persistentVolumeClaims().inNamespace(ns).withName(name).get();
    }

    @Test
    void claimsFromTemplatesAndTheirRetentionPolicy() {
        String ns = newNamespace(client, "sts-pvc");
        StatefulSet created = client.apps().statefulSets().inNamespace(ns).resource(statefulSet("db", 2, LABELS)
                .editSpec().withVolumeClaimTemplates(claimTemplate("data"))
                .withNewPersistentVolumeClaimRetentionPolicy().withWhenDeleted("Delete").withWhenScaled("Delete")
                .endPersistentVolumeClaimRetentionPolicy().endSpec().build()).create();
        try (StsTestSupport.KubeletLoop loop = new StsTestSupport.KubeletLoop(client, ns, true)) {
            await().atMost(TIMEOUT).until(() -> n(get(client, ns, "db").getStatus().getReadyReplicas()) == 2);
            for (int i = 0; i < 2; i++) {
                PersistentVolumeClaim c = pvc(ns, "data-db-" + i);
                assertThat(c).isNotNull();
                assertThat(c.getMetadata().getLabels()).containsEntry("tier", "db").containsAllEntriesOf(LABELS);
                // WhenDeleted=Delete: the set is the claim's controller
                assertThat(c.getMetadata().getOwnerReferences()).singleElement().satisfies(ref -> {
                    assertThat(ref.getKind()).isEqualTo("StatefulSet");
                    assertThat(ref.getUid()).isEqualTo(created.getMetadata().getUid());
                    assertThat(ref.getController()).isTrue();
                    assertThat(ref.getBlockOwnerDeletion()).isTrue();
                });
                Pod p = pod(ns, "db-" + i);
                String claimName = "data-db-" + i;
                assertThat(p.getSpec().getVolumes()).anySatisfy(v -> {
                    assertThat(v.getName()).isEqualTo("data");
                    assertThat(v.getPersistentVolumeClaim().getClaimName()).isEqualTo(claimName);
                });
            }
            assertThat(eventMessages(ns, "db", "SuccessfulCreate"))
                    .contains("create Claim data-db-0 Pod db-0 in StatefulSet db success");

            // WhenScaled=Delete: the scaled-down ordinal's claim is handed to its pod, and goes with it
            String pod1Uid = pod(ns, "db-1").getMetadata().getUid();
            patch(ns, "db", "{\"spec\":{\"replicas\":1}}");
            await().atMost(TIMEOUT).untilAsserted(() -> {
                PersistentVolumeClaim c = pvc(ns, "data-db-1");
                // gone, or held by the pvc-protection finalizer once the garbage collector deleted it
                assertThat(c == null || c.getMetadata().getDeletionTimestamp() != null).isTrue();
                assertThat(podNames(client, ns)).containsExactly("db-0");
            });
            assertThat(pvc(ns, "data-db-0").getMetadata().getDeletionTimestamp()).isNull();
            assertThat(pod1Uid).isNotNull();

            // WhenDeleted=Delete: the set's claims go with the set (the garbage collector follows the references)
            client.apps().statefulSets().inNamespace(ns).withName("db").delete();
            await().atMost(TIMEOUT).untilAsserted(() -> {
                PersistentVolumeClaim c = pvc(ns, "data-db-0");
                assertThat(c == null || c.getMetadata().getDeletionTimestamp() != null).isTrue();
            });
        }
    }

    @Test
    void forbiddenClaimCreationGivesFailedCreateAndBacksOff() {
        String ns = newNamespace(client, "sts-quota");
        ResourceQuota quota = client.resourceQuotas().inNamespace(ns).resource(new ResourceQuotaBuilder()
                .withNewMetadata().withName("claims").endMetadata().withNewSpec()
                .addToHard("persistentvolumeclaims", new Quantity("0")).endSpec().build()).create();
        // no resourcequota controller runs here: publish the quota's status as it would
        quota.setStatus(new io.fabric8.kubernetes.api.model.ResourceQuotaStatusBuilder()
                .addToHard("persistentvolumeclaims", new Quantity("0"))
                .addToUsed("persistentvolumeclaims", new Quantity("0")).build());
        client.resourceQuotas().inNamespace(ns).resource(quota).updateStatus();

        client.apps().statefulSets().inNamespace(ns).resource(statefulSet("db", 1, LABELS).editSpec()
                .withVolumeClaimTemplates(claimTemplate("data")).endSpec().build()).create();
        await().atMost(TIMEOUT).untilAsserted(() -> {
            List<Event> failed = events(ns, "db").stream().filter(e -> "FailedCreate".equals(e.getReason())).toList();
            assertThat(failed).anySatisfy(e -> {
                assertThat(e.getType()).isEqualTo("Warning");
                assertThat(e.getMessage()).startsWith(
                        "create Claim data-db-0 for Pod db-0 in StatefulSet db failed error: persistentvolumeclaims \"data-db-0\" is forbidden: exceeded quota: claims");
            });
            assertThat(failed).anySatisfy(e -> assertThat(e.getMessage()).startsWith(
                    "create Pod db-0 in StatefulSet db failed error: failed to create PVC data-db-0: persistentvolumeclaims \"data-db-0\" is forbidden"));
        });
        assertThat(pods(client, ns)).isEmpty();
        // the retries back off (client-go's per-item exponential limiter): after 5 s far fewer than the
        // hundreds of attempts a hot loop would make; the event series counts them
        await().pollDelay(Duration.ofSeconds(5)).atMost(TIMEOUT).until(() -> true);
        int attempts = events(ns, "db").stream().filter(e -> "FailedCreate".equals(e.getReason()))
                .filter(e -> e.getMessage().startsWith("create Claim"))
                .mapToInt(e -> e.getCount() == null ? 1 : e.getCount()).sum();
        assertThat(attempts).isBetween(1, 20);
        assertThat(pods(client, ns)).isEmpty();
    }
}
