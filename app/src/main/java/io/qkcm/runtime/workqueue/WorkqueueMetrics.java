package io.qkcm.runtime.workqueue;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.IntStream;

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

/**
 * client-go's {@code workqueue_*} metrics, under upstream's names and labelled {@code name=<queue>}: one
 * set of meters per queue name for the process, whichever kind of queue feeds it.
 * <ul>
 * <li>A JOSDK controller's queue is fed by JOSDK's {@link Metrics} hooks: an event accepted is an add; a
 * reconcile handed to the executor is an item in the queue (depth, and its wait is the queue duration once
 * a worker takes it); a reconcile running is work in progress (work duration, unfinished work, longest
 * running processor). The JOSDK controller name is the queue name.</li>
 * <li>A {@link WorkQueue} (the queues upstream keeps beside a controller's main one) reports through the
 * {@link Queue} it gets from {@link #forQueue}; depth and work in progress are read from it.</li>
 * </ul>
 * Retries are counted by the queue's {@code AddRateLimited}, as upstream's.
 */
public final class WorkqueueMetrics implements Metrics {

    /** Upstream's buckets: 10ns to 10s, ten powers of ten. */
    public static final Duration[] BUCKETS = IntStream.range(0, 10)
            .mapToObj(i -> Duration.ofNanos((long) (10 * Math.pow(10, i)))).toArray(Duration[]::new);

    /** Metrics that go nowhere: for queues upstream leaves unnamed (no metrics) and for unit tests. */
    public static final WorkqueueMetrics NONE = new WorkqueueMetrics(null);

    private final MeterRegistry registry;
    private final Map<String, Queue> queues = new ConcurrentHashMap<>();

    public WorkqueueMetrics(MeterRegistry registry) {
        this.registry = registry;
    }

    /** One queue's meters. */
    public final class Queue {
        private final Counter adds;
        private final Counter retries;
        private final Timer queued;
        private final Timer work;
        /** JOSDK's queue: items handed to the executor and reconciles running, with their start times. */
        private final Map<ResourceID, Long> waiting = new ConcurrentHashMap<>();
        private final Map<ResourceID, Long> running = new ConcurrentHashMap<>();
        /** A {@link WorkQueue} that reports here, read for depth and work in progress. */
        private volatile WorkQueue<?> workQueue;

        private Queue(String name) {
            if (registry == null) {
                adds = retries = null;
                queued = work = null;
                return;
            }
            Tags tags = Tags.of("name", name);
            adds = Counter.builder("workqueue.adds").description("Total number of adds handled by workqueue")
                    .tags(tags).register(registry);
            retries = Counter.builder("workqueue.retries").description("Total number of retries handled by workqueue")
                    .tags(tags).register(registry);
            queued = Timer.builder("workqueue.queue.duration")
                    .description("How long in seconds an item stays in workqueue before being requested.")
                    .serviceLevelObjectives(BUCKETS).tags(tags).register(registry);
            work = Timer.builder("workqueue.work.duration")
                    .description("How long in seconds processing an item from workqueue takes.")
                    .serviceLevelObjectives(BUCKETS).tags(tags).register(registry);
            Gauge.builder("workqueue.depth", this, Queue::depth).description("Current depth of workqueue")
                    .tags(tags).register(registry);
            Gauge.builder("workqueue.unfinished.work.seconds", this, q -> q.inFlightSeconds(false))
                    .description("How many seconds of work has been done that is in progress and hasn't been observed by work_duration.")
                    .tags(tags).register(registry);
            Gauge.builder("workqueue.longest.running.processor.seconds", this, q -> q.inFlightSeconds(true))
                    .description("How many seconds has the longest running processor for workqueue been running.")
                    .tags(tags).register(registry);
        }

        public void added() {
            if (adds != null) {
                adds.increment();
            }
        }

        public void retried() {
            if (retries != null) {
                retries.increment();
            }
        }

        public void waited(long nanos) {
            if (queued != null) {
                queued.record(Duration.ofNanos(nanos));
            }
        }

        public void worked(long nanos) {
            if (work != null) {
                work.record(Duration.ofNanos(nanos));
            }
        }

        int depth() {
            WorkQueue<?> q = workQueue;
            return q != null ? q.length() : waiting.size();
        }

        double inFlightSeconds(boolean longest) {
            WorkQueue<?> q = workQueue;
            if (q != null) {
                return q.inFlightSeconds()[longest ? 1 : 0];
            }
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

    /** The meters of {@code queue}, a {@link WorkQueue} named {@code name}; an unnamed queue has none. */
    Queue forQueue(String name, WorkQueue<?> queue) {
        if (name.isEmpty()) {
            return NONE.queue(name); // upstream's unnamed queues register no metrics
        }
        Queue q = queue(name);
        q.workQueue = queue;
        return q;
    }

    /** The process's one metrics registry (null for {@link #NONE}). */
    public MeterRegistry registry() {
        return registry;
    }

    /** What the queue's {@code AddRateLimited} calls to count a retry. */
    public Runnable retries(String queueName) {
        return queue(queueName)::retried;
    }

    /** Items handed to workers but not yet taken, for the Dev UI and tests. */
    public int depth(String queueName) {
        return queue(queueName).depth();
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
            q.added();
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
            q.waited(now - since);
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
            q.worked(System.nanoTime() - start);
        } else {
            // taken by a worker but skipped (primary gone from the cache, processor stopping)
            q.waiting.remove(id);
        }
    }
}
