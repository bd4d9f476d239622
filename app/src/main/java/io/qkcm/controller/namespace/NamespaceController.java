package io.qkcm.controller.namespace;

import io.javaoperatorsdk.operator.api.reconciler.Ignore;
import io.javaoperatorsdk.operator.processing.event.source.filter.OnAddFilter;
import io.javaoperatorsdk.operator.processing.event.source.filter.OnUpdateFilter;
import io.qkcm.runtime.josdk.KeyReconciler;
import java.time.Duration;
import java.util.List;

import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.workqueue.RateLimiter;

/**
 * namespace-controller (upstream pkg/controller/namespace): every namespace with a deletion timestamp
 * is queued (5s after the change, as upstream) and handed to {@link NamespacedResourcesDeleter}; while
 * content is still going away it is requeued after half the estimated time plus a second, other
 * failures back off (5ms doubling to 60s, overall 10 qps / burst 100, upstream's namespace rate
 * limiter). Watches namespaces through the process' one shared Namespace informer, with upstream's
 * {@code --namespace-sync-period} resync.
 */
@Ignore // runs in its own Operator (io.qkcm.runtime.josdk), not quarkus-operator-sdk's default one
public final class NamespaceController extends KeyReconciler<Namespace> {

    public static final String NAME = "namespace-controller";
    /** v1.FinalizerKubernetes: the spec finalizer this controller removes. */
    public static final String FINALIZER_KUBERNETES = "kubernetes";
    static final Duration NAMESPACE_DELETION_GRACE_PERIOD = Duration.ofSeconds(5);

    private final SharedIndexInformer<Namespace> namespaces;
    private final NamespacedResourcesDeleter deleter;

    /** {@code workers}: --concurrent-namespace-syncs; {@code syncPeriod}: --namespace-sync-period. */
    public NamespaceController(ControllerContext context, int workers, Duration syncPeriod) {
        super(context, Namespace.class, "namespace", workers,
                RateLimiter.<String>maxOf(RateLimiter.exponential(Duration.ofMillis(5), Duration.ofSeconds(60)),
                        RateLimiter.bucket(10, 100)));
        this.deleter = new NamespacedResourcesDeleter(context.client(), FINALIZER_KUBERNETES);
        this.deleter.initOpCache();
        this.namespaces = context.informers().informerFor(Namespace.class);
        long resync = syncPeriod.toMillis();
        ResourceEventHandler<Namespace> handler = new ResourceEventHandler<>() {
            @Override
            public void onAdd(Namespace ns) {
                enqueue(ns);
            }

            @Override
            public void onUpdate(Namespace oldNs, Namespace newNs) {
                enqueue(newNs);
            }

            @Override
            public void onDelete(Namespace ns, boolean deletedFinalStateUnknown) {
                // nothing left to do
            }
        };
        if (resync > 0) {
            namespaces.addEventHandlerWithResyncPeriod(handler, resync);
        } else {
            namespaces.addEventHandler(handler);
        }
    }

    /** Upstream queues only deleting namespaces, after the grace period: JOSDK's own add/update events are off. */
    @Override
    protected OnAddFilter<? super Namespace> primaryAddFilter() {
        return ns -> false;
    }

    @Override
    protected OnUpdateFilter<? super Namespace> primaryUpdateFilter() {
        return (newNs, oldNs) -> false;
    }

    private void enqueue(Namespace ns) {
        if (ns.getMetadata().getDeletionTimestamp() == null) {
            return;
        }
        queue.addAfter(ns.getMetadata().getName(), NAMESPACE_DELETION_GRACE_PERIOD);
    }

    @Override
    protected List<SharedIndexInformer<?>> informers() {
        return List.of(namespaces);
    }

    @Override
    protected void sync(String key) throws Exception {
        Namespace ns = namespaces.getStore().getByKey(key);
        if (ns == null) {
            log.debugf("Namespace has been deleted: %s", key);
            return;
        }
        deleter.delete(ns.getMetadata().getName());
    }

    /** Content still being deleted is waited for, not retried with backoff. */
    @Override
    protected boolean handleErrorFirst(String key, Exception e) {
        if (e instanceof ResourcesRemainingException remaining) {
            long t = remaining.estimateSeconds() / 2 + 1;
            log.debugf("Content remaining in namespace %s, waiting %ds", key, t);
            queue.addAfter(key, Duration.ofSeconds(t));
            return true;
        }
        return false;
    }

    @Override
    protected void logRetry(String key, int requeues, Exception e) {
        log.errorf("deletion of namespace %s failed: %s", key, NamespacedResourcesDeleter.apiMessage(e));
        log.debug("namespace deletion failure", e);
    }
}
