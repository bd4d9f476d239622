package io.qkcm.testing;

import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;

/**
 * A controller's work queue read through its {@code workqueue_*} metrics ({@code name=<queue>}): the
 * positive signal a test waits for before it asserts that a change made nothing happen. A sleep proves
 * nothing (the controller may not have looked yet); "the queue took the change in, finished a sync
 * after it and is idle" proves the controller has looked.
 *
 * <p>What the metrics do not show: a key waiting for a delayed add ({@code AddAfter}: a batch period, a
 * rate-limited retry) is in no queue yet. A test that needs those flushed makes one more change that is
 * delayed the same way and waits for it (a later add joins the pending one).
 */
public final class QueueProbe {

    /** How long the queue must stay idle, counters unchanged, to count as having drained. */
    private static final Duration STABLE = Duration.ofMillis(300);

    private final MeterRegistry registry;
    private final String queue;

    private QueueProbe(MeterRegistry registry, String queue) {
        this.registry = registry;
        this.queue = queue;
    }

    /** The queue named {@code queue} (upstream's queue name, the JOSDK controller name) in {@code registry}. */
    public static QueueProbe of(MeterRegistry registry, String queue) {
        return new QueueProbe(registry, queue);
    }

    /** The queue's counters at one moment. */
    public record Mark(long adds, long processed) {
    }

    /** Items added to the queue so far ({@code workqueue_adds_total}). */
    public long adds() {
        Counter c = registry.find("workqueue.adds").tag("name", queue).counter();
        return c == null ? 0 : (long) c.count();
    }

    /** Syncs finished so far (the count of {@code workqueue_work_duration_seconds}). */
    public long processed() {
        Timer t = registry.find("workqueue.work.duration").tag("name", queue).timer();
        return t == null ? 0 : t.count();
    }

    /** Nothing waiting for a worker and nothing being worked on. */
    public boolean idle() {
        Gauge depth = registry.find("workqueue.depth").tag("name", queue).gauge();
        Gauge unfinished = registry.find("workqueue.unfinished.work.seconds").tag("name", queue).gauge();
        return depth != null && unfinished != null && depth.value() == 0 && unfinished.value() == 0;
    }

    /** The counters now: take it before the change under test. */
    public Mark mark() {
        return new Mark(adds(), processed());
    }

    /**
     * Waits until the controller has processed what came after {@code before}: {@code seen} holds (the
     * controller's cache shows the change, see {@link #cacheHolds}), the queue took in at least one add
     * and finished at least one sync since {@code before}, and it has since stayed idle with its
     * counters unchanged for a moment. Fails when that never happens within {@code timeout}.
     */
    public void awaitProcessedSince(Mark before, BooleanSupplier seen, Duration timeout) {
        AtomicReference<Mark> idleAt = new AtomicReference<>();
        AtomicReference<Long> idleSince = new AtomicReference<>();
        await().atMost(timeout).pollInterval(Duration.ofMillis(50)).until(() -> {
            if (!seen.getAsBoolean()) {
                idleAt.set(null);
                return false;
            }
            Mark now = mark();
            if (now.adds() <= before.adds() || now.processed() <= before.processed() || !idle()) {
                idleAt.set(null);
                return false;
            }
            if (!now.equals(idleAt.get())) {
                idleAt.set(now);
                idleSince.set(System.nanoTime());
                return false;
            }
            return System.nanoTime() - idleSince.get() >= STABLE.toNanos();
        });
    }

    /** As {@link #awaitProcessedSince(Mark, BooleanSupplier, Duration)} once the change is in the cache. */
    public void awaitProcessedSince(Mark before, Duration timeout) {
        awaitProcessedSince(before, () -> true, timeout);
    }

    /**
     * Waits until the queue is idle with its counters unchanged for a moment: every sync of what the
     * controller has been given so far is done (a settle point, not a proof that it saw a given change).
     */
    public void awaitIdle(Duration timeout) {
        awaitProcessedSince(new Mark(-1, -1), timeout);
    }

    /**
     * True when {@code informer}'s cache holds {@code object}'s key at its resource version or a later
     * one ({@code object} as the API server returned it after the change), or, with {@code gone}, no
     * longer holds the key: the controller's handlers have been given the change.
     */
    public static BooleanSupplier cacheHolds(SharedIndexInformer<? extends HasMetadata> informer, HasMetadata object,
            boolean gone) {
        String ns = object.getMetadata().getNamespace();
        String key = ns == null || ns.isEmpty() ? object.getMetadata().getName() : ns + "/" + object.getMetadata().getName();
        long rv = Long.parseLong(object.getMetadata().getResourceVersion());
        return () -> {
            HasMetadata cached = informer.getStore().getByKey(key);
            if (gone) {
                return cached == null || !Objects.equals(cached.getMetadata().getUid(), object.getMetadata().getUid());
            }
            return cached != null && Long.parseLong(cached.getMetadata().getResourceVersion()) >= rv;
        };
    }
}
