package io.qkcm.runtime.josdk;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.processing.event.Event;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.qkcm.runtime.workqueue.RateLimiter;
import io.qkcm.runtime.informers.SharedInformers;

/** client-go's delaying and rate-limited adds, on the JOSDK event source that carries them. */
class QueueEventSourceTest {

    private final ScheduledExecutorService delayer = Executors.newSingleThreadScheduledExecutor();
    private final List<Event> events = new CopyOnWriteArrayList<>();
    private final AtomicInteger retries = new AtomicInteger();

    @AfterEach
    void stop() {
        delayer.shutdownNow();
    }

    private QueueEventSource<ConfigMap> queue(boolean clusterScoped) {
        QueueEventSource<ConfigMap> q = new QueueEventSource<>("test", null, null, clusterScoped, RateLimiter.controllerDefault(),
                delayer, new SharedInformers((KubernetesClient) null, Duration.ofHours(12)), List::of, retries::incrementAndGet);
        q.setEventHandler(events::add);
        return q;
    }

    @Test
    void keysBecomeResourceIds() {
        QueueEventSource<ConfigMap> namespaced = queue(false);
        namespaced.add("ns/name");
        assertThat(events).extracting(Event::getRelatedCustomResourceID).containsExactly(new ResourceID("name", "ns"));
        events.clear();
        queue(true).add("node-1");
        assertThat(events).extracting(Event::getRelatedCustomResourceID).containsExactly(new ResourceID("node-1"));
    }

    @Test
    void addAfterKeepsTheEarliestTime() {
        QueueEventSource<ConfigMap> q = queue(false);
        long start = System.nanoTime();
        q.addAfter("ns/a", Duration.ofSeconds(3));
        q.addAfter("ns/a", Duration.ofMillis(100));
        q.addAfter("ns/a", Duration.ofSeconds(2));
        await().atMost(Duration.ofSeconds(2)).until(() -> events.size() == 1);
        assertThat(System.nanoTime() - start).isLessThan(Duration.ofSeconds(2).toNanos());
        // the later times were dropped (one pending time per key), not fired afterwards
        await().during(Duration.ofMillis(3500)).atMost(Duration.ofSeconds(5)).until(() -> events.size() == 1);
        assertThat(q.waitingKeys()).isEmpty();
    }

    @Test
    void aDelayOfCenturiesDoesNotHideAnEarlierTime() {
        QueueEventSource<ConfigMap> q = queue(false);
        // a bootstrap token expiring in 9999: the due time must not wrap into the past and win
        q.addAfter("ns/e", Duration.ofNanos(Long.MAX_VALUE));
        q.addAfter("ns/e", Duration.ofMillis(100));
        await().atMost(Duration.ofSeconds(2)).until(() -> events.size() == 1);
    }

    @Test
    void rateLimitedAddsBackOffUntilForgotten() {
        QueueEventSource<ConfigMap> q = queue(false);
        for (int i = 0; i < 3; i++) {
            q.addRateLimited("ns/b");
        }
        assertThat(q.numRequeues("ns/b")).isEqualTo(3);
        assertThat(retries.get()).isEqualTo(3);
        await().atMost(Duration.ofSeconds(2)).until(() -> events.size() == 1);
        q.forget("ns/b");
        assertThat(q.numRequeues("ns/b")).isZero();
    }

    @Test
    void nothingIsQueuedAfterStop() {
        QueueEventSource<ConfigMap> q = queue(false);
        q.addAfter("ns/c", Duration.ofMillis(200));
        q.stop();
        q.add("ns/d");
        await().during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(2)).until(events::isEmpty);
    }
}
