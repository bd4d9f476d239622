package io.qkcm.runtime.josdk;

import java.util.List;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.api.reconciler.Ignore;
import io.javaoperatorsdk.operator.api.reconciler.Reconciler;
import io.javaoperatorsdk.operator.api.reconciler.UpdateControl;
import io.javaoperatorsdk.operator.api.reconciler.EventSourceContext;
import io.javaoperatorsdk.operator.processing.event.source.EventSource;
import io.javaoperatorsdk.operator.processing.event.source.filter.GenericFilter;
import io.javaoperatorsdk.operator.processing.event.source.filter.OnAddFilter;
import io.javaoperatorsdk.operator.processing.event.source.filter.OnUpdateFilter;
import io.qkcm.runtime.workqueue.RateLimiter;
import io.qkcm.runtime.informers.MetaNamespaceKey;

/**
 * A qkcm controller as a JOSDK {@link Reconciler}: upstream's {@code syncHandler(key)} is the body of
 * {@link #reconcile}, and upstream's {@code processNextWorkItem} the frame around it — success forgets
 * the key's backoff, an error goes to {@link #handleError} (upstream's {@code handleErr}: retried with
 * backoff up to the controller's {@link #maxRetries()}, then dropped), and every sync is timed. Upstream's event handlers stay what they
 * are, registered on the shared informers, and feed {@link #queue}.
 *
 * <p>What JOSDK is told (see {@link OperatorController}): trigger on all events, so a deleted primary is
 * synced once more and upstream's not-found path runs; no generation filter, no finalizer, no periodic
 * reconciliation, no status patching; JOSDK's own retry off, since the queue does it.
 *
 * <p>{@code @Ignore} keeps quarkus-operator-sdk from registering the class in its default Operator:
 * each controller runs in an Operator of its own, built through the extension's configuration.
 */
@Ignore
public abstract class KeyReconciler<P extends HasMetadata> implements Reconciler<P> {

    protected final Logger log = Logger.getLogger(getClass());
    protected final ControllerContext context;
    /** Upstream's work queue for this controller. */
    protected final QueueEventSource<P> queue;
    private final Class<P> primaryType;
    private final String queueName;
    private final int workers;
    private final List<OwnedEventSource<?, P>> owned = new java.util.concurrent.CopyOnWriteArrayList<>();

    /** With upstream's default controller rate limiter. */
    protected KeyReconciler(ControllerContext context, Class<P> primaryType, String queueName, int workers) {
        this(context, primaryType, queueName, workers, RateLimiter.controllerDefault());
    }

    protected KeyReconciler(ControllerContext context, Class<P> primaryType, String queueName, int workers,
            RateLimiter<String> rateLimiter) {
        this.context = context;
        this.primaryType = primaryType;
        this.queueName = queueName;
        this.workers = workers;
        boolean clusterScoped = !io.fabric8.kubernetes.api.model.Namespaced.class.isAssignableFrom(primaryType);
        // the primary's cache is the shared one; asking for it now makes standbys keep it warm
        var primaries = context.informers().informerFor(primaryType).getStore();
        this.queue = new QueueEventSource<>(queueName, primaries::getByKey, key -> tombstone(primaryType, key),
                clusterScoped, rateLimiter,
                context.delayer(), context.informers(), this::informers, context.retryCounter(queueName));
    }

    /**
     * Upstream's sync handler for one key. Throwing hands the error to {@link #handleError}. A controller
     * overrides this one, or {@link #sync(String, HasMetadata, Context)} when it needs JOSDK's context.
     */
    protected void sync(String key) throws Exception {
        throw new IllegalStateException(getClass().getName() + " overrides neither sync(key) nor sync(key, primary, ctx)");
    }

    /**
     * What {@link #reconcile} runs: {@link #sync(String)} unless overridden. Controllers with dependent
     * resources, or that need the last state of a deleted primary ({@code ctx.isPrimaryResourceDeleted()},
     * e.g. its UID), override this one. {@code primary} is the cached object, or the last known one
     * when it was deleted.
     */
    protected void sync(String key, P primary, Context<P> ctx) throws Exception {
        sync(key);
    }

    /**
     * Which updates of the primary queue it (JOSDK's on-update filter); null, the default, queues every
     * update and resync, as upstream's handlers that call {@code queue.Add} on update. A controller whose
     * upstream handler queues selectively (or after a delay) rejects them here and queues from its own
     * handler on the shared informer.
     */
    protected OnUpdateFilter<? super P> primaryUpdateFilter() {
        return null;
    }

    /**
     * Which primaries this controller handles at all (JOSDK's generic filter, deletes included); null,
     * the default, all of them.
     */
    protected GenericFilter<? super P> primaryFilter() {
        return null;
    }

    /** Which adds of the primary queue it (JOSDK's on-add filter); null, the default, queues every add. */
    protected OnAddFilter<? super P> primaryAddFilter() {
        return null;
    }

    /** The informers that must have synced before the first sync (upstream's WaitForNamedCacheSync). */
    protected abstract List<SharedIndexInformer<?>> informers();

    /** {@link #maxRetries()} of a controller whose upstream retries a key for as long as it fails. */
    public static final int UNLIMITED_RETRIES = Integer.MAX_VALUE;

    /**
     * Upstream's {@code maxRetries}: how many rate-limited retries a failing key gets before it is
     * dropped from the queue (the next event queues it again). The default retries forever, as
     * upstream's ReplicaSet controller; endpoints, EndpointSlices, … declare theirs.
     */
    protected int maxRetries() {
        return UNLIMITED_RETRIES;
    }

    /**
     * Upstream's {@code handleErr}, one frame for every controller: retry with the queue's backoff while
     * the queue's numRequeues is under {@link #maxRetries()}, otherwise forget the key and log that it was
     * dropped. {@link #handleErrorFirst} lets a controller decide some errors itself first.
     */
    protected final void handleError(String key, Exception e) {
        if (handleErrorFirst(key, e)) {
            return;
        }
        int requeues = queue.numRequeues(key);
        if (requeues < maxRetries()) {
            logRetry(key, requeues, e);
            queue.addRateLimited(key);
            return;
        }
        logDropped(key, e);
        queue.forget(key);
    }

    /**
     * A controller's own handling of some errors, before the retry frame (e.g. the namespace controller
     * waits for remaining content, the token controller forgets errors that are not worth a retry).
     * Returns true when the key's fate is decided.
     */
    protected boolean handleErrorFirst(String key, Exception e) {
        return false;
    }

    /** How a retried error is logged; conflicts are expected under concurrent writers and stay quiet. */
    protected void logRetry(String key, int requeues, Exception e) {
        if (e instanceof KubernetesClientException kce && kce.getCode() == 409) {
            log.debugf("%s: conflict syncing %s, retrying: %s", queueName, key, kce.getMessage());
        } else {
            log.errorf("%s: error syncing %s (retry %d): %s", queueName, key, requeues, shortMessage(e));
            log.debug("sync failure", e);
        }
    }

    /** How an error is logged when its key is dropped past {@link #maxRetries()}. */
    protected void logDropped(String key, Exception e) {
        log.warnf("%s: dropping %s out of the queue after %d retries: %s", queueName, key, maxRetries(), shortMessage(e));
        log.debug("sync failure", e);
    }

    /** fabric8's messages embed the whole Status object; the first 300 characters say what failed. */
    public static String shortMessage(Exception e) {
        String message = String.valueOf(e.getMessage());
        return message.length() > 300 ? message.substring(0, 300) + "..." : message;
    }

    @Override
    public final UpdateControl<P> reconcile(P primary, Context<P> ctx) {
        String key = key(primary);
        long start = System.nanoTime();
        SyncListener listener = syncListener;
        long startedAt = listener == null ? 0 : System.currentTimeMillis();
        try {
            sync(key, primary, ctx);
            queue.forget(key);
            if (listener != null) {
                listener.synced(context.controllerName(), HasMetadata.getKind(primary.getClass()), key, startedAt,
                        () -> queue.add(key));
            }
        } catch (InterruptedException e) {
            // the controller is stopping (or the process lost its lease): nothing to retry
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            handleError(key, e);
        } finally {
            // upstream's deferred "Finished syncing" of every sync handler
            log.tracef("Finished syncing %s %s (%dms)", queueName, key, (System.nanoTime() - start) / 1_000_000);
        }
        return UpdateControl.noUpdate();
    }

    /** Told of every sync that completed without error (shadow mode: which writes qkcm saw before it synced). */
    @FunctionalInterface
    public interface SyncListener {
        /**
         * {@code controller} synced {@code key} of a primary of {@code kind}, started at {@code startedAtMillis};
         * {@code resync} queues the key again (shadow mode asks for a sync after an upstream write none saw).
         */
        void synced(String controller, String kind, String key, long startedAtMillis, Runnable resync);
    }

    private static volatile SyncListener syncListener;

    /** Installs the process's sync listener (null: none). */
    public static void syncListener(SyncListener listener) {
        syncListener = listener;
    }

    /** A primary holding only the name of {@code key}: what JOSDK syncs for a key no longer cached. */
    static <T extends HasMetadata> T tombstone(Class<T> type, String key) {
        T object;
        try {
            object = type.getDeclaredConstructor().newInstance();
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot build a " + type.getSimpleName(), e);
        }
        MetaNamespaceKey k = MetaNamespaceKey.split(key);
        io.fabric8.kubernetes.api.model.ObjectMeta meta = new io.fabric8.kubernetes.api.model.ObjectMeta();
        meta.setName(k.name());
        // no identity: JOSDK's logging context would otherwise get nulls
        meta.setUid("");
        meta.setResourceVersion("");
        if (!k.namespace().isEmpty()) {
            meta.setNamespace(k.namespace());
        }
        object.setMetadata(meta);
        return object;
    }

    /** Upstream's key: {@code namespace/name}, or {@code name} for a cluster-scoped primary. */
    public static String key(HasMetadata object) {
        return MetaNamespaceKey.of(object);
    }

    /**
     * Registers upstream's {@code handler} for the objects of {@code type} this controller owns on the shared
     * informer, and lists them among the controller's JOSDK event sources ({@link OwnedEventSource}): the
     * handler queues owners into {@link #queue}; {@code Context.getSecondaryResources(type)} reads the owned
     * objects of a primary from the shared cache. Call from the constructor.
     */
    protected final <D extends HasMetadata> OwnedEventSource<D, P> owned(Class<D> type,
            io.fabric8.kubernetes.client.informers.ResourceEventHandler<D> handler) {
        OwnedEventSource<D, P> source = new OwnedEventSource<>(type, queueName, context.informers().informerFor(type),
                handler);
        owned.add(source);
        return source;
    }

    /** The work queue, then one source per owned kind. */
    @Override
    public List<EventSource<?, P>> prepareEventSources(EventSourceContext<P> ctx) {
        List<EventSource<?, P>> sources = new java.util.ArrayList<>();
        sources.add(queue);
        sources.addAll(owned);
        return sources;
    }

    /**
     * Called once the controller's Operator has started (this replica leads, the caches have synced):
     * start what upstream's Run starts beside the workers (e.g. a second, internal queue's worker).
     */
    public void onStart() {
    }

    /** Called when the controller stops, after its Operator: release what the reconciler holds. */
    public void onShutdown() {
    }

    public Class<P> primaryType() {
        return primaryType;
    }

    /** Upstream's queue name: the JOSDK controller name and the {@code name} label of workqueue_*. */
    public String queueName() {
        return queueName;
    }

    /** Upstream's worker count for this queue ({@code --concurrent-*-syncs}). */
    public int workers() {
        return workers;
    }
}
