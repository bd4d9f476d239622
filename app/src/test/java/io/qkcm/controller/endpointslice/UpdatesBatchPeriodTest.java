package io.qkcm.controller.endpointslice;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Endpoints;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.micrometer.core.instrument.MeterRegistry;
import io.qkcm.manager.ControllerManager;
import io.qkcm.testing.QueueProbe;
import io.qkcm.testing.RealApiServer;
import io.qkcm.testing.RealApiServerResource;
import io.qkcm.testing.TestKubelet;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;

/**
 * {@code --endpoint-updates-batch-period} and {@code --endpointslice-updates-batch-period}: a pod
 * change queues its Services only after the period, so the changes of many pods within it are
 * written as one update, as upstream.
 */
@QuarkusTest
@TestProfile(UpdatesBatchPeriodTest.Profile.class)
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
class UpdatesBatchPeriodTest {

    static final Duration BATCH = Duration.ofSeconds(3);

    public static class Profile implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            // with the garbage collector, which removes a deleted Service's slices (ServiceDeletionTest)
            return Map.of("qkcm.controllers", "endpoints-controller,endpointslice-controller,garbage-collector-controller",
                    "qkcm.endpoint-updates-batch-period", "3s", "qkcm.endpointslice-updates-batch-period", "3s",
                    "qkcm.kube-api-qps", "200", "qkcm.kube-api-burst", "300");
        }
    }

    /** Counts MODIFIED events of the objects a watch sees. */
    static final class Modifications<T extends HasMetadata> implements Watcher<T> {
        final AtomicInteger count = new AtomicInteger();
        /** The last resource version seen per object name. */
        final Map<String, String> seen = new ConcurrentHashMap<>();

        @Override
        public void eventReceived(Action action, T resource) {
            if (action == Action.MODIFIED) {
                count.incrementAndGet();
            }
            seen.put(resource.getMetadata().getName(), resource.getMetadata().getResourceVersion());
        }

        /** The watch has delivered every write up to {@code current}'s. */
        boolean caughtUp(List<? extends HasMetadata> current) {
            return current.stream().allMatch(o -> o.getMetadata().getResourceVersion()
                    .equals(seen.get(o.getMetadata().getName())));
        }

        @Override
        public void onClose(WatcherException cause) {
        }
    }

    @Inject
    MeterRegistry registry;
    @Inject
    ControllerManager manager;

    @Test
    void podChangesWithinTheBatchPeriodAreWrittenTogether() throws Exception {
        try (KubernetesClient client = RealApiServer.get().newClient()) {
            String ns = "batch-" + System.nanoTime();
            client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build())
                    .create();
            client.services().inNamespace(ns).resource(new ServiceBuilder().withNewMetadata().withName("web")
                    .endMetadata().withNewSpec().addToSelector("app", "web").addNewPort().withPort(80)
                    .withNewTargetPort(8080).endPort().endSpec().build()).create();
            // Service events are not batched: both objects appear at once, still empty
            await().atMost(Duration.ofSeconds(30)).until(() -> client.endpoints().inNamespace(ns).withName("web").get() != null
                    && !slices(client, ns).isEmpty());

            Modifications<Endpoints> endpointsWrites = new Modifications<>();
            Modifications<EndpointSlice> sliceWrites = new Modifications<>();
            // the slice controller places endpoints by their Node (zone): the pods' node must exist
            String node = "batch-node-" + System.nanoTime();
            client.nodes().resource(new NodeBuilder().withNewMetadata().withName(node).endMetadata().build()).create();
            TestKubelet kubelet = new TestKubelet(client, node);
            long firstChange;
            try (Watch w1 = client.endpoints().inNamespace(ns).withName("web").watch(endpointsWrites);
                    Watch w2 = client.discovery().v1().endpointSlices().inNamespace(ns)
                            .withLabel("kubernetes.io/service-name", "web").watch(sliceWrites)) {
                firstChange = System.nanoTime();
                List<Pod> pods = new ArrayList<>();
                for (int i = 0; i < 8; i++) {
                    pods.add(client.pods().inNamespace(ns).resource(new PodBuilder().withNewMetadata()
                            .withName("web-" + i).addToLabels("app", "web").endMetadata().withNewSpec()
                            .addNewContainer().withName("c").withImage("registry.k8s.io/pause:3.9").endContainer()
                            .endSpec().build()).create());
                }
                pods.forEach(kubelet::runningAndReady);
                long readyAt = System.nanoTime();

                // nothing is written before the period has passed since the first pod event
                long[] firstAddress = new long[1];
                await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50)).until(() -> {
                    Endpoints e = client.endpoints().inNamespace(ns).withName("web").get();
                    boolean has = e.getSubsets() != null && !e.getSubsets().isEmpty();
                    firstAddress[0] = System.nanoTime();
                    return has;
                });
                assertThat(Duration.ofNanos(firstAddress[0] - firstChange))
                        .as("first Endpoints write after the batch period").isGreaterThanOrEqualTo(BATCH.minusMillis(300));
                assertThat(Duration.ofNanos(readyAt - firstChange)).as("the test made its changes within the period")
                        .isLessThan(BATCH);

                await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
                    Endpoints e = client.endpoints().inNamespace(ns).withName("web").get();
                    assertThat(e.getSubsets()).singleElement().satisfies(s -> assertThat(s.getAddresses()).hasSize(8));
                    assertThat(slices(client, ns)).singleElement()
                            .satisfies(s -> assertThat(s.getEndpoints()).hasSize(8));
                });
                // nothing left to write: one more selected pod, without an IP (in neither object), is batched
                // after the others; once both controllers have synced it and drained their queues, no earlier
                // batch is pending (a later add joins a pending one) and both watches have seen the last write
                QueueProbe endpointsQueue = QueueProbe.of(registry, "endpoint");
                QueueProbe slicesQueue = QueueProbe.of(registry, "endpoint_slice");
                QueueProbe.Mark endpointsMark = endpointsQueue.mark();
                QueueProbe.Mark slicesMark = slicesQueue.mark();
                Pod pending = client.pods().inNamespace(ns).resource(new PodBuilder().withNewMetadata()
                        .withName("web-pending").addToLabels("app", "web").endMetadata().withNewSpec()
                        .addNewContainer().withName("c").withImage("registry.k8s.io/pause:3.9").endContainer()
                        .endSpec().build()).create();
                var podCache = QueueProbe.cacheHolds(manager.informers().informerFor(Pod.class), pending, false);
                endpointsQueue.awaitProcessedSince(endpointsMark, podCache, Duration.ofSeconds(30));
                slicesQueue.awaitProcessedSince(slicesMark, podCache, Duration.ofSeconds(30));
                await().atMost(Duration.ofSeconds(30)).until(() -> endpointsWrites.caughtUp(
                        List.of(client.endpoints().inNamespace(ns).withName("web").get()))
                        && sliceWrites.caughtUp(slices(client, ns)));
            }
            // 8 pods created and made ready, each two events: one write per object (a second one only
            // if the pods' events straddled two periods)
            assertThat(endpointsWrites.count.get()).as("Endpoints updates").isBetween(1, 2);
            assertThat(sliceWrites.count.get()).as("EndpointSlice updates").isBetween(1, 2);
            client.namespaces().withName(ns).delete();
            client.nodes().withName(node).delete();
        }
    }

    static List<EndpointSlice> slices(KubernetesClient client, String ns) {
        return client.discovery().v1().endpointSlices().inNamespace(ns)
                .withLabel("kubernetes.io/service-name", "web").list().getItems();
    }
}
