package io.qkcm.controller.resourcequota;

import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import io.qkcm.controller.resourcequota.evaluator.PersistentVolumeClaimEvaluator;
import io.qkcm.controller.resourcequota.evaluator.PodEvaluator;
import io.qkcm.controller.resourcequota.evaluator.QuotaFeatures;
import io.qkcm.controller.resourcequota.evaluator.ServiceEvaluator;
import io.qkcm.controller.resourcequota.quota.Evaluator;
import io.qkcm.controller.resourcequota.quota.GroupResource;
import io.qkcm.controller.resourcequota.quota.ObjectCountEvaluator;
import io.qkcm.controller.resourcequota.quota.Registry;
import io.qkcm.controller.resourcequota.quota.UsageStats;
import io.qkcm.runtime.informers.GroupVersionResource;
import io.qkcm.runtime.informers.Indexes;
import io.qkcm.runtime.informers.MetadataInformers;
import io.qkcm.runtime.informers.MetadataInformers.MetadataInformer;
import io.qkcm.runtime.informers.ObjectMetadata;
import io.qkcm.runtime.informers.ResourceEventHandlerFuncs;
import io.qkcm.runtime.informers.SharedInformers;
import io.qkcm.runtime.workqueue.WorkQueue;

/**
 * Upstream's QuotaMonitor (resource_quota_monitor.go): a monitor per quotable resource found by
 * discovery, whose deletes (and, through upstream's update filter, the updates that change usage)
 * go onto the {@code resource_quota_controller_resource_changes} queue; one worker hands each to the
 * replenishment function, which requeues the quotas of the object's namespace.
 *
 * <p>A monitor is a handler on the process's informer of the type (upstream's informerfactory): the
 * typed informers of the types the core evaluators measure (asked for at construction), the shared
 * typed informer some other controller made for a discovered type, or else the process's metadata
 * informer of the type (a custom resource, say), the one the garbage collector uses too, so a type is
 * watched once. The object-count evaluators this monitor makes count from that informer's cache, by
 * namespace. A type on a metadata informer is handed over to a shared typed informer as soon as one
 * appears, and the metadata informer released (it stops once no other user holds it).
 */
final class QuotaMonitor {

    private static final Logger LOG = Logger.getLogger(QuotaMonitor.class);

    /** install.DefaultIgnoredResources: virtual resources, and events, which were never quota'd. */
    static final Set<GroupResource> IGNORED_RESOURCES = Set.of(
            new GroupResource("", "bindings"),
            new GroupResource("", "componentstatuses"),
            new GroupResource("authentication.k8s.io", "tokenreviews"),
            new GroupResource("authentication.k8s.io", "selfsubjectreviews"),
            new GroupResource("authorization.k8s.io", "subjectaccessreviews"),
            new GroupResource("authorization.k8s.io", "selfsubjectaccessreviews"),
            new GroupResource("authorization.k8s.io", "localsubjectaccessreviews"),
            new GroupResource("authorization.k8s.io", "selfsubjectrulesreviews"),
            new GroupResource("", "events"),
            new GroupResource("events.k8s.io", "events"));

    /** A change that may require recalculation: the resource and the namespace of the object. */
    record Change(GroupResource resource, String namespace) {
    }

    /** upstream's ReplenishmentFunc. */
    interface Replenishment {
        void replenish(GroupResource resource, String namespace);
    }

    /**
     * A resource's monitor: a handler on a shared typed informer ({@code handler} null for the core
     * evaluators' types, whose handlers live as long as this monitor), or on the process's metadata
     * informer of the resource, one use of it.
     */
    private record Monitor(SharedIndexInformer<?> informer, ResourceEventHandler<?> handler, MetadataInformer metadata,
            MetadataInformers.Handler metadataHandler) {
        static Monitor typed(SharedIndexInformer<?> informer, ResourceEventHandler<?> handler) {
            return new Monitor(informer, handler, null, null);
        }

        boolean onMetadata() {
            return metadata != null;
        }

        boolean hasSynced() {
            return onMetadata() ? metadata.hasSynced() : informer.hasSynced();
        }
    }

    private final SharedInformers shared;
    private final MetadataInformers metadata;
    private final Registry registry;
    private final QuotaFeatures features;
    private final Replenishment replenishment;
    private final WorkQueue<Change> resourceChanges;
    /** The typed informers of the core evaluators' types, registered once at construction. */
    private final Map<GroupResource, SharedIndexInformer<?>> typed;
    private final Map<GroupResource, ResourceEventHandler<?>> typedHandlers = new HashMap<>();
    private final java.time.Clock clock;
    private final Object monitorLock = new Object();
    private Map<GroupVersionResource, Monitor> monitors = new HashMap<>();
    /** Object-count evaluators this monitor made, by resource: replaced when the resource gets an informer. */
    private final Map<GroupResource, Evaluator> madeEvaluators = new HashMap<>();
    private Thread worker;
    /** Set by {@link #start}: monitors are started from then on (upstream's running). */
    private boolean running;

    QuotaMonitor(SharedInformers shared, MetadataInformers metadata, Registry registry, QuotaFeatures features,
            Map<GroupResource, SharedIndexInformer<?>> typed, WorkQueue<Change> resourceChanges,
            Replenishment replenishment, java.time.Clock clock) {
        this.clock = clock;
        this.shared = shared;
        this.metadata = metadata;
        this.registry = registry;
        this.features = features;
        this.typed = typed;
        this.resourceChanges = resourceChanges;
        this.replenishment = replenishment;
        typed.forEach((gr, informer) -> typedHandlers.put(gr, register(informer, gr)));
    }

    @SuppressWarnings({ "unchecked", "rawtypes" })
    private ResourceEventHandler<?> register(SharedIndexInformer<?> informer, GroupResource gr) {
        ResourceEventHandler<HasMetadata> handler = ResourceEventHandlerFuncs.of(null,
                (oldObj, newObj) -> {
                    if (updateFilter(gr, oldObj, newObj)) {
                        resourceChanges.add(new Change(gr, namespaceOf(newObj)));
                    }
                },
                obj -> resourceChanges.add(new Change(gr, namespaceOf(obj))));
        ((SharedIndexInformer) informer).addEventHandler(handler);
        return handler;
    }

    private static String namespaceOf(HasMetadata obj) {
        String ns = obj.getMetadata().getNamespace();
        return ns == null ? "" : ns;
    }

    /** install.DefaultUpdateFilter: the updates of pods, services and claims that change their usage. */
    boolean updateFilter(GroupResource gr, HasMetadata oldObj, HasMetadata newObj) {
        if (gr.equals(PodEvaluator.PODS)) {
            Pod oldPod = (Pod) oldObj;
            Pod newPod = (Pod) newObj;
            if (features.inPlacePodVerticalScaling() && hasResourcesChanged(oldPod, newPod)) {
                return true;
            }
            if (PodEvaluator.isTerminating(oldPod) != PodEvaluator.isTerminating(newPod)) {
                return true;
            }
            java.time.Instant now = clock.instant();
            return PodEvaluator.quotaV1Pod(oldPod, now) && !PodEvaluator.quotaV1Pod(newPod, now);
        }
        if (gr.equals(ServiceEvaluator.SERVICES)) {
            return !ServiceEvaluator.quotaServiceType((Service) oldObj).equals(ServiceEvaluator.quotaServiceType((Service) newObj));
        }
        if (gr.equals(PersistentVolumeClaimEvaluator.PVCS)) {
            return PersistentVolumeClaimEvaluator.requiresQuotaReplenish((PersistentVolumeClaim) newObj,
                    (PersistentVolumeClaim) oldObj, features);
        }
        return false;
    }

    /** hasResourcesChanged: a container's status resources differ (a resize was applied). */
    static boolean hasResourcesChanged(Pod oldPod, Pod newPod) {
        if (oldPod.getStatus() == null || newPod.getStatus() == null) {
            return false;
        }
        return statusResourcesChanged(oldPod.getStatus().getContainerStatuses(), newPod.getStatus().getContainerStatuses())
                || statusResourcesChanged(oldPod.getStatus().getInitContainerStatuses(),
                        newPod.getStatus().getInitContainerStatuses());
    }

    private static boolean statusResourcesChanged(List<io.fabric8.kubernetes.api.model.ContainerStatus> olds,
            List<io.fabric8.kubernetes.api.model.ContainerStatus> news) {
        if (olds == null || news == null) {
            return false;
        }
        for (var o : olds) {
            for (var n : news) {
                if (n.getName().equals(o.getName()) && !semanticEqual(o.getResources(), n.getResources())) {
                    return true;
                }
            }
        }
        return false;
    }

    private static boolean semanticEqual(io.fabric8.kubernetes.api.model.ResourceRequirements a,
            io.fabric8.kubernetes.api.model.ResourceRequirements b) {
        if (a == null || b == null) {
            return a == b;
        }
        return io.qkcm.controller.resourcequota.quota.ResourceLists.equals(
                io.qkcm.controller.resourcequota.quota.ResourceLists.of(a.getRequests()),
                io.qkcm.controller.resourcequota.quota.ResourceLists.of(b.getRequests()))
                && io.qkcm.controller.resourcequota.quota.ResourceLists.equals(
                        io.qkcm.controller.resourcequota.quota.ResourceLists.of(a.getLimits()),
                        io.qkcm.controller.resourcequota.quota.ResourceLists.of(b.getLimits()));
    }

    /**
     * SyncMonitors: a monitor for each resource not ignored ({@code kinds} gives a resource's kind, which
     * a metadata informer's objects carry); an object-count evaluator for each resource no evaluator
     * measures yet. Monitors of resources no longer served are removed; a resource on a metadata
     * informer moves to the shared typed informer that appeared for it. Started at once when running.
     */
    void syncMonitors(Set<GroupVersionResource> resources, Function<GroupVersionResource, String> kinds) {
        synchronized (monitorLock) {
            Map<GroupVersionResource, Monitor> toRemove = new HashMap<>(monitors);
            Map<GroupVersionResource, Monitor> current = new LinkedHashMap<>();
            int kept = 0;
            int added = 0;
            for (GroupVersionResource gvr : resources) {
                GroupResource gr = new GroupResource(gvr.group(), gvr.resource());
                if (IGNORED_RESOURCES.contains(gr)) {
                    continue;
                }
                Monitor existing = toRemove.remove(gvr);
                if (existing != null && !(existing.onMetadata() && shared.typeServing(gvr).isPresent())) {
                    current.put(gvr, existing);
                    kept++;
                    continue;
                }
                Monitor m;
                try {
                    m = monitorFor(gvr, gr, kinds.apply(gvr));
                } catch (RuntimeException e) {
                    LOG.errorf("couldn't start monitor for resource %s: %s", gvr, e.getMessage());
                    if (existing != null) {
                        current.put(gvr, existing);
                    }
                    continue;
                }
                if (existing != null) {
                    // handed over: the metadata informer's use ends after the new monitor took over
                    toRemove.put(gvr, existing);
                }
                current.put(gvr, m);
                added++;
            }
            monitors = current;
            toRemove.values().forEach(this::stop);
            if (running) {
                startMonitors();
            }
            LOG.debugf("quota synced monitors: added %d, kept %d, removed %d", added, kept, toRemove.size());
        }
    }

    /** StartMonitors: the metadata informers of the monitors start (the typed ones are the process's to start). */
    private void startMonitors() {
        for (Monitor m : monitors.values()) {
            if (m.onMetadata()) {
                m.metadata().start();
            }
        }
    }

    @SuppressWarnings({ "unchecked", "rawtypes" })
    private void stop(Monitor m) {
        if (m.onMetadata()) {
            m.metadata().removeHandler(m.metadataHandler());
            m.metadata().release();
        } else if (m.handler() != null) {
            ((SharedIndexInformer) m.informer()).removeEventHandler(m.handler());
        }
    }

    private Monitor monitorFor(GroupVersionResource gvr, GroupResource gr, String kind) {
        SharedIndexInformer<?> core = typed.get(gr);
        if (core != null) {
            // handlers and evaluator exist since construction
            return Monitor.typed(core, null);
        }
        Optional<Class<? extends HasMetadata>> type = shared.typeServing(gvr);
        Evaluator evaluator = registry.get(gr);
        boolean ours = evaluator == null || madeEvaluators.get(gr) == evaluator;
        if (type.isPresent()) {
            SharedIndexInformer<? extends HasMetadata> informer = shared.informerFor(type.get());
            LOG.debugf("QuotaMonitor using a shared informer for %s", gvr);
            if (ours) {
                madeEvaluator(gr, new ObjectCountEvaluator(gr, lister(informer, gvr), ""));
            }
            return Monitor.typed(informer, register(informer, gr));
        }
        if (kind == null) {
            throw new IllegalArgumentException("no kind known for " + gvr);
        }
        MetadataInformer informer = metadata.informerFor(gvr, kind);
        LOG.debugf("QuotaMonitor using the process's metadata informer for %s", gvr);
        if (ours) {
            madeEvaluator(gr, new ObjectCountEvaluator(gr, lister(informer, gvr), ""));
        }
        // upstream's handlers: no AddFunc; updates through the update filter, which passes none of a
        // resource no core evaluator measures (those are on typed informers); every delete
        MetadataInformers.Handler handler = new MetadataInformers.Handler() {
            @Override
            public void onAdd(ObjectMetadata obj) {
            }

            @Override
            public void onUpdate(ObjectMetadata oldObj, ObjectMetadata newObj) {
            }

            @Override
            public void onDelete(ObjectMetadata obj) {
                resourceChanges.add(new Change(gr, obj.namespace() == null ? "" : obj.namespace()));
            }
        };
        informer.addHandler(handler);
        return new Monitor(null, null, informer, handler);
    }

    private void madeEvaluator(GroupResource gr, Evaluator counting) {
        boolean replaced = madeEvaluators.containsKey(gr);
        registry.add(counting);
        madeEvaluators.put(gr, counting);
        if (!replaced) {
            LOG.infof("QuotaMonitor created object count evaluator for %s", gr);
        }
    }

    /** upstream's protectedLister: an error until the informer has synced, then the namespace's objects. */
    static UsageStats.ListFunc lister(SharedIndexInformer<?> informer, Object what) {
        return namespace -> {
            if (!informer.hasSynced()) {
                throw new IllegalStateException(what + " not yet synced");
            }
            return Indexes.byIndex(informer, Cache.NAMESPACE_INDEX, namespace);
        };
    }

    /** The same over a metadata informer's namespace index. */
    static UsageStats.ListFunc lister(MetadataInformer informer, Object what) {
        return namespace -> {
            if (!informer.hasSynced()) {
                throw new IllegalStateException(what + " not yet synced");
            }
            return informer.byNamespace(namespace);
        };
    }

    /** True when a resource on a metadata informer is now served by a shared typed informer (a handover is due). */
    boolean hasMetadataWithSharedInformer(Set<GroupVersionResource> resources) {
        synchronized (monitorLock) {
            for (Map.Entry<GroupVersionResource, Monitor> e : monitors.entrySet()) {
                if (e.getValue().onMetadata() && resources.contains(e.getKey())
                        && shared.typeServing(e.getKey()).isPresent()) {
                    return true;
                }
            }
            return false;
        }
    }

    /** IsSynced: some monitor exists and every informer behind one has synced. */
    boolean isSynced() {
        synchronized (monitorLock) {
            if (monitors.isEmpty()) {
                return false;
            }
            for (Monitor m : monitors.values()) {
                if (!m.hasSynced()) {
                    return false;
                }
            }
            return true;
        }
    }

    /** The informer behind each resource's monitor, "typed" or "metadata" (for tests and logs). */
    Map<GroupVersionResource, String> monitorInformers() {
        synchronized (monitorLock) {
            Map<GroupVersionResource, String> out = new HashMap<>();
            monitors.forEach((gvr, m) -> out.put(gvr, m.onMetadata() ? "metadata" : "typed"));
            return out;
        }
    }

    /** Run: starts the monitors, and the worker that hands each change to the replenishment function. */
    synchronized void start() {
        if (worker != null) {
            return;
        }
        synchronized (monitorLock) {
            running = true;
            // the controllers built after this one asked for their typed informers since the first
            // discovery: their types leave the metadata informers before any watch opens (one per type)
            Map<GroupVersionResource, String> handOver = new HashMap<>();
            monitors.forEach((gvr, m) -> {
                if (m.onMetadata() && shared.typeServing(gvr).isPresent()) {
                    handOver.put(gvr, m.metadata().kind());
                }
            });
            if (!handOver.isEmpty()) {
                // the same resources: only those handed over get a new monitor
                syncMonitors(Set.copyOf(monitors.keySet()), handOver::get);
            }
            startMonitors();
        }
        LOG.info("QuotaMonitor running");
        worker = new Thread(this::processResourceChanges, "resourcequota-monitor");
        worker.setDaemon(true);
        worker.start();
    }

    void shutDown() {
        resourceChanges.shutDown();
        synchronized (monitorLock) {
            running = false;
            monitors.values().forEach(this::stop);
            monitors = new HashMap<>();
        }
        // the process's informers outlive this controller (a lost lease): its handlers go with it, and its
        // uses of metadata informers end (above)
        typedHandlers.forEach((gr, handler) -> stop(Monitor.typed(typed.get(gr), handler)));
    }

    private void processResourceChanges() {
        try {
            while (true) {
                Change change = resourceChanges.get();
                if (change == null) {
                    return;
                }
                try {
                    LOG.tracef("QuotaMonitor process object: resource %s namespace %s", change.resource(), change.namespace());
                    replenishment.replenish(change.resource(), change.namespace());
                } catch (RuntimeException e) {
                    LOG.errorf("QuotaMonitor: replenishing %s in %s: %s", change.resource(), change.namespace(), e);
                } finally {
                    resourceChanges.done(change);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            LOG.info("QuotaMonitor stopping");
        }
    }
}
