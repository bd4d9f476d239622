package io.qkcm.runtime.informers;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.LongAdder;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.DefaultKubernetesResourceList;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.KubernetesResourceList;
import io.fabric8.kubernetes.api.model.ListMeta;
import io.fabric8.kubernetes.api.model.ListOptions;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.fabric8.kubernetes.client.dsl.internal.AbstractWatchManager;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import io.fabric8.kubernetes.client.informers.impl.ListerWatcher;

/**
 * Streaming list for fabric8's informers, as client-go's reflector does it in v1.34 (WatchListClient):
 * instead of a LIST and then a WATCH from the list's resourceVersion, one WATCH with
 * {@code sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true}. The API
 * server streams the current objects as ADDED events, then a BOOKMARK annotated
 * {@code k8s.io/initial-events-end: "true"} carrying the resourceVersion they are consistent with.
 * <p>
 * fabric8's Reflector only knows list-then-watch, so this ListerWatcher fits the stream into its two
 * calls: {@link #submitList} opens the watch and completes with the initial objects once the bookmark
 * arrives; the Reflector's next {@link #submitWatch} gets the same, still-open watch, with whatever
 * arrived in between replayed first. After the bookmark the watch's ListOptions lose
 * sendInitialEvents and resourceVersionMatch, so fabric8's own reconnects (which reuse that ListOptions
 * object, pinned by a test) resume from the last resourceVersion without a second initial stream.
 * <p>
 * Before the bookmark the watch must not reconnect by itself (a second stream would be added to the
 * first, keeping objects deleted in between): it is opened through {@code streaming}, an operation of
 * a client with no watch reconnects, and says it is not reconnecting until the bookmark, so fabric8
 * closes it on the first drop. As client-go, any failure of the stream makes that cycle a plain LIST
 * (and WATCH); the next relist streams again.
 */
final class WatchListListerWatcher<T extends HasMetadata, L extends KubernetesResourceList<T>> implements ListerWatcher<T, L> {

    private static final Logger LOG = Logger.getLogger(WatchListListerWatcher.class);
    static final String INITIAL_EVENTS_END = "k8s.io/initial-events-end";
    /** Streams completed, for tests. */
    static final LongAdder STREAMS = new LongAdder();

    private final ListerWatcher<T, L> delegate;
    private final ListerWatcher<T, L> streaming;
    /** The watch opened by the last submitList, waiting for the Reflector's submitWatch. */
    private Pending pending;
    private boolean closed;

    /**
     * @param delegate  fabric8's operation for the type (LIST, and the watch after a LIST)
     * @param streaming the same operation on a client whose watches never reconnect by themselves
     *                  ({@code watchReconnectLimit=0})
     */
    WatchListListerWatcher(ListerWatcher<T, L> delegate, ListerWatcher<T, L> streaming) {
        this.delegate = delegate;
        this.streaming = streaming;
    }

    @Override
    public CompletableFuture<L> submitList(ListOptions options) {
        // a paginated continuation: plain LIST
        if (options.getContinue() != null) {
            return delegate.submitList(options);
        }
        Pending p = new Pending();
        Pending previous;
        synchronized (this) {
            if (closed) {
                return CompletableFuture.failedFuture(new KubernetesClientException("informer stopped"));
            }
            previous = pending;
            pending = p;
        }
        if (previous != null) {
            previous.abandon();
        }
        ListOptions watch = new ListOptions();
        watch.setSendInitialEvents(true);
        watch.setResourceVersionMatch("NotOlderThan");
        watch.setAllowWatchBookmarks(true);
        // client-go: the last synced resourceVersion, "" (a consistent read) the first time; fabric8
        // asks for "0" (any cached state) on its first list, which the server allows here too
        watch.setResourceVersion(options.getResourceVersion());
        watch.setTimeoutSeconds(300L + ThreadLocalRandom.current().nextLong(300));
        p.options = watch;
        try {
            p.manager = streaming.submitWatch(watch, p);
        } catch (RuntimeException e) {
            p.manager = CompletableFuture.failedFuture(e);
        }
        p.manager.whenComplete((manager, failure) -> {
            if (failure != null) {
                p.fail(failure);
            } else if (p.isAbandoned()) {
                manager.close();
            }
        });
        return p.initial.handle((list, failure) -> {
            if (failure == null) {
                return CompletableFuture.completedFuture(list);
            }
            synchronized (this) {
                if (closed) {
                    return CompletableFuture.<L> failedFuture(failure);
                }
            }
            // as client-go: a failed stream makes this cycle a LIST (progress over waiting)
            LOG.debugf("%s: the streaming list failed (%s), listing instead", getApiEndpointPath(), failure.toString());
            return delegate.submitList(options);
        }).thenCompose(f -> f);
    }

    @Override
    public CompletableFuture<AbstractWatchManager<T>> submitWatch(ListOptions options, Watcher<T> watcher) {
        Pending p;
        synchronized (this) {
            p = pending;
            pending = null;
        }
        if (p != null && p.handOver(options.getResourceVersion(), watcher)) {
            return p.manager;
        }
        if (p != null) {
            p.abandon();
        }
        return delegate.submitWatch(options, watcher);
    }

    /** The informer stops: a stream not yet handed over is closed (the Reflector does not know of it). */
    void close() {
        Pending p;
        synchronized (this) {
            closed = true;
            p = pending;
            pending = null;
        }
        if (p != null) {
            p.abandon();
        }
    }

    @Override
    public Long getLimit() {
        return delegate.getLimit();
    }

    @Override
    public int getWatchReconnectInterval() {
        return delegate.getWatchReconnectInterval();
    }

    @Override
    public String getApiEndpointPath() {
        return delegate.getApiEndpointPath();
    }

    private static boolean isInitialEventsEnd(HasMetadata bookmark) {
        Map<String, String> annotations = bookmark.getMetadata() == null ? null : bookmark.getMetadata().getAnnotations();
        return annotations != null && "true".equals(annotations.get(INITIAL_EVENTS_END));
    }

    /** One streaming list: collects the initial events, then forwards to the Reflector's watcher. */
    private final class Pending implements Watcher<T> {
        final CompletableFuture<L> initial = new CompletableFuture<>();
        final Map<String, T> items = new LinkedHashMap<>();
        final ArrayDeque<Object[]> buffered = new ArrayDeque<>();
        volatile ListOptions options;
        volatile CompletableFuture<AbstractWatchManager<T>> manager;
        Watcher<T> target;
        String listResourceVersion;
        boolean abandoned;

        synchronized boolean isAbandoned() {
            return abandoned;
        }

        void abandon() {
            synchronized (this) {
                if (abandoned) {
                    return;
                }
                abandoned = true;
                buffered.clear();
            }
            initial.completeExceptionally(new KubernetesClientException("streaming list abandoned"));
            CompletableFuture<AbstractWatchManager<T>> m = manager;
            if (m != null) {
                m.thenAccept(AbstractWatchManager::close);
            }
        }

        synchronized boolean handOver(String resourceVersion, Watcher<T> watcher) {
            if (abandoned || listResourceVersion == null || !listResourceVersion.equals(resourceVersion)) {
                return false;
            }
            target = watcher;
            while (!buffered.isEmpty()) {
                Object[] e = buffered.poll();
                if (e[0] instanceof Action a) {
                    @SuppressWarnings("unchecked")
                    T resource = (T) e[1];
                    watcher.eventReceived(a, resource);
                } else {
                    watcher.onClose((WatcherException) e[1]);
                }
            }
            return true;
        }

        void fail(Throwable failure) {
            Throwable cause = failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
            synchronized (this) {
                abandoned = true;
                items.clear();
            }
            initial.completeExceptionally(cause);
        }

        @Override
        public void eventReceived(Action action, T resource) {
            L completed = null;
            synchronized (this) {
                if (abandoned) {
                    return;
                }
                if (target != null) {
                    target.eventReceived(action, resource);
                    return;
                }
                if (listResourceVersion != null) {
                    buffered.add(new Object[] {action, resource});
                    return;
                }
                switch (action) {
                    case ADDED, MODIFIED -> items.put(Cache.metaNamespaceKeyFunc(resource), resource);
                    case DELETED -> items.remove(Cache.metaNamespaceKeyFunc(resource));
                    case BOOKMARK -> {
                        if (isInitialEventsEnd(resource)) {
                            listResourceVersion = resource.getMetadata().getResourceVersion();
                            // fabric8 reconnects with this same ListOptions: from now on a plain watch
                            options.setSendInitialEvents(null);
                            options.setResourceVersionMatch(null);
                            DefaultKubernetesResourceList<T> list = new DefaultKubernetesResourceList<>();
                            list.setItems(new ArrayList<>(items.values()));
                            ListMeta meta = new ListMeta();
                            meta.setResourceVersion(listResourceVersion);
                            list.setMetadata(meta);
                            items.clear();
                            @SuppressWarnings("unchecked")
                            L asList = (L) list;
                            completed = asList;
                        }
                    }
                    default -> {
                    }
                }
            }
            if (completed != null) {
                STREAMS.increment();
                // outside the lock: the Reflector fills its store and asks for the watch from here
                initial.complete(completed);
            }
        }

        @Override
        public void onClose(WatcherException cause) {
            synchronized (this) {
                if (abandoned) {
                    return;
                }
                if (target != null) {
                    target.onClose(cause);
                    return;
                }
                if (listResourceVersion != null) {
                    buffered.add(new Object[] {"close", cause});
                    return;
                }
            }
            fail(cause);
        }

        @Override
        public synchronized void onClose() {
            if (target != null) {
                target.onClose();
            }
        }

        /** Not before the bookmark: fabric8 then closes the watch on its first drop instead of streaming again. */
        @Override
        public synchronized boolean reconnecting() {
            return listResourceVersion != null;
        }
    }
}
