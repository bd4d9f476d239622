package io.qkcm.manager;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.qkcm.runtime.informers.SharedInformers;
import io.qkcm.runtime.josdk.Controller;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.ControllerDescriptor;
import io.qkcm.runtime.josdk.KeyReconciler;
import io.qkcm.runtime.josdk.OperatorController;
import io.qkcm.runtime.options.ControllerManagerOptions;
import io.qkcm.runtime.options.Flags;
import io.qkcm.testing.TestOperators;

/**
 * Each workload controller's JOSDK event sources are its real ones: its work queue and one source per kind it
 * owns through a controller reference (upstream's handlers on those kinds), as built by its descriptor.
 */
class ControllerEventSourcesTest {

    @Test
    void workloadControllersListTheKindsTheyOwn() throws Exception {
        Map<String, List<String>> expected = new LinkedHashMap<>();
        expected.put("replicaset-controller", List.of("Void", "Pod"));
        expected.put("replicationcontroller-controller", List.of("Void", "Pod"));
        expected.put("deployment-controller", List.of("Void", "ReplicaSet"));
        expected.put("statefulset-controller", List.of("Void", "Pod"));
        expected.put("daemonset-controller", List.of("Void", "ControllerRevision", "Pod"));
        expected.put("cronjob-controller", List.of("Void", "Job"));

        ControllerManagerOptions options = new ControllerManagerOptions(Flags.upstream(), flag -> Optional.empty());
        ScheduledExecutorService delayer = Executors.newSingleThreadScheduledExecutor();
        // nothing is started: building a controller only registers its handlers on the shared informers
        try (KubernetesClient client = new KubernetesClientBuilder()
                .withConfig(new ConfigBuilder().withMasterUrl("https://127.0.0.1:1").build()).build()) {
            SharedInformers informers = new SharedInformers(client, Duration.ofHours(12));
            Map<String, List<String>> actual = new LinkedHashMap<>();
            for (String name : expected.keySet()) {
                ControllerDescriptor d = ControllerCatalog.upstream().byName(name).orElseThrow();
                ControllerContext context = new ControllerContext(name, client, informers,
                        (object, type, reason, message) -> {
                        }, options, delayer, TestOperators.create());
                Controller c = d.start().orElseThrow().start(context);
                List<String> kinds = new ArrayList<>();
                for (KeyReconciler<?> r : ((OperatorController) c).reconcilers()) {
                    r.prepareEventSources(null).forEach(s -> kinds.add(s.resourceType().getSimpleName()));
                }
                actual.put(name, kinds);
            }
            assertThat(actual).isEqualTo(expected);
        } finally {
            delayer.shutdownNow();
        }
    }
}
