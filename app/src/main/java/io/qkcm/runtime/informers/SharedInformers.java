package io.qkcm.runtime.informers;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ThreadLocalRandom;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.KubernetesResourceList;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.RequestConfig;
import io.fabric8.kubernetes.client.RequestConfigBuilder;
import io.fabric8.kubernetes.client.impl.BaseClient;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.informers.impl.DefaultSharedIndexInformer;
import io.fabric8.kubernetes.client.informers.impl.ListerWatcher;
import io.qkcm.runtime.protobuf.KubernetesProtobuf;
import io.qkcm.runtime.protobuf.ProtobufWire;

/**
 * The process-wide informer factory (upstream's SharedInformerFactory): exactly one informer, and so
 * one cache and one watch, per resource type, whichever controllers ask for it. Informers asked for
 * after {@link #start} are started at once.
 */
public final class SharedInformers {

    private static final Logger LOG = Logger.getLogger(SharedInformers.class);

    private final KubernetesClient client;
    private final Duration minResyncPeriod;
    private final Map<Class<?>, SharedIndexInformer<?>> informers = new LinkedHashMap<>();
    private final Map<Class<?>, CompletableFuture<Void>> synced = new LinkedHashMap<>();
    private final boolean watchList;
    private final List<WatchListListerWatcher<?, ?>> listerWatchers = new ArrayList<>();
    private KubernetesClient noWatchReconnects;
    private final KubernetesClient metadataClient;
    private MetadataInformers metadata;
    private boolean stopped;
    private boolean started;

    public SharedInformers(KubernetesClient client, Duration minResyncPeriod) {
        this(client, minResyncPeriod, true);
    }

    /**
     * Informers start with a streaming list (one WATCH with sendInitialEvents, {@link WatchListListerWatcher})
     * as upstream's do in v1.34 (its WatchListClient feature gate, on for kube-controller-manager); with
     * {@code watchList} false ({@code --feature-gates=WatchListClient=false}) they LIST then WATCH.
     */
    public SharedInformers(KubernetesClient client, Duration minResyncPeriod, boolean watchList) {
        this(client, minResyncPeriod, watchList, client);
    }

    /**
     * {@code metadataClient}: the client of the process's metadata informers ({@link #metadata}),
     * upstream's "metadata-informers".
     */
    public SharedInformers(KubernetesClient client, Duration minResyncPeriod, boolean watchList,
            KubernetesClient metadataClient) {
        this.client = client;
        this.minResyncPeriod = minResyncPeriod;
        this.watchList = watchList;
        this.metadataClient = metadataClient;
    }

    /**
     * The process's metadata-only informers (upstream's metadatainformer factory, beside this typed one):
     * one per resource whatever its users, for the types no typed informer serves. Created on first use
     * with the same list mode as the typed informers; stopped with them.
     */
    public synchronized MetadataInformers metadata() {
        if (metadata == null) {
            metadata = new MetadataInformers(new MetadataClient(metadataClient), watchList);
            if (stopped) {
                metadata.shutdown();
            }
        }
        return metadata;
    }

    /** The shared informer for {@code type}, across all namespaces; created on first request. */
    @SuppressWarnings("unchecked")
    public synchronized <T extends HasMetadata> SharedIndexInformer<T> informerFor(Class<T> type) {
        SharedIndexInformer<T> informer = (SharedIndexInformer<T>) informers.get(type);
        if (informer == null) {
            informer = newInformer(type);
            // Controllers never read managedFields; dropping them keeps the caches small, as upstream's
            // informer transform does. The store also keeps objects by index value, for Indexes' lock-free reads.
            informer.itemStore(new IndexedItemStore<>());
            informer.exceptionHandler((isStarted, t) -> {
                LOG.warnf("%s informer: %s (retrying)", type.getSimpleName(), t.toString());
                return true;
            });
            informers.put(type, informer);
            synced.put(type, new CompletableFuture<>());
            if (started) {
                startOne(type, informer);
            }
        }
        return informer;
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private <T extends HasMetadata> SharedIndexInformer<T> newInformer(Class<T> type) {
        long resync = resyncPeriod().toMillis();
        // fabric8's operation for the type is its informers' ListerWatcher (pinned by WatchListTest), read in
        // protobuf where this build decodes the type (ProtobufListerWatcher)
        ListerWatcher<T, KubernetesResourceList<T>> operation = wire((ListerWatcher) client.resources(type).inAnyNamespace());
        if (!watchList) {
            return new DefaultSharedIndexInformer<>(type, operation, resync, client.adapt(BaseClient.class).getExecutor());
        }
        // the streaming list goes through a client whose watches do not reconnect by themselves
        ListerWatcher<T, KubernetesResourceList<T>> streaming = wire((ListerWatcher) noWatchReconnects().resources(type).inAnyNamespace());
        WatchListListerWatcher<T, KubernetesResourceList<T>> listerWatcher = new WatchListListerWatcher<>(operation, streaming);
        listerWatchers.add(listerWatcher);
        return new DefaultSharedIndexInformer<>(type, listerWatcher, resync, client.adapt(BaseClient.class).getExecutor());
    }

    private static <T extends HasMetadata> ListerWatcher<T, KubernetesResourceList<T>> wire(ListerWatcher<T, KubernetesResourceList<T>> operation) {
        return ProtobufListerWatcher.applies(operation) ? new ProtobufListerWatcher<>(operation) : operation;
    }

    /** The startup line: which cached kinds are read in protobuf, which in JSON and why. */
    private void logWireFormats() {
        List<String> protobuf = new ArrayList<>();
        List<String> json = new ArrayList<>();
        for (Class<?> type : informers.keySet()) {
            String why = ProtobufWire.whyJson(type);
            if (why == null) {
                protobuf.add(type.getSimpleName());
            } else {
                json.add(type.getSimpleName() + " (" + why + ")");
            }
        }
        LOG.infof("Informers read %d kinds in %s%s", protobuf.size(), KubernetesProtobuf.MEDIA_TYPE,
                json.isEmpty() ? "" : ", in JSON: " + String.join(", ", json));
    }

    private KubernetesClient noWatchReconnects() {
        if (noWatchReconnects == null) {
            RequestConfig config = new RequestConfigBuilder(client.getConfiguration().getRequestConfig())
                    .withWatchReconnectLimit(0).build();
            noWatchReconnects = client.newClient(config).adapt(KubernetesClient.class);
        }
        return noWatchReconnects;
    }

    /** Upstream's ResyncPeriod: a random period between min-resync-period and twice that. */
    private Duration resyncPeriod() {
        double factor = ThreadLocalRandom.current().nextDouble() + 1;
        return Duration.ofMillis((long) (minResyncPeriod.toMillis() * factor));
    }

    public synchronized void start() {
        started = true;
        logWireFormats();
        informers.forEach(this::startOne);
    }

    private void startOne(Class<?> type, SharedIndexInformer<?> informer) {
        CompletableFuture<Void> done = synced.get(type);
        informer.start().whenComplete((v, e) -> {
            if (e != null) {
                done.completeExceptionally(e);
            } else {
                done.complete(null);
            }
        });
    }

    /**
     * Completes once the informer for {@code type} has synced its first list (its start completed). The
     * informer must exist: views and event sources ask for it through {@link #informerFor} first.
     */
    public synchronized CompletionStage<Void> whenSynced(Class<?> type) {
        CompletableFuture<Void> done = synced.get(type);
        if (done == null) {
            throw new IllegalStateException("no shared informer for " + type.getName());
        }
        return done.copy();
    }

    /**
     * The type whose shared informer serves the resource {@code gvr}, if some consumer has asked for one;
     * never creates an informer. The garbage collector's monitors use it (upstream's informerfactory:
     * the typed informer where there is one), so a type is never watched twice.
     */
    @SuppressWarnings("unchecked")
    public synchronized Optional<Class<? extends HasMetadata>> typeServing(GroupVersionResource gvr) {
        for (Class<?> type : informers.keySet()) {
            Class<? extends HasMetadata> t = (Class<? extends HasMetadata>) type;
            if (HasMetadata.getGroup(t).equals(gvr.group()) && HasMetadata.getVersion(t).equals(gvr.version())
                    && HasMetadata.getPlural(t).equals(gvr.resource())) {
                return Optional.of(t);
            }
        }
        return Optional.empty();
    }

    public synchronized boolean started() {
        return started;
    }

    /** The resource types cached in this process: one entry per type, never two. */
    public synchronized Set<Class<?>> cachedTypes() {
        return Set.copyOf(informers.keySet());
    }

    public synchronized List<SharedIndexInformer<?>> all() {
        return new ArrayList<>(informers.values());
    }

    /** Blocks until every informer in {@code needed} has synced its initial list. */
    public void waitForSync(Collection<? extends SharedIndexInformer<?>> needed) throws InterruptedException {
        while (!needed.stream().allMatch(SharedIndexInformer::hasSynced)) {
            Thread.sleep(50);
        }
    }

    public synchronized void stop() {
        stopped = true;
        if (metadata != null) {
            metadata.shutdown();
        }
        informers.values().forEach(SharedIndexInformer::stop);
        // a streaming list the reflector has not taken over yet is unknown to it
        listerWatchers.forEach(WatchListListerWatcher::close);
    }
}
