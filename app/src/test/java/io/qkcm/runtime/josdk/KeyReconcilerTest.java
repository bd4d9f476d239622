package io.qkcm.runtime.josdk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.Ignore;
import io.qkcm.testing.RealApiServer;

/**
 * What qkcm relies on from JOSDK 5.2 (pinned here, so a JOSDK upgrade that changes it fails): a
 * reconciler registered through {@link Operators} is called for adds, every update (no generation
 * filter) and deletes (the deleted key is synced once more); events from the queue reach the primary
 * by key; errors are retried with client-go's backoff and forgotten on success; the workers are the
 * controller's own; JOSDK never writes to the primary and hands over the cached object, not a copy; and no
 * informer is opened besides the shared one.
 */
class KeyReconcilerTest {

    private KubernetesClient client;
    private StandaloneRuntime runtime;
    private String ns;
    private Controller running;

    /** A reconciler over ConfigMaps; Secrets annotated {@code probe/target} queue the ConfigMap they name. */
    @Ignore
    static final class Probe extends KeyReconciler<ConfigMap> {
        final List<String> syncs = new CopyOnWriteArrayList<>();
        final Map<String, AtomicInteger> failures = new ConcurrentHashMap<>();
        /** Per key: numRequeues and the time at the start of each sync (the cluster holds other ConfigMaps). */
        final Map<String, List<Integer>> requeuesSeen = new ConcurrentHashMap<>();
        final Map<String, List<Long>> attemptTimes = new ConcurrentHashMap<>();
        final AtomicInteger concurrent = new AtomicInteger();
        final AtomicInteger maxConcurrent = new AtomicInteger();
        volatile long holdMillis;
        /** Per key: how long its syncs take. */
        final Map<String, Long> holdFor = new ConcurrentHashMap<>();
        volatile int maxRetries = UNLIMITED_RETRIES;
        /** Keys dropped past maxRetries, in order. */
        final List<String> dropped = new CopyOnWriteArrayList<>();
        private final SharedIndexInformer<ConfigMap> configMaps;
        private final SharedIndexInformer<Secret> secrets;

        Probe(ControllerContext context, int workers) {
            super(context, ConfigMap.class, "probe", workers);
            configMaps = context.informers().informerFor(ConfigMap.class);
            secrets = context.informers().informerFor(Secret.class);
            secrets.addEventHandler(new ResourceEventHandler<Secret>() {
                @Override
                public void onAdd(Secret s) {
                    String target = s.getMetadata().getAnnotations() == null ? null
                            : s.getMetadata().getAnnotations().get("probe/target");
                    if (target != null) {
                        queue.add(s.getMetadata().getNamespace() + "/" + target);
                    }
                }

                @Override
                public void onUpdate(Secret o, Secret n) {
                }

                @Override
                public void onDelete(Secret s, boolean unknown) {
                }
            });
        }

        /** Per sync of a cached primary whose version the cache still held: was it the cached object itself? */
        final List<Boolean> primaryWasCachedObject = new CopyOnWriteArrayList<>();

        @Override
        protected void sync(String key, ConfigMap primary, Context<ConfigMap> ctx) throws Exception {
            ConfigMap cached = configMaps.getStore().getByKey(key);
            if (!ctx.isPrimaryResourceDeleted() && cached != null && primary.getMetadata().getResourceVersion()
                    .equals(cached.getMetadata().getResourceVersion())) {
                primaryWasCachedObject.add(primary == cached);
            }
            super.sync(key, primary, ctx);
        }

        @Override
        protected void sync(String key) throws Exception {
            int now = concurrent.incrementAndGet();
            maxConcurrent.accumulateAndGet(now, Math::max);
            try {
                requeuesSeen.computeIfAbsent(key, k -> new CopyOnWriteArrayList<>()).add(queue.numRequeues(key));
                attemptTimes.computeIfAbsent(key, k -> new CopyOnWriteArrayList<>()).add(System.nanoTime());
                ConfigMap cm = configMaps.getStore().getByKey(key);
                syncs.add(key + (cm == null ? " absent" : " present:" + cm.getData()));
                long hold = holdFor.getOrDefault(key, holdMillis);
                if (hold > 0) {
                    Thread.sleep(hold); // a slow sync, to observe the worker bound
                }
                AtomicInteger left = failures.get(key);
                if (left != null && left.getAndDecrement() > 0) {
                    throw new IllegalStateException("injected failure");
                }
            } finally {
                concurrent.decrementAndGet();
            }
        }

        @Override
        protected List<SharedIndexInformer<?>> informers() {
            return List.of(configMaps, secrets);
        }

        @Override
        protected int maxRetries() {
            return maxRetries;
        }

        @Override
        protected void logDropped(String key, Exception e) {
            dropped.add(key);
        }
    }

    @BeforeEach
    void setUp() {
        client = RealApiServer.get().newClient();
        runtime = new StandaloneRuntime();
        ns = "josdk-" + Long.toString(System.nanoTime() % 1_000_000_000L, 36);
        client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build())
                .create();
    }

    @AfterEach
    void tearDown() throws InterruptedException {
        if (running != null) {
            running.shutdown(Duration.ZERO);
        }
        runtime.close();
        client.close();
    }

    private Probe start(int workers) {
        ControllerContext context = runtime.context("probe-controller");
        Probe probe = new Probe(context, workers);
        running = context.operate(probe);
        runtime.informers.start();
        running.start();
        return probe;
    }

    private ConfigMap configMap(String name, String value) {
        return new ConfigMapBuilder().withNewMetadata().withName(name).withNamespace(ns).endMetadata()
                .withData(Map.of("v", value)).build();
    }

    @Test
    void addsUpdatesAndDeletesAreSyncedAndJosdkNeverWritesThePrimary() {
        Probe probe = start(2);
        client.resource(configMap("a", "1")).create();
        String key = ns + "/a";
        await().atMost(Duration.ofSeconds(30)).until(() -> probe.syncs.contains(key + " present:{v=1}"));
        // a data-only change (no generation on ConfigMaps) is synced: no generation-aware filtering
        client.configMaps().inNamespace(ns).withName("a").edit(cm -> new ConfigMapBuilder(cm).withData(Map.of("v", "2")).build());
        await().atMost(Duration.ofSeconds(30)).until(() -> probe.syncs.contains(key + " present:{v=2}"));
        ConfigMap written = client.configMaps().inNamespace(ns).withName("a").get();
        assertThat(written.getMetadata().getFinalizers()).as("JOSDK adds no finalizer").isNullOrEmpty();
        assertThat(written.getMetadata().getAnnotations()).as("JOSDK adds no annotation").isNullOrEmpty();
        assertThat(written.getMetadata().getManagedFields()).as("only the test wrote it")
                .allSatisfy(f -> assertThat(f.getOperation()).isIn("Update"))
                .allSatisfy(f -> assertThat(f.getManager()).doesNotContain("probe"));
        // a deleted primary is synced once more, finding it gone (upstream's not-found path)
        client.configMaps().inNamespace(ns).withName("a").delete();
        await().atMost(Duration.ofSeconds(30)).until(() -> probe.syncs.contains(key + " absent"));
        // JOSDK does not copy the primary (OperatorController.CACHED_PRIMARY): a reconciler is handed the
        // cached object, which it never changes
        assertThat(probe.primaryWasCachedObject).isNotEmpty().containsOnly(true);
    }

    @Test
    void theQueueReachesThePrimaryByKey() {
        Probe probe = start(2);
        client.resource(configMap("target", "x")).create();
        String key = ns + "/target";
        await().atMost(Duration.ofSeconds(30)).until(() -> probe.syncs.contains(key + " present:{v=x}"));
        int before = probe.syncs.size();
        client.resource(new SecretBuilder().withNewMetadata().withName("pointer").withNamespace(ns)
                .withAnnotations(Map.of("probe/target", "target")).endMetadata().build()).create();
        await().atMost(Duration.ofSeconds(30)).until(() -> {
            List<String> now = List.copyOf(probe.syncs);
            return now.subList(before, now.size()).contains(key + " present:{v=x}");
        });
    }

    /**
     * client-go's queue syncs a key added during its sync once more. JOSDK drops events received during the
     * execution of a deleted primary's delete (a key no longer cached is one): TombstoneRedelivery adds them
     * again. Fails with OperatorController's metrics not wrapped.
     */
    @Test
    void aKeyAddedWhileItsAbsentPrimaryIsSyncedIsSyncedOnceMore() {
        Probe probe = start(2);
        String key = ns + "/ghost";
        probe.holdFor.put(key, 1_500L);
        // the Operator runs once it has synced a primary
        client.resource(configMap("seed", "1")).create();
        await().atMost(Duration.ofSeconds(30)).until(() -> probe.syncs.contains(ns + "/seed present:{v=1}"));
        probe.queue.add(key);
        await().atMost(Duration.ofSeconds(30)).until(() -> probe.syncs.contains(key + " absent"));
        probe.queue.add(key); // during the first sync's 1.5 s
        await().atMost(Duration.ofSeconds(30)).until(() -> probe.syncs.stream().filter((key + " absent")::equals).count() == 2);
        // and only once more: several adds during one sync coalesce, as client-go's dirty set
        probe.holdFor.remove(key);
        probe.holdFor.put(ns + "/ghost2", 1_500L);
        String key2 = ns + "/ghost2";
        probe.queue.add(key2);
        await().atMost(Duration.ofSeconds(30)).until(() -> probe.syncs.contains(key2 + " absent"));
        probe.queue.add(key2);
        probe.queue.add(key2);
        probe.queue.add(key2);
        await().atMost(Duration.ofSeconds(30)).until(() -> probe.syncs.stream().filter((key2 + " absent")::equals).count() == 2);
        await().during(Duration.ofSeconds(3)).atMost(Duration.ofSeconds(10))
                .until(() -> probe.syncs.stream().filter((key2 + " absent")::equals).count() == 2);
    }

    @Test
    void errorsAreRetriedWithBackoffAndForgottenOnSuccess() {
        Probe probe = start(2);
        String key = ns + "/flaky";
        probe.failures.put(key, new AtomicInteger(4));
        client.resource(configMap("flaky", "1")).create();
        await().atMost(Duration.ofSeconds(30)).until(() -> probe.requeuesSeen.getOrDefault(key, List.of()).size() >= 5);
        // numRequeues counts the failures so far (0 on the first try), as client-go's NumRequeues
        assertThat(List.copyOf(probe.requeuesSeen.get(key)).subList(0, 5)).containsExactly(0, 1, 2, 3, 4);
        // 5ms, 10ms, 20ms, 40ms: each wait at least the exponential delay
        List<Long> times = probe.attemptTimes.get(key);
        for (int i = 1; i < 5; i++) {
            long waited = times.get(i) - times.get(i - 1);
            assertThat(waited).as("wait before attempt %d", i).isGreaterThanOrEqualTo((5L << (i - 1)) * 1_000_000L);
        }
        // success forgot the key: the next sync starts from zero
        client.configMaps().inNamespace(ns).withName("flaky").edit(cm -> new ConfigMapBuilder(cm).withData(Map.of("v", "2")).build());
        await().atMost(Duration.ofSeconds(30)).until(() -> probe.syncs.contains(key + " present:{v=2}"));
        List<Integer> seen = probe.requeuesSeen.get(key);
        assertThat(seen.get(seen.size() - 1)).isZero();
        assertThat(runtime.registry.find("workqueue.retries").tag("name", "probe").counter().count()).isEqualTo(4.0);
    }

    @Test
    void pastMaxRetriesAKeyIsDroppedWithItsBackoffForgotten() {
        Probe probe = start(2);
        probe.maxRetries = 3;
        String key = ns + "/doomed";
        probe.failures.put(key, new AtomicInteger(1_000));
        client.resource(configMap("doomed", "1")).create();
        // upstream's handleErr: the first try and maxRetries rate-limited retries, then Forget
        await().atMost(Duration.ofSeconds(30)).until(() -> probe.dropped.contains(key) && probe.queue.numRequeues(key) == 0);
        assertThat(probe.requeuesSeen.get(key)).containsExactly(0, 1, 2, 3);
        assertThat(probe.dropped).containsExactly(key);
        assertThat(runtime.registry.find("workqueue.retries").tag("name", "probe").counter().count()).isEqualTo(3.0);
        // the next event queues the key again, from a fresh backoff
        client.configMaps().inNamespace(ns).withName("doomed").edit(cm -> new ConfigMapBuilder(cm).withData(Map.of("v", "2")).build());
        await().atMost(Duration.ofSeconds(30)).until(() -> probe.syncs.contains(key + " present:{v=2}"));
        assertThat(probe.requeuesSeen.get(key).get(4)).isZero();
    }

    @Test
    void workersAreTheControllersOwnAndOneKeyIsNeverSyncedTwiceAtOnce() {
        Probe probe = start(2);
        probe.holdMillis = 300;
        for (int i = 0; i < 6; i++) {
            client.resource(configMap("c" + i, "1")).create();
        }
        await().atMost(Duration.ofSeconds(60)).until(() -> probe.syncs.stream().filter(s -> s.startsWith(ns + "/c")).count() >= 6);
        assertThat(probe.maxConcurrent.get()).as("syncs at once with 2 workers").isEqualTo(2);
        assertThat(((OperatorController) running).workerCount()).isEqualTo(2);
    }

    @Test
    void josdkOpensNoInformerOfItsOwn() {
        Probe probe = start(1);
        client.resource(configMap("seen", "1")).create();
        await().atMost(Duration.ofSeconds(30)).until(() -> probe.syncs.contains(ns + "/seen present:{v=1}"));
        // the manager's factory holds one informer per type, and JOSDK's controller event source is a view
        assertThat(runtime.informers.all().stream().map(i -> i.getApiTypeClass().getSimpleName()).toList())
                .containsExactlyInAnyOrder("ConfigMap", "Secret");
        var controllers = ((OperatorController) running).operator().getRegisteredControllers();
        assertThat(controllers).hasSize(1);
    }
}
