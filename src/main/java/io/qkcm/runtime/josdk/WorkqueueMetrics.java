package io.qkcm.runtime.josdk;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.javaoperatorsdk.operator.api.monitoring.Metrics;
import io.javaoperatorsdk.operator.api.reconciler.Constants;
import io.javaoperatorsdk.operator.api.reconciler.RetryInfo;
import io.javaoperatorsdk.operator.processing.Controller;
import io.javaoperatorsdk.operator.processing.event.Event;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.qkcm.controller.WorkQueueMetrics;

/**
 * client-go's {@code workqueue_*} metrics, under upstream's names and labelled {@code name=<queue>},
 * fed by JOSDK's {@link Metrics} hooks: an event accepted is an add; a reconcile handed to the executor
 * is an item in the queue (depth, and its wait is the queue duration once a worker takes it); a
 * reconcile running is work in progress (work duration, unfinished work, longest running processor).
 * Retries are counted by the queue's {@code AddRateLimited}, as upstream's. The JOSDK controller name is
 * the queue name, so one instance serves every controller's Operator.
 */
public final class WorkqueueMetrics implements Metrics {

    private final MeterRegistry registry;
    private final Map<String, Queue> queues = new ConcurrentHashMap<>();

    public WorkqueueMetrics(MeterRegistry registry) {
        this.registry = registry;
    }

    private final class Queue {
        final Counter adds;
        final Counter retries;
        final Timer queued;
        final Timer work;
        final Map<ResourceID, Long> waiting = new ConcurrentHashMap<>();
        final Map<ResourceID, Long> running = new ConcurrentHashMap<>();

        Queue(String name) {
            Tags tags = Tags.of("name", name);
            adds = Counter.builder("workqueue.adds").description("Total number of adds handled by workqueue")
                    .tags(tags).register(registry);
            retries = Counter.builder("workqueue.retries").description("Total number of retries handled by workqueue")
                    .tags(tags).register(registry);
            queued = Timer.builder("workqueue.queue.duration")
                    .description("How long in seconds an item stays in workqueue before being requested.")
                    .serviceLevelObjectives(WorkQueueMetrics.BUCKETS).tags(tags).register(registry);
            work = Timer.builder("workqueue.work.duration")
                    .description("How long in seconds processing an item from workqueue takes.")
                    .serviceLevelObjectives(WorkQueueMetrics.BUCKETS).tags(tags).register(registry);
            Gauge.builder("workqueue.depth", waiting, Map::size).description("Current depth of workqueue")
                    .tags(tags).register(registry);
            Gauge.builder("workqueue.unfinished.work.seconds", this, q -> q.inFlightSeconds(false))
                    .description("How many seconds of work has been done that is in progress and hasn't been observed by work_duration.")
                    .tags(tags).register(registry);
            Gauge.builder("workqueue.longest.running.processor.seconds", this, q -> q.inFlightSeconds(true))
                    .description("How many seconds has the longest running processor for workqueue been running.")
                    .tags(tags).register(registry);
        }

        double inFlightSeconds(boolean longest) {
            long now = System.nanoTime();
            double total = 0;
            double max = 0;
            for (long start : running.values()) {
                double s = (now - start) / 1e9;
                total += s;
                max = Math.max(max, s);
            }
            return longest ? max : total;
        }
    }

    /** The queue's metrics, registered on first use (upstream registers them with the queue). */
    Queue queue(String name) {
        return queues.computeIfAbsent(name, Queue::new);
    }

    /** The process's one metrics registry. */
    public MeterRegistry registry() {
        return registry;
    }

    /** What the queue's {@code AddRateLimited} calls to count a retry. */
    public Runnable retries(String queueName) {
        Counter retries = queue(queueName).retries;
        return retries::increment;
    }

    /** Items handed to workers but not yet taken, for the Dev UI and tests. */
    public int depth(String queueName) {
        return queue(queueName).waiting.size();
    }

    private Queue of(Map<String, Object> metadata) {
        Object name = metadata.get(Constants.CONTROLLER_NAME);
        return name == null ? null : queue(name.toString());
    }

    @Override
    public void controllerRegistered(Controller<? extends HasMetadata> controller) {
        queue(controller.getConfiguration().getName());
    }

    @Override
    public void receivedEvent(Event event, Map<String, Object> metadata) {
        Queue q = of(metadata);
        if (q != null) {
            q.adds.increment();
        }
    }

    @Override
    public void reconcileCustomResource(HasMetadata resource, RetryInfo retryInfo, Map<String, Object> metadata) {
        Queue q = of(metadata);
        if (q != null) {
            q.waiting.put(ResourceID.fromResource(resource), System.nanoTime());
        }
    }

    @Override
    public void reconciliationExecutionStarted(HasMetadata resource, Map<String, Object> metadata) {
        Queue q = of(metadata);
        if (q == null) {
            return;
        }
        ResourceID id = ResourceID.fromResource(resource);
        long now = System.nanoTime();
        Long since = q.waiting.remove(id);
        if (since != null) {
            q.queued.record(Duration.ofNanos(now - since));
        }
        q.running.put(id, now);
    }

    @Override
    public void reconciliationExecutionFinished(HasMetadata resource, Map<String, Object> metadata) {
        Queue q = of(metadata);
        if (q == null) {
            return;
        }
        ResourceID id = ResourceID.fromResource(resource);
        Long start = q.running.remove(id);
        if (start != null) {
            q.work.record(Duration.ofNanos(System.nanoTime() - start));
        } else {
            // taken by a worker but skipped (primary gone from the cache, processor stopping)
            q.waiting.remove(id);
        }
    }
}
