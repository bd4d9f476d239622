package io.qkcm.runtime.josdk;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.stream.Stream;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.informers.ExceptionHandler;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.informers.cache.Indexer;
import io.fabric8.kubernetes.client.informers.cache.ItemStore;
import io.fabric8.kubernetes.client.informers.cache.Store;
import io.qkcm.runtime.informers.SharedInformers;

/**
 * What JOSDK gets when it asks for an informer: a view of the process's one shared informer for the
 * type. JOSDK's {@code InformerManager} builds an informer per event source and starts, stops and
 * configures it as if it owned it; the view lets it add handlers and indexers and read the store, and
 * turns start into "wait for the shared cache" and stop into "remove my handlers", so the one watch and
 * one cache per type stay the process's (upstream's SharedInformerFactory), however many controllers
 * and event sources read them.
 */
final class SharedInformerView<T extends HasMetadata> implements SharedIndexInformer<T> {

    private final SharedInformers informers;
    private final SharedIndexInformer<T> shared;
    private final Set<ResourceEventHandler<? super T>> handlers = ConcurrentHashMap.newKeySet();
    private volatile boolean running;

    SharedInformerView(SharedInformers informers, Class<T> type) {
        this.informers = informers;
        this.shared = informers.informerFor(type);
    }

    /** The shared informer behind this view (for tests). */
    SharedIndexInformer<T> shared() {
        return shared;
    }

    @Override
    public CompletionStage<Void> start() {
        running = true;
        return informers.whenSynced(shared.getApiTypeClass());
    }

    @Override
    public SharedIndexInformer<T> run() {
        start().toCompletableFuture().join();
        return this;
    }

    /** Detaches this view's handlers; the shared informer keeps running for everyone else. */
    @Override
    public void stop() {
        running = false;
        handlers.forEach(shared::removeEventHandler);
        handlers.clear();
    }

    @Override
    public SharedIndexInformer<T> addEventHandler(ResourceEventHandler<? super T> handler) {
        handlers.add(handler);
        shared.addEventHandler(handler);
        return this;
    }

    @Override
    public SharedIndexInformer<T> addEventHandlerWithResyncPeriod(ResourceEventHandler<? super T> handler,
            long resyncPeriod) {
        // the shared informer resyncs at --min-resync-period for everyone, as upstream's factory
        return addEventHandler(handler);
    }

    @Override
    public SharedIndexInformer<T> removeEventHandler(ResourceEventHandler<? super T> handler) {
        handlers.remove(handler);
        shared.removeEventHandler(handler);
        return this;
    }

    @Override
    public SharedIndexInformer<T> addIndexers(Map<String, Function<T, List<String>>> indexers) {
        shared.addIndexers(indexers);
        return this;
    }

    @Override
    public SharedIndexInformer<T> removeIndexer(String name) {
        // other readers of the shared cache may use it: never removed through a view
        return this;
    }

    @Override
    public Indexer<T> getIndexer() {
        return shared.getIndexer();
    }

    @Override
    public Store<T> getStore() {
        return shared.getStore();
    }

    /** The shared informer's store (trimmed of managedFields) is the only store. */
    @Override
    public SharedIndexInformer<T> itemStore(ItemStore<T> itemStore) {
        throw new IllegalStateException("the shared informer's store cannot be replaced by a view");
    }

    @Override
    public SharedIndexInformer<T> initialState(Stream<T> items) {
        throw new IllegalStateException("the shared informer's state cannot be seeded by a view");
    }

    /** The shared informer logs and retries list/watch errors itself; a view's handler is not installed. */
    @Override
    public SharedIndexInformer<T> exceptionHandler(ExceptionHandler handler) {
        return this;
    }

    @Override
    public CompletionStage<Void> stopped() {
        return shared.stopped();
    }

    @Override
    public boolean hasSynced() {
        return shared.hasSynced();
    }

    @Override
    public String lastSyncResourceVersion() {
        return shared.lastSyncResourceVersion();
    }

    @Override
    public boolean isRunning() {
        return running && shared.isRunning();
    }

    @Override
    public Class<T> getApiTypeClass() {
        return shared.getApiTypeClass();
    }

    @Override
    public boolean isWatching() {
        return shared.isWatching();
    }

    @Override
    public String toString() {
        return "SharedInformerView[" + shared.getApiTypeClass().getSimpleName() + "]";
    }
}
