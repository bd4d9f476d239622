package io.qkcm.runtime.josdk;

import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.javaoperatorsdk.operator.OperatorException;
import io.javaoperatorsdk.operator.processing.event.Event;
import io.javaoperatorsdk.operator.processing.event.EventHandler;
import io.javaoperatorsdk.operator.processing.event.ResourceID;
import io.javaoperatorsdk.operator.processing.event.source.AbstractEventSource;
import io.javaoperatorsdk.operator.processing.event.source.controller.ResourceAction;
import io.javaoperatorsdk.operator.processing.event.source.controller.ResourceDeleteEvent;
import io.javaoperatorsdk.operator.processing.event.source.controller.ResourceEvent;
import io.qkcm.runtime.workqueue.RateLimiter;
import io.qkcm.runtime.informers.SharedInformers;
import io.qkcm.runtime.informers.MetaNamespaceKey;

/**
 * A controller's work queue as a JOSDK event source: upstream's event handlers (registered on the
 * shared informers) call {@link #add}, {@link #addAfter} and {@link #addRateLimited} with upstream's
 * keys ({@code namespace/name}, or {@code name} for cluster-scoped primaries), and each becomes an
 * {@link Event} for the primary with that key. JOSDK's event processor then plays the rest of
 * client-go's queue: one reconcile per key at a time, events arriving during a reconcile coalesced
 * into one more.
 *
 * <p>Delays keep client-go's semantics: {@code addAfter} keeps the earliest pending time for a key,
 * and {@code addRateLimited} asks the queue's rate limiter (upstream's default: per-key exponential
 * 5ms…1000s, max'ed with a 10 qps / 100 burst bucket) until the key is {@link #forget}-ed.
 *
 * <p>{@link #start} returns only once every informer the controller reads has synced, as upstream's
 * {@code WaitForNamedCacheSync}: JOSDK starts the event processor after its event sources, so no
 * reconcile runs on a partial cache.
 */
public final class QueueEventSource<P extends HasMetadata> extends AbstractEventSource<Void, P> {

    private static final Logger LOG = Logger.getLogger(QueueEventSource.class);

    private final String name;
    private final boolean clusterScoped;
    private final RateLimiter<String> rateLimiter;
    private final ScheduledExecutorService delayer;
    private final SharedInformers informers;
    private final Supplier<Collection<? extends SharedIndexInformer<?>>> needed;
    private final Runnable retried;
    private final Map<String, Pending> waiting = new ConcurrentHashMap<>();
    private final java.util.function.Function<String, ? extends HasMetadata> cachedPrimary;
    private final java.util.function.Function<String, ? extends HasMetadata> tombstone;
    private volatile boolean shutDown;

    private record Pending(long dueNanos, ScheduledFuture<?> future) {
    }

    QueueEventSource(String name, java.util.function.Function<String, ? extends HasMetadata> cachedPrimary,
            java.util.function.Function<String, ? extends HasMetadata> tombstone, boolean clusterScoped, RateLimiter<String> rateLimiter,
            ScheduledExecutorService delayer, SharedInformers informers,
            Supplier<Collection<? extends SharedIndexInformer<?>>> needed, Runnable retried) {
        super(Void.class, name + "-queue");
        this.name = name;
        this.cachedPrimary = cachedPrimary;
        this.tombstone = tombstone;
        this.clusterScoped = clusterScoped;
        this.rateLimiter = rateLimiter;
        this.delayer = delayer;
        this.informers = informers;
        this.needed = needed;
        this.retried = retried;
    }

    /** Upstream's {@code queue.Add(key)}. */
    public void add(String key) {
        EventHandler handler = getEventHandler();
        // Before the controller is registered with its Operator nothing can be queued, and nothing is
        // lost: when the Operator starts, every cached primary arrives as an add and is reconciled.
        if (handler == null || shutDown) {
            return;
        }
        ResourceID id = resourceId(key);
        // With the cached primary, the event is a resource event: JOSDK then tracks the key even when its
        // own event source filtered the primary's events out (the namespace controller queues only
        // deleting namespaces, after a grace period). A key not in the cache is synced too, as upstream
        // syncs it and takes the not-found path (the endpoints controller's startup sweep of Endpoints
        // whose Service is gone): JOSDK gets a delete of a tombstone holding only the name, and calls the
        // reconciler once for it as for any deleted primary.
        HasMetadata cached = cachedPrimary == null ? null : cachedPrimary.apply(key);
        if (cached != null) {
            handler.handleEvent(new ResourceEvent(ResourceAction.UPDATED, id, cached));
        } else if (tombstone != null) {
            handler.handleEvent(new ResourceDeleteEvent(ResourceAction.DELETED, id, tombstone.apply(key), true));
        } else {
            handler.handleEvent(new Event(id));
        }
    }

    /**
     * Adds {@code key} again from another thread: JOSDK dropped an add of it with the state of its deleted
     * primary ({@link TombstoneRedelivery}, which calls this under JOSDK's lock).
     */
    void redeliver(String key) {
        if (shutDown) {
            return;
        }
        try {
            delayer.execute(() -> add(key));
        } catch (java.util.concurrent.RejectedExecutionException e) {
            // the process is stopping
        }
    }

    /** Upstream's {@code queue.AddAfter(key, d)}: the earliest pending time for a key wins. */
    public void addAfter(String key, Duration delay) {
        if (delay.isZero() || delay.isNegative()) {
            add(key);
            return;
        }
        if (shutDown) {
            return;
        }
        long now = System.nanoTime();
        long due = now + delay.toNanos();
        if (due < now) {
            due = Long.MAX_VALUE; // a delay of centuries (a token expiring in 9999): no overflow into the past
        }
        long dueAt = due;
        waiting.compute(key, (k, pending) -> {
            if (pending != null && pending.dueNanos() <= dueAt && !pending.future().isDone()) {
                return pending;
            }
            if (pending != null) {
                pending.future().cancel(false);
            }
            ScheduledFuture<?> future = delayer.schedule(() -> fire(k, dueAt), delay.toNanos(), TimeUnit.NANOSECONDS);
            return new Pending(dueAt, future);
        });
    }

    private void fire(String key, long due) {
        waiting.computeIfPresent(key, (k, pending) -> pending.dueNanos() == due ? null : pending);
        add(key);
    }

    /** Upstream's {@code queue.AddRateLimited(key)}. */
    public void addRateLimited(String key) {
        retried.run();
        addAfter(key, rateLimiter.when(key));
    }

    /** Upstream's {@code queue.Forget(key)}: the key's backoff starts over. */
    public void forget(String key) {
        rateLimiter.forget(key);
    }

    /** Upstream's {@code queue.NumRequeues(key)}. */
    public int numRequeues(String key) {
        return rateLimiter.numRequeues(key);
    }

    /** Keys waiting for a delayed add (for tests and the Dev UI). */
    public Set<String> waitingKeys() {
        return Set.copyOf(waiting.keySet());
    }

    private ResourceID resourceId(String key) {
        if (clusterScoped) {
            return new ResourceID(key);
        }
        MetaNamespaceKey k = MetaNamespaceKey.split(key);
        return k.namespace().isEmpty() ? new ResourceID(k.name()) : new ResourceID(k.name(), k.namespace());
    }

    @Override
    public void start() throws OperatorException {
        List<? extends SharedIndexInformer<?>> list = List.copyOf(needed.get());
        for (SharedIndexInformer<?> informer : list) {
            try {
                informers.whenSynced(informer.getApiTypeClass()).toCompletableFuture().get();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new OperatorException("interrupted waiting for caches of " + name, e);
            } catch (java.util.concurrent.ExecutionException e) {
                throw new OperatorException("caches of " + name + " failed to sync", e.getCause());
            }
        }
        LOG.debugf("Caches are synced for %s", name);
        super.start();
    }

    @Override
    public void stop() throws OperatorException {
        shutDown = true;
        waiting.values().forEach(p -> p.future().cancel(false));
        waiting.clear();
        super.stop();
    }

    @Override
    public Set<Void> getSecondaryResources(P primary) {
        return Set.of();
    }
}
