package io.qkcm.controller.resourcequota;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import org.jboss.logging.Logger;

import com.fasterxml.jackson.databind.JsonNode;

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
import io.qkcm.runtime.informers.MetadataClient;
import io.qkcm.runtime.informers.ResourceEventHandlerFuncs;
import io.qkcm.runtime.informers.SharedInformers;
import io.qkcm.runtime.workqueue.WorkQueue;

/**
 * Upstream's QuotaMonitor (resource_quota_monitor.go): a monitor per quotable resource found by
 * discovery, whose deletes (and, through upstream's update filter, the updates that change usage)
 * go onto the {@code resource_quota_controller_resource_changes} queue; one worker hands each to the
 * replenishment function, which requeues the quotas of the object's namespace.
 *
 * <p>A monitor is the process's shared informer of the type: the typed informers of the types the
 * core evaluators measure (asked for at construction), or the shared informer some other controller
 * made for a discovered type. A discovered type no shared informer serves (a custom resource, say) has
 * no monitor here: the process's metadata informers belong to the garbage collector and a second watch
 * of a type is not allowed. Its {@code count/<resource>.<group>} is counted by a paginated
 * metadata-only LIST of the namespace at each sync, and its deletes reach the quota at the next full
 * recalculation (--resource-quota-sync-period) instead of at once. Such a type is handed over to a
 * shared informer as soon as one appears.
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

    /** A resource's monitor: a handler on a shared informer, or none (counted by listing). */
    private record Monitor(SharedIndexInformer<?> informer, ResourceEventHandler<?> handler) {
        boolean listed() {
            return informer == null;
        }
    }

    private final SharedInformers shared;
    private final MetadataClient metadata;
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

    QuotaMonitor(SharedInformers shared, MetadataClient metadata, Registry registry, QuotaFeatures features,
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
     * SyncMonitors: a monitor for each resource not ignored; an object-count evaluator for each resource
     * no evaluator measures yet. Monitors of resources no longer served are removed.
     */
    void syncMonitors(Set<GroupVersionResource> resources) {
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
                if (existing != null && !(existing.listed() && shared.typeServing(gvr).isPresent())) {
                    current.put(gvr, existing);
                    kept++;
                    continue;
                }
                current.put(gvr, monitorFor(gvr, gr));
                added++;
            }
            monitors = current;
            toRemove.values().forEach(this::stop);
            LOG.debugf("quota synced monitors: added %d, kept %d, removed %d", added, kept, toRemove.size());
        }
    }

    @SuppressWarnings({ "unchecked", "rawtypes" })
    private void stop(Monitor m) {
        if (m.informer() != null && m.handler() != null) {
            ((SharedIndexInformer) m.informer()).removeEventHandler(m.handler());
        }
    }

    private Monitor monitorFor(GroupVersionResource gvr, GroupResource gr) {
        SharedIndexInformer<?> core = typed.get(gr);
        if (core != null) {
            // handlers and evaluator exist since construction
            return new Monitor(core, null);
        }
        Optional<Class<? extends HasMetadata>> type = shared.typeServing(gvr);
        Evaluator evaluator = registry.get(gr);
        boolean ours = evaluator == null || madeEvaluators.get(gr) == evaluator;
        if (type.isPresent()) {
            SharedIndexInformer<? extends HasMetadata> informer = shared.informerFor(type.get());
            LOG.debugf("QuotaMonitor using a shared informer for %s", gvr);
            if (ours) {
                Evaluator counting = new ObjectCountEvaluator(gr, lister(informer, gvr), "");
                registry.add(counting);
                madeEvaluators.put(gr, counting);
                LOG.infof("QuotaMonitor created object count evaluator for %s", gr);
            }
            return new Monitor(informer, register(informer, gr));
        }
        if (ours && evaluator == null) {
            Evaluator counting = new ObjectCountEvaluator(gr, listing(gvr), "");
            registry.add(counting);
            madeEvaluators.put(gr, counting);
            LOG.infof("QuotaMonitor created object count evaluator for %s (counted by listing: no shared informer)", gr);
        }
        return new Monitor(null, null);
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

    /** The namespace's objects of {@code gvr} by a paginated metadata-only LIST (the names only matter). */
    private UsageStats.ListFunc listing(GroupVersionResource gvr) {
        return namespace -> {
            List<Object> items = new ArrayList<>();
            String cont = null;
            do {
                String query = "limit=500" + (cont == null ? "" : "&continue=" + MetadataClient.encode(cont));
                JsonNode page = metadata.list(gvr, namespace, query);
                page.path("items").forEach(items::add);
                String next = page.path("metadata").path("continue").asText("");
                cont = next.isEmpty() ? null : next;
            } while (cont != null);
            return items;
        };
    }

    /** True when a resource counted by listing is now served by a shared informer (a handover is due). */
    boolean hasListedWithSharedInformer(Set<GroupVersionResource> resources) {
        synchronized (monitorLock) {
            for (Map.Entry<GroupVersionResource, Monitor> e : monitors.entrySet()) {
                if (e.getValue().listed() && resources.contains(e.getKey()) && shared.typeServing(e.getKey()).isPresent()) {
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
                if (m.informer() != null && !m.informer().hasSynced()) {
                    return false;
                }
            }
            return true;
        }
    }

    /** The resources monitored by an informer, and those counted by listing (for tests and logs). */
    Map<GroupVersionResource, Boolean> monitoredByInformer() {
        synchronized (monitorLock) {
            Map<GroupVersionResource, Boolean> out = new HashMap<>();
            monitors.forEach((gvr, m) -> out.put(gvr, !m.listed()));
            return out;
        }
    }

    /** Run: the worker that hands each change to the replenishment function. */
    synchronized void start() {
        if (worker != null) {
            return;
        }
        LOG.info("QuotaMonitor running");
        worker = new Thread(this::processResourceChanges, "resourcequota-monitor");
        worker.setDaemon(true);
        worker.start();
    }

    void shutDown() {
        resourceChanges.shutDown();
        synchronized (monitorLock) {
            monitors.values().forEach(this::stop);
            monitors = new HashMap<>();
        }
        // the process's informers outlive this controller (a lost lease): its handlers go with it
        typedHandlers.forEach((gr, handler) -> stop(new Monitor(typed.get(gr), handler)));
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
