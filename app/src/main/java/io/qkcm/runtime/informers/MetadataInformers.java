package io.qkcm.runtime.informers;

import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

import org.jboss.logging.Logger;

import com.fasterxml.jackson.databind.JsonNode;

import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.http.AsyncBody;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.HttpResponse;

/**
 * Metadata-only informers (client-go's metadatainformer): one list+watch reflector per resource,
 * asking the API server for PartialObjectMetadata(List), caching {@link ObjectMetadata} only. fabric8
 * has no such informer, so this is a small reflector of its own: a streaming list (one watch with
 * sendInitialEvents, as client-go's reflector in v1.34; paginated LIST then watch where the server
 * refuses it or {@code --feature-gates=WatchListClient=false}), watch from the last resourceVersion with bookmarks,
 * relist on 410 Gone, backoff (800ms doubling to 30s) on failures.
 * Watches are asynchronous (no thread per watch); lists run on a small pool.
 *
 * <p>Typed informers with full objects are {@link SharedInformers}' job; this factory is for
 * consumers that need the metadata of resource types no typed informer serves (the garbage collector's
 * and the resource quota controller's monitors, upstream's informerfactory). One factory per process
 * ({@link SharedInformers#metadata()}) holds ONE informer per resource, shared by its users: each
 * {@link #informerFor} is one use, ended by {@link MetadataInformer#release}; the informer stops (its
 * watch ends) when its last use is released, so one user leaving a type never stops it under another.
 */
public final class MetadataInformers {

    private static final Logger LOG = Logger.getLogger(MetadataInformers.class);
    private static final int PAGE_SIZE = 500;
    /** Streaming lists completed, for tests. */
    static final java.util.concurrent.atomic.LongAdder STREAMS = new java.util.concurrent.atomic.LongAdder();

    /** Receives cache changes; called on the informer's thread, in order, and must not block. */
    public interface Handler {
        void onAdd(ObjectMetadata obj);

        void onUpdate(ObjectMetadata oldObj, ObjectMetadata newObj);

        void onDelete(ObjectMetadata obj);
    }

    private final MetadataClient client;
    private final ScheduledExecutorService executor;
    private final Map<GroupVersionResource, MetadataInformer> informers = new HashMap<>();

    private final boolean watchList;
    private boolean shutDown;

    public MetadataInformers(MetadataClient client) {
        this(client, true);
    }

    /** With {@code watchList} false, informers LIST then WATCH instead of a streaming list. */
    public MetadataInformers(MetadataClient client, boolean watchList) {
        this.watchList = watchList;
        this.client = client;
        this.executor = Executors.newScheduledThreadPool(2, r -> {
            Thread t = new Thread(r, "metadata-informers");
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * The process's informer for {@code gvr} (objects of {@code apiVersion}/{@code kind}), created (not
     * started) on first use. Each call is one use of it, which the caller ends with
     * {@link MetadataInformer#release} once it no longer follows the resource.
     */
    public synchronized MetadataInformer informerFor(GroupVersionResource gvr, String kind) {
        MetadataInformer informer = informers.get(gvr);
        if (informer == null || informer.stopped) {
            informer = new MetadataInformer(gvr, gvr.groupVersion().intern(), kind.intern());
            if (shutDown) {
                // the process is stopping: an informer that never starts
                informer.stopped = true;
            } else {
                informers.put(gvr, informer);
            }
        }
        informer.uses++;
        return informer;
    }

    /** The informer of {@code gvr} some user holds, if any; never creates one (for tests and logs). */
    public synchronized java.util.Optional<MetadataInformer> existing(GroupVersionResource gvr) {
        return java.util.Optional.ofNullable(informers.get(gvr));
    }

    public synchronized Set<GroupVersionResource> resources() {
        return Set.copyOf(informers.keySet());
    }

    public synchronized void shutdown() {
        shutDown = true;
        // stop() removes the informer from the map: iterate over a copy
        List.copyOf(informers.values()).forEach(MetadataInformer::stop);
        informers.clear();
        executor.shutdownNow();
    }

    /** One resource's reflector and store. */
    public final class MetadataInformer {
        private final GroupVersionResource gvr;
        private final String apiVersion;
        private final String kind;
        private final ConcurrentHashMap<String, ObjectMetadata> store = new ConcurrentHashMap<>();
        /** The store's keys by namespace ("" for cluster-scoped objects): upstream's namespace index. */
        private final ConcurrentHashMap<String, Set<String>> byNamespace = new ConcurrentHashMap<>();
        private final List<Handler> handlers = new CopyOnWriteArrayList<>();
        /** The uses not yet released; guarded by the factory's lock. */
        private int uses;
        private volatile boolean started;
        private volatile boolean stopped;
        private volatile boolean synced;
        private volatile String lastResourceVersion;
        private volatile AsyncBody currentWatch;
        private long backoffMillis;
        /** The objects of a streaming list until its initial-events-end bookmark; null otherwise. */
        private Map<String, ObjectMetadata> initialEvents;

        MetadataInformer(GroupVersionResource gvr, String apiVersion, String kind) {
            this.gvr = gvr;
            this.apiVersion = apiVersion;
            this.kind = kind;
        }

        public GroupVersionResource resource() {
            return gvr;
        }

        public String kind() {
            return kind;
        }

        public String apiVersion() {
            return apiVersion;
        }

        /**
         * Adds {@code handler}: the objects already cached reach it first as adds (as client-go's
         * AddEventHandler replays the store), then every change after them, in order.
         */
        public synchronized void addHandler(Handler handler) {
            for (ObjectMetadata obj : store.values()) {
                handler.onAdd(obj);
            }
            handlers.add(handler);
        }

        /** Removes {@code handler}: once this returned nothing more reaches it. */
        public synchronized void removeHandler(Handler handler) {
            handlers.remove(handler);
        }

        /** The handlers added and not removed (for tests). */
        public int handlerCount() {
            return handlers.size();
        }

        /** Ends one use ({@link MetadataInformers#informerFor}); the last one stops the informer. */
        public void release() {
            synchronized (MetadataInformers.this) {
                if (uses > 0) {
                    uses--;
                }
                if (uses > 0) {
                    return;
                }
                // under the factory's lock: a use asked for from now on gets a new informer
                stopped = true;
                informers.remove(gvr, this);
            }
            endWatch();
        }

        /** The uses not yet released. */
        public int uses() {
            synchronized (MetadataInformers.this) {
                return uses;
            }
        }

        public synchronized void start() {
            if (started || stopped) {
                return;
            }
            started = true;
            executor.execute(this::relist);
        }

        public boolean started() {
            return started;
        }

        /** Stops the informer whoever uses it (the factory's shutdown); a user calls {@link #release}. */
        public void stop() {
            synchronized (MetadataInformers.this) {
                stopped = true;
                informers.remove(gvr, this);
            }
            endWatch();
        }

        private void endWatch() {
            AsyncBody w = currentWatch;
            if (w != null) {
                w.cancel();
            }
        }

        public boolean stopped() {
            return stopped;
        }

        /** True once the first full list is in the store. */
        public boolean hasSynced() {
            return synced;
        }

        /** The cached metadata for {@code namespace/name} (or {@code name}), or null. */
        public ObjectMetadata get(String key) {
            return store.get(key);
        }

        public Collection<ObjectMetadata> list() {
            return List.copyOf(store.values());
        }

        public int size() {
            return store.size();
        }

        /** The cached objects in {@code namespace} (the namespace index; "" for cluster-scoped ones). */
        public List<ObjectMetadata> byNamespace(String namespace) {
            Set<String> keys = byNamespace.get(namespace == null ? "" : namespace);
            if (keys == null) {
                return List.of();
            }
            List<ObjectMetadata> out = new ArrayList<>(keys.size());
            for (String key : keys) {
                ObjectMetadata m = store.get(key);
                if (m != null) {
                    out.add(m);
                }
            }
            return out;
        }

        /** Writes to the store, under this informer's lock (its only writers), keeping the index. */
        private ObjectMetadata put(String key, ObjectMetadata m) {
            ObjectMetadata old = store.put(key, m);
            byNamespace.computeIfAbsent(namespaceOf(m), ns -> ConcurrentHashMap.newKeySet()).add(key);
            return old;
        }

        private ObjectMetadata remove(String key) {
            ObjectMetadata old = store.remove(key);
            if (old != null) {
                String ns = namespaceOf(old);
                byNamespace.computeIfPresent(ns, (n, keys) -> {
                    keys.remove(key);
                    return keys.isEmpty() ? null : keys;
                });
            }
            return old;
        }

        private static String namespaceOf(ObjectMetadata m) {
            return m.namespace() == null ? "" : m.namespace();
        }

        private void relist() {
            if (stopped) {
                return;
            }
            if (watchList) {
                watch(true);
            } else {
                listAndWatch();
            }
        }

        /** LIST, then watch from the list's resourceVersion (also what a failed streaming list falls back to). */
        private void listAndWatch() {
            if (stopped) {
                return;
            }
            try {
                Map<String, ObjectMetadata> listed = new HashMap<>();
                String cont = null;
                String rv;
                do {
                    StringBuilder q = new StringBuilder("limit=").append(PAGE_SIZE);
                    if (cont != null) {
                        q.append("&continue=").append(MetadataClient.encode(cont));
                    }
                    JsonNode page = client.list(gvr, null, q.toString());
                    for (JsonNode item : page.path("items")) {
                        ObjectMetadata m = ObjectMetadata.fromJson(item, apiVersion, kind);
                        listed.put(m.key(), m);
                    }
                    rv = page.path("metadata").path("resourceVersion").asText(null);
                    cont = page.path("metadata").path("continue").asText("");
                    if (cont.isEmpty()) {
                        cont = null;
                    }
                } while (cont != null && !stopped);
                if (stopped) {
                    return;
                }
                replace(listed);
                lastResourceVersion = rv;
                synced = true;
                backoffMillis = 0;
                watch(false);
            } catch (RuntimeException e) {
                if (e instanceof KubernetesClientException kce && (kce.getCode() == 404 || kce.getCode() == 405)) {
                    LOG.debugf("metadata informer %s: list failed (%d), the resource may be gone", gvr, kce.getCode());
                } else {
                    LOG.warnf("metadata informer %s: list failed, retrying: %s", gvr, e.toString());
                }
                retryLater(this::relist);
            }
        }

        /** client-go's Replace: adds and updates for what is listed, deletes for what is gone. */
        private synchronized void replace(Map<String, ObjectMetadata> listed) {
            for (Map.Entry<String, ObjectMetadata> e : listed.entrySet()) {
                ObjectMetadata old = put(e.getKey(), e.getValue());
                if (old == null) {
                    handlers.forEach(h -> h.onAdd(e.getValue()));
                } else if (!java.util.Objects.equals(old.resourceVersion(), e.getValue().resourceVersion())) {
                    handlers.forEach(h -> h.onUpdate(old, e.getValue()));
                }
            }
            List<String> gone = new ArrayList<>();
            for (String key : store.keySet()) {
                if (!listed.containsKey(key)) {
                    gone.add(key);
                }
            }
            for (String key : gone) {
                ObjectMetadata old = remove(key);
                if (old != null) {
                    handlers.forEach(h -> h.onDelete(old));
                }
            }
        }

        private void retryLater(Runnable action) {
            if (stopped) {
                return;
            }
            backoffMillis = backoffMillis == 0 ? 800 : Math.min(backoffMillis * 2, 30_000);
            long jittered = (long) (backoffMillis * (1 + ThreadLocalRandom.current().nextDouble(0.1)));
            try {
                executor.schedule(action, jittered, TimeUnit.MILLISECONDS);
            } catch (java.util.concurrent.RejectedExecutionException e) {
                // shutting down
            }
        }

        /**
         * A watch from the last resourceVersion, or with {@code initial} a streaming list: the server sends
         * every object as ADDED, then a bookmark marking the end of them, from a consistent read.
         */
        private void watch(boolean initial) {
            if (stopped) {
                return;
            }
            // client-go: a random timeout between 5 and 10 minutes spreads watch restarts
            long timeoutSeconds = 300 + ThreadLocalRandom.current().nextLong(300);
            String query = "watch=true&allowWatchBookmarks=true&timeoutSeconds=" + timeoutSeconds
                    + (initial ? "&sendInitialEvents=true&resourceVersionMatch=NotOlderThan"
                            : lastResourceVersion == null ? "" : "&resourceVersion=" + MetadataClient.encode(lastResourceVersion));
            synchronized (this) {
                initialEvents = initial ? new HashMap<>() : null;
            }
            HttpRequest request = client.http().newHttpRequestBuilder().uri(client.url(gvr.path(null), query))
                    .header("Accept", MetadataClient.ACCEPT_OBJECT).forStreaming().build();
            WatchStream stream = new WatchStream();
            CompletableFuture<HttpResponse<AsyncBody>> future = client.http().consumeBytes(request, stream);
            future.whenComplete((response, failure) -> {
                if (failure != null) {
                    LOG.debugf("metadata informer %s: watch failed to start: %s", gvr, failure.toString());
                    // client-go: a streaming list that fails makes this cycle a LIST
                    if (initial) {
                        executor.execute(this::listAndWatch);
                    } else {
                        retryLater(() -> watch(false));
                    }
                    return;
                }
                if (!response.isSuccessful()) {
                    response.body().cancel();
                    if (initial) {
                        LOG.debugf("metadata informer %s: the streaming list was refused (%d), listing instead", gvr, response.code());
                        executor.execute(this::listAndWatch);
                    } else if (response.code() == 410) {
                        executor.execute(this::relist);
                    } else {
                        LOG.debugf("metadata informer %s: watch returned %d", gvr, response.code());
                        retryLater(this::relist);
                    }
                    return;
                }
                currentWatch = response.body();
                if (stopped) {
                    response.body().cancel();
                    return;
                }
                response.body().done().whenComplete((v, t) -> {
                    currentWatch = null;
                    if (stopped) {
                        return;
                    }
                    boolean listCompleted;
                    synchronized (this) {
                        listCompleted = initialEvents == null;
                        initialEvents = null;
                    }
                    if (initial && !listCompleted) {
                        LOG.debugf("metadata informer %s: the streaming list ended before its last object, listing instead", gvr);
                        retryLater(this::listAndWatch);
                    } else if (stream.gone) {
                        executor.execute(this::relist);
                    } else if (stream.failed || t != null) {
                        LOG.debugf("metadata informer %s: watch ended: %s", gvr, t == null ? "error event" : t.toString());
                        retryLater(this::relist);
                    } else if (stream.events == 0 && System.nanoTime() - stream.sentNanos < WatchRequest.VERY_SHORT_NANOS) {
                        // client-go's very short watch: backs off and lists again rather than watching in a loop
                        LOG.debugf("metadata informer %s: very short watch (under 1 s, no event)", gvr);
                        retryLater(this::relist);
                    } else {
                        backoffMillis = 0;
                        executor.execute(() -> watch(false));
                    }
                });
                response.body().consume();
            });
        }

        private synchronized void handle(JsonNode event) {
            String type = event.path("type").asText();
            JsonNode object = event.path("object");
            if (initialEvents != null) {
                switch (type) {
                    case "ADDED", "MODIFIED" -> {
                        ObjectMetadata m = ObjectMetadata.fromJson(object, apiVersion, kind);
                        initialEvents.put(m.key(), m);
                    }
                    case "DELETED" -> initialEvents.remove(ObjectMetadata.fromJson(object, apiVersion, kind).key());
                    case "BOOKMARK" -> {
                        if ("true".equals(object.path("metadata").path("annotations")
                                .path(WatchListListerWatcher.INITIAL_EVENTS_END).asText(null))) {
                            Map<String, ObjectMetadata> listed = initialEvents;
                            initialEvents = null;
                            replace(listed);
                            lastResourceVersion = object.path("metadata").path("resourceVersion").asText(lastResourceVersion);
                            synced = true;
                            backoffMillis = 0;
                            STREAMS.increment();
                        }
                    }
                    default -> {
                    }
                }
                return;
            }
            switch (type) {
                case "ADDED", "MODIFIED" -> {
                    ObjectMetadata m = ObjectMetadata.fromJson(object, apiVersion, kind);
                    ObjectMetadata old = put(m.key(), m);
                    if (old == null) {
                        handlers.forEach(h -> h.onAdd(m));
                    } else {
                        handlers.forEach(h -> h.onUpdate(old, m));
                    }
                    lastResourceVersion = m.resourceVersion();
                }
                case "DELETED" -> {
                    ObjectMetadata m = ObjectMetadata.fromJson(object, apiVersion, kind);
                    ObjectMetadata old = remove(m.key());
                    handlers.forEach(h -> h.onDelete(old != null ? old : m));
                    lastResourceVersion = m.resourceVersion();
                }
                case "BOOKMARK" -> lastResourceVersion = object.path("metadata").path("resourceVersion").asText(lastResourceVersion);
                default -> {
                    // ERROR: a Status; 410 Gone means our resourceVersion is too old
                }
            }
        }

        /** Splits the chunked watch body into newline-delimited JSON events. */
        private final class WatchStream implements AsyncBody.Consumer<List<ByteBuffer>> {
            private final ByteArrayOutputStream line = new ByteArrayOutputStream();
            /** As client-go, the clock starts before the request is sent. */
            final long sentNanos = System.nanoTime();
            volatile long events;
            volatile boolean gone;
            volatile boolean failed;

            @Override
            public void consume(List<ByteBuffer> buffers, AsyncBody body) throws Exception {
                for (ByteBuffer b : buffers) {
                    while (b.hasRemaining()) {
                        byte c = b.get();
                        if (c == '\n') {
                            flush(body);
                        } else {
                            line.write(c);
                        }
                    }
                }
                if (!stopped && !gone && !failed) {
                    body.consume();
                }
            }

            private void flush(AsyncBody body) {
                if (line.size() == 0) {
                    return;
                }
                byte[] bytes = line.toByteArray();
                line.reset();
                try {
                    JsonNode event = MetadataClient.JSON.readTree(bytes);
                    if ("ERROR".equals(event.path("type").asText())) {
                        int code = event.path("object").path("code").asInt();
                        if (code == 410) {
                            gone = true;
                        } else {
                            failed = true;
                            LOG.debugf("metadata informer %s: watch error %s", gvr, event.path("object").path("message").asText());
                        }
                        body.cancel();
                        return;
                    }
                    events++; // one thread reads a body
                    handle(event);
                } catch (Exception e) {
                    LOG.warnf("metadata informer %s: cannot handle watch event: %s", gvr, e.toString());
                    failed = true;
                    body.cancel();
                }
            }
        }
    }

}
