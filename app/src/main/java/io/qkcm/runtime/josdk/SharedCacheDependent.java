package io.qkcm.runtime.josdk;

import java.util.Optional;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.informers.cache.Store;
import io.javaoperatorsdk.operator.api.reconciler.Context;
import io.javaoperatorsdk.operator.processing.dependent.kubernetes.KubernetesDependentResource;

/**
 * A JOSDK dependent resource — one object per primary — used standalone from a reconciler's sync, that
 * reads its object from the process's shared cache and writes only what upstream writes.
 *
 * <p>JOSDK's default dependent would bring an {@code InformerEventSource} of its own type (events
 * mapped through JOSDK's annotations or owner references, own writes filtered out), add those
 * annotations or an owner reference to the object, and record its writes in a temporary cache. Upstream's
 * objects carry none of that, and upstream's handlers (kept on the shared informers) decide which
 * events queue the primary. So: the actual object is looked up in the shared store by the name
 * upstream gives it ({@link #key}); nothing is added to it ({@link #addReferenceHandlingMetadata} does
 * nothing); with no event source, JOSDK's recent-write cache is not used. Creates and updates are
 * JOSDK's non-SSA ones (POST; PUT with the actual resourceVersion), or the subclass's where upstream's
 * differ.
 */
public abstract class SharedCacheDependent<R extends HasMetadata, P extends HasMetadata>
        extends KubernetesDependentResource<R, P> {

    private final Store<R> cache;

    protected SharedCacheDependent(Class<R> type, String name, Store<R> cache) {
        super(type, name);
        this.cache = cache;
    }

    /** The cache key ({@code namespace/name}) of the object this primary has. */
    protected abstract String key(P primary);

    @Override
    public Optional<R> getSecondaryResource(P primary, Context<P> context) {
        return Optional.ofNullable(cache.getByKey(key(primary)));
    }

    /** Upstream's objects carry no owner reference or mapping annotations of JOSDK's. */
    @Override
    protected void addReferenceHandlingMetadata(R desired, P primary) {
    }
}
