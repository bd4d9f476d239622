package io.qkcm.runtime.shadow;

import java.time.Duration;
import java.time.Instant;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.micrometer.core.instrument.MeterRegistry;
import io.qkcm.runtime.ManagedFieldsTap;
import io.qkcm.runtime.clients.KubeClients;
import io.qkcm.runtime.informers.SharedInformers;
import io.qkcm.runtime.josdk.KeyReconciler;

/**
 * Shadow mode's parts put together: the clients' writes become dry runs ({@link ShadowWrites}),
 * upstream's writes are read from the informers ({@link UpstreamWrites}), and the {@link ShadowMatcher}
 * compares them. One per process: the managedFields tap is process-wide.
 */
public final class ShadowMode implements AutoCloseable {

    private final ShadowMatcher matcher;
    private final UpstreamWrites upstream;

    private ShadowMode(ShadowMatcher matcher, UpstreamWrites upstream) {
        this.matcher = matcher;
        this.upstream = upstream;
    }

    /** Turns {@code clients} (before their first client is built) into shadow clients. */
    public static ShadowMode start(KubeClients clients, Duration window, String upstreamManager, MeterRegistry registry) {
        ShadowMatcher matcher = new ShadowMatcher(window, registry);
        clients.shadow(component -> new ShadowWrites(component, matcher));
        UpstreamWrites upstream = new UpstreamWrites(matcher, upstreamManager, Instant.now());
        ManagedFieldsTap.install(upstream);
        KeyReconciler.syncListener((controller, kind, key, startedAt, resync) -> matcher.synced(controller, kind, key,
                startedAt, resync));
        return new ShadowMode(matcher, upstream);
    }

    /**
     * Watches every type cached in {@code informers} for upstream's writes, and Events (compared too):
     * called once the controllers have asked for their informers, before the informers start.
     */
    @SuppressWarnings({ "unchecked", "rawtypes" })
    public void watch(SharedInformers informers) {
        informers.informerFor(Event.class);
        for (Class<?> type : informers.cachedTypes()) {
            Class<HasMetadata> t = (Class) type;
            upstream.watch(t, informers.informerFor(t));
        }
    }

    public ShadowMatcher matcher() {
        return matcher;
    }

    @Override
    public void close() {
        ManagedFieldsTap.install(null);
        KeyReconciler.syncListener(null);
        matcher.close();
    }
}
