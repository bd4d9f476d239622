package io.qkcm.controller.garbagecollector;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.client.KubernetesClientException;
import io.qkcm.runtime.josdk.Controller;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.workqueue.WorkQueue;
import io.qkcm.runtime.informers.ApiDiscovery;
import io.qkcm.runtime.informers.ApiDiscovery.ApiResource;
import io.qkcm.runtime.informers.GroupVersionResource;
import io.qkcm.runtime.informers.MetadataClient;
import io.qkcm.runtime.informers.MetadataInformers;
import io.qkcm.runtime.informers.ObjectMetadata;
import io.qkcm.runtime.informers.ObjectMetadata.OwnerRef;

/**
 * Upstream garbagecollector.go: the graph builder's monitors keep the dependency graph; workers take
 * nodes from {@code garbage_collector_attempt_to_delete} (delete objects whose owners are all gone,
 * drive foreground deletion) and {@code garbage_collector_attempt_to_orphan} (strip an orphaning
 * owner's references from its dependents, then its {@code orphan} finalizer). Discovery is re-read
 * every 30s and monitors follow resources as they come and go.
 */
public final class GarbageCollector implements Controller {

    public static final String NAME = "garbage-collector-controller";
    static final Duration SYNC_PERIOD = Duration.ofSeconds(30);

    private static final Logger LOG = Logger.getLogger(GarbageCollector.class);

    private final ControllerContext context;
    private final int workers;
    private final MetadataClient client;
    private final ApiDiscovery discovery;
    private final MetadataInformers informers;
    private final GraphBuilder graph;
    private final Operations ops;
    private final WorkQueue<Node> attemptToDelete;
    private final WorkQueue<Node> attemptToOrphan;
    private final WorkQueue<GraphBuilder.Event> graphChanges;
    private final List<Thread> threads = new ArrayList<>();
    private final ScheduledExecutorService syncer;
    private final ExecutorService orphaners;
    private final CountDownLatch stopped = new CountDownLatch(1);
    private final io.micrometer.core.instrument.Counter resourcesSyncErrors;
    private volatile boolean started;
    private volatile boolean shuttingDown;

    /** {@code workers}: --concurrent-gc-syncs. */
    public GarbageCollector(ControllerContext context, int workers) {
        this.context = context;
        this.workers = workers;
        this.client = new MetadataClient(context.client());
        this.discovery = new ApiDiscovery(client);
        // upstream's informerfactory: the process's metadata informers, shared with the quota controller's
        // monitors (one watch per type); they stream their lists unless --feature-gates=WatchListClient=false
        this.informers = context.metadataInformers();
        this.attemptToDelete = context.newQueue("garbage_collector_attempt_to_delete");
        this.attemptToOrphan = context.newQueue("garbage_collector_attempt_to_orphan");
        this.graphChanges = context.newQueue("garbage_collector_graph_changes");
        // upstream's informerfactory: the process's shared typed informer where a controller asked for one
        this.graph = new GraphBuilder(informers, context.informers(), context.events(), graphChanges, attemptToDelete,
                attemptToOrphan);
        this.ops = new Operations(client, discovery, graph);
        this.syncer = Executors.newSingleThreadScheduledExecutor(daemon("gc-discovery-sync"));
        // upstream garbagecollector_controller_resources_sync_error_total
        this.resourcesSyncErrors = io.micrometer.core.instrument.Counter
                .builder("garbagecollector.controller.resources.sync.error")
                .description("Number of garbage collector resources sync errors")
                .register(context.metrics());
        this.orphaners = Executors.newFixedThreadPool(Math.max(1, workers), daemon("gc-orphan-dependents"));
    }

    private static java.util.concurrent.ThreadFactory daemon(String name) {
        return r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        };
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public synchronized void start() {
        if (started) {
            return;
        }
        started = true;
        LOG.info("Starting controller garbagecollector");
        thread("gc-graph-builder", graph::run);
        // Sync: discovery now and every 30s after each run (wait.Until)
        syncer.scheduleWithFixedDelay(this::syncOnce, 0, SYNC_PERIOD.toMillis(), TimeUnit.MILLISECONDS);
        thread("gc-start-workers", () -> {
            long deadline = System.nanoTime() + SYNC_PERIOD.toNanos();
            while (!graph.isSynced() && System.nanoTime() < deadline && !shuttingDown) {
                sleep(100);
            }
            if (shuttingDown) {
                return;
            }
            if (graph.isSynced()) {
                LOG.info("Garbage collector: all resource monitors have synced");
            } else {
                LOG.info("Garbage collector: not all resource monitors could be synced, proceeding anyways");
            }
            LOG.info("Proceeding to collect garbage");
            for (int i = 0; i < workers; i++) {
                thread("gc-attempt-to-delete-" + i, this::runAttemptToDeleteWorker);
                thread("gc-attempt-to-orphan-" + i, this::runAttemptToOrphanWorker);
            }
        });
    }

    private synchronized void thread(String name, Runnable body) {
        Thread t = new Thread(body, name);
        t.setDaemon(true);
        threads.add(t);
        t.start();
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    // ---- discovery sync (upstream GarbageCollector.Sync) ----

    private Map<GroupVersionResource, ApiResource> oldResources = new HashMap<>();

    private void syncOnce() {
        if (shuttingDown) {
            return;
        }
        try {
            ApiDiscovery.Snapshot snapshot;
            try {
                snapshot = discovery.discover();
            } catch (RuntimeException e) {
                LOG.infof("failed to discover preferred resources: %s", e.toString());
                resourcesSyncErrors.increment();
                return;
            }
            Map<GroupVersionResource, ApiResource> newResources = deletableResources(snapshot);
            if (newResources.isEmpty()) {
                LOG.debug("no resources reported by discovery, skipping garbage collector sync");
                resourcesSyncErrors.increment();
                return;
            }
            if (!snapshot.failedGroupVersions().isEmpty()) {
                LOG.infof("failed to discover some groups: %s", snapshot.failedGroupVersions());
                // keep synced monitors of groups that failed discovery
                for (Map.Entry<GroupVersionResource, ApiResource> e : oldResources.entrySet()) {
                    if (snapshot.failedGroupVersions().contains(e.getKey().groupVersion())
                            && graph.isResourceSynced(e.getKey())) {
                        newResources.put(e.getKey(), e.getValue());
                    }
                }
            }
            if (oldResources.keySet().equals(newResources.keySet())) {
                // a shared informer asked for since the last sync takes its type over from the metadata monitor
                if (graph.syncMonitors(newResources) > 0) {
                    graph.startMonitors();
                }
                LOG.trace("no resource updates from discovery, skipping garbage collector sync");
                return;
            }
            LOG.debugf("syncing garbage collector with updated resources from discovery: %s",
                    printDiff(oldResources.keySet(), newResources.keySet()));
            discovery.resetMapper(snapshot);
            graph.syncMonitors(newResources);
            graph.startMonitors();
            long deadline = System.nanoTime() + SYNC_PERIOD.toNanos();
            while (!graph.isSynced() && System.nanoTime() < deadline && !shuttingDown) {
                sleep(100);
            }
            if (graph.isSynced()) {
                LOG.debug("synced garbage collector");
            } else if (!shuttingDown) {
                LOG.warn("timed out waiting for dependency graph builder sync during GC sync");
                resourcesSyncErrors.increment();
            }
            oldResources = newResources;
        } catch (RuntimeException e) {
            LOG.errorf(e, "failed to sync resource monitors");
            resourcesSyncErrors.increment();
        }
    }

    /** Upstream GetDeletableResources: preferred resources supporting delete, list and watch. */
    static Map<GroupVersionResource, ApiResource> deletableResources(ApiDiscovery.Snapshot snapshot) {
        Map<GroupVersionResource, ApiResource> out = new HashMap<>();
        for (ApiResource r : snapshot.preferred()) {
            if (r.supports("delete", "list", "watch")) {
                out.put(r.gvr(), r);
            }
        }
        return out;
    }

    private static String printDiff(Set<GroupVersionResource> oldR, Set<GroupVersionResource> newR) {
        Set<String> removed = new TreeSet<>();
        Set<String> added = new TreeSet<>();
        oldR.stream().filter(r -> !newR.contains(r)).forEach(r -> removed.add(r.toString()));
        newR.stream().filter(r -> !oldR.contains(r)).forEach(r -> added.add(r.toString()));
        return "added: " + added + ", removed: " + removed;
    }

    // ---- attemptToDelete ----

    private enum Action {
        REQUEUE, FORGET
    }

    private void runAttemptToDeleteWorker() {
        try {
            while (true) {
                Node item = attemptToDelete.get();
                if (item == null) {
                    return;
                }
                try {
                    Action action = attemptToDeleteWorker(item);
                    if (action == Action.FORGET) {
                        attemptToDelete.forget(item);
                    } else {
                        attemptToDelete.addRateLimited(item);
                    }
                } finally {
                    attemptToDelete.done(item);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Signals that a virtual delete event was queued for the graph builder. */
    private static final class EnqueuedVirtualDeleteEvent extends Exception {
        static final EnqueuedVirtualDeleteEvent INSTANCE = new EnqueuedVirtualDeleteEvent();

        private EnqueuedVirtualDeleteEvent() {
            super("enqueued virtual delete event", null, false, false);
        }
    }

    private Action attemptToDeleteWorker(Node queued) {
        Node n = refreshed(queued);
        if (!n.isObserved()) {
            Node fromGraph = graph.uidToNode.get(n.identity.uid());
            if (fromGraph == null) {
                LOG.tracef("item %s no longer in the graph, skipping attemptToDeleteItem", n.identity);
                return Action.FORGET;
            }
            if (fromGraph.isObserved()) {
                LOG.tracef("item %s no longer virtual in the graph, skipping attemptToDeleteItem on virtual node", n.identity);
                return Action.FORGET;
            }
        }
        try {
            attemptToDeleteItem(n);
        } catch (EnqueuedVirtualDeleteEvent e) {
            return Action.FORGET;
        } catch (NamespacedOwnerOfClusterScopedException e) {
            return Action.FORGET;
        } catch (RestMappingException e) {
            LOG.tracef("error syncing item %s: %s", n.identity, e.getMessage());
            return Action.REQUEUE;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Action.REQUEUE;
        } catch (Exception e) {
            if (!shuttingDown) {
                LOG.errorf("error syncing item %s: %s", n, e.toString());
            }
            return Action.REQUEUE;
        }
        if (!n.isObserved()) {
            // a virtual node for an item added and removed while the watch was down could otherwise stay
            LOG.tracef("item %s hasn't been observed via informer yet", n.identity);
            return Action.REQUEUE;
        }
        return Action.FORGET;
    }

    /**
     * The node to work on for a queued node. The graph builder replaces a node whose identity
     * (apiVersion, kind, namespace, name) turned out to be outdated by a copy with the right one: a virtual
     * owner once the object is observed, or a virtual owner whose dependents disagree on its
     * coordinates. A copy of the old node still queued would make the worker GET and DELETE with stale
     * coordinates, so it works on the graph's node for that uid instead.
     */
    Node refreshed(Node queued) {
        Node current = graph.uidToNode.get(queued.identity.uid());
        if (current != null && current != queued && !current.identity.equals(queued.identity)) {
            LOG.tracef("item %s has an outdated identity, processing the graph's %s", queued.identity, current.identity);
            return current;
        }
        return queued;
    }

    private record Owner(boolean dangling, ObjectMetadata owner) {
    }

    /** Whether {@code reference} points to an object that does not exist (or has another uid). */
    private Owner isDangling(OwnerRef reference, Node item) throws Exception {
        ObjectRef absentKey = ObjectRef.of(reference, "");
        if (graph.absentOwnerCache.has(absentKey)) {
            LOG.tracef("according to the absentOwnerCache, item %s's owner %s does not exist", item.identity, reference);
            return new Owner(true, null);
        }
        absentKey = absentKey.withNamespace(item.identity.namespace());
        if (graph.absentOwnerCache.has(absentKey)) {
            LOG.tracef("according to the absentOwnerCache, item %s's owner %s does not exist in namespace", item.identity,
                    reference);
            return new Owner(true, null);
        }
        ApiResource resource = ops.apiResource(reference.apiVersion(), reference.kind());
        if (!resource.namespaced()) {
            absentKey = absentKey.withNamespace("");
        }
        if (item.identity.namespace().isEmpty() && resource.namespaced()) {
            LOG.debugf("item %s is cluster-scoped, but refers to a namespaced owner %s", item.identity, reference);
            throw NamespacedOwnerOfClusterScopedException.INSTANCE;
        }
        ObjectMetadata owner;
        try {
            owner = client.get(resource.gvr(), Operations.resourceDefaultNamespace(resource.namespaced(),
                    item.identity.namespace()), reference.name(), reference.apiVersion(), reference.kind());
        } catch (KubernetesClientException e) {
            if (Operations.isNotFound(e)) {
                graph.absentOwnerCache.add(absentKey);
                LOG.tracef("item %s's owner %s is not found", item.identity, reference);
                return new Owner(true, null);
            }
            throw e;
        }
        if (!reference.uid().equals(owner.uid())) {
            LOG.tracef("item %s's owner %s is not found, UID mismatch", item.identity, reference);
            graph.absentOwnerCache.add(absentKey);
            return new Owner(true, null);
        }
        return new Owner(false, owner);
    }

    private void attemptToDeleteItem(Node item) throws Exception {
        LOG.debugf("Processing item %s (virtual %s)", item.identity, !item.isObserved());
        // "being deleted" is a one-way trip to the final deletion
        if (item.isBeingDeleted() && !item.isDeletingDependents()) {
            LOG.tracef("processing item %s returned at once, because its DeletionTimestamp is non-nil", item.identity);
            return;
        }
        ObjectMetadata latest;
        try {
            latest = ops.getObject(item.identity);
        } catch (KubernetesClientException e) {
            if (Operations.isNotFound(e)) {
                LOG.tracef("item %s not found, generating a virtual delete event", item.identity);
                graph.enqueueVirtualDeleteEvent(item.identity);
                throw EnqueuedVirtualDeleteEvent.INSTANCE;
            }
            throw e;
        }
        if (!item.identity.uid().equals(latest.uid())) {
            LOG.tracef("UID doesn't match, item %s not found, generating a virtual delete event", item.identity);
            graph.enqueueVirtualDeleteEvent(item.identity);
            throw EnqueuedVirtualDeleteEvent.INSTANCE;
        }
        if (item.isDeletingDependents()) {
            processDeletingDependentsItem(item);
            return;
        }
        List<OwnerRef> ownerReferences = latest.ownerReferences();
        if (ownerReferences.isEmpty()) {
            LOG.debugf("item %s doesn't have an owner, continue on next item", item.identity);
            return;
        }
        List<OwnerRef> solid = new ArrayList<>();
        List<OwnerRef> dangling = new ArrayList<>();
        List<OwnerRef> waiting = new ArrayList<>();
        for (OwnerRef reference : ownerReferences) {
            Owner o = isDangling(reference, item);
            if (o.dangling()) {
                dangling.add(reference);
            } else if (o.owner().beingDeleted() && o.owner().hasFinalizer(GraphBuilder.FINALIZER_DELETE_DEPENDENTS)) {
                waiting.add(reference);
            } else {
                solid.add(reference);
            }
        }
        LOG.tracef("classify item %s's references: solid %s, dangling %s, waitingForDependentsDeletion %s", item.identity,
                solid, dangling, waiting);
        if (!solid.isEmpty()) {
            LOG.debugf("item %s has at least one existing owner %s, will not garbage collect", item.identity, solid);
            if (dangling.isEmpty() && waiting.isEmpty()) {
                return;
            }
            LOG.debugf("remove dangling references %s and waiting references %s for item %s", dangling, waiting,
                    item.identity);
            // waiting references must go too, or their owners would keep foregroundDeletion forever
            List<String> ownerUids = new ArrayList<>();
            dangling.forEach(r -> ownerUids.add(r.uid()));
            waiting.forEach(r -> ownerUids.add(r.uid()));
            String smp = Operations.deleteOwnerRefStrategicMergePatch(item.identity.uid(), ownerUids);
            ops.patch(item, smp, n -> ops.deleteOwnerRefJsonMergePatch(n, ownerUids));
            return;
        }
        if (!waiting.isEmpty() && item.dependentsLength() != 0) {
            for (Node dep : item.getDependents()) {
                if (dep.isDeletingDependents()) {
                    // cycle prevention (with false positives, as upstream): unblock our references, then
                    // delete in foreground
                    LOG.debugf("processing item %s, some of its owners and its dependent %s have FinalizerDeletingDependents, "
                            + "to prevent potential cycle, its ownerReferences are going to be modified to be non-blocking, "
                            + "then the item is going to be deleted with Foreground", item.identity, dep.identity);
                    String patch = Operations.unblockOwnerReferencesStrategicMergePatch(item);
                    ops.patch(item, patch, ops::unblockOwnerReferencesJsonMergePatch);
                    break;
                }
            }
            LOG.debugf("at least one owner of item %s has FinalizerDeletingDependents, and the item itself has dependents, "
                    + "so it is going to be deleted in Foreground", item.identity);
            deleteObject(item, latest, "Foreground");
            return;
        }
        String policy;
        if (latest.hasFinalizer(GraphBuilder.FINALIZER_ORPHAN_DEPENDENTS)) {
            policy = "Orphan";
        } else if (latest.hasFinalizer(GraphBuilder.FINALIZER_DELETE_DEPENDENTS)) {
            policy = "Foreground";
        } else {
            policy = "Background";
        }
        LOG.debugf("Deleting item %s, propagationPolicy %s", item.identity, policy);
        deleteObject(item, latest, policy);
    }

    /**
     * The delete of attemptToDeleteItem. An object already gone (deleted by someone else since the GET)
     * is what a NotFound on the GET means too: a virtual delete event for the graph builder, and the
     * item is forgotten rather than logged as an error and retried (upstream kubernetes#136817).
     */
    private void deleteObject(Node item, ObjectMetadata latest, String policy) throws Exception {
        try {
            ops.deleteObject(item.identity, latest.resourceVersion(), latest.ownerReferences(), policy);
        } catch (KubernetesClientException e) {
            if (Operations.isNotFound(e)) {
                LOG.tracef("item %s not found on delete, generating a virtual delete event", item.identity);
                graph.enqueueVirtualDeleteEvent(item.identity);
                throw EnqueuedVirtualDeleteEvent.INSTANCE;
            }
            throw e;
        }
    }

    private void processDeletingDependentsItem(Node item) throws Exception {
        List<Node> blocking = item.blockingDependents();
        if (blocking.isEmpty()) {
            LOG.debugf("remove DeleteDependents finalizer for item %s", item.identity);
            ops.removeFinalizer(item, GraphBuilder.FINALIZER_DELETE_DEPENDENTS);
            return;
        }
        for (Node dep : blocking) {
            if (!dep.isDeletingDependents()) {
                LOG.debugf("adding dependent %s to attemptToDelete, because its owner %s is deletingDependents",
                        dep.identity, item.identity);
                attemptToDelete.add(dep);
            }
        }
    }

    // ---- attemptToOrphan ----

    private void runAttemptToOrphanWorker() {
        try {
            while (true) {
                Node owner = attemptToOrphan.get();
                if (owner == null) {
                    return;
                }
                try {
                    if (attemptToOrphanWorker(owner) == Action.FORGET) {
                        attemptToOrphan.forget(owner);
                    } else {
                        attemptToOrphan.addRateLimited(owner);
                    }
                } finally {
                    attemptToOrphan.done(owner);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private Action attemptToOrphanWorker(Node owner) throws InterruptedException {
        List<Node> dependents = owner.getDependents();
        try {
            orphanDependents(owner.identity, dependents);
        } catch (InterruptedException e) {
            throw e;
        } catch (Exception e) {
            LOG.errorf("orphanDependents for %s failed with %s", owner.identity, e.getMessage());
            return Action.REQUEUE;
        }
        try {
            ops.removeFinalizer(owner, GraphBuilder.FINALIZER_ORPHAN_DEPENDENTS);
        } catch (InterruptedException e) {
            throw e;
        } catch (Exception e) {
            LOG.errorf("removeOrphanFinalizer for %s failed with %s", owner.identity, e.toString());
            return Action.REQUEUE;
        }
        return Action.FORGET;
    }

    /** Removes the owner's reference from every dependent, in parallel as upstream. */
    private void orphanDependents(ObjectRef owner, List<Node> dependents) throws Exception {
        List<Future<String>> results = new ArrayList<>();
        for (Node dependent : dependents) {
            results.add(orphaners.submit(() -> {
                String smp = Operations.deleteOwnerRefStrategicMergePatch(dependent.identity.uid(), List.of(owner.uid()));
                try {
                    ops.patch(dependent, smp, n -> ops.deleteOwnerRefJsonMergePatch(n, List.of(owner.uid())));
                } catch (Exception e) {
                    // a missing owner reference is no error for a strategic merge patch
                    if (!Operations.isNotFound(e)) {
                        return "orphaning " + dependent.identity + " failed, " + e.getMessage();
                    }
                }
                return null;
            }));
        }
        List<String> errors = new ArrayList<>();
        for (Future<String> f : results) {
            String err = f.get();
            if (err != null) {
                errors.add(err);
            }
        }
        if (!errors.isEmpty()) {
            throw new IllegalStateException("failed to orphan dependents of owner " + owner + ", got errors: " + errors);
        }
        LOG.tracef("successfully updated all dependents of owner %s", owner);
    }

    // ---- lifecycle ----

    @Override
    public void shutdown(Duration timeout) throws InterruptedException {
        shuttingDown = true;
        long deadline = System.nanoTime() + timeout.toNanos();
        syncer.shutdownNow();
        graphChanges.shutDown();
        attemptToOrphan.shutDownWithDrain(Duration.ofNanos(Math.max(0, deadline - System.nanoTime()) / 2));
        attemptToDelete.shutDownWithDrain(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
        orphaners.shutdownNow();
        // the monitors' uses of the process's metadata informers end; the process stops the factory
        graph.stopMonitors();
        stopped.countDown();
    }

    @Override
    public boolean healthy() {
        if (!started || shuttingDown) {
            return true;
        }
        synchronized (this) {
            return threads.stream().filter(t -> !t.getName().equals("gc-start-workers")).allMatch(Thread::isAlive);
        }
    }

    // ---- for tests and diagnostics ----

    /** For tests in this package. */
    Operations operations() {
        return ops;
    }

    /** For tests in this package. */
    WorkQueue<Node> attemptToDeleteQueue() {
        return attemptToDelete;
    }

    /** For tests in this package: the graph's node for {@code uid}, or null. */
    Node graphNode(String uid) {
        return graph.uidToNode.get(uid);
    }

    /** GraphHasUID: whether the dependency graph has a node for {@code uid}. */
    public boolean graphHasUid(String uid) {
        return graph.uidToNode.containsKey(uid);
    }

    /** Whether every monitor has synced. */
    public boolean isSynced() {
        return graph.isSynced();
    }

    /** The resources currently monitored. */
    public Set<GroupVersionResource> monitoredResources() {
        Set<GroupVersionResource> out = new java.util.HashSet<>();
        for (Monitor m : graph.monitorList()) {
            out.add(m.resource());
        }
        return out;
    }

    /** For tests in this package: the monitor of a resource, or null. */
    Monitor monitor(GroupVersionResource gvr) {
        return graph.monitor(gvr);
    }

    /** For tests in this package: one discovery sync now, as the 30s resync runs it. */
    void syncNow() throws InterruptedException {
        try {
            syncer.submit(this::syncOnce).get();
        } catch (java.util.concurrent.ExecutionException e) {
            throw new IllegalStateException(e.getCause());
        }
    }
}
