package io.qkcm.runtime.informers;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.stream.Stream;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import io.fabric8.kubernetes.client.informers.cache.Indexer;
import io.fabric8.kubernetes.client.informers.cache.ItemStore;
import io.fabric8.kubernetes.client.informers.impl.cache.CacheImpl;
import io.qkcm.runtime.SharedContents;

/**
 * The shared informers' item store: fabric8's store (a concurrent map by {@code namespace/name}) that drops
 * managedFields and shares equal contents on the way in, and keeps the objects themselves by index value,
 * so {@link Indexes} reads an index without the cache's monitor.
 *
 * <p>Why: fabric8's {@code CacheImpl} keeps keys per index value and looks each one up in the store on every
 * {@code byIndex}, and its key sets change under readers (so {@link Indexes} held the monitor for the whole
 * read). A ReplicaSet of 1500 pods read its pods in 1500 lookups per sync while the watch thread waited to add
 * the next pod (bench/results/2026-11-28-rewatch, profiles: twice upstream's cost). Here a read copies the
 * values of one concurrent map.
 *
 * <p>The guarantee {@link Indexes} gives, as client-go's read lock does: a reader never sees an object missing
 * because it is being updated. An update whose index values are unchanged replaces the object in place (a
 * concurrent map's iterator sees every key present for its whole run, with the old or the new object); only an
 * object whose values change moves, out of the old value's set and then into the new one's, as two separate
 * index reads of client-go can see it.
 *
 * <p>Writes ({@code put}, {@code remove}) run under the cache's monitor: fabric8's {@code CacheImpl} calls them
 * from its synchronized {@code put}/{@code remove} ({@code IndexesTest} pins that). An index is built on its
 * first read, under the same monitor, from the function registered with the cache, and is kept from then on;
 * fabric8 keeps its own key index beside it (cheap to write, unused for reads). An indexer removed from the
 * cache is not dropped here: the shared informers never remove one ({@code SharedInformerView}).
 */
// native image: the field the var handle finds is registered for reflection
@io.quarkus.runtime.annotations.RegisterForReflection(targets = CacheImpl.class, fields = true, methods = false)
final class IndexedItemStore<T extends HasMetadata> implements ItemStore<T> {

    /** fabric8 indexes a null value too (a cluster-scoped object's namespace); no real value holds a NUL. */
    private static final String NULL_VALUE = "\u0000null";

    /** {@code CacheImpl.items}: fabric8 keeps the item store private; its packages are open on the class path. */
    private static final VarHandle ITEMS;

    static {
        VarHandle items = null;
        try {
            items = MethodHandles.privateLookupIn(CacheImpl.class, MethodHandles.lookup())
                    .findVarHandle(CacheImpl.class, "items", ItemStore.class);
        } catch (ReflectiveOperationException | RuntimeException e) {
            org.jboss.logging.Logger.getLogger(IndexedItemStore.class)
                    .warnf("fabric8's cache hides its item store (%s): index reads hold the cache's lock", e.toString());
        }
        ITEMS = items;
    }

    private final ConcurrentHashMap<String, T> items = new ConcurrentHashMap<>();
    private final ConcurrentHashMap<String, ObjectIndex<T>> indexes = new ConcurrentHashMap<>();

    /** The store behind {@code indexer} if it is one of these, else null (read it under the lock then). */
    @SuppressWarnings("unchecked")
    static <T> IndexedItemStore<?> of(Indexer<T> indexer) {
        if (ITEMS != null && indexer instanceof CacheImpl<?> cache
                && ITEMS.get(cache) instanceof IndexedItemStore<?> store) {
            return store;
        }
        return null;
    }

    /** The objects whose {@code indexName} index holds {@code indexValue}: a new list, read without a lock. */
    @SuppressWarnings({ "unchecked", "rawtypes" })
    List<T> byIndex(Indexer indexer, String indexName, String indexValue) {
        ObjectIndex<T> index = indexes.get(indexName);
        if (index == null) {
            index = build(indexer, indexName);
        }
        Map<String, T> objects = index.byValue.get(indexValue == null ? NULL_VALUE : indexValue);
        return objects == null ? new ArrayList<>(0) : new ArrayList<>(objects.values());
    }

    @SuppressWarnings("unchecked")
    private ObjectIndex<T> build(Indexer<T> indexer, String indexName) {
        synchronized (Indexes.lockOf(indexer)) {
            ObjectIndex<T> index = indexes.get(indexName);
            if (index != null) {
                return index;
            }
            Function<T, List<String>> function = indexer.getIndexers().get(indexName);
            if (function == null) {
                // fabric8's own message
                throw new IllegalArgumentException(String.format("index %s doesn't exist!", indexName));
            }
            index = new ObjectIndex<>(function);
            for (Map.Entry<String, T> e : items.entrySet()) {
                index.update(e.getKey(), null, e.getValue());
            }
            // published complete: readers find it only now
            indexes.put(indexName, index);
            return index;
        }
    }

    @Override
    public String getKey(T obj) {
        return Cache.metaNamespaceKeyFunc(obj);
    }

    @Override
    public T put(String key, T obj) {
        if (obj.getMetadata() != null) {
            obj.getMetadata().setManagedFields(null);
        }
        SharedContents.share(obj);
        T old = items.put(key, obj);
        for (ObjectIndex<T> index : indexes.values()) {
            index.update(key, old, obj);
        }
        return old;
    }

    @Override
    public T remove(String key) {
        T old = items.remove(key);
        if (old != null) {
            for (ObjectIndex<T> index : indexes.values()) {
                index.update(key, old, null);
            }
        }
        return old;
    }

    @Override
    public Stream<String> keySet() {
        return items.keySet().stream();
    }

    @Override
    public Stream<T> values() {
        return items.values().stream();
    }

    @Override
    public T get(String key) {
        return items.get(key);
    }

    @Override
    public int size() {
        return items.size();
    }

    /** One index: objects by value, then by key. Written by one thread at a time (the cache's monitor). */
    private static final class ObjectIndex<T> {
        private final Function<T, List<String>> function;
        private final ConcurrentHashMap<String, ConcurrentHashMap<String, T>> byValue = new ConcurrentHashMap<>();

        ObjectIndex(Function<T, List<String>> function) {
            this.function = function;
        }

        void update(String key, T old, T updated) {
            List<String> oldValues = old == null ? List.of() : values(old);
            List<String> newValues = updated == null ? List.of() : values(updated);
            for (String value : oldValues) {
                if (!newValues.contains(value)) {
                    ConcurrentHashMap<String, T> objects = byValue.get(value);
                    if (objects != null && objects.remove(key) != null && objects.isEmpty()) {
                        byValue.remove(value);
                    }
                }
            }
            for (String value : newValues) {
                // an object that keeps its value is replaced in place: never absent to a reader
                byValue.computeIfAbsent(value, v -> new ConcurrentHashMap<>()).put(key, updated);
            }
        }

        private List<String> values(T obj) {
            List<String> values = function.apply(obj);
            if (values == null || values.isEmpty()) {
                return List.of();
            }
            if (values.size() == 1) {
                String v = values.get(0);
                return List.of(v == null ? NULL_VALUE : v);
            }
            List<String> out = new ArrayList<>(values.size());
            for (String v : values) {
                out.add(v == null ? NULL_VALUE : v);
            }
            return out;
        }
    }
}
