package io.qkcm.manager.serving;

import java.time.Duration;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/** A small expiring cache for TokenReview and SubjectAccessReview answers, bounded in size. */
final class TtlCache<K, V> {

    private static final int MAX_ENTRIES = 4096;

    private record Entry<V>(V value, long expiresAt) {
    }

    private final Map<K, Entry<V>> entries = new ConcurrentHashMap<>();
    private final LongSupplier clock;

    TtlCache() {
        this(System::nanoTime);
    }

    TtlCache(LongSupplier clock) {
        this.clock = clock;
    }

    V get(K key) {
        Entry<V> e = entries.get(key);
        if (e == null) {
            return null;
        }
        if (clock.getAsLong() - e.expiresAt() >= 0) {
            entries.remove(key, e);
            return null;
        }
        return e.value();
    }

    void put(K key, V value, Duration ttl) {
        if (ttl.isZero() || ttl.isNegative()) {
            return;
        }
        if (entries.size() >= MAX_ENTRIES) {
            long now = clock.getAsLong();
            entries.values().removeIf(e -> now - e.expiresAt() >= 0);
            Iterator<K> it = entries.keySet().iterator();
            while (entries.size() >= MAX_ENTRIES && it.hasNext()) {
                it.next();
                it.remove();
            }
        }
        entries.put(key, new Entry<>(value, clock.getAsLong() + ttl.toNanos()));
    }
}
