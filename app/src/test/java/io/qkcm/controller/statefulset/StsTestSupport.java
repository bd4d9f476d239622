package io.qkcm.controller.statefulset;

import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.PodTemplateSpecBuilder;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.apps.StatefulSetBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.qkcm.testing.TestKubelet;

/** Helpers of the StatefulSet tests, and a kubelet loop for a namespace. */
final class StsTestSupport {

    private StsTestSupport() {
    }

    static PodTemplateSpec template(Map<String, String> labels, String image) {
        return new PodTemplateSpecBuilder().withNewMetadata().withLabels(labels).endMetadata().withNewSpec()
                .addNewContainer().withName("app").withImage(image).endContainer()
                .withTerminationGracePeriodSeconds(30L).endSpec().build();
    }

    static StatefulSetBuilder statefulSet(String name, int replicas, Map<String, String> labels) {
        return new StatefulSetBuilder().withNewMetadata().withName(name).endMetadata().withNewSpec()
                .withReplicas(replicas).withServiceName(name).withNewSelector().withMatchLabels(labels).endSelector()
                .withTemplate(template(labels, "registry.k8s.io/pause:3.10")).endSpec();
    }

    static List<Pod> pods(KubernetesClient client, String ns) {
        return client.pods().inNamespace(ns).list().getItems().stream()
                .sorted(Comparator.comparing(p -> p.getMetadata().getName())).toList();
    }

    static List<String> podNames(KubernetesClient client, String ns) {
        return pods(client, ns).stream().map(p -> p.getMetadata().getName()).toList();
    }

    static int n(Integer i) {
        return i == null ? 0 : i;
    }

    /**
     * What a kubelet would do in a namespace, every 200 ms: a terminating pod goes away (grace period 0),
     * and, when {@code autoReady}, a pending pod becomes Running and Ready.
     */
    static final class KubeletLoop implements AutoCloseable {
        private final ScheduledExecutorService loop = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "test-kubelet-loop");
            t.setDaemon(true);
            return t;
        });
        volatile boolean autoReady;

        KubeletLoop(KubernetesClient client, String ns, boolean autoReady) {
            this.autoReady = autoReady;
            TestKubelet kubelet = new TestKubelet(client);
            loop.scheduleWithFixedDelay(() -> {
                try {
                    for (Pod p : client.pods().inNamespace(ns).list().getItems()) {
                        if (p.getMetadata().getDeletionTimestamp() != null) {
                            client.pods().inNamespace(ns).withName(p.getMetadata().getName()).withGracePeriod(0)
                                    .delete();
                        } else if (this.autoReady && p.getStatus() != null && "Pending".equals(p.getStatus().getPhase())) {
                            kubelet.runningAndReady(p);
                        }
                    }
                } catch (RuntimeException e) {
                    // the next round retries (conflicts, pods gone meanwhile)
                }
            }, 0, 200, TimeUnit.MILLISECONDS);
        }

        @Override
        public void close() {
            loop.shutdownNow();
        }
    }

    static StatefulSet get(KubernetesClient client, String ns, String name) {
        return client.apps().statefulSets().inNamespace(ns).withName(name).get();
    }
}
