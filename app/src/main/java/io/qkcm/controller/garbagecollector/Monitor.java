package io.qkcm.controller.garbagecollector;

import java.util.Collection;
import java.util.List;
import java.util.function.Consumer;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.qkcm.controller.garbagecollector.GraphBuilder.Event;
import io.qkcm.controller.garbagecollector.GraphBuilder.EventType;
import io.qkcm.runtime.informers.GroupVersionResource;
import io.qkcm.runtime.informers.MetadataInformers.Handler;
import io.qkcm.runtime.informers.MetadataInformers.MetadataInformer;
import io.qkcm.runtime.informers.ObjectMetadata;
import io.qkcm.runtime.informers.SharedInformers;

/**
 * The graph builder's monitor of one resource (upstream's monitor): an event handler on the process's
 * shared typed informer where some controller asked for one, else the process's metadata informer of the
 * resource, which other users (the resource quota controller) may share (upstream's informerfactory), so
 * that no type is watched twice. Either way the graph
 * builder receives every change in order, as metadata only.
 */
interface Monitor {

    GroupVersionResource resource();

    /** True for a handler on a shared typed informer, false for one on the process's metadata informer. */
    boolean shared();

    /** Starts following the resource; a shared monitor attaches once the shared informer has synced. */
    void start();

    boolean started();

    /** True once every object the cache held when the monitor started has reached the graph builder. */
    boolean hasSynced();

    /** The cached metadata of {@code namespace/name} (or {@code name}), or null. */
    ObjectMetadata get(String key);

    /**
     * Stops following the resource: the informer loses the garbage collector's handler; a metadata
     * informer no other user holds stops (its watch ends), a shared typed one keeps serving the controllers.
     */
    void stop();

    /** A handler on the process's metadata informer of the resource: one use of it. */
    final class Metadata implements Monitor {
        private final MetadataInformer informer;
        private final Handler handler;
        private boolean stopped;

        /**
         * The informer may already run for another user: adding the handler replays its cache as adds,
         * in order with the changes after.
         */
        Metadata(MetadataInformer informer, Consumer<Event> graphChanges) {
            this.informer = informer;
            this.handler = new Handler() {
                @Override
                public void onAdd(ObjectMetadata obj) {
                    deliver(graphChanges, new Event(false, EventType.ADD, obj, null));
                }

                @Override
                public void onUpdate(ObjectMetadata oldObj, ObjectMetadata newObj) {
                    deliver(graphChanges, new Event(false, EventType.UPDATE, newObj, oldObj));
                }

                @Override
                public void onDelete(ObjectMetadata obj) {
                    deliver(graphChanges, new Event(false, EventType.DELETE, obj, null));
                }
            };
            informer.addHandler(handler);
        }

        /** Once {@link #stop} returned nothing more reaches the graph, so a shared monitor can take over. */
        private synchronized void deliver(Consumer<Event> graphChanges, Event event) {
            if (!stopped) {
                graphChanges.accept(event);
            }
        }

        @Override
        public GroupVersionResource resource() {
            return informer.resource();
        }

        @Override
        public boolean shared() {
            return false;
        }

        @Override
        public void start() {
            informer.start();
        }

        @Override
        public boolean started() {
            return informer.started();
        }

        @Override
        public boolean hasSynced() {
            return informer.hasSynced();
        }

        @Override
        public ObjectMetadata get(String key) {
            return informer.get(key);
        }

        @Override
        public void stop() {
            synchronized (this) {
                if (stopped) {
                    return;
                }
                stopped = true;
            }
            informer.removeHandler(handler);
            // the informer stops only if no other user holds it
            informer.release();
        }

        /** What the cache held last: a shared monitor taking over reports those gone meanwhile as deleted. */
        Collection<ObjectMetadata> cached() {
            return informer.list();
        }
    }

    /** A handler on the process's shared informer of {@code type}. */
    final class Shared<T extends HasMetadata> implements Monitor {
        private static final Logger LOG = Logger.getLogger(Shared.class);

        private final SharedInformers informers;
        private final Class<T> type;
        private final GroupVersionResource gvr;
        private final String apiVersion;
        private final String kind;
        private final Consumer<Event> graphChanges;
        private final ResourceEventHandler<T> handler;
        /** What the metadata monitor this one replaces held; null once reconciled (or none). */
        private Collection<ObjectMetadata> previous;
        private SharedIndexInformer<T> attached;
        private volatile boolean started;
        private volatile boolean stopped;
        private volatile boolean synced;

        Shared(SharedInformers informers, Class<T> type, GroupVersionResource gvr, String kind,
                Consumer<Event> graphChanges, Collection<ObjectMetadata> previous) {
            this.informers = informers;
            this.type = type;
            this.gvr = gvr;
            this.apiVersion = gvr.groupVersion().intern();
            this.kind = kind.intern();
            this.graphChanges = graphChanges;
            this.previous = previous;
            this.handler = new ResourceEventHandler<>() {
                @Override
                public void onAdd(T obj) {
                    deliver(new Event(false, EventType.ADD, metadata(obj), null));
                }

                @Override
                public void onUpdate(T oldObj, T newObj) {
                    // a resync delivers the same object twice: an update as upstream's
                    deliver(new Event(false, EventType.UPDATE, metadata(newObj), metadata(oldObj)));
                }

                @Override
                public void onDelete(T obj, boolean deletedFinalStateUnknown) {
                    // the last state the cache knew, as upstream's DeletedFinalStateUnknown
                    deliver(new Event(false, EventType.DELETE, metadata(obj), null));
                }
            };
        }

        private ObjectMetadata metadata(T obj) {
            return ObjectMetadata.of(obj, apiVersion, kind);
        }

        private void deliver(Event event) {
            if (!stopped) {
                graphChanges.accept(event);
            }
        }

        @Override
        public GroupVersionResource resource() {
            return gvr;
        }

        @Override
        public boolean shared() {
            return true;
        }

        /**
         * The shared informer is started by the process (at once if asked for after the others started);
         * the handler attaches when it has synced, so its replay of the cache is the whole list.
         */
        @Override
        public synchronized void start() {
            if (started || stopped) {
                return;
            }
            started = true;
            // attached off the caller's thread: neither under the graph builder's lock nor on fabric8's own
            informers.whenSynced(type).whenCompleteAsync((v, failure) -> {
                if (failure != null) {
                    LOG.warnf("garbage collector monitor %s: the shared informer did not start: %s", gvr, failure.toString());
                } else {
                    attach();
                }
            });
        }

        /**
         * Adds the handler: fabric8 replays the cache to it as adds before returning, in order with the
         * changes after. Objects the replaced metadata monitor knew that the cache no longer holds were
         * deleted meanwhile: deletes with their final state unknown, as a relist reports them.
         */
        private synchronized void attach() {
            if (stopped || attached != null) {
                return;
            }
            SharedIndexInformer<T> informer = informers.informerFor(type);
            informer.addEventHandler(handler);
            attached = informer;
            if (previous != null) {
                for (ObjectMetadata old : previous) {
                    T current = informer.getStore().getByKey(old.key());
                    if (current == null || !old.uid().equals(current.getMetadata().getUid())) {
                        deliver(new Event(false, EventType.DELETE, old, null));
                    }
                }
                previous = null;
            }
            synced = true;
            LOG.debugf("garbage collector monitor %s: on the shared %s informer", gvr, type.getSimpleName());
        }

        @Override
        public boolean started() {
            return started;
        }

        @Override
        public boolean hasSynced() {
            return synced;
        }

        @Override
        public ObjectMetadata get(String key) {
            T obj = informers.informerFor(type).getStore().getByKey(key);
            return obj == null ? null : metadata(obj);
        }

        @Override
        public synchronized void stop() {
            stopped = true;
            previous = List.of();
            if (attached != null) {
                attached.removeEventHandler(handler);
            }
        }
    }
}
