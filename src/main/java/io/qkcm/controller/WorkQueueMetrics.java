package io.qkcm.controller;

import java.time.Duration;
import java.util.stream.IntStream;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;

/** client-go's workqueue metrics, under upstream's Prometheus names, labelled {@code name=<queue>}. */
public interface WorkQueueMetrics {

    void added();

    void waited(long nanos);

    void worked(long nanos);

    void retried();

    interface Provider {
        WorkQueueMetrics forQueue(String name, WorkQueue<?> queue);
    }

    Provider NONE = (name, queue) -> new WorkQueueMetrics() {
        @Override
        public void added() {
        }

        @Override
        public void waited(long nanos) {
        }

        @Override
        public void worked(long nanos) {
        }

        @Override
        public void retried() {
        }
    };

    /** Upstream's buckets: 10ns to 10s, ten powers of ten. */
    Duration[] BUCKETS = IntStream.range(0, 10).mapToObj(i -> Duration.ofNanos((long) (10 * Math.pow(10, i))))
            .toArray(Duration[]::new);

    static Provider micrometer(MeterRegistry registry) {
        return (name, queue) -> {
            Tags tags = Tags.of("name", name);
            Counter adds = Counter.builder("workqueue.adds").description("Total number of adds handled by workqueue")
                    .tags(tags).register(registry);
            Counter retries = Counter.builder("workqueue.retries")
                    .description("Total number of retries handled by workqueue").tags(tags).register(registry);
            Timer queued = Timer.builder("workqueue.queue.duration")
                    .description("How long in seconds an item stays in workqueue before being requested.")
                    .serviceLevelObjectives(BUCKETS).tags(tags).register(registry);
            Timer work = Timer.builder("workqueue.work.duration")
                    .description("How long in seconds processing an item from workqueue takes.")
                    .serviceLevelObjectives(BUCKETS).tags(tags).register(registry);
            Gauge.builder("workqueue.depth", queue, WorkQueue::length).description("Current depth of workqueue")
                    .tags(tags).register(registry);
            Gauge.builder("workqueue.unfinished.work.seconds", queue, q -> q.inFlightSeconds()[0])
                    .description("How many seconds of work has been done that is in progress and hasn't been observed by work_duration.")
                    .tags(tags).register(registry);
            Gauge.builder("workqueue.longest.running.processor.seconds", queue, q -> q.inFlightSeconds()[1])
                    .description("How many seconds has the longest running processor for workqueue been running.")
                    .tags(tags).register(registry);
            return new WorkQueueMetrics() {
                @Override
                public void added() {
                    adds.increment();
                }

                @Override
                public void waited(long nanos) {
                    queued.record(Duration.ofNanos(nanos));
                }

                @Override
                public void worked(long nanos) {
                    work.record(Duration.ofNanos(nanos));
                }

                @Override
                public void retried() {
                    retries.increment();
                }
            };
        };
    }
}
