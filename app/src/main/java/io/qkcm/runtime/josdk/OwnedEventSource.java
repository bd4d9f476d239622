package io.qkcm.runtime.josdk;

import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespaced;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import io.javaoperatorsdk.operator.OperatorException;
import io.javaoperatorsdk.operator.processing.event.source.AbstractEventSource;
import io.qkcm.runtime.informers.Indexes;

/**
 * The objects a controller owns (a ReplicaSet's pods, a CronJob's Jobs, …) as a JOSDK event source, so
 * that {@code prepareEventSources} lists each controller's real sources and a reconcile can ask its
 * {@code Context} for {@code getSecondaryResources(Pod.class)}.
 *
 * <p>The events themselves keep upstream's semantics, which JOSDK's {@code InformerEventSource} cannot carry
 * (an update that moves a dependent from one owner to another queues both; a dependent's add or delete
 * lowers the owner's expectations): they are upstream's handler, registered on the process's shared
 * informer, which feeds the controller's {@link QueueEventSource}. This source adds no watch and no cache:
 * its secondary resources are read from the shared informer, a primary's being those whose controller
 * reference carries its UID (upstream's controllerRef, not labels).
 *
 * <p>The handler is registered at construction, as upstream registers its handlers before the informers
 * start (a standby keeps its expectations in step), and removed when the controller stops.
 */
public final class OwnedEventSource<D extends HasMetadata, P extends HasMetadata> extends AbstractEventSource<D, P> {

    private final SharedIndexInformer<D> informer;
    private final ResourceEventHandler<D> handler;
    private boolean registered;

    OwnedEventSource(Class<D> type, String controller, SharedIndexInformer<D> informer, ResourceEventHandler<D> handler) {
        super(type, controller + "-owned-" + type.getSimpleName());
        this.informer = Objects.requireNonNull(informer);
        this.handler = Objects.requireNonNull(handler);
        register();
    }

    private synchronized void register() {
        if (!registered) {
            informer.addEventHandler(handler);
            registered = true;
        }
    }

    /** The handler upstream's controller registers for this kind. */
    public ResourceEventHandler<D> handler() {
        return handler;
    }

    @Override
    public void start() throws OperatorException {
        register(); // after a stop, the Operator may start the controller again
        super.start();
    }

    @Override
    public synchronized void stop() throws OperatorException {
        if (registered) {
            informer.removeEventHandler(handler);
            registered = false;
        }
        super.stop();
    }

    /** The cached objects whose controller reference names {@code primary} (by UID). */
    @Override
    public Set<D> getSecondaryResources(P primary) {
        String uid = primary.getMetadata().getUid();
        if (uid == null || uid.isEmpty()) {
            return Set.of();
        }
        String namespace = primary.getMetadata().getNamespace();
        List<D> candidates = primary instanceof Namespaced && namespace != null
                ? Indexes.byIndex(informer, Cache.NAMESPACE_INDEX, namespace)
                : informer.getStore().list();
        Set<D> owned = new HashSet<>();
        for (D d : candidates) {
            List<OwnerReference> refs = d.getMetadata().getOwnerReferences();
            if (refs == null) {
                continue;
            }
            for (OwnerReference ref : refs) {
                if (Boolean.TRUE.equals(ref.getController()) && uid.equals(ref.getUid())) {
                    owned.add(d);
                    break;
                }
            }
        }
        return owned;
    }
}
