package io.qkcm.runtime.workqueue;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.javaoperatorsdk.operator.api.reconciler.Constants;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;

/** One set of workqueue_* meters per queue name, whether JOSDK's hooks or a plain {@link WorkQueue} feed it. */
class WorkqueueMetricsTest {

    private final ScheduledExecutorService delayer = Executors.newSingleThreadScheduledExecutor();

    @AfterEach
    void stop() {
        delayer.shutdownNow();
    }

    private static double gauge(SimpleMeterRegistry registry, String name, String queue) {
        return registry.get(name).tag("name", queue).gauge().value();
    }

    @Test
    void aPlainQueueReportsItsAddsDepthWorkAndRetriesUnderItsName() throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        WorkqueueMetrics metrics = new WorkqueueMetrics(registry);
        WorkQueue<String> queue = new WorkQueue<>("orphaned_pods_nodes", RateLimiter.controllerDefault(), delayer, metrics);

        queue.add("a");
        queue.add("b");
        queue.add("a"); // already waiting: not an add
        assertThat(registry.get("workqueue.adds").tag("name", "orphaned_pods_nodes").counter().count()).isEqualTo(2);
        assertThat(gauge(registry, "workqueue.depth", "orphaned_pods_nodes")).isEqualTo(2);

        String item = queue.get();
        assertThat(gauge(registry, "workqueue.depth", "orphaned_pods_nodes")).isEqualTo(1);
        Thread.onSpinWait();
        assertThat(gauge(registry, "workqueue.longest.running.processor.seconds", "orphaned_pods_nodes")).isPositive();
        queue.done(item);
        assertThat(registry.get("workqueue.work.duration").tag("name", "orphaned_pods_nodes").timer().count()).isEqualTo(1);
        assertThat(registry.get("workqueue.queue.duration").tag("name", "orphaned_pods_nodes").timer().count()).isEqualTo(1);

        queue.addRateLimited("c");
        assertThat(registry.get("workqueue.retries").tag("name", "orphaned_pods_nodes").counter().count()).isEqualTo(1);
    }

    @Test
    void josdkQueuesAndPlainQueuesShareOneRegistryWithoutDoubleMeters() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        WorkqueueMetrics metrics = new WorkqueueMetrics(registry);
        new WorkQueue<String>("job_orphan_pod", RateLimiter.controllerDefault(), delayer, metrics).add("ns/p");

        Pod pod = new PodBuilder().withNewMetadata().withNamespace("ns").withName("j").endMetadata().build();
        Map<String, Object> job = Map.of(Constants.CONTROLLER_NAME, "job");
        metrics.receivedEvent(null, job);
        metrics.reconcileCustomResource(pod, null, job);
        assertThat(metrics.depth("job")).isEqualTo(1);
        metrics.reconciliationExecutionStarted(pod, job);
        metrics.reconciliationExecutionFinished(pod, job);
        assertThat(metrics.depth("job")).isZero();

        // exactly one meter of each kind per queue name: no second registration under another spelling (the
        // SimpleMeterRegistry's per-bucket ".histogram" gauges of the two timers aside)
        for (String queue : new String[] { "job", "job_orphan_pod" }) {
            assertThat(registry.getMeters().stream().filter(m -> queue.equals(m.getId().getTag("name")))
                    .map(m -> m.getId().getName()).filter(n -> !n.endsWith(".histogram")).toList())
                    .containsExactlyInAnyOrder("workqueue.adds", "workqueue.retries", "workqueue.queue.duration",
                            "workqueue.work.duration", "workqueue.depth", "workqueue.unfinished.work.seconds",
                            "workqueue.longest.running.processor.seconds");
        }
        assertThat(registry.get("workqueue.work.duration").tag("name", "job").timer().count()).isEqualTo(1);
        assertThat(registry.getMeters().stream().map(Meter::getId).map(id -> id.getName().toLowerCase())
                .filter(n -> n.startsWith("workqueue") && !n.endsWith(".histogram")).distinct().count()).isEqualTo(7);
    }

    @Test
    void unnamedQueuesAndNoneRegisterNothing() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        WorkQueue<String> unnamed = new WorkQueue<>("", RateLimiter.controllerDefault(), delayer, new WorkqueueMetrics(registry));
        unnamed.add("x");
        WorkQueue<String> none = new WorkQueue<>("q", RateLimiter.controllerDefault(), delayer, WorkqueueMetrics.NONE);
        none.add("x");
        none.addRateLimited("y");
        assertThat(registry.getMeters()).isEmpty();
    }
}
