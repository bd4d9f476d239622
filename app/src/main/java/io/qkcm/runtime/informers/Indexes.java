package io.qkcm.runtime.informers;

import java.util.List;

import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.informers.cache.Indexer;
import io.fabric8.kubernetes.client.informers.impl.cache.CacheImpl;

/**
 * Index reads of a shared cache that see each object either before or after an update, never in
 * between — client-go's threadSafeMap takes its read lock for {@code ByIndex}.
 *
 * <p>fabric8 7.4's {@code CacheImpl} does not: {@code put} (under the cache's monitor) moves an
 * updated object's key out of its index set and then back in, and {@code byIndex} reads that set
 * without the monitor. A reader racing a status update of a pod therefore sees the namespace, or the
 * ReplicaSet's pods, one pod short — enough for the ReplicaSet controller to create a pod beyond spec
 * (and delete it again on the next sync). Every index read in qkcm goes through here
 * ({@code IndexesTest} keeps it so). The shared informers' caches keep their objects by index value
 * ({@link IndexedItemStore}) and are read without a lock; any other cache is read holding its monitor.
 */
public final class Indexes {

    private Indexes() {
    }

    /** The cached objects whose {@code indexName} index holds {@code indexValue}, never one short from an update. */
    public static <T> List<T> byIndex(SharedIndexInformer<T> informer, String indexName,
            String indexValue) {
        return byIndex(informer.getIndexer(), indexName, indexValue);
    }

    /** As {@link #byIndex(SharedIndexInformer, String, String)}, for an indexer. */
    @SuppressWarnings("unchecked")
    public static <T> List<T> byIndex(Indexer<T> indexer, String indexName, String indexValue) {
        IndexedItemStore<?> store = IndexedItemStore.of(indexer);
        if (store != null) {
            return (List<T>) store.byIndex(indexer, indexName, indexValue);
        }
        synchronized (lockOf(indexer)) {
            return indexer.byIndex(indexName, indexValue);
        }
    }

    /**
     * The monitor the cache's writers hold: fabric8's {@code CacheImpl} puts and removes under
     * {@code getLockObject()} (itself); any other indexer is locked on itself.
     */
    static Object lockOf(Indexer<?> indexer) {
        if (indexer instanceof CacheImpl<?> cache) {
            return cache.getLockObject();
        }
        return indexer;
    }
}
