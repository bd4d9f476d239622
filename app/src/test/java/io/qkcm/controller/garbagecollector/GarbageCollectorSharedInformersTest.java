package io.qkcm.controller.garbagecollector;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.DeletionPropagation;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.apps.ReplicaSet;
import io.fabric8.kubernetes.api.model.apps.ReplicaSetBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.qkcm.runtime.Json;
import io.qkcm.runtime.events.EventBroadcaster;
import io.qkcm.runtime.informers.GroupVersionResource;
import io.qkcm.runtime.informers.SharedInformers;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.options.ControllerManagerOptions;
import io.qkcm.runtime.options.Flags;
import io.qkcm.testing.AuditLog;
import io.qkcm.testing.RealApiServer;
import io.qkcm.testing.TestOperators;

/**
 * The garbage collector on the process's shared informers (upstream's informerfactory), against an
 * audited real API server: a type a controller caches is monitored through that shared informer, with
 * no watch of the garbage collector's own, and still collected; a type whose shared informer is asked
 * for later is handed over at the next monitor sync (the metadata watch ends); stopping the garbage
 * collector leaves the shared informers running. The garbage collector's metadata watches are the
 * process's metadata informers' (their own client, upstream's "metadata-informers").
 */
class GarbageCollectorSharedInformersTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(90);
    private static final GroupVersionResource PODS = new GroupVersionResource("", "v1", "pods");
    private static final GroupVersionResource REPLICASETS = new GroupVersionResource("apps", "v1", "replicasets");

    /** A garbage collector and the shared informers of one simulated process, each with its own user agent. */
    private static final class Process implements AutoCloseable {
        final String sharedAgent;
        final String gcAgent;
        final String metadataAgent;
        final KubernetesClient sharedClient;
        final KubernetesClient gcClient;
        final KubernetesClient metadataClient;
        final SharedInformers informers;
        final EventBroadcaster events;
        final ScheduledExecutorService delayer = Executors.newSingleThreadScheduledExecutor();
        GarbageCollector gc;

        Process(RealApiServer server, String name) {
            String id = name + "-" + Long.toString(System.nanoTime(), 36);
            sharedAgent = "gc-shared-test/" + id + "/shared-informers";
            gcAgent = "gc-shared-test/" + id + "/generic-garbage-collector";
            sharedClient = client(server, sharedAgent);
            metadataAgent = "gc-shared-test/" + id + "/metadata-informers";
            gcClient = client(server, gcAgent);
            metadataClient = client(server, metadataAgent);
            informers = new SharedInformers(sharedClient, Duration.ofHours(12), true, metadataClient);
            events = new EventBroadcaster(gcClient);
        }

        /** Builds the garbage collector (as the manager, after the controllers) and starts everything. */
        void start() {
            ControllerManagerOptions options = new ControllerManagerOptions(Flags.upstream(), flag -> Optional.empty());
            gc = new GarbageCollector(new ControllerContext(GarbageCollector.NAME, gcClient, informers,
                    events.recorder(GarbageCollector.NAME), options, delayer, TestOperators.create()),
                    options.concurrentSyncs("gc"));
            informers.start();
            gc.start();
        }

        @Override
        public void close() throws Exception {
            if (gc != null) {
                gc.shutdown(Duration.ofSeconds(5));
            }
            informers.stop();
            events.shutdown(Duration.ZERO);
            delayer.shutdownNow();
            sharedClient.close();
            gcClient.close();
            metadataClient.close();
        }
    }

    private static KubernetesClient client(RealApiServer server, String userAgent) {
        Config config = Config.fromKubeconfig(server.kubeconfigYaml());
        config.setUserAgent(userAgent);
        return new KubernetesClientBuilder().withConfig(config).withKubernetesSerialization(Json.api())
                .build();
    }

    /** Watches started by {@code userAgent} since {@code since}, per resource. */
    private static Map<String, Long> watchesPerResource(AuditLog audit, String userAgent, Instant since) {
        return audit.started().stream()
                .filter(e -> e.verb().equals("watch") && e.userAgent().equals(userAgent) && !e.time().isBefore(since))
                .collect(Collectors.groupingBy(AuditLog.Entry::resource, TreeMap::new, Collectors.counting()));
    }

    private static String namespace(KubernetesClient client, String prefix) {
        String ns = prefix + "-" + Long.toString(System.nanoTime(), 36);
        client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build()).create();
        return ns;
    }

    private static Pod pod(KubernetesClient client, String ns, String name, HasMetadata owner) {
        return client.pods().inNamespace(ns).resource(new PodBuilder().withNewMetadata().withName(name)
                .withLabels(Map.of("app", "gc-shared"))
                .withOwnerReferences(new OwnerReferenceBuilder().withApiVersion(owner.getApiVersion())
                        .withKind(owner.getKind()).withName(owner.getMetadata().getName())
                        .withUid(owner.getMetadata().getUid()).withController(true).withBlockOwnerDeletion(true).build())
                .endMetadata().withNewSpec().addNewContainer().withName("c").withImage("busybox").endContainer()
                .endSpec().build()).create();
    }

    @Test
    void podsCachedByTheControllersAreCollectedThroughTheirSharedInformerWithoutASecondWatch() throws Exception {
        RealApiServer server = RealApiServer.audited();
        AuditLog audit = new AuditLog(server.auditLog().orElseThrow());
        Instant began = Instant.now().minusSeconds(1);
        try (KubernetesClient client = server.newClient(); Process p = new Process(server, "pods-shared")) {
            // as the replicaset controller does while it is built, before the garbage collector starts
            SharedIndexInformer<Pod> podInformer = p.informers.informerFor(Pod.class);
            p.start();
            await().atMost(TIMEOUT).until(() -> p.gc.monitor(PODS) != null && p.gc.monitor(PODS).hasSynced()
                    && p.gc.monitor(REPLICASETS) != null && p.gc.monitor(REPLICASETS).hasSynced());
            assertThat(p.gc.monitor(PODS).shared()).as("pods: a handler on the shared informer").isTrue();
            assertThat(p.gc.monitor(REPLICASETS).shared()).as("replicasets: no shared informer, a metadata one").isFalse();

            String ns = namespace(client, "gc-shared");
            ReplicaSet rs = client.apps().replicaSets().inNamespace(ns).resource(new ReplicaSetBuilder().withNewMetadata()
                    .withName("rs").endMetadata().withNewSpec().withReplicas(2).withNewSelector()
                    .addToMatchLabels("app", "gc-shared").endSelector().withNewTemplate().withNewMetadata()
                    .addToLabels("app", "gc-shared").endMetadata().withNewSpec().addNewContainer().withName("c")
                    .withImage("busybox").endContainer().endSpec().endTemplate().endSpec().build()).create();
            Pod a = pod(client, ns, "rs-a", rs);
            Pod b = pod(client, ns, "rs-b", rs);
            await().atMost(TIMEOUT).until(() -> p.gc.graphHasUid(a.getMetadata().getUid())
                    && p.gc.graphHasUid(b.getMetadata().getUid()) && p.gc.graphHasUid(rs.getMetadata().getUid()));
            // the cache read of the garbage collector (upstream getMetadata) is the shared informer's
            assertThat(p.gc.monitor(PODS).get(ns + "/rs-a").ownerReferences()).singleElement()
                    .satisfies(r -> assertThat(r.uid()).isEqualTo(rs.getMetadata().getUid()));

            client.apps().replicaSets().inNamespace(ns).withName("rs").withPropagationPolicy(DeletionPropagation.ORPHAN)
                    .delete();
            // orphaned: the pods lose their reference (an update the shared informer delivers)
            await().atMost(TIMEOUT).untilAsserted(() -> assertThat(client.pods().inNamespace(ns).list().getItems())
                    .hasSize(2).allSatisfy(pod -> assertThat(pod.getMetadata().getOwnerReferences()).isEmpty()));
            // adopted by a new owner, then collected when it goes
            ConfigMap owner = client.configMaps().inNamespace(ns).resource(new ConfigMapBuilder().withNewMetadata()
                    .withName("owner").endMetadata().build()).create();
            Pod c = pod(client, ns, "owned-c", owner);
            await().atMost(TIMEOUT).until(() -> p.gc.graphHasUid(c.getMetadata().getUid()));
            client.configMaps().inNamespace(ns).withName("owner").withPropagationPolicy(DeletionPropagation.BACKGROUND)
                    .delete();
            await().atMost(TIMEOUT).until(() -> client.pods().inNamespace(ns).withName("owned-c").get() == null);
            // the pod's delete reached the graph through the shared informer
            await().atMost(TIMEOUT).until(() -> !p.gc.graphHasUid(c.getMetadata().getUid()));
            assertThat(client.pods().inNamespace(ns).list().getItems()).extracting(pod -> pod.getMetadata().getName())
                    .containsExactlyInAnyOrder("rs-a", "rs-b");

            Map<String, Long> gcWatches = watchesPerResource(audit, p.metadataAgent, began);
            Map<String, Long> sharedWatches = watchesPerResource(audit, p.sharedAgent, began);
            assertThat(gcWatches).as("the garbage collector's own watches").containsEntry("replicasets", 1L)
                    .containsEntry("configmaps", 1L).doesNotContainKey("pods");
            assertThat(sharedWatches).as("the shared informers' watches").isEqualTo(Map.of("pods", 1L));

            // stopping the garbage collector removes its handler only: the controllers' informer runs on
            p.gc.shutdown(Duration.ofSeconds(5));
            p.gc = null;
            pod(client, ns, "after-gc", rs);
            await().atMost(TIMEOUT).until(() -> podInformer.getStore().getByKey(ns + "/after-gc") != null);
            assertThat(podInformer.isRunning()).isTrue();
        }
    }

    @Test
    void sharedInformerAskedForLaterTakesItsTypeOverFromTheMetadataMonitor() throws Exception {
        RealApiServer server = RealApiServer.audited();
        AuditLog audit = new AuditLog(server.auditLog().orElseThrow());
        Instant began = Instant.now().minusSeconds(1);
        try (KubernetesClient client = server.newClient(); Process p = new Process(server, "pods-later")) {
            p.start();
            await().atMost(TIMEOUT).until(() -> p.gc.monitor(PODS) != null && p.gc.monitor(PODS).hasSynced());
            assertThat(p.gc.monitor(PODS).shared()).isFalse();

            String ns = namespace(client, "gc-handover");
            ConfigMap owner = client.configMaps().inNamespace(ns).resource(new ConfigMapBuilder().withNewMetadata()
                    .withName("owner").endMetadata().build()).create();
            Pod before = pod(client, ns, "before", owner);
            await().atMost(TIMEOUT).until(() -> p.gc.graphHasUid(before.getMetadata().getUid()));

            // a controller asks for the pods' shared informer after the garbage collector started
            p.informers.informerFor(Pod.class);
            p.gc.syncNow();
            Monitor pods = p.gc.monitor(PODS);
            assertThat(pods.shared()).as("handed over at the monitor sync").isTrue();
            await().atMost(TIMEOUT).until(pods::hasSynced);
            // the metadata informer's watch ended (its ResponseComplete is logged when it closes)
            await().atMost(TIMEOUT).until(() -> audit.entries(e -> e.verb().equals("watch") && e.userAgent().equals(p.metadataAgent)
                    && e.resource().equals("pods") && !e.time().isBefore(began)).size() == 1);

            Pod after = pod(client, ns, "after", owner);
            await().atMost(TIMEOUT).until(() -> p.gc.graphHasUid(after.getMetadata().getUid()));
            client.configMaps().inNamespace(ns).withName("owner").withPropagationPolicy(DeletionPropagation.BACKGROUND)
                    .delete();
            await().atMost(TIMEOUT).until(() -> client.pods().inNamespace(ns).list().getItems().isEmpty());
            await().atMost(TIMEOUT).until(() -> !p.gc.graphHasUid(before.getMetadata().getUid())
                    && !p.gc.graphHasUid(after.getMetadata().getUid()));

            // the next syncs keep the shared monitor; pods were watched once by each, never twice at a time
            p.gc.syncNow();
            assertThat(p.gc.monitor(PODS)).isSameAs(pods);
            assertThat(watchesPerResource(audit, p.metadataAgent, began)).containsEntry("pods", 1L);
            assertThat(watchesPerResource(audit, p.sharedAgent, began)).isEqualTo(Map.of("pods", 1L));
        }
    }
}
