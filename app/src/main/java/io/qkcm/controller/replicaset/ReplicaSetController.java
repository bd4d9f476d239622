package io.qkcm.controller.replicaset;

import io.javaoperatorsdk.operator.api.reconciler.Ignore;
import io.javaoperatorsdk.operator.processing.event.source.filter.OnAddFilter;
import io.javaoperatorsdk.operator.processing.event.source.filter.OnUpdateFilter;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.ReplicaSet;
import io.fabric8.kubernetes.api.model.apps.ReplicaSetStatus;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import io.qkcm.controller.OwnWrites;
import io.qkcm.controller.ActivePods;
import io.qkcm.controller.ApiErrors;
import io.qkcm.controller.CacheCatchUp;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.controller.ControllerRefManager;
import io.qkcm.controller.ControllerRefs;
import io.qkcm.controller.OwnerEnqueueingHandler;
import io.qkcm.controller.LabelSelectors;
import io.qkcm.controller.PodControl;
import io.qkcm.controller.PodIndexes;
import io.qkcm.controller.PodUtil;
import io.qkcm.controller.RealPodControl;
import io.qkcm.controller.SlowStart;
import io.qkcm.controller.UIDTrackingControllerExpectations;
import io.qkcm.runtime.josdk.KeyReconciler;
import io.qkcm.runtime.options.FeatureGates;
import io.qkcm.runtime.informers.MetaNamespaceKey;

/**
 * The ReplicaSet controller (upstream pkg/controller/replicaset): keeps {@code spec.replicas} active
 * pods per ReplicaSet, creating them from the template in slow-start batches and deleting the
 * surplus in ranking order, with expectations guarding against acting on a stale cache; adopts
 * matching orphans, releases owned pods that stopped matching, and writes the status. The
 * ReplicationController controller is this same code over {@link ReplicationControllerAdapter}.
 */
@Ignore // run in its own Operator by the manager, not by quarkus-operator-sdk\'s default one
public class ReplicaSetController<P extends HasMetadata> extends KeyReconciler<P> {

    /** How often a ReplicaSet with writes of unknown outcome checks whether its pod cache caught up. */
    static final Duration UNCERTAIN_RECHECK = Duration.ofSeconds(1);

    /** Upstream's BurstReplicas: at most this many creations or deletions per sync. */
    public static final int BURST_REPLICAS = 500;

    public static final String NAME = "replicaset-controller";
    public static final String QUEUE = "replicaset";
    /** The event source component of ReplicaSet events. */
    public static final String EVENT_SOURCE = "replicaset-controller";

    private final ReplicaSetSource source;
    private final OwnWrites<ReplicaSet> ownWrites;
    private final SharedIndexInformer<Pod> podInformer;
    private final PodControl podControl;
    private final io.fabric8.kubernetes.client.KubernetesClient client;
    private final UIDTrackingControllerExpectations expectations = new UIDTrackingControllerExpectations();
    private final int burstReplicas;
    private final boolean terminatingReplicasGate;
    private final boolean podDeletionCostGate;
    private final ExecutorService apiCalls;
    /**
     * Not in upstream, shadow mode only (--shadow): before acting on a difference between spec.replicas and the
     * active pods, confirm spec.replicas by a read from the API server ({@link #replicasConfirmed}).
     */
    private final boolean shadow;

    /**
     * The ReplicaSet controller; {@code workers}: --concurrent-replicaset-syncs; {@code shadow}: --shadow
     * ({@link #replicasConfirmed}).
     */
    public static ReplicaSetController<ReplicaSet> replicaSets(ControllerContext context, int workers, boolean shadow) {
        return new ReplicaSetController<>(context, ReplicaSet.class, QUEUE, workers,
                ReplicaSetSource.replicaSets(context.informers(), context.client()), EVENT_SOURCE,
                java.util.function.UnaryOperator.identity(), shadow);
    }

    ReplicaSetController(ControllerContext context, Class<P> primaryType, String queueName, int workers,
            ReplicaSetSource source, String eventSource, boolean shadow) {
        this(context, primaryType, queueName, workers, source, eventSource, java.util.function.UnaryOperator.identity(),
                shadow);
    }

    /** With {@code podControl} wrapping the real pod control (tests inject faults there). */
    ReplicaSetController(ControllerContext context, Class<P> primaryType, String queueName, int workers,
            ReplicaSetSource source, String eventSource, java.util.function.UnaryOperator<PodControl> podControl) {
        this(context, primaryType, queueName, workers, source, eventSource, podControl, false);
    }

    ReplicaSetController(ControllerContext context, Class<P> primaryType, String queueName, int workers,
            ReplicaSetSource source, String eventSource, java.util.function.UnaryOperator<PodControl> podControl,
            boolean shadow) {
        super(context, primaryType, queueName, workers);
        this.shadow = shadow;
        String name = context.controllerName();
        this.source = source;
        this.burstReplicas = BURST_REPLICAS;
        FeatureGates gates = context.options().featureGates();
        this.terminatingReplicasGate = gates.enabled("DeploymentReplicaSetTerminatingReplicas");
        this.podDeletionCostGate = gates.enabled("PodDeletionCost");
        this.client = context.client();
        this.podControl = podControl.apply(new RealPodControl(context.client(), context.recorderFor(eventSource)));
        // Upstream runs each creation of a batch and each deletion in its own goroutine; these
        // threads play that part (the client's QPS limit is what bounds throughput).
        this.apiCalls = context.newApiCallPool(name, 64);
        this.podInformer = context.informers().informerFor(Pod.class);

        this.ownWrites = new OwnWrites<>(!shadow);
        source.addEventHandler(ownWrites.forgetOnCacheUpdate());
        source.addEventHandler(new ResourceEventHandler<ReplicaSet>() {
            @Override
            public void onAdd(ReplicaSet rs) {
                log.tracef("Adding %s %s", source.kind(), key(rs));
                enqueue(rs);
            }

            @Override
            public void onUpdate(ReplicaSet oldRs, ReplicaSet curRs) {
                updateRS(oldRs, curRs);
            }

            @Override
            public void onDelete(ReplicaSet rs, boolean finalStateUnknown) {
                deleteRS(rs);
            }
        });
        PodIndexes.addPodControllerIndexer(podInformer);
        owned(Pod.class, new PodHandler());
    }

    @Override
    protected List<SharedIndexInformer<?>> informers() {
        return List.of(podInformer, source.informer());
    }

    /**
     * Upstream's ReplicaSet handlers (kept above: an update with a new UID first deletes the old one's
     * expectations) do the queueing; JOSDK's own add and update events of the primary are off, so each
     * change is queued once. Deletes reach the reconciler from both and are coalesced.
     */
    @Override
    protected OnAddFilter<? super P> primaryAddFilter() {
        return rs -> false;
    }

    @Override
    protected OnUpdateFilter<? super P> primaryUpdateFilter() {
        return (newRs, oldRs) -> false;
    }

    /** The expectations, for tests. */
    UIDTrackingControllerExpectations expectations() {
        return expectations;
    }

    @Override
    public void onShutdown() {
        apiCalls.shutdownNow();
    }

    static String key(ReplicaSet rs) {
        return Cache.metaNamespaceKeyFunc(rs);
    }

    static String podKey(Pod pod) {
        return pod.getMetadata().getNamespace() + "/" + pod.getMetadata().getName();
    }

    private void enqueue(ReplicaSet rs) {
        queue.add(key(rs));
    }

    // ---- event handlers -------------------------------------------------------------------

    private void updateRS(ReplicaSet oldRs, ReplicaSet curRs) {
        if (!Objects.equals(curRs.getMetadata().getUid(), oldRs.getMetadata().getUid())) {
            deleteRS(oldRs);
        }
        if (ReplicaSetStatusUtil.replicas(oldRs) != ReplicaSetStatusUtil.replicas(curRs)) {
            log.debugf("%s %s updated. Desired pod count change: %d->%d", source.kind(), key(curRs),
                    ReplicaSetStatusUtil.replicas(oldRs), ReplicaSetStatusUtil.replicas(curRs));
        }
        enqueue(curRs);
    }

    private void deleteRS(ReplicaSet rs) {
        String key = key(rs);
        log.tracef("Deleting %s %s", source.kind(), key);
        expectations.deleteExpectations(key);
        queue.add(key);
    }

    /** The owner named by a controllerRef, if it is of our kind, cached, and has that UID. */
    private ReplicaSet resolveControllerRef(String namespace, OwnerReference ref) {
        return ControllerRefs.resolveControllerRef(source.kind(), ref, name -> source.getCached(namespace, name));
    }

    /** Upstream's GetPodReplicaSets: owners in the pod's namespace whose non-empty selector matches it. */
    private List<ReplicaSet> getPodReplicaSets(Pod pod) {
        Map<String, String> labels = pod.getMetadata().getLabels();
        List<ReplicaSet> result = ControllerRefs.selecting(() -> source.listCached(pod.getMetadata().getNamespace()),
                labels, rs -> rs.getSpec().getSelector(), true);
        if (result.size() > 1) {
            log.errorf("user error! more than one %s is selecting pods with labels: %s", source.kind(), labels);
        }
        return result;
    }

    /**
     * Upstream's addPod, updatePod, deletePod: the kit's owner-enqueueing handler, plus the
     * expectations, orphans matched by selector, graceful deletions and the availability re-check.
     */
    private final class PodHandler extends OwnerEnqueueingHandler<Pod, ReplicaSet> {

        PodHandler() {
            super(ReplicaSetController.this::resolveControllerRef, ReplicaSetController.this::enqueue);
        }

        @Override
        public void onUpdate(Pod oldPod, Pod curPod) {
            if (Objects.equals(curPod.getMetadata().getResourceVersion(), oldPod.getMetadata().getResourceVersion())) {
                return; // periodic resync
            }
            if (curPod.getMetadata().getDeletionTimestamp() != null) {
                // graceful deletion: count it now, the pod is no longer active
                onDelete(curPod, false);
                if (!Objects.equals(labelsOf(curPod), labelsOf(oldPod))) {
                    onDelete(oldPod, false);
                }
                return;
            }
            super.onUpdate(oldPod, curPod);
        }

        @Override
        protected void added(Pod pod, ReplicaSet rs) {
            String rsKey = key(rs);
            log.tracef("Pod %s created", podKey(pod));
            expectations.creationObserved(rsKey);
            queue.add(rsKey);
        }

        @Override
        protected void orphanAdded(Pod pod) {
            List<ReplicaSet> rss = getPodReplicaSets(pod);
            if (rss.isEmpty()) {
                return;
            }
            log.tracef("Orphan pod %s created", podKey(pod));
            rss.forEach(ReplicaSetController.this::enqueue);
        }

        @Override
        protected void updated(Pod oldPod, Pod curPod, ReplicaSet rs) {
            enqueue(rs);
            int minReady = ReplicaSetStatusUtil.minReadySeconds(rs);
            if (!PodUtil.isReady(oldPod) && PodUtil.isReady(curPod) && minReady > 0) {
                log.debugf("%s %s will be enqueued after %ds for availability check", source.kind(), key(rs), minReady);
                queue.addAfter(key(rs), Duration.ofSeconds(minReady));
            }
        }

        @Override
        protected void orphanUpdated(Pod oldPod, Pod curPod) {
            getPodReplicaSets(curPod).forEach(ReplicaSetController.this::enqueue);
        }

        @Override
        protected void deleted(Pod pod, ReplicaSet rs) {
            String rsKey = key(rs);
            log.tracef("Pod %s deleted (deletionTimestamp %s)", podKey(pod), pod.getMetadata().getDeletionTimestamp());
            expectations.deletionObserved(rsKey, podKey(pod));
            queue.add(rsKey);
        }
    }

    private static Map<String, String> labelsOf(Pod pod) {
        Map<String, String> l = pod.getMetadata().getLabels();
        return l == null ? Map.of() : l;
    }


    // ---- sync ----------------------------------------------------------------------------

    @Override
    protected void sync(String key) throws Exception {
        syncReplicaSet(key);
    }

    private void syncReplicaSet(String key) throws Exception {
        MetaNamespaceKey parts = MetaNamespaceKey.split(key);
        String namespace = parts.namespace();
        String name = parts.name();
        // the answer to this controller's last status write while the cache has not shown it (not upstream's:
        // it saves the 409 Conflict, GET and second PUT a write from the older version costs)
        ReplicaSet rs = ownWrites.latest(key, source.getCached(namespace, name));
        if (rs == null) {
            log.tracef("%s %s has been deleted", source.kind(), key);
            expectations.deleteExpectations(key);
            return;
        }
        boolean rsNeedsSync = expectations.satisfiedExpectations(key);
        LabelSelectors.Selector selector;
        try {
            selector = LabelSelectors.fromLabelSelector(rs.getSpec().getSelector());
        } catch (IllegalArgumentException e) {
            log.errorf("error converting pod selector to selector for %s %s: %s", source.kind(), key, e.getMessage());
            return;
        }
        if (!rsNeedsSync && expectations.isUncertain(key)) {
            rsNeedsSync = resolveUncertainWrites(rs, key, selector);
        }
        // every pod of the namespace this owner controls or might adopt; claimPods sorts them out
        List<Pod> allRSPods = PodIndexes.filterPodsByOwner(podInformer, namespace, source.kind(), name,
                rs.getMetadata().getUid(), true);
        List<Pod> allActivePods = ActivePods.filterActivePods(allRSPods);
        List<Pod> activePods = claimPods(rs, selector, allActivePods);

        boolean terminatingEnabled = terminatingReplicasGate && source.hasTerminatingReplicas();
        List<Pod> terminatingPods = List.of();
        if (terminatingEnabled) {
            terminatingPods = ActivePods.filterClaimedPods(rs, selector, ActivePods.filterTerminatingPods(allRSPods));
        }

        if (shadow && rsNeedsSync && rs.getMetadata().getDeletionTimestamp() == null
                && activePods.size() != ReplicaSetStatusUtil.replicas(rs) && !replicasConfirmed(rs, key)) {
            return; // its newer version, on its way to the cache, queues it again
        }
        Exception manageReplicasErr = null;
        if (rsNeedsSync && rs.getMetadata().getDeletionTimestamp() == null) {
            try {
                manageReplicas(activePods, rs);
            } catch (InterruptedException e) {
                throw e;
            } catch (Exception e) {
                manageReplicasErr = e;
            }
        }
        rs = ReplicaSetSource.copy(rs);
        Instant now = Instant.now();
        ReplicaSetStatus newStatus = ReplicaSetStatusUtil.calculateStatus(rs, activePods, terminatingPods,
                terminatingEnabled, manageReplicasErr, now);
        String sent = rs.getMetadata().getResourceVersion();
        ReplicaSet updated = ReplicaSetStatusUtil.updateReplicaSetStatus(source, rs, newStatus);
        if (updated != rs) {
            ownWrites.wrote(sent, updated);
        }
        if (manageReplicasErr != null) {
            throw manageReplicasErr;
        }
        int minReady = ReplicaSetStatusUtil.minReadySeconds(updated);
        ReplicaSetStatus us = updated.getStatus();
        if (minReady > 0 && !Objects.equals(n(us.getReadyReplicas()), n(us.getAvailableReplicas()))) {
            Duration next = Duration.ofSeconds(minReady);
            Duration check = PodUtil.findMinNextPodAvailabilityCheck(activePods, minReady, now, Instant.now());
            if (check != null) {
                next = check;
            }
            queue.addAfter(key, next);
        }
    }

    /**
     * After a pod write whose outcome is unknown (see {@link io.qkcm.controller.ControllerExpectations#markUncertain}):
     * lists the ReplicaSet's pods from the API server and, when the cache holds what the list holds,
     * drops the expectations so that this sync acts on a cache that includes the write; otherwise
     * checks again in a second. The expectations' timeout still bounds the wait.
     */
    private boolean resolveUncertainWrites(ReplicaSet rs, String key, LabelSelectors.Selector selector) {
        String namespace = rs.getMetadata().getNamespace();
        io.fabric8.kubernetes.api.model.PodList live;
        try {
            live = client.pods().inNamespace(namespace).withLabelSelector(rs.getSpec().getSelector()).list();
        } catch (KubernetesClientException e) {
            log.debugf("%s %s: listing its pods to settle writes of unknown outcome failed: %s", source.kind(), key,
                    e.getMessage());
            queue.addAfter(key, UNCERTAIN_RECHECK);
            return false;
        }
        // the list is by selector: compare the cached pods it could have returned
        List<Pod> cachedPods = PodIndexes.podsInNamespace(podInformer, namespace).stream()
                .filter(p -> selector.matches(p.getMetadata().getLabels())).toList();
        boolean caughtUp = CacheCatchUp.caughtUp(rs.getMetadata().getUid(), live.getItems(),
                live.getMetadata().getResourceVersion(), podKey -> podInformer.getStore().getByKey(podKey), cachedPods);
        if (!caughtUp) {
            log.debugf("%s %s: the pod cache has not caught up with the API server after writes of unknown outcome",
                    source.kind(), key);
            queue.addAfter(key, UNCERTAIN_RECHECK);
            return false;
        }
        log.infof("%s %s: the pod cache has caught up with the API server; writes of unknown outcome settled",
                source.kind(), key);
        expectations.deleteExpectations(key);
        return true;
    }

    /**
     * Shadow mode: whether the API server's ReplicaSet has the cached spec.replicas. Upstream's controller creates
     * (or deletes) pods only after its ReplicaSet cache showed the scale that asks for them, so its pod cache is
     * never ahead of its ReplicaSet cache for its own pods. In shadow mode the pods are upstream's: made after
     * upstream saw the scale, they reach qkcm's pod cache through another watch than the ReplicaSet, and can come
     * first; acting on that cache, as upstream's code would, qkcm would delete the pod just made for a scale-up
     * it has not seen yet (or create one for a scale-down). A read error is no proof: the controller acts as
     * upstream's would.
     */
    private boolean replicasConfirmed(ReplicaSet rs, String key) {
        ReplicaSet live;
        try {
            live = source.getLive(rs.getMetadata().getNamespace(), rs.getMetadata().getName());
        } catch (KubernetesClientException e) {
            return true;
        }
        if (live != null && Objects.equals(live.getMetadata().getUid(), rs.getMetadata().getUid())
                && ReplicaSetStatusUtil.replicas(live) == ReplicaSetStatusUtil.replicas(rs)) {
            return true;
        }
        log.debugf("%s %s: its cache says %d replicas, the API server %s; waiting for the cache", source.kind(), key,
                ReplicaSetStatusUtil.replicas(rs), live == null ? "has none" : ReplicaSetStatusUtil.replicas(live));
        return false;
    }

    private static int n(Integer i) {
        return i == null ? 0 : i;
    }

    private List<Pod> claimPods(ReplicaSet rs, LabelSelectors.Selector selector, List<Pod> pods) throws Exception {
        ControllerRefManager.CanAdopt canAdopt = ControllerRefManager.recheckDeletionTimestamp(rs, source.kind(),
                () -> source.getLive(rs.getMetadata().getNamespace(), rs.getMetadata().getName()));
        ControllerRefManager<Pod> cm = ControllerRefManager.forPods(podControl, rs, selector, source.apiVersion(),
                source.kind(), canAdopt);
        return cm.claim(pods);
    }

    /**
     * Upstream's manageReplicas: creates or deletes at most {@link #BURST_REPLICAS} pods towards
     * {@code spec.replicas}, raising expectations first so the next syncs wait for the cache.
     */
    private void manageReplicas(List<Pod> activePods, ReplicaSet rs) throws Exception {
        int diff = activePods.size() - ReplicaSetStatusUtil.replicas(rs);
        String rsKey = key(rs);
        if (diff < 0) {
            diff = Math.min(-diff, burstReplicas);
            expectations.expectCreations(rsKey, diff);
            log.debugf("Too few replicas for %s %s, need %d, creating %d", source.kind(), rsKey,
                    ReplicaSetStatusUtil.replicas(rs), diff);
            OwnerReference controllerRef = ControllerRefManager.newControllerRef(rs, source.apiVersion(), source.kind());
            var eventObject = source.eventObject(rs);
            java.util.concurrent.atomic.AtomicInteger unknown = new java.util.concurrent.atomic.AtomicInteger();
            SlowStart.Result result = SlowStart.run(diff, SlowStart.INITIAL_BATCH_SIZE, apiCalls, () -> {
                try {
                    podControl.createPods(rs.getMetadata().getNamespace(), rs.getSpec().getTemplate(), eventObject,
                            controllerRef);
                } catch (KubernetesClientException e) {
                    if (ApiErrors.hasStatusCause(e, ApiErrors.NAMESPACE_TERMINATING_CAUSE)) {
                        // the namespace is going away: nothing to retry, and the creation will never
                        // be observed, so the expectation only expires
                        return null;
                    }
                    if (ApiErrors.isOutcomeUnknown(e)) {
                        // the pod may exist: keep expecting it (settled by resolveUncertainWrites)
                        unknown.incrementAndGet();
                    }
                    throw e;
                }
                return null;
            });
            if (unknown.get() > 0) {
                log.infof("%d pod creations for %s %s ended without an answer (%s); waiting for the pod cache to catch up",
                        unknown.get(), source.kind(), rsKey, result.error() == null ? "" : result.error().getMessage());
                expectations.markUncertain(rsKey);
            }
            int skipped = diff - result.successes() - unknown.get();
            if (skipped > 0) {
                log.debugf("Slow-start failure. Skipping creation of %d pods, decrementing expectations for %s %s",
                        skipped, source.kind(), rsKey);
                for (int i = 0; i < skipped; i++) {
                    expectations.creationObserved(rsKey);
                }
            }
            if (result.error() != null) {
                throw result.error();
            }
        } else if (diff > 0) {
            diff = Math.min(diff, burstReplicas);
            log.debugf("Too many replicas for %s %s, need %d, deleting %d", source.kind(), rsKey,
                    ReplicaSetStatusUtil.replicas(rs), diff);
            List<Pod> relatedPods = getIndirectlyRelatedPods(rs);
            List<Pod> podsToDelete = getPodsToDelete(activePods, relatedPods, diff);
            List<String> keys = new ArrayList<>();
            podsToDelete.forEach(p -> keys.add(podKey(p)));
            expectations.expectDeletions(rsKey, keys);
            var eventObject = source.eventObject(rs);
            List<Future<?>> futures = new ArrayList<>();
            for (Pod target : podsToDelete) {
                futures.add(apiCalls.submit(() -> {
                    try {
                        podControl.deletePod(rs.getMetadata().getNamespace(), target.getMetadata().getName(),
                                eventObject);
                    } catch (RuntimeException e) {
                        if (ApiErrors.isOutcomeUnknown(e)) {
                            // the pod may be going: keep expecting its deletion (settled by resolveUncertainWrites)
                            log.infof("Deletion of %s for %s %s ended without an answer (%s); waiting for the pod cache to catch up",
                                    podKey(target), source.kind(), rsKey, e.getMessage());
                            expectations.markUncertain(rsKey);
                            throw e;
                        }
                        // the deletion will not be observed: stop waiting for it
                        expectations.deletionObserved(rsKey, podKey(target));
                        if (!ApiErrors.isNotFound(e)) {
                            log.debugf("Failed to delete %s, decremented expectations for %s %s", podKey(target),
                                    source.kind(), rsKey);
                            throw e;
                        }
                    }
                    return null;
                }));
            }
            Exception first = null;
            for (Future<?> f : futures) {
                try {
                    f.get();
                } catch (ExecutionException e) {
                    if (first == null) {
                        first = e.getCause() instanceof Exception ex ? ex : new RuntimeException(e.getCause());
                    }
                }
            }
            if (first != null) {
                throw first;
            }
        }
    }

    /** Pods of every owner sharing this owner's controller (for the same-node rank). */
    private List<Pod> getIndirectlyRelatedPods(ReplicaSet rs) {
        OwnerReference ref = ControllerRefManager.controllerOf(rs);
        if (ref == null) {
            log.debugf("%s %s has no controller", source.kind(), key(rs));
            return List.of();
        }
        List<Pod> related = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        for (ReplicaSet relatedRS : source.listByControllerUid(ref.getUid())) {
            LabelSelectors.Selector selector;
            try {
                selector = LabelSelectors.fromLabelSelector(relatedRS.getSpec().getSelector());
            } catch (IllegalArgumentException e) {
                continue;
            }
            for (Pod pod : PodIndexes.podsInNamespace(podInformer, relatedRS.getMetadata().getNamespace())) {
                if (!selector.matches(pod.getMetadata().getLabels())) {
                    continue;
                }
                if (seen.add(pod.getMetadata().getUid())) {
                    related.add(pod);
                }
            }
        }
        return related;
    }

    /** Upstream's getPodsToDelete: the first {@code diff} pods in ranking order. */
    List<Pod> getPodsToDelete(List<Pod> filteredPods, List<Pod> relatedPods, int diff) {
        if (diff < filteredPods.size()) {
            Map<String, Integer> podsOnNode = new HashMap<>();
            for (Pod pod : relatedPods) {
                if (ActivePods.isPodActive(pod)) {
                    podsOnNode.merge(nodeName(pod), 1, Integer::sum);
                }
            }
            List<ActivePods.Ranked> ranked = new ArrayList<>();
            for (Pod pod : filteredPods) {
                ranked.add(new ActivePods.Ranked(pod, podsOnNode.getOrDefault(nodeName(pod), 0)));
            }
            ActivePods.sort(ranked, ActivePods.withRanks(Instant.now(), podDeletionCostGate));
            List<Pod> result = new ArrayList<>();
            for (int i = 0; i < diff; i++) {
                result.add(ranked.get(i).pod());
            }
            return result;
        }
        return new ArrayList<>(filteredPods.subList(0, diff));
    }

    private static String nodeName(Pod pod) {
        String n = pod.getSpec() == null ? null : pod.getSpec().getNodeName();
        return n == null ? "" : n;
    }
}
