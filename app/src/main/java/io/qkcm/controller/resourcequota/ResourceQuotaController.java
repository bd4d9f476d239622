package io.qkcm.controller.resourcequota;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantReadWriteLock;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.ReplicationController;
import io.fabric8.kubernetes.api.model.ResourceQuota;
import io.fabric8.kubernetes.api.model.ResourceQuotaStatus;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import io.javaoperatorsdk.operator.api.reconciler.Ignore;
import io.javaoperatorsdk.operator.processing.event.source.filter.OnAddFilter;
import io.javaoperatorsdk.operator.processing.event.source.filter.OnUpdateFilter;
import io.qkcm.controller.resourcequota.evaluator.CoreEvaluators;
import io.qkcm.controller.resourcequota.evaluator.PersistentVolumeClaimEvaluator;
import io.qkcm.controller.resourcequota.evaluator.PodEvaluator;
import io.qkcm.controller.resourcequota.evaluator.QuotaFeatures;
import io.qkcm.controller.resourcequota.evaluator.ResourceClaimEvaluator;
import io.qkcm.controller.resourcequota.evaluator.ServiceEvaluator;
import io.qkcm.controller.resourcequota.quota.Evaluator;
import io.qkcm.controller.resourcequota.quota.GroupResource;
import io.qkcm.controller.util.GoQuantity;
import io.qkcm.controller.resourcequota.quota.Registry;
import io.qkcm.controller.resourcequota.quota.ResourceLists;
import io.qkcm.controller.resourcequota.quota.UsageStats;
import io.qkcm.controller.util.resource.ResourceClaim;
import io.qkcm.runtime.DeepCopy;
import io.qkcm.runtime.informers.ApiDiscovery;
import io.qkcm.runtime.informers.GroupVersionResource;
import io.qkcm.runtime.informers.Indexes;
import io.qkcm.runtime.informers.MetaNamespaceKey;
import io.qkcm.runtime.informers.MetadataClient;
import io.qkcm.runtime.informers.ResourceEventHandlerFuncs;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.KeyReconciler;
import io.qkcm.runtime.workqueue.WorkQueue;

/**
 * resourcequota-controller (upstream pkg/controller/resourcequota): keeps each ResourceQuota's
 * status.hard equal to spec.hard and status.used to the namespace's usage of those resources, as the
 * evaluators measure it. A quota whose status lacks its spec (or lacks the usage of a resource some
 * evaluator computes) goes to the priority queue, every other change to the primary queue; both have
 * --concurrent-resource-quota-syncs workers. Every quota is recalculated each
 * --resource-quota-sync-period, and a quota is requeued when an object its resources count is deleted
 * or changes its usage ({@link QuotaMonitor}). Status is written only when it changed.
 *
 * <p>Discovery runs every 30 seconds: new quotable resources get a monitor and an object-count
 * evaluator (workers wait while monitors change, upstream's workerLock).
 */
@Ignore // runs in its own Operator, not quarkus-operator-sdk's default one
public final class ResourceQuotaController extends KeyReconciler<ResourceQuota> {

    public static final String NAME = "resourcequota-controller";
    public static final String QUEUE = "resourcequota_primary";
    public static final String PRIORITY_QUEUE = "resourcequota_priority";
    public static final String RESOURCE_CHANGES_QUEUE = "resource_quota_controller_resource_changes";
    /** startResourceQuotaController's period of discovery for new resource types. */
    public static final Duration DISCOVERY_PERIOD = Duration.ofSeconds(30);
    /** How long after a rise of status.used (an admission charge) a recount may lower it ({@link AdmissionCharges}). */
    public static final Duration ADMISSION_SETTLE = Duration.ofSeconds(3);

    private final SharedIndexInformer<ResourceQuota> quotas;
    private final Map<GroupResource, SharedIndexInformer<?>> typed = new LinkedHashMap<>();
    private final Registry registry;
    private final WorkQueue<String> missingUsageQueue;
    private final QuotaMonitor quotaMonitor;
    private final ApiDiscovery discovery;
    private final Duration resyncPeriod;
    private final Duration discoveryPeriod;
    /** Held by workers for reading; the discovery sync holds it while monitors change. */
    private final ReentrantReadWriteLock workerLock = new ReentrantReadWriteLock();
    private final List<Thread> priorityWorkers = new ArrayList<>();
    private final List<ScheduledFuture<?>> timers = new ArrayList<>();
    private Set<GroupVersionResource> oldResources = new HashSet<>();
    /** Resources' kinds from discovery: a metadata informer's objects carry theirs. */
    private final Map<GroupVersionResource, String> kinds = new java.util.concurrent.ConcurrentHashMap<>();
    private final AdmissionCharges charges;

    /**
     * {@code workers}: --concurrent-resource-quota-syncs; {@code resyncPeriod}: --resource-quota-sync-period
     * (zero turns the full recalculation off); {@code discoveryPeriod}: how often discovery looks for new types.
     */
    public ResourceQuotaController(ControllerContext context, int workers, Duration resyncPeriod, Duration discoveryPeriod,
            Clock clock) {
        this(context, workers, resyncPeriod, discoveryPeriod, ADMISSION_SETTLE, clock);
    }

    /** {@code admissionSettle}: how long after a rise of a quota's status.used its usage may not be lowered. */
    public ResourceQuotaController(ControllerContext context, int workers, Duration resyncPeriod, Duration discoveryPeriod,
            Duration admissionSettle, Clock clock) {
        super(context, ResourceQuota.class, QUEUE, workers);
        this.charges = new AdmissionCharges(clock, admissionSettle);
        this.resyncPeriod = resyncPeriod;
        this.discoveryPeriod = discoveryPeriod;
        this.quotas = context.informers().informerFor(ResourceQuota.class);
        QuotaFeatures features = QuotaFeatures.from(context.options().featureGates());
        typed.put(PodEvaluator.PODS, context.informers().informerFor(Pod.class));
        typed.put(ServiceEvaluator.SERVICES, context.informers().informerFor(Service.class));
        typed.put(PersistentVolumeClaimEvaluator.PVCS, context.informers().informerFor(PersistentVolumeClaim.class));
        typed.put(new GroupResource("", "configmaps"), context.informers().informerFor(ConfigMap.class));
        typed.put(new GroupResource("", "resourcequotas"), quotas);
        typed.put(new GroupResource("", "replicationcontrollers"),
                context.informers().informerFor(ReplicationController.class));
        typed.put(new GroupResource("", "secrets"), context.informers().informerFor(Secret.class));
        boolean dynamicResourceAllocation = context.options().featureGates().enabled("DynamicResourceAllocation");
        if (dynamicResourceAllocation) {
            // resource.k8s.io/v1, the kit's class: the resourceclaim-controller's informer, not a second one
            typed.put(ResourceClaimEvaluator.RESOURCE_CLAIMS, context.informers().informerFor(ResourceClaim.class));
        }
        List<Evaluator> evaluators = CoreEvaluators.newEvaluators(
                gr -> QuotaMonitor.lister(typed.get(gr), (gr.group().isEmpty() ? "" : gr.group()) + "/v1, Resource="
                        + gr.resource()), clock, features, dynamicResourceAllocation);
        this.registry = new Registry(evaluators);
        this.missingUsageQueue = context.newQueue(PRIORITY_QUEUE);
        this.discovery = new ApiDiscovery(new MetadataClient(context.client()));
        // upstream's informerfactory: the process's typed informers, else its metadata informers (the
        // garbage collector's too: one watch per type)
        this.quotaMonitor = new QuotaMonitor(context.informers(), context.metadataInformers(), registry, features, typed,
                context.newQueue(RESOURCE_CHANGES_QUEUE), this::replenishQuota, clock);

        quotas.addEventHandler(ResourceEventHandlerFuncs.of(q -> {
            charges.observe(key(q), q);
            addQuota(q);
        }, (oldQuota, curQuota) -> {
            charges.observe(key(curQuota), curQuota);
            // only spec.hard drives status: status updates are this controller's own, and a full
            // recalculation is the periodic enqueueAll's job, not every update's
            if (ResourceLists.equals(ResourceLists.of(oldQuota.getSpec() == null ? null : oldQuota.getSpec().getHard()),
                    ResourceLists.of(curQuota.getSpec() == null ? null : curQuota.getSpec().getHard()))) {
                return;
            }
            addQuota(curQuota);
        }, q -> charges.forget(key(q))));

        // initial discovery; a failure here is made good by the periodic discovery sync
        try {
            ApiDiscovery.Snapshot snapshot = discovery.discover();
            rememberKinds(snapshot);
            quotaMonitor.syncMonitors(quotableResources(snapshot), kinds::get);
        } catch (RuntimeException e) {
            log.errorf("initial discovery check failure, continuing and counting on future sync update: %s", e.getMessage());
        }
    }

    @Override
    protected List<SharedIndexInformer<?>> informers() {
        return new ArrayList<>(typed.values());
    }

    /** Adds and spec changes are upstream's addQuota's (which may pick the priority queue); deletes are JOSDK's. */
    @Override
    protected OnAddFilter<? super ResourceQuota> primaryAddFilter() {
        return q -> false;
    }

    @Override
    protected OnUpdateFilter<? super ResourceQuota> primaryUpdateFilter() {
        return (n, o) -> false;
    }

    /** addQuota: the priority queue when {@link #needsPriority}, the primary queue otherwise. */
    void addQuota(ResourceQuota quota) {
        if (needsPriority(quota, registry)) {
            missingUsageQueue.add(key(quota));
        } else {
            queue.add(key(quota));
        }
    }

    /**
     * Whether a quota goes to the priority queue: its status lacks the spec's hard limits, or lacks the
     * usage of a limit some evaluator can compute.
     */
    static boolean needsPriority(ResourceQuota quota, Registry registry) {
        Map<String, GoQuantity> specHard = ResourceLists.of(quota.getSpec() == null ? null : quota.getSpec().getHard());
        ResourceQuotaStatus status = quota.getStatus();
        Map<String, GoQuantity> statusHard = ResourceLists.of(status == null ? null : status.getHard());
        if (!ResourceLists.equals(specHard, statusHard)) {
            return true;
        }
        Map<String, ?> used = status == null || status.getUsed() == null ? Map.of() : status.getUsed();
        for (String constraint : statusHard.keySet()) {
            if (!used.containsKey(constraint)) {
                for (Evaluator evaluator : registry.list()) {
                    if (!evaluator.matchingResources(List.of(constraint)).isEmpty()) {
                        return true;
                    }
                }
            }
        }
        return false;
    }

    @Override
    public void onStart() {
        log.info("Starting resource quota controller");
        quotaMonitor.start();
        for (int i = 0; i < workers(); i++) {
            Thread t = new Thread(this::runPriorityWorker, NAME + "-priority-" + i);
            t.setDaemon(true);
            priorityWorkers.add(t);
            t.start();
        }
        if (resyncPeriod.toMillis() > 0) {
            timers.add(context.delayer().scheduleWithFixedDelay(this::enqueueAll, resyncPeriod.toMillis(),
                    resyncPeriod.toMillis(), TimeUnit.MILLISECONDS));
        } else {
            log.info("periodic quota controller resync disabled");
        }
        // discovery can take its time and waits for caches: not on the shared delayer
        Thread discoveryLoop = new Thread(this::runDiscoverySync, NAME + "-discovery");
        discoveryLoop.setDaemon(true);
        priorityWorkers.add(discoveryLoop);
        discoveryLoop.start();
    }

    @Override
    public void onShutdown() {
        log.info("Shutting down resource quota controller");
        timers.forEach(t -> t.cancel(false));
        missingUsageQueue.shutDown();
        quotaMonitor.shutDown();
        priorityWorkers.forEach(Thread::interrupt);
    }

    /** enqueueAll: every quota onto the primary queue, for a full recalculation. */
    void enqueueAll() {
        for (ResourceQuota q : quotas.getStore().list()) {
            queue.add(key(q));
        }
        log.debug("Resource quota controller queued all resource quota for full calculation of usage");
    }

    private void runPriorityWorker() {
        try {
            context.informers().waitForSync(informers());
            while (true) {
                String key = missingUsageQueue.get();
                if (key == null) {
                    log.info("resource quota controller worker shutting down");
                    return;
                }
                try {
                    sync(key);
                    missingUsageQueue.forget(key);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                } catch (Exception e) {
                    log.errorf("%s: error syncing %s: %s", PRIORITY_QUEUE, key, shortMessage(e));
                    missingUsageQueue.addRateLimited(key);
                } finally {
                    missingUsageQueue.done(key);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** syncResourceQuotaFromKey, under the worker lock. */
    @Override
    protected void sync(String key) throws Exception {
        workerLock.readLock().lockInterruptibly();
        try {
            long start = System.nanoTime();
            MetaNamespaceKey k = MetaNamespaceKey.split(key);
            ResourceQuota quota = quotas.getStore().getByKey(key);
            if (quota == null) {
                log.infof("Resource quota has been deleted: key %s", key);
                return;
            }
            charges.observe(key, quota);
            try {
                syncResourceQuota(quota);
            } finally {
                log.tracef("Finished syncing resource quota %s/%s (%dms)", k.namespace(), k.name(),
                        (System.nanoTime() - start) / 1_000_000);
            }
        } finally {
            workerLock.readLock().unlock();
        }
    }

    /** syncResourceQuota: a complete recalculation of one quota; status written when it changed. */
    void syncResourceQuota(ResourceQuota quota) throws Exception {
        Map<String, GoQuantity> specHard = ResourceLists.of(quota.getSpec() == null ? null : quota.getSpec().getHard());
        ResourceQuotaStatus status = quota.getStatus();
        Map<String, GoQuantity> statusHard = ResourceLists.of(status == null ? null : status.getHard());
        boolean statusLimitsDirty = !ResourceLists.equals(specHard, statusHard);
        boolean dirty = statusLimitsDirty || status == null || status.getHard() == null || status.getUsed() == null;
        Map<String, GoQuantity> previousUsed = ResourceLists.of(status == null ? null : status.getUsed());
        Map<String, GoQuantity> used = new java.util.TreeMap<>(previousUsed);

        List<String> scopes = quota.getSpec() == null || quota.getSpec().getScopes() == null ? List.of()
                : quota.getSpec().getScopes();
        UsageStats.Result result = UsageStats.calculateUsage(quota.getMetadata().getNamespace(), scopes, specHard,
                registry, quota.getSpec() == null ? null : quota.getSpec().getScopeSelector());
        used.putAll(result.usage());
        // the usage reported is that of the hard constraints only
        used = ResourceLists.mask(used, specHard.keySet());
        // not in upstream: a usage that fell is written only once admission's last charge has settled
        // (its object may not be in any cache yet); until then the status keeps it and the quota comes back
        String key = key(quota);
        Duration settling = charges.remaining(key);
        if (!settling.isNegative() && !settling.isZero()) {
            boolean deferred = false;
            for (Map.Entry<String, GoQuantity> e : previousUsed.entrySet()) {
                GoQuantity now = used.get(e.getKey());
                if (now != null && now.compareTo(e.getValue()) < 0) {
                    used.put(e.getKey(), e.getValue());
                    deferred = true;
                }
            }
            if (deferred) {
                log.debugf("quota %s: lowering usage waits %dms for admission's last charge to settle", key,
                        settling.toMillis());
                queue.addAfter(key, settling);
            }
        }

        dirty = dirty || !ResourceLists.equals(used, previousUsed);
        List<Exception> errors = new ArrayList<>(result.errors());
        if (dirty) {
            ResourceQuota usage = DeepCopy.of(quota);
            ResourceQuotaStatus newStatus = new ResourceQuotaStatus();
            newStatus.setHard(ResourceLists.toFabric8(specHard));
            newStatus.setUsed(ResourceLists.toFabric8(used));
            usage.setStatus(newStatus);
            try {
                context.client().resourceQuotas().inNamespace(quota.getMetadata().getNamespace()).resource(usage)
                        .updateStatus();
            } catch (RuntimeException e) {
                errors.add(e);
            }
        }
        if (errors.size() == 1) {
            throw errors.get(0);
        }
        if (!errors.isEmpty()) {
            StringBuilder b = new StringBuilder("[");
            for (int i = 0; i < errors.size(); i++) {
                b.append(i == 0 ? "" : ", ").append(errors.get(i).getMessage());
            }
            throw new Exception(b.append(']').toString(), errors.get(0));
        }
    }

    /**
     * replenishQuota: a tracked object of {@code resource} changed in {@code namespace}: requeue the
     * namespace's quotas that track a resource its evaluator computes.
     */
    void replenishQuota(GroupResource resource, String namespace) {
        Evaluator evaluator = registry.get(resource);
        if (evaluator == null) {
            return;
        }
        for (ResourceQuota q : Indexes.byIndex(quotas, Cache.NAMESPACE_INDEX, namespace)) {
            List<String> names = q.getStatus() == null || q.getStatus().getHard() == null ? List.of()
                    : new ArrayList<>(q.getStatus().getHard().keySet());
            if (!evaluator.matchingResources(names).isEmpty()) {
                queue.add(key(q));
            }
        }
    }

    /** Sync: every {@code discoveryPeriod}, monitors for the quotable resources discovery reports now. */
    private void runDiscoverySync() {
        try {
            while (!Thread.currentThread().isInterrupted()) {
                discoverySync();
                Thread.sleep(discoveryPeriod.toMillis());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    void discoverySync() throws InterruptedException {
        Set<GroupVersionResource> newResources;
        ApiDiscovery.Snapshot snapshot;
        try {
            snapshot = discovery.discover();
        } catch (RuntimeException e) {
            log.errorf("failed to discover resources: %s", e.getMessage());
            return;
        }
        newResources = quotableResources(snapshot);
        rememberKinds(snapshot);
        if (!snapshot.failedGroupVersions().isEmpty()) {
            if (newResources.isEmpty()) {
                return;
            }
            // partial discovery: keep the monitors of the groups that failed
            for (GroupVersionResource old : oldResources) {
                if (snapshot.failedGroupVersions().contains(old.groupVersion())) {
                    newResources.add(old);
                }
            }
        }
        boolean typesChanged = !newResources.equals(oldResources);
        boolean handover = !typesChanged && quotaMonitor.hasMetadataWithSharedInformer(newResources);
        if (!typesChanged && !handover) {
            log.debug("no resource updates from discovery, skipping resource quota sync");
            return;
        }
        workerLock.writeLock().lockInterruptibly();
        try {
            if (typesChanged) {
                log.debugf("syncing resource quota controller with updated resources from discovery: %s",
                        printDiff(oldResources, newResources));
            }
            quotaMonitor.syncMonitors(newResources, kinds::get);
            oldResources = newResources;
            // wait for the caches for at most a period: a cache that never fills must not stop the workers for good
            long deadline = System.nanoTime() + discoveryPeriod.toNanos();
            while (!quotaMonitor.isSynced()) {
                if (System.nanoTime() > deadline) {
                    log.error("timed out waiting for quota monitor sync");
                    return;
                }
                Thread.sleep(100);
            }
            log.debug("synced quota controller");
        } finally {
            workerLock.writeLock().unlock();
        }
    }

    /** The kind of each resource discovery reported (a failed group's kinds are kept from before). */
    private void rememberKinds(ApiDiscovery.Snapshot snapshot) {
        for (ApiDiscovery.ApiResource r : snapshot.preferred()) {
            kinds.put(r.gvr(), r.kind());
        }
    }

    static String printDiff(Set<GroupVersionResource> oldResources, Set<GroupVersionResource> newResources) {
        Set<String> removed = new TreeSet<>();
        Set<String> added = new TreeSet<>();
        for (GroupVersionResource r : oldResources) {
            if (!newResources.contains(r)) {
                removed.add(r.toString());
            }
        }
        for (GroupVersionResource r : newResources) {
            if (!oldResources.contains(r)) {
                added.add(r.toString());
            }
        }
        return "added: " + added + ", removed: " + removed;
    }

    /** GetQuotableResources: the preferred namespaced resources that support create, list, watch and delete. */
    static Set<GroupVersionResource> quotableResources(ApiDiscovery.Snapshot snapshot) {
        Set<GroupVersionResource> out = new HashSet<>();
        for (ApiDiscovery.ApiResource r : snapshot.preferred()) {
            if (r.namespaced() && r.supports("create", "list", "watch", "delete")) {
                out.add(r.gvr());
            }
        }
        return out;
    }

    /** The evaluators' registry (for tests). */
    Registry registry() {
        return registry;
    }

    QuotaMonitor quotaMonitor() {
        return quotaMonitor;
    }
}
