package io.qkcm.runtime.josdk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.javaoperatorsdk.operator.RegisteredController;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.Ignore;
import io.qkcm.testing.RealApiServer;

/**
 * {@link OwnedEventSource}: the owned kind is one of the controller's JOSDK event sources (listed by
 * {@code prepareEventSources} and registered by JOSDK), a reconcile reads a primary's owned objects through
 * {@code Context.getSecondaryResources} (by controller-reference UID, not by labels or name), the owned
 * objects' events queue their owner through upstream's handler, and a stopped controller's handler is
 * gone from the shared informer.
 */
class OwnedEventSourceTest {

    private KubernetesClient client;
    private StandaloneRuntime runtime;
    private String ns;
    private Controller running;

    /** ConfigMaps own Secrets (a controller reference); the handler queues the owner by name. */
    @Ignore
    static final class Probe extends KeyReconciler<ConfigMap> {
        final Map<String, List<Set<String>>> secondaries = new ConcurrentHashMap<>();
        final List<String> handled = new CopyOnWriteArrayList<>();
        final OwnedEventSource<Secret, ConfigMap> secrets;
        private final SharedIndexInformer<ConfigMap> configMaps;

        Probe(ControllerContext context) {
            super(context, ConfigMap.class, "owner-probe", 1);
            configMaps = context.informers().informerFor(ConfigMap.class);
            secrets = owned(Secret.class, new ResourceEventHandler<Secret>() {
                @Override
                public void onAdd(Secret s) {
                    enqueueOwner(s);
                }

                @Override
                public void onUpdate(Secret o, Secret n) {
                    enqueueOwner(n);
                }

                @Override
                public void onDelete(Secret s, boolean unknown) {
                    enqueueOwner(s);
                }
            });
        }

        private void enqueueOwner(Secret s) {
            handled.add(s.getMetadata().getName());
            s.getMetadata().getOwnerReferences().stream().filter(r -> Boolean.TRUE.equals(r.getController()))
                    .forEach(r -> queue.add(s.getMetadata().getNamespace() + "/" + r.getName()));
        }

        @Override
        protected void sync(String key, ConfigMap primary, Context<ConfigMap> ctx) {
            if (ctx.isPrimaryResourceDeleted()) {
                return;
            }
            Set<String> names = ctx.getSecondaryResources(Secret.class).stream().map(s -> s.getMetadata().getName())
                    .collect(Collectors.toCollection(TreeSet::new));
            secondaries.computeIfAbsent(key, k -> new CopyOnWriteArrayList<>()).add(names);
        }

        @Override
        protected List<SharedIndexInformer<?>> informers() {
            return List.of(configMaps, context.informers().informerFor(Secret.class));
        }
    }

    @BeforeEach
    void setUp() {
        client = RealApiServer.get().newClient();
        runtime = new StandaloneRuntime();
        ns = "owned-" + Long.toString(System.nanoTime() % 1_000_000_000L, 36);
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

    private Probe start() {
        ControllerContext context = runtime.context("owner-probe-controller");
        Probe probe = new Probe(context);
        running = context.operate(probe);
        runtime.informers.start();
        running.start();
        return probe;
    }

    private ConfigMap configMap(String name) {
        return client.resource(new ConfigMapBuilder().withNewMetadata().withName(name).withNamespace(ns).endMetadata()
                .build()).create();
    }

    private Secret secret(String name, ConfigMap owner, boolean controller) {
        SecretBuilder b = new SecretBuilder().withNewMetadata().withName(name).withNamespace(ns)
                .withLabels(Map.of("app", "same-for-all")).endMetadata();
        if (owner != null) {
            b.editMetadata().withOwnerReferences(new OwnerReferenceBuilder().withApiVersion("v1").withKind("ConfigMap")
                    .withName(owner.getMetadata().getName()).withUid(owner.getMetadata().getUid())
                    .withController(controller).build()).endMetadata();
        }
        return client.resource(b.build()).create();
    }

    @Test
    void theOwnedKindIsARegisteredEventSourceAndItsObjectsAreThePrimarysSecondaryResources() {
        Probe probe = start();
        assertThat(probe.prepareEventSources(null)).containsExactly(probe.queue, probe.secrets);
        RegisteredController<?> registered = ((OperatorController) running).operator().getRegisteredControllers()
                .iterator().next();
        assertThat(registered.getControllerHealthInfo().eventSourceHealthIndicators())
                .containsKey("owner-probe-owned-Secret");

        ConfigMap a = configMap("a");
        ConfigMap b = configMap("b");
        secret("a-1", a, true);
        secret("a-2", a, true);
        secret("b-1", b, true);
        secret("a-not-controller", a, false); // an owner, not the controller: upstream's controllerRef only
        secret("orphan", null, false);        // same labels, no owner

        String keyA = ns + "/a";
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(probe.secondaries.get(keyA))
                .isNotNull().last().isEqualTo(Set.of("a-1", "a-2")));
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(probe.secondaries.get(ns + "/b"))
                .isNotNull().last().isEqualTo(Set.of("b-1")));

        // an owned object's event reaches the owner through upstream's handler
        int before = probe.secondaries.get(keyA).size();
        client.secrets().inNamespace(ns).withName("a-1").delete();
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
            List<Set<String>> seen = probe.secondaries.get(keyA);
            assertThat(seen.size()).isGreaterThan(before);
            assertThat(seen.get(seen.size() - 1)).isEqualTo(Set.of("a-2"));
        });
    }

    @Test
    void aStoppedControllersHandlerNoLongerHearsTheSharedInformer() throws Exception {
        Probe probe = start();
        ConfigMap a = configMap("a");
        secret("first", a, true);
        await().atMost(Duration.ofSeconds(30)).until(() -> probe.handled.contains("first"));

        running.shutdown(Duration.ZERO);
        running = null;
        // the shared informer keeps running for the process's other controllers: a witness handler on it
        // hears both objects, the stopped controller's handler neither
        SharedIndexInformer<Secret> shared = runtime.informers.informerFor(Secret.class);
        List<String> witness = new CopyOnWriteArrayList<>();
        shared.addEventHandler(new ResourceEventHandler<Secret>() {
            @Override
            public void onAdd(Secret s) {
                witness.add(s.getMetadata().getName());
            }

            @Override
            public void onUpdate(Secret o, Secret n) {
            }

            @Override
            public void onDelete(Secret s, boolean unknown) {
            }
        });
        secret("second", a, true);
        secret("marker", null, false);
        await().atMost(Duration.ofSeconds(30)).until(() -> witness.containsAll(List.of("second", "marker")));
        assertThat(probe.handled).doesNotContain("second", "marker");
    }
}
