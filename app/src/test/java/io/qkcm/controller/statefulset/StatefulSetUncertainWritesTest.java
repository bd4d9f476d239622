package io.qkcm.controller.statefulset;

import static io.qkcm.controller.statefulset.StsTestSupport.podNames;
import static io.qkcm.controller.statefulset.StsTestSupport.statefulSet;
import static io.qkcm.testing.TestNamespaces.newNamespace;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;

import jakarta.inject.Inject;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.qkcm.controller.ApiErrors;
import io.qkcm.controller.PodUtil;
import io.qkcm.runtime.events.EventRecorder;
import io.qkcm.testing.ControllerHarness;
import io.qkcm.testing.ManagerOffProfile;
import io.qkcm.testing.RealApiServer;
import io.qkcm.testing.RealApiServerResource;
import io.qkcm.testing.StallingProxy;
import io.qkcm.testing.TestKubelet;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpClosedException;

/**
 * StatefulSet pod writes whose answer is lost: the API server performed the write, the connection closed
 * before the response, and the watch that would have shown it is on the same broken network (the
 * controller's informers connect through a {@link StallingProxy}, its writes go directly). Upstream's
 * StatefulSet controller has no expectations: from the stale cache it writes again. It still never has
 * two pods for one ordinal, because it names each pod {@code <set>-<ordinal>}: the API server keeps a name
 * taken until the pod's object is removed (a terminating pod included), so a second creation answers
 * AlreadyExists, a repeated deletion names the same pod, and the controller never goes past an ordinal it
 * cannot see. Each pod's history is read from a watch of the API server itself, not through the proxy.
 * Syncs are driven by hand, so every step is deterministic.
 */
@QuarkusTest
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
@TestProfile(ManagerOffProfile.class)
class StatefulSetUncertainWritesTest {

    private static final Map<String, String> LABELS = Map.of("app", "lost-answer");
    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    @Inject
    Vertx vertx;

    static KubernetesClient client;
    static TestKubelet kubelet;

    @BeforeAll
    static void setUp() {
        client = RealApiServer.get().newClient();
        kubelet = new TestKubelet(client);
    }

    @AfterAll
    static void tearDown() {
        client.close();
    }

    /** Performs each pod write, then, while {@code lose} is set, stalls the cache's proxy and throws what a lost answer throws. */
    static final class LostAnswers extends StatefulPodControl {
        final StallingProxy cacheProxy;
        final AtomicBoolean lose = new AtomicBoolean();
        /** When set, only this pod's writes are lost while {@code lose} is set. */
        volatile String only;
        final List<String> creates = new CopyOnWriteArrayList<>();
        final List<String> deletes = new CopyOnWriteArrayList<>();

        LostAnswers(KubernetesClient client, SharedIndexInformer<Pod> pods, SharedIndexInformer<PersistentVolumeClaim> claims,
                EventRecorder recorder, boolean autoDeletePVC, StallingProxy cacheProxy) {
            super(client, pods, claims, recorder, autoDeletePVC);
            this.cacheProxy = cacheProxy;
        }

        private boolean losing(Pod pod) {
            return lose.get() && (only == null || only.equals(pod.getMetadata().getName()));
        }

        private void maybeLose(Pod pod) {
            if (losing(pod)) {
                throw new KubernetesClientException("Connection was closed", new HttpClosedException("Connection was closed"));
            }
        }

        @Override
        void createPod(Pod pod) {
            creates.add(pod.getMetadata().getName());
            if (losing(pod)) {
                cacheProxy.stall();
            }
            super.createPod(pod);
            maybeLose(pod);
        }

        @Override
        void deletePod(Pod pod) {
            deletes.add(pod.getMetadata().getName());
            if (losing(pod)) {
                cacheProxy.stall();
            }
            super.deletePod(pod);
            maybeLose(pod);
        }
    }

    private record Setup(ControllerHarness<StatefulSetController> harness, LostAnswers pods) {
    }

    private Setup newController(StallingProxy proxy) throws Exception {
        Path kubeconfig = Files.createTempFile("sts-lost-answers", ".kubeconfig");
        String server = client.getConfiguration().getMasterUrl().replaceAll("/$", "");
        Files.writeString(kubeconfig, Files.readString(RealApiServer.get().kubeconfig()).replace(server, proxy.url()));
        LostAnswers[] wrapper = new LostAnswers[1];
        ControllerHarness<StatefulSetController> harness = ControllerHarness.withInformersVia(vertx,
                StatefulSetController.NAME, kubeconfig, ctx -> new StatefulSetController(ctx, 1,
                        (c, pods, claims, recorder, autoDelete) -> wrapper[0] = new LostAnswers(c, pods, claims, recorder,
                                autoDelete, proxy)));
        harness.startInformers();
        return new Setup(harness, wrapper[0]);
    }

    /**
     * Every pod object of a namespace as the API server reports it (a watch on the test's own
     * connection): for each name, the UIDs in the order they were added, and whether a pod was ever
     * added while another with its name (its ordinal) still existed.
     */
    static final class PodHistory implements AutoCloseable {
        private final Watch watch;
        private final Map<String, String> live = new HashMap<>();
        private final Map<String, List<String>> added = new HashMap<>();
        private final List<String> violations = new ArrayList<>();

        PodHistory(String ns) {
            watch = client.pods().inNamespace(ns).watch(new Watcher<Pod>() {
                @Override
                public void eventReceived(Action action, Pod pod) {
                    record(action, pod);
                }

                @Override
                public void onClose(WatcherException cause) {
                }
            });
        }

        private synchronized void record(Watcher.Action action, Pod pod) {
            String name = pod.getMetadata().getName();
            String uid = pod.getMetadata().getUid();
            int ordinal = StatefulSetUtils.ordinal(pod);
            if (ordinal < 0) {
                violations.add(name + " has no ordinal");
            }
            String key = "ordinal " + ordinal;
            switch (action) {
                case ADDED -> {
                    String before = live.put(key, uid);
                    if (before != null && !before.equals(uid)) {
                        violations.add(name + " " + uid + " added while " + before + " exists");
                    }
                    added.computeIfAbsent(name, n -> new ArrayList<>()).add(uid);
                }
                case DELETED -> live.remove(key, uid);
                default -> {
                    if (!uid.equals(live.get(key))) {
                        violations.add(name + " " + uid + " modified while " + live.get(key) + " is the live pod");
                    }
                }
            }
        }

        synchronized List<String> added(String name) {
            return List.copyOf(added.getOrDefault(name, List.of()));
        }

        synchronized List<String> violations() {
            return List.copyOf(violations);
        }

        @Override
        public void close() {
            watch.close();
        }
    }

    private static Pod cached(ControllerHarness<?> h, String ns, String name) {
        return h.informers.informerFor(Pod.class).getStore().getByKey(ns + "/" + name);
    }

    private static Pod live(String ns, String name) {
        return client.pods().inNamespace(ns).withName(name).get();
    }

    /** The controller's cache holds the set as the API server has it, and the pod as the API server has it (or not at all). */
    private static void awaitCaught(ControllerHarness<?> h, String ns, String... podNames) {
        await().atMost(TIMEOUT).until(() -> {
            StatefulSet server = client.apps().statefulSets().inNamespace(ns).withName("web").get();
            StatefulSet cachedSet = h.informers.informerFor(StatefulSet.class).getStore().getByKey(ns + "/web");
            if (cachedSet == null || !server.getMetadata().getResourceVersion().equals(cachedSet.getMetadata().getResourceVersion())) {
                return false;
            }
            for (String name : podNames) {
                Pod l = live(ns, name);
                Pod c = cached(h, ns, name);
                if (l == null ? c != null
                        : c == null || !l.getMetadata().getResourceVersion().equals(c.getMetadata().getResourceVersion())) {
                    return false;
                }
            }
            return true;
        });
    }

    /** One sync; an error (the stale cache's status conflicts, the write's own error) only logged: the objects are what is checked. */
    private static void syncIgnoringErrors(ControllerHarness<StatefulSetController> h, String key) {
        try {
            h.controller.sync(key);
        } catch (Exception e) {
            // retried by the next sync, as the queue would
        }
    }

    /** Syncs, lets the kubelet run each new pod, until pods web-0..web-(n-1) are Running and Ready in the cache (web-n not made yet). */
    private static void scaleUpReady(ControllerHarness<StatefulSetController> h, String ns, String key, int n)
            throws Exception {
        for (int i = 0; i < n; i++) {
            String name = "web-" + i;
            h.controller.sync(key);
            await().atMost(TIMEOUT).until(() -> cached(h, ns, name) != null);
            kubelet.runningAndReady(live(ns, name));
            await().atMost(TIMEOUT).until(() -> cached(h, ns, name) != null && PodUtil.isReady(cached(h, ns, name)));
        }
    }

    @Test
    void aCreationWhoseAnswerIsLostNeverMakesASecondPodForItsOrdinal() throws Exception {
        String ns = newNamespace(client, "sts-lost-create");
        URI apiServer = URI.create(client.getConfiguration().getMasterUrl());
        try (PodHistory history = new PodHistory(ns); StallingProxy proxy = new StallingProxy(apiServer)) {
            Setup s = newController(proxy);
            try (ControllerHarness<StatefulSetController> h = s.harness()) {
                client.apps().statefulSets().inNamespace(ns).resource(statefulSet("web", 3, LABELS).build()).create();
                String key = ns + "/web";
                awaitCaught(h, ns);
                scaleUpReady(h, ns, key, 1);
                awaitCaught(h, ns, "web-0");

                // OrderedReady: web-1 is created, its answer lost, and the cache does not show it
                s.pods().lose.set(true);
                assertThatThrownBy(() -> h.controller.sync(key))
                        .satisfies(e -> assertThat(ApiErrors.isOutcomeUnknown(e)).as("%s", e).isTrue());
                s.pods().lose.set(false);
                assertThat(podNames(client, ns)).containsExactly("web-0", "web-1");
                assertThat(cached(h, ns, "web-1")).isNull();
                // the kubelet even runs it: only the controller's cache does not know
                kubelet.runningAndReady(live(ns, "web-1"));

                // from the stale cache the controller creates web-1 again: the name is taken
                for (int i = 0; i < 3; i++) {
                    assertThatThrownBy(() -> h.controller.sync(key))
                            .satisfies(e -> assertThat(ApiErrors.isAlreadyExists(e)).as("%s", e).isTrue());
                }
                // and never goes past the ordinal it cannot see
                assertThat(podNames(client, ns)).containsExactly("web-0", "web-1");
                assertThat(s.pods().creates).containsExactly("web-0", "web-1", "web-1", "web-1", "web-1");
                assertThat(s.pods().deletes).isEmpty();

                proxy.resume();
                await().atMost(TIMEOUT).until(() -> cached(h, ns, "web-1") != null && PodUtil.isReady(cached(h, ns, "web-1")));
                h.controller.sync(key);
                await().atMost(TIMEOUT).until(() -> cached(h, ns, "web-2") != null);
                kubelet.runningAndReady(live(ns, "web-2"));
                await().atMost(TIMEOUT).until(() -> PodUtil.isReady(cached(h, ns, "web-2")));
                h.controller.sync(key);

                assertThat(podNames(client, ns)).containsExactly("web-0", "web-1", "web-2");
                assertThat(s.pods().creates).containsExactly("web-0", "web-1", "web-1", "web-1", "web-1", "web-2");
                for (String name : List.of("web-0", "web-1", "web-2")) {
                    assertThat(history.added(name)).as(name).hasSize(1);
                }
                assertThat(history.violations()).isEmpty();
            }
        }
    }

    /**
     * Parallel: the pods are created in slow-start batches (web-0, then web-1 and web-2 at once); web-1's
     * answer is lost. The controller does not stop at that ordinal; from the stale cache it creates every
     * pod it cannot see again, and each is refused by name.
     */
    @Test
    void parallelCreationsWhoseAnswerIsLostAreRefusedByName() throws Exception {
        String ns = newNamespace(client, "sts-lost-parallel");
        URI apiServer = URI.create(client.getConfiguration().getMasterUrl());
        try (PodHistory history = new PodHistory(ns); StallingProxy proxy = new StallingProxy(apiServer)) {
            Setup s = newController(proxy);
            try (ControllerHarness<StatefulSetController> h = s.harness()) {
                client.apps().statefulSets().inNamespace(ns).resource(statefulSet("web", 3, LABELS).editSpec()
                        .withPodManagementPolicy("Parallel").endSpec().build()).create();
                String key = ns + "/web";
                awaitCaught(h, ns);

                s.pods().only = "web-1";
                s.pods().lose.set(true);
                assertThatThrownBy(() -> h.controller.sync(key))
                        .satisfies(e -> assertThat(ApiErrors.isOutcomeUnknown(e)).as("%s", e).isTrue());
                s.pods().lose.set(false);
                assertThat(podNames(client, ns)).containsExactly("web-0", "web-1", "web-2");
                assertThat(cached(h, ns, "web-1")).isNull();

                // every pod the stale cache lacks (web-1; web-2 too when the stall came before its event) is refused
                for (int i = 0; i < 3; i++) {
                    assertThatThrownBy(() -> h.controller.sync(key)).satisfies(e -> {
                        // one error, or upstream's aggregate of the batch's errors (its cause the first)
                        Throwable first = e instanceof KubernetesClientException ? e : e.getCause();
                        assertThat(ApiErrors.isAlreadyExists(first)).as("%s", e).isTrue();
                        assertThat(e.getMessage()).contains("pods \"web-1\" already exists");
                    });
                }
                assertThat(podNames(client, ns)).containsExactly("web-0", "web-1", "web-2");
                assertThat(s.pods().creates).contains("web-1").doesNotContain("web-3", "web-01")
                        .filteredOn("web-1"::equals).hasSize(4);
                assertThat(s.pods().deletes).isEmpty();

                proxy.resume();
                awaitCaught(h, ns, "web-0", "web-1", "web-2");
                int before = s.pods().creates.size();
                h.controller.sync(key);
                assertThat(s.pods().creates).hasSize(before);
                assertThat(podNames(client, ns)).containsExactly("web-0", "web-1", "web-2");
                for (String name : List.of("web-0", "web-1", "web-2")) {
                    assertThat(history.added(name)).as(name).hasSize(1);
                }
                assertThat(history.violations()).isEmpty();
            }
        }
    }

    /**
     * The scale-down's deletion of web-1 is performed (web-1 terminates: it is bound to a node, whose
     * kubelet takes its time), its answer lost; the set is scaled up again while the cache still shows
     * the old size and web-1 running. The controller deletes web-1 again from the stale cache (the same
     * pod, already terminating: its deletion is unchanged), never another pod, and creates web-1 anew only
     * once the old one is gone.
     */
    @Test
    void aDeletionWhoseAnswerIsLostNeverLetsItsOrdinalBeCreatedWhileThePodTerminates() throws Exception {
        String ns = newNamespace(client, "sts-lost-delete");
        URI apiServer = URI.create(client.getConfiguration().getMasterUrl());
        try (PodHistory history = new PodHistory(ns); StallingProxy proxy = new StallingProxy(apiServer)) {
            Setup s = newController(proxy);
            try (ControllerHarness<StatefulSetController> h = s.harness()) {
                client.apps().statefulSets().inNamespace(ns).resource(statefulSet("web", 2, LABELS).build()).create();
                String key = ns + "/web";
                awaitCaught(h, ns);
                scaleUpReady(h, ns, key, 2);
                scale(ns, 1);
                awaitCaught(h, ns, "web-0", "web-1");

                s.pods().lose.set(true);
                assertThatThrownBy(() -> h.controller.sync(key))
                        .satisfies(e -> assertThat(ApiErrors.isOutcomeUnknown(e)).as("%s", e).isTrue());
                s.pods().lose.set(false);
                Pod terminating = live(ns, "web-1");
                assertThat(terminating.getMetadata().getDeletionTimestamp()).isNotNull();
                assertThat(cached(h, ns, "web-1").getMetadata().getDeletionTimestamp()).isNull();

                // the name stays taken while the pod terminates: a creation of it is refused
                assertThatThrownBy(() -> client.pods().inNamespace(ns).resource(new io.fabric8.kubernetes.api.model.PodBuilder()
                        .withNewMetadata().withName("web-1").endMetadata().withSpec(terminating.getSpec()).build()).create())
                        .satisfies(e -> assertThat(ApiErrors.isAlreadyExists(e)).as("%s", e).isTrue());

                // scaled up again while the cache still shows one replica wanted and web-1 running
                scale(ns, 2);
                for (int i = 0; i < 3; i++) {
                    syncIgnoringErrors(h, key);
                }
                Pod still = live(ns, "web-1");
                assertThat(still.getMetadata().getUid()).isEqualTo(terminating.getMetadata().getUid());
                assertThat(still.getMetadata().getDeletionTimestamp()).isEqualTo(terminating.getMetadata().getDeletionTimestamp());
                assertThat(still.getMetadata().getDeletionGracePeriodSeconds())
                        .isEqualTo(terminating.getMetadata().getDeletionGracePeriodSeconds());
                assertThat(live(ns, "web-0").getMetadata().getDeletionTimestamp()).isNull();
                // the lost deletion, then one per sync from the stale cache: the same pod each time
                assertThat(s.pods().deletes).containsExactly("web-1", "web-1", "web-1", "web-1");
                assertThat(s.pods().creates).containsExactly("web-0", "web-1");

                // the cache catches up: web-1 wanted again, still terminating; OrderedReady waits for it
                proxy.resume();
                awaitCaught(h, ns, "web-0", "web-1");
                h.controller.sync(key);
                assertThat(s.pods().creates).containsExactly("web-0", "web-1");
                assertThat(live(ns, "web-1").getMetadata().getUid()).isEqualTo(terminating.getMetadata().getUid());

                // the kubelet is done with it: the name is free, web-1 is created anew
                client.pods().inNamespace(ns).withName("web-1").withGracePeriod(0).delete();
                await().atMost(TIMEOUT).until(() -> cached(h, ns, "web-1") == null);
                h.controller.sync(key);
                await().atMost(TIMEOUT).until(() -> cached(h, ns, "web-1") != null);
                assertThat(podNames(client, ns)).containsExactly("web-0", "web-1");
                assertThat(s.pods().creates).containsExactly("web-0", "web-1", "web-1");
                assertThat(history.added("web-1")).hasSize(2).doesNotHaveDuplicates()
                        .startsWith(terminating.getMetadata().getUid());
                assertThat(history.added("web-0")).hasSize(1);
                assertThat(history.violations()).isEmpty();
            }
        }
    }

    /**
     * Rolling update: the deletion of web-1 (the highest ordinal of the old revision) is performed, its
     * answer lost. From the stale cache the controller deletes web-1 again, and again once the pod is
     * gone (NotFound, ignored as upstream does); it never takes web-0 down while web-1 is not back, and
     * makes the new web-1 only when the cache shows the old one gone.
     */
    @Test
    void aRollingUpdateDeletionWhoseAnswerIsLostTakesNoSecondPodDown() throws Exception {
        String ns = newNamespace(client, "sts-lost-roll");
        URI apiServer = URI.create(client.getConfiguration().getMasterUrl());
        try (PodHistory history = new PodHistory(ns); StallingProxy proxy = new StallingProxy(apiServer)) {
            Setup s = newController(proxy);
            try (ControllerHarness<StatefulSetController> h = s.harness()) {
                client.apps().statefulSets().inNamespace(ns).resource(statefulSet("web", 2, LABELS).build()).create();
                String key = ns + "/web";
                awaitCaught(h, ns);
                scaleUpReady(h, ns, key, 2);
                io.qkcm.testing.Conflicts.retry(() -> client.apps().statefulSets().inNamespace(ns).withName("web").edit(set -> {
                    set.getSpec().getTemplate().getSpec().getContainers().get(0).setImage("registry.k8s.io/pause:3.9");
                    return set;
                }));
                awaitCaught(h, ns, "web-0", "web-1");

                s.pods().lose.set(true);
                assertThatThrownBy(() -> h.controller.sync(key))
                        .satisfies(e -> assertThat(ApiErrors.isOutcomeUnknown(e)).as("%s", e).isTrue());
                s.pods().lose.set(false);
                String oldUid = live(ns, "web-1").getMetadata().getUid();
                assertThat(live(ns, "web-1").getMetadata().getDeletionTimestamp()).isNotNull();

                for (int i = 0; i < 2; i++) {
                    syncIgnoringErrors(h, key);
                }
                // the kubelet is done with the old web-1 while the cache still shows it running
                client.pods().inNamespace(ns).withName("web-1").withGracePeriod(0).delete();
                await().atMost(TIMEOUT).until(() -> live(ns, "web-1") == null);
                for (int i = 0; i < 2; i++) {
                    syncIgnoringErrors(h, key);
                }
                // the lost deletion, then one per sync from the stale cache (the last two answered NotFound)
                assertThat(s.pods().deletes).containsExactly("web-1", "web-1", "web-1", "web-1", "web-1");
                assertThat(s.pods().creates).containsExactly("web-0", "web-1");
                assertThat(podNames(client, ns)).containsExactly("web-0");
                assertThat(live(ns, "web-0").getMetadata().getDeletionTimestamp()).isNull();

                proxy.resume();
                await().atMost(TIMEOUT).until(() -> cached(h, ns, "web-1") == null);
                h.controller.sync(key);
                await().atMost(TIMEOUT).until(() -> cached(h, ns, "web-1") != null);
                Pod updated = live(ns, "web-1");
                assertThat(updated.getSpec().getContainers().get(0).getImage()).isEqualTo("registry.k8s.io/pause:3.9");
                assertThat(live(ns, "web-0").getMetadata().getDeletionTimestamp()).isNull();
                assertThat(history.added("web-1")).containsExactly(oldUid, updated.getMetadata().getUid());
                assertThat(history.violations()).isEmpty();
                assertThat(s.pods().creates).containsExactly("web-0", "web-1", "web-1");
            }
        }
    }

    private static void scale(String ns, int replicas) {
        io.qkcm.testing.Conflicts.retry(() -> client.apps().statefulSets().inNamespace(ns).withName("web").edit(set -> {
            set.getSpec().setReplicas(replicas);
            return set;
        }));
    }
}
