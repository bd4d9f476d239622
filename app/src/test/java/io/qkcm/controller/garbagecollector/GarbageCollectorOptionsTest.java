package io.qkcm.controller.garbagecollector;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Map;
import java.util.Optional;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.ReplicaSet;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.qkcm.runtime.informers.GroupVersionResource;
import io.qkcm.runtime.informers.SharedInformers;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.options.ControllerManagerOptions;
import io.qkcm.runtime.options.Flags;

/** Flags of the garbage collector, as upstream: --enable-garbage-collector=false means it does not start. */
class GarbageCollectorOptionsTest {

    static ControllerManagerOptions options(Map<String, String> config) {
        return new ControllerManagerOptions(Flags.upstream(), name -> Optional.ofNullable(config.get(name)));
    }

    @Test
    void disabledGarbageCollectorIsNotBuilt() {
        ControllerContext context = new ControllerContext(GarbageCollector.NAME, null, null, null,
                options(Map.of("qkcm.enable-garbage-collector", "false")), null, null);
        assertThat(GarbageCollectorControllerDescriptor.start(context)).isNull();
    }

    /**
     * The garbage collector finds the shared informer of a resource by its group, version and plural, and
     * only where a controller asked for one: the lookup never creates an informer.
     */
    @Test
    void sharedInformerOfAResourceIsFoundOnlyWhereAControllerAskedForIt() {
        try (KubernetesClient client = new KubernetesClientBuilder().withConfig(new ConfigBuilder()
                .withMasterUrl("https://127.0.0.1:1").build()).build()) {
            SharedInformers informers = new SharedInformers(client, Duration.ofHours(12));
            GroupVersionResource pods = new GroupVersionResource("", "v1", "pods");
            GroupVersionResource replicaSets = new GroupVersionResource("apps", "v1", "replicasets");
            GroupVersionResource slices = new GroupVersionResource("discovery.k8s.io", "v1", "endpointslices");
            GroupVersionResource hpaV2 = new GroupVersionResource("autoscaling", "v2", "horizontalpodautoscalers");
            assertThat(informers.typeServing(pods)).isEmpty();
            assertThat(informers.cachedTypes()).as("the lookup creates no informer").isEmpty();

            informers.informerFor(Pod.class);
            informers.informerFor(ReplicaSet.class);
            informers.informerFor(EndpointSlice.class);
            informers.informerFor(io.fabric8.kubernetes.api.model.autoscaling.v1.HorizontalPodAutoscaler.class);
            assertThat(informers.typeServing(pods)).contains(Pod.class);
            assertThat(informers.typeServing(replicaSets)).contains(ReplicaSet.class);
            assertThat(informers.typeServing(slices)).contains(EndpointSlice.class);
            // another version of the resource is another informer (upstream's ForResource is per version)
            assertThat(informers.typeServing(hpaV2)).isEmpty();
            assertThat(informers.typeServing(new GroupVersionResource("", "v1", "configmaps"))).isEmpty();
            assertThat(informers.cachedTypes()).hasSize(4);
        }
    }

    @Test
    void defaultsAreUpstreams() {
        ControllerManagerOptions o = options(Map.of());
        assertThat(o.bool("enable-garbage-collector")).isTrue();
        assertThat(o.concurrentSyncs("gc")).isEqualTo(20);
        assertThat(Flags.upstream().byName("concurrent-gc-syncs").orElseThrow().implemented()).isTrue();
        assertThat(Flags.upstream().byName("enable-garbage-collector").orElseThrow().implemented()).isTrue();
        assertThat(GarbageCollectorControllerDescriptor.DESCRIPTOR.implemented()).isTrue();
        assertThat(GarbageCollectorControllerDescriptor.DESCRIPTOR.name()).isEqualTo("garbage-collector-controller");
        assertThat(GarbageCollectorControllerDescriptor.DESCRIPTOR.aliases()).containsExactly("garbagecollector");
    }
}
