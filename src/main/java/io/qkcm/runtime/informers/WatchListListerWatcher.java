package io.qkcm.runtime.informers;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
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
 * A server that rejects the request (400/403/404/422 before the first event, as a server without the
 * WatchList feature does) gets LIST + WATCH from then on, as client-go falls back.
 */
final class WatchListListerWatcher<T extends HasMetadata, L extends KubernetesResourceList<T>> implements ListerWatcher<T, L> {

    private static final Logger LOG = Logger.getLogger(WatchListListerWatcher.class);
    static final String INITIAL_EVENTS_END = "k8s.io/initial-events-end";
    /** Streams completed, for tests and the startup log. */
    static final LongAdder STREAMS = new LongAdder();

    private final ListerWatcher<T, L> delegate;
    private volatile boolean fallBackToList;
    /** The watch opened by the last submitList, waiting for the Reflector's submitWatch. */
    private Pending pending;

    WatchListListerWatcher(ListerWatcher<T, L> delegate) {
        this.delegate = delegate;
    }

    @Override
    public CompletableFuture<L> submitList(ListOptions options) {
        // a paginated continuation, or a server without watch-list: plain LIST
        if (fallBackToList || options.getContinue() != null) {
            return delegate.submitList(options);
        }
        Pending p;
        synchronized (this) {
            if (pending != null) {
                pending.abandon();
            }
            p = pending = new Pending();
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
        delegate.submitWatch(watch, p).whenComplete((manager, failure) -> {
            if (failure != null) {
                p.fail(failure);
            } else {
                p.opened(manager);
            }
        });
        return p.initial.thenCompose(list -> list != null ? CompletableFuture.completedFuture(list) : delegate.submitList(options));
    }

    @Override
    public CompletableFuture<AbstractWatchManager<T>> submitWatch(ListOptions options, Watcher<T> watcher) {
        Pending p;
        synchronized (this) {
            p = pending;
            pending = null;
        }
        if (p != null && p.handOver(options.getResourceVersion(), watcher)) {
            return CompletableFuture.completedFuture(p.manager);
        }
        if (p != null) {
            p.abandon();
        }
        return delegate.submitWatch(options, watcher);
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

    boolean fellBackToList() {
        return fallBackToList;
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
        ListOptions options;
        AbstractWatchManager<T> manager;
        Watcher<T> target;
        String listResourceVersion;
        boolean abandoned;
        boolean anyEvent;

        synchronized void opened(AbstractWatchManager<T> m) {
            manager = m;
            if (abandoned) {
                m.close();
            }
        }

        synchronized void abandon() {
            abandoned = true;
            initial.completeExceptionally(new KubernetesClientException("watch-list abandoned"));
            if (manager != null) {
                manager.close();
            }
        }

        synchronized boolean handOver(String resourceVersion, Watcher<T> watcher) {
            if (abandoned || manager == null || listResourceVersion == null || !listResourceVersion.equals(resourceVersion)) {
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

        synchronized void fail(Throwable failure) {
            Throwable cause = failure instanceof java.util.concurrent.CompletionException && failure.getCause() != null
                    ? failure.getCause() : failure;
            if (!anyEvent && cause instanceof KubernetesClientException kce && rejectsWatchList(kce.getCode())) {
                LOG.debugf("%s: the server refuses watch-list (%d), listing instead", getApiEndpointPath(), kce.getCode());
                fallBackToList = true;
                initial.complete(null);
                return;
            }
            initial.completeExceptionally(cause);
        }

        @Override
        public synchronized void eventReceived(Action action, T resource) {
            if (abandoned) {
                return;
            }
            if (target != null) {
                target.eventReceived(action, resource);
                return;
            }
            if (initial.isDone()) {
                buffered.add(new Object[] {action, resource});
                return;
            }
            anyEvent = true;
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
                        STREAMS.increment();
                        @SuppressWarnings("unchecked")
                        L asList = (L) list;
                        initial.complete(asList);
                    }
                }
                default -> {
                }
            }
        }

        @Override
        public synchronized void onClose(WatcherException cause) {
            if (abandoned) {
                return;
            }
            if (target != null) {
                target.onClose(cause);
            } else if (initial.isDone()) {
                buffered.add(new Object[] {"close", cause});
            } else {
                abandoned = true;
                initial.completeExceptionally(cause);
            }
        }

        @Override
        public synchronized void onClose() {
            if (target != null) {
                target.onClose();
            }
        }

        @Override
        public boolean reconnecting() {
            return true;
        }
    }

    /** The answers of a server that cannot do watch-list for this request. */
    private static boolean rejectsWatchList(int code) {
        return code == 400 || code == 403 || code == 404 || code == 405 || code == 422;
    }
}
