package io.qkcm.controller.daemon;

import static io.qkcm.controller.daemon.DaemonSetContext.KIND;
import static io.qkcm.controller.daemon.DaemonSetContext.minReadySeconds;
import static io.qkcm.controller.daemon.DaemonSetContext.nodeNameOf;

import io.qkcm.runtime.informers.Indexes;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodSpecBuilder;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.Taint;
import io.fabric8.kubernetes.api.model.apps.ControllerRevision;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.DaemonSetBuilder;
import io.fabric8.kubernetes.api.model.apps.DaemonSetStatus;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.javaoperatorsdk.operator.api.reconciler.Ignore;
import io.javaoperatorsdk.operator.processing.event.source.filter.OnAddFilter;
import io.javaoperatorsdk.operator.processing.event.source.filter.OnUpdateFilter;
import io.qkcm.controller.ApiErrors;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.controller.ControllerExpectations;
import io.qkcm.controller.ControllerRefManager;
import io.qkcm.controller.ControllerRefs;
import io.qkcm.controller.PodControl;
import io.qkcm.controller.PodIndexes;
import io.qkcm.controller.OwnerEnqueueingHandler;
import io.qkcm.controller.PodUtil;
import io.qkcm.controller.RealPodControl;
import io.qkcm.runtime.workqueue.WorkQueue;
import io.qkcm.controller.daemon.DaemonSetContext.DaemonSetSyncException;
import io.qkcm.controller.daemon.util.DaemonSetUtil;
import io.qkcm.controller.daemon.util.Scheduling;
import io.qkcm.runtime.events.EventRecorder;
import io.qkcm.runtime.josdk.KeyReconciler;

/**
 * The DaemonSet controller (upstream pkg/controller/daemon, daemon_controller.go): one daemon pod on
 * every node the DaemonSet's template may run on, created with a required node affinity for that
 * node (the scheduler binds it) and labelled with the current revision's hash; pods on nodes that no
 * longer qualify, failed pods (with a per-node backoff) and surplus pods are deleted; the rolling
 * update and the revision history are in {@link Update}. A second queue, upstream's
 * {@code daemonset-node-updates}, turns node additions and label or taint changes into syncs of the
 * DaemonSets whose placement they change. {@link Update} and {@link DaemonPods} (the claimed pods and
 * syncNodes, which both upstream files call) are built here once with a {@link DaemonSetContext}; neither
 * holds this controller.
 */
@Ignore // run in its own Operator by the manager, not by quarkus-operator-sdk's default one
public class DaemonSetsController extends KeyReconciler<DaemonSet> {

    public static final String NAME = "daemonset-controller";
    public static final String QUEUE = "daemonset";
    public static final String NODE_UPDATE_QUEUE = "daemonset-node-updates";
    /** The event source component of upstream's recorders. */
    public static final String EVENT_SOURCE = "daemonset-controller";

    /** Upstream's BurstReplicas. */
    public static final int BURST_REPLICAS = 250;
    /** Upstream's StatusUpdateRetries. */
    static final int STATUS_UPDATE_RETRIES = 1;
    /** Not in upstream: how soon a DaemonSet waiting on writes of unknown outcome checks its cache again. */
    static final Duration UNCERTAIN_RECHECK = Duration.ofSeconds(1);
    /** Upstream's BackoffGCInterval. */
    static final Duration BACKOFF_GC_INTERVAL = Duration.ofMinutes(1);

    public static final String SELECTING_ALL_REASON = "SelectingAll";
    public static final String FAILED_PLACEMENT_REASON = "FailedPlacement";
    public static final String FAILED_DAEMON_POD_REASON = "FailedDaemonPod";
    public static final String SUCCEEDED_DAEMON_POD_REASON = "SucceededDaemonPod";


    private final SharedIndexInformer<DaemonSet> dsInformer;
    private final SharedIndexInformer<ControllerRevision> historyInformer;
    private final SharedIndexInformer<Pod> podInformer;
    private final SharedIndexInformer<Node> nodeInformer;
    private final EventRecorder eventRecorder;
    private final ControllerExpectations expectations = new ControllerExpectations();
    private final FailedPodsBackoff failedPodsBackoff;
    private final WorkQueue<String> nodeUpdateQueue;
    private final Update update;
    /** The claimed daemon pods and syncNodes, shared with {@link Update}. */
    private final DaemonPods daemonPods;
    private final ExecutorService apiCalls;
    private final List<Thread> nodeUpdateWorkers = new ArrayList<>();
    private ScheduledFuture<?> backoffGc;

    /** {@code workers}: --concurrent-daemonset-syncs. */
    public DaemonSetsController(ControllerContext context, int workers) {
        this(context, workers, java.util.function.UnaryOperator.identity());
    }

    /** With the pod control wrapped by {@code podControl}, so that a test can lose the answers of its writes. */
    DaemonSetsController(ControllerContext context, int workers, java.util.function.UnaryOperator<PodControl> podControl) {
        super(context, DaemonSet.class, QUEUE, workers);
        this.eventRecorder = context.recorderFor(EVENT_SOURCE);
        PodControl pods = podControl.apply(new RealPodControl(context.client(), context.recorderFor(EVENT_SOURCE)));
        this.failedPodsBackoff = new FailedPodsBackoff(Duration.ofSeconds(1), Duration.ofMinutes(15), System::nanoTime);
        this.nodeUpdateQueue = context.newQueue(NODE_UPDATE_QUEUE);
        // upstream's goroutines per creation/deletion of a batch
        this.apiCalls = context.newApiCallPool(context.controllerName(), 64);

        this.dsInformer = context.informers().informerFor(DaemonSet.class);
        this.historyInformer = context.informers().informerFor(ControllerRevision.class);
        this.podInformer = context.informers().informerFor(Pod.class);
        this.nodeInformer = context.informers().informerFor(Node.class);
        DaemonSetContext ctx = new DaemonSetContext(context.client(), podInformer, nodeInformer, historyInformer,
                pods, expectations, apiCalls, BURST_REPLICAS, log);
        this.daemonPods = new DaemonPods(ctx);
        this.update = new Update(ctx, daemonPods);

        dsInformer.addEventHandler(new ResourceEventHandler<DaemonSet>() {
            @Override
            public void onAdd(DaemonSet ds) {
                log.tracef("Adding daemon set %s", key(ds));
                enqueue(ds);
            }

            @Override
            public void onUpdate(DaemonSet oldDs, DaemonSet curDs) {
                if (!Objects.equals(curDs.getMetadata().getUid(), oldDs.getMetadata().getUid())) {
                    deleteDaemonset(oldDs);
                }
                log.tracef("Updating daemon set %s", key(oldDs));
                enqueue(curDs);
            }

            @Override
            public void onDelete(DaemonSet ds, boolean finalStateUnknown) {
                deleteDaemonset(ds);
            }
        });
        owned(ControllerRevision.class, new HistoryHandler());
        PodIndexes.addPodControllerIndexer(podInformer);
        PodIndexes.addPodNodeNameIndexer(podInformer);
        owned(Pod.class, new PodHandler());
        nodeInformer.addEventHandler(new ResourceEventHandler<Node>() {
            @Override
            public void onAdd(Node node) {
                log.tracef("Queuing node addition %s", node.getMetadata().getName());
                nodeUpdateQueue.add(node.getMetadata().getName());
            }

            @Override
            public void onUpdate(Node oldNode, Node curNode) {
                if (shouldIgnoreNodeUpdate(oldNode, curNode)) {
                    return;
                }
                log.tracef("Queuing node update %s", curNode.getMetadata().getName());
                nodeUpdateQueue.add(curNode.getMetadata().getName());
            }

            @Override
            public void onDelete(Node node, boolean finalStateUnknown) {
                // upstream has no node delete handler: the pod GC removes pods of deleted nodes
            }
        });
    }


    @Override
    protected List<SharedIndexInformer<?>> informers() {
        return List.of(podInformer, nodeInformer, historyInformer, dsInformer);
    }

    /** Upstream's DaemonSet handlers (above) do the queueing; JOSDK's own adds and updates are off. */
    @Override
    protected OnAddFilter<? super DaemonSet> primaryAddFilter() {
        return ds -> false;
    }

    @Override
    protected OnUpdateFilter<? super DaemonSet> primaryUpdateFilter() {
        return (newDs, oldDs) -> false;
    }

    /** Upstream's Run: besides the workers, as many node-update workers and the backoff's GC. */
    @Override
    public synchronized void onStart() {
        if (!nodeUpdateWorkers.isEmpty()) {
            return;
        }
        for (int i = 0; i < Math.max(1, workers()); i++) {
            Thread t = new Thread(this::runNodeUpdateWorker, context.controllerName() + "-node-update-worker-" + i);
            t.setDaemon(true);
            nodeUpdateWorkers.add(t);
            t.start();
        }
        backoffGc = context.delayer().scheduleWithFixedDelay(failedPodsBackoff::gc, BACKOFF_GC_INTERVAL.toMillis(),
                BACKOFF_GC_INTERVAL.toMillis(), TimeUnit.MILLISECONDS);
    }

    @Override
    public synchronized void onShutdown() {
        nodeUpdateQueue.shutDown();
        if (backoffGc != null) {
            backoffGc.cancel(false);
        }
        apiCalls.shutdownNow();
    }

    private void enqueue(DaemonSet ds) {
        queue.add(key(ds));
    }

    private void enqueueDaemonSetAfter(DaemonSet ds, Duration after) {
        queue.addAfter(key(ds), after);
    }

    ControllerExpectations expectations() {
        return expectations;
    }

    // ---- event handlers -------------------------------------------------------------------

    private void deleteDaemonset(DaemonSet ds) {
        log.tracef("Deleting daemon set %s", key(ds));
        String key = key(ds);
        expectations.deleteExpectations(key);
        queue.add(key);
    }

    /** Upstream's resolveControllerRef: a cached DaemonSet with that name and UID. */
    private DaemonSet resolveControllerRef(String namespace, OwnerReference ref) {
        return ControllerRefs.resolveControllerRef(KIND, dsInformer, namespace, ref);
    }

    /** Upstream's GetPodDaemonSets / GetHistoryDaemonSets: DaemonSets of the namespace whose selector matches. */
    private List<DaemonSet> daemonSetsSelecting(String namespace, Map<String, String> labels) {
        return ControllerRefs.selecting(dsInformer, namespace, labels, ds -> ds.getSpec().getSelector(), true);
    }

    private List<DaemonSet> getDaemonSetsForPod(Pod pod) {
        List<DaemonSet> sets = daemonSetsSelecting(pod.getMetadata().getNamespace(), pod.getMetadata().getLabels());
        if (sets.size() > 1) {
            log.errorf("user error! more than one daemon is selecting pods with labels: %s", pod.getMetadata().getLabels());
        }
        return sets;
    }

    private List<DaemonSet> getDaemonSetsForHistory(ControllerRevision history) {
        List<DaemonSet> sets = daemonSetsSelecting(history.getMetadata().getNamespace(),
                history.getMetadata().getLabels());
        if (sets.size() > 1) {
            log.debugf("Found more than one DaemonSet selecting the ControllerRevision %s. This is potentially a user error",
                    key(history));
        }
        return sets;
    }

    private static Map<String, String> labelsOf(HasMetadata o) {
        Map<String, String> l = o.getMetadata().getLabels();
        return l == null ? Map.of() : l;
    }

    /** Upstream's ControllerRevision handlers: an owned revision's creation queues nothing, orphans queue their matches. */
    private final class HistoryHandler extends OwnerEnqueueingHandler<ControllerRevision, DaemonSet> {
        HistoryHandler() {
            super(DaemonSetsController.this::resolveControllerRef, DaemonSetsController.this::enqueue);
        }

        @Override
        protected void added(ControllerRevision history, DaemonSet ds) {
            log.tracef("Observed a ControllerRevision %s", key(history));
        }

        @Override
        protected void updated(ControllerRevision old, ControllerRevision cur, DaemonSet ds) {
            log.tracef("Observed an update to a ControllerRevision %s", key(cur));
            enqueue(ds);
        }

        @Override
        protected void deleted(ControllerRevision history, DaemonSet ds) {
            log.tracef("ControllerRevision %s deleted", key(history));
            enqueue(ds);
        }

        @Override
        protected void orphanAdded(ControllerRevision history) {
            List<DaemonSet> sets = getDaemonSetsForHistory(history);
            if (!sets.isEmpty()) {
                log.tracef("Orphan ControllerRevision %s added", key(history));
                sets.forEach(DaemonSetsController.this::enqueue);
            }
        }

        @Override
        protected void orphanUpdated(ControllerRevision old, ControllerRevision cur) {
            List<DaemonSet> sets = getDaemonSetsForHistory(cur);
            if (!sets.isEmpty()) {
                log.tracef("Orphan ControllerRevision %s updated", key(cur));
                sets.forEach(DaemonSetsController.this::enqueue);
            }
        }
    }

    /** Upstream's pod handlers: expectations observed, a pod turning ready re-checked after minReadySeconds. */
    private final class PodHandler extends OwnerEnqueueingHandler<Pod, DaemonSet> {
        PodHandler() {
            super(DaemonSetsController.this::resolveControllerRef, DaemonSetsController.this::enqueue);
        }

        @Override
        public void onUpdate(Pod oldPod, Pod curPod) {
            if (!Objects.equals(curPod.getMetadata().getResourceVersion(), oldPod.getMetadata().getResourceVersion())
                    && curPod.getMetadata().getDeletionTimestamp() != null) {
                // a graceful deletion began: replace the pod now, not when the kubelet removes it (upstream)
                onDelete(curPod, false);
                return;
            }
            super.onUpdate(oldPod, curPod);
        }

        @Override
        protected void added(Pod pod, DaemonSet ds) {
            log.tracef("Pod %s added", key(pod));
            expectations.creationObserved(key(ds));
            enqueue(ds);
        }

        @Override
        protected void updated(Pod oldPod, Pod curPod, DaemonSet ds) {
            log.tracef("Pod %s updated", key(curPod));
            enqueue(ds);
            boolean changedToReady = !PodUtil.isReady(oldPod) && PodUtil.isReady(curPod);
            int minReady = minReadySeconds(ds);
            if (changedToReady && minReady > 0) {
                // a second more against sub-second skew, as upstream
                enqueueDaemonSetAfter(ds, Duration.ofSeconds(minReady + 1L));
            }
        }

        @Override
        protected void deleted(Pod pod, DaemonSet ds) {
            log.tracef("Pod %s deleted", key(pod));
            expectations.deletionObserved(key(ds));
            enqueue(ds);
        }

        @Override
        protected void orphanAdded(Pod pod) {
            List<DaemonSet> sets = getDaemonSetsForPod(pod);
            if (!sets.isEmpty()) {
                log.tracef("Orphan Pod %s added", key(pod));
                sets.forEach(DaemonSetsController.this::enqueue);
            }
        }

        @Override
        protected void orphanUpdated(Pod oldPod, Pod curPod) {
            List<DaemonSet> sets = getDaemonSetsForPod(curPod);
            if (!sets.isEmpty()) {
                log.tracef("Orphan Pod %s updated", key(curPod));
                sets.forEach(DaemonSetsController.this::enqueue);
            }
        }
    }

    /** Upstream's shouldIgnoreNodeUpdate: labels and taints unchanged. */
    static boolean shouldIgnoreNodeUpdate(Node oldNode, Node curNode) {
        return Objects.equals(labelsOf(oldNode), labelsOf(curNode))
                && Objects.equals(taintsOf(oldNode), taintsOf(curNode));
    }

    private static List<Taint> taintsOf(Node node) {
        List<Taint> taints = node.getSpec() == null ? null : node.getSpec().getTaints();
        return taints == null ? List.of() : taints;
    }

    // ---- node update queue -----------------------------------------------------------------

    private void runNodeUpdateWorker() {
        try {
            context.informers().waitForSync(informers());
            while (true) {
                String nodeName = nodeUpdateQueue.get();
                if (nodeName == null) {
                    return;
                }
                try {
                    syncNodeUpdate(nodeName);
                    nodeUpdateQueue.forget(nodeName);
                } catch (RuntimeException e) {
                    log.errorf("%s failed with : %s", nodeName, shortMessage(e));
                    nodeUpdateQueue.addRateLimited(nodeName);
                } finally {
                    nodeUpdateQueue.done(nodeName);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Upstream's syncNodeUpdate: queues the DaemonSets whose placement on this node changed. */
    void syncNodeUpdate(String nodeName) {
        Node node = nodeInformer.getStore().getByKey(nodeName);
        if (node == null) {
            log.debugf("Node %s not found, skipping update", nodeName);
            return;
        }
        Map<String, List<Pod>> podsByDS = new HashMap<>();
        for (Pod pod : Indexes.byIndex(podInformer, PodIndexes.POD_NODE_NAME_INDEX, nodeName)) {
            OwnerReference ref = ControllerRefManager.controllerOf(pod);
            if (ref == null || !KIND.equals(ref.getKind())) {
                continue;
            }
            podsByDS.computeIfAbsent(pod.getMetadata().getNamespace() + "/" + ref.getName(), k -> new ArrayList<>())
                    .add(pod);
        }
        for (DaemonSet ds : dsInformer.getStore().list()) {
            ShouldRun should = nodeShouldRunDaemonPod(node, ds);
            List<Pod> daemonPods = podsByDS.get(key(ds));
            boolean scheduled = daemonPods != null && !daemonPods.isEmpty();
            int misscheduled = ds.getStatus() == null || ds.getStatus().getNumberMisscheduled() == null ? 0
                    : ds.getStatus().getNumberMisscheduled();
            if ((should.shouldRun() && !scheduled) || (!should.shouldContinueRunning() && scheduled)
                    || (scheduled && misscheduled > 0)) {
                enqueue(ds);
            }
        }
    }

    // ---- predicates ----------------------------------------------------------------------------

    /** What upstream's NodeShouldRunDaemonPod returns. */
    public record ShouldRun(boolean shouldRun, boolean shouldContinueRunning) {
    }

    /**
     * Upstream's NodeShouldRunDaemonPod: whether a daemon pod should be created on the node
     * ({@code shouldRun}) and whether one already there may stay ({@code shouldContinueRunning}: it
     * tolerates every NoExecute taint).
     */
    public static ShouldRun nodeShouldRunDaemonPod(Node node, DaemonSet ds) {
        Pod pod = newPod(ds, node.getMetadata().getName());
        String templateNodeName = ds.getSpec().getTemplate().getSpec() == null ? null
                : ds.getSpec().getTemplate().getSpec().getNodeName();
        if (!(templateNodeName == null || templateNodeName.isEmpty()
                || templateNodeName.equals(node.getMetadata().getName()))) {
            return new ShouldRun(false, false);
        }
        List<Taint> taints = taintsOf(node);
        String podNodeName = pod.getSpec().getNodeName();
        boolean fitsNodeName = podNodeName == null || podNodeName.isEmpty()
                || podNodeName.equals(node.getMetadata().getName());
        boolean fitsNodeAffinity = Scheduling.requiredNodeAffinityMatches(pod.getSpec(), node);
        boolean fitsTaints = Scheduling.findMatchingUntoleratedTaint(taints, pod.getSpec().getTolerations(),
                t -> "NoExecute".equals(t.getEffect()) || "NoSchedule".equals(t.getEffect())) == null;
        if (!fitsNodeName || !fitsNodeAffinity) {
            return new ShouldRun(false, false);
        }
        if (!fitsTaints) {
            boolean hasUntoleratedNoExecute = Scheduling.findMatchingUntoleratedTaint(taints,
                    pod.getSpec().getTolerations(), t -> "NoExecute".equals(t.getEffect())) != null;
            return new ShouldRun(false, !hasUntoleratedNoExecute);
        }
        return new ShouldRun(true, true);
    }

    /** Upstream's NewPod: the template's pod for a node, with the daemon tolerations. */
    public static Pod newPod(DaemonSet ds, String nodeName) {
        PodTemplateSpec template = ds.getSpec().getTemplate();
        Pod pod = new Pod();
        pod.setMetadata(template.getMetadata() == null ? new io.fabric8.kubernetes.api.model.ObjectMeta()
                : new io.fabric8.kubernetes.api.model.ObjectMetaBuilder(template.getMetadata()).build());
        pod.setSpec(template.getSpec() == null ? new io.fabric8.kubernetes.api.model.PodSpec()
                : new PodSpecBuilder(template.getSpec()).build());
        pod.getMetadata().setNamespace(ds.getMetadata().getNamespace());
        pod.getSpec().setNodeName(nodeName);
        DaemonSetUtil.addOrUpdateDaemonPodTolerations(pod.getSpec());
        return pod;
    }

    /** Upstream's podByCreationTimestampAndPhase: scheduled pods first, then oldest, then by name. */
    static final Comparator<Pod> POD_BY_CREATION_TIMESTAMP_AND_PHASE = (a, b) -> {
        boolean as = !nodeNameOf(a).isEmpty();
        boolean bs = !nodeNameOf(b).isEmpty();
        if (as != bs) {
            return as ? -1 : 1;
        }
        Instant ta = PodUtil.creationTime(a);
        Instant tb = PodUtil.creationTime(b);
        if (Objects.equals(ta, tb)) {
            return nz(a.getMetadata().getName()).compareTo(nz(b.getMetadata().getName()));
        }
        if (ta == null) {
            return -1;
        }
        if (tb == null) {
            return 1;
        }
        return ta.compareTo(tb);
    };

    private static String nz(String s) {
        return s == null ? "" : s;
    }

    static String failedPodsBackoffKey(DaemonSet ds, String nodeName) {
        long observed = ds.getStatus() == null || ds.getStatus().getObservedGeneration() == null ? 0
                : ds.getStatus().getObservedGeneration();
        return ds.getMetadata().getUid() + "/" + observed + "/" + nodeName;
    }

    /** Upstream's getUnscheduledPodsWithoutNode: unbound pods aimed at nodes that do not exist. */
    static List<String> getUnscheduledPodsWithoutNode(List<Node> runningNodesList, Map<String, List<Pod>> nodeToDaemonPods) {
        List<String> results = new ArrayList<>();
        java.util.Set<String> running = new java.util.HashSet<>();
        for (Node node : runningNodesList) {
            running.add(node.getMetadata().getName());
        }
        for (Map.Entry<String, List<Pod>> e : nodeToDaemonPods.entrySet()) {
            if (running.contains(e.getKey())) {
                continue;
            }
            for (Pod pod : e.getValue()) {
                if (nodeNameOf(pod).isEmpty()) {
                    results.add(pod.getMetadata().getName());
                }
            }
        }
        return results;
    }

    // ---- pods of a DaemonSet ---------------------------------------------------------------------

    // ---- sync ----------------------------------------------------------------------------------

    @Override
    protected void sync(String key) throws Exception {
        syncDaemonSet(key); // KeyReconciler times it
    }

    void syncDaemonSet(String key) throws Exception {
        DaemonSet ds = dsInformer.getStore().getByKey(key);
        if (ds == null) {
            log.debugf("Daemon set %s has been deleted", key);
            expectations.deleteExpectations(key);
            return;
        }
        List<Node> nodeList = nodeInformer.getStore().list();
        if (selectsEverything(ds.getSpec().getSelector())) {
            eventRecorder.event(ds, EventRecorder.WARNING, SELECTING_ALL_REASON,
                    "This daemon set is selecting all pods. A non-empty selector is required.");
            return;
        }
        String dsKey = key(ds);
        if (ds.getMetadata().getDeletionTimestamp() != null) {
            return;
        }
        Update.Histories histories;
        try {
            histories = update.constructHistory(ds);
        } catch (InterruptedException e) {
            throw e;
        } catch (Exception e) {
            throw new DaemonSetSyncException("failed to construct revisions of DaemonSet: " + ApiErrors.message(e), e);
        }
        String hash = labelsOf(histories.cur()).get(DaemonSetUtil.DEFAULT_DAEMON_SET_UNIQUE_LABEL_KEY);

        boolean dsNeedsSync = expectations.satisfiedExpectations(dsKey);
        if (!dsNeedsSync && expectations.isUncertain(dsKey)) {
            dsNeedsSync = daemonPods.resolveUncertainWrites(ds);
            if (!dsNeedsSync) {
                queue.addAfter(dsKey, UNCERTAIN_RECHECK);
            }
        }
        if (!dsNeedsSync) {
            updateDaemonSetStatus(ds, nodeList, hash, false);
            return;
        }
        Exception err = null;
        try {
            updateDaemonSet(ds, nodeList, hash, dsKey, histories.old());
        } catch (InterruptedException e) {
            throw e;
        } catch (Exception e) {
            err = e;
        }
        Exception statusErr = null;
        try {
            updateDaemonSetStatus(ds, nodeList, hash, true);
        } catch (InterruptedException e) {
            throw e;
        } catch (Exception e) {
            statusErr = e;
        }
        if (err != null && statusErr != null) {
            log.errorf("Failed to update status of daemon set %s: %s", dsKey, shortMessage(statusErr));
            throw err;
        }
        if (err != null) {
            throw err;
        }
        if (statusErr != null) {
            throw statusErr;
        }
    }

    /** reflect.DeepEqual(selector, &metav1.LabelSelector{}). */
    static boolean selectsEverything(LabelSelector selector) {
        return selector != null && (selector.getMatchLabels() == null || selector.getMatchLabels().isEmpty())
                && (selector.getMatchExpressions() == null || selector.getMatchExpressions().isEmpty());
    }

    private void updateDaemonSet(DaemonSet ds, List<Node> nodeList, String hash, String key,
            List<ControllerRevision> old) throws Exception {
        manage(ds, nodeList, hash);
        if (expectations.satisfiedExpectations(key)) {
            String type = ds.getSpec().getUpdateStrategy() == null ? null : ds.getSpec().getUpdateStrategy().getType();
            if ("RollingUpdate".equals(type)) {
                update.rollingUpdate(ds, nodeList, hash);
            }
        }
        try {
            update.cleanupHistory(ds, old);
        } catch (InterruptedException e) {
            throw e;
        } catch (Exception e) {
            throw new DaemonSetSyncException("failed to clean up revisions of DaemonSet: " + ApiErrors.message(e), e);
        }
    }

    /** Upstream's manage: per node, the pods to create and delete; then syncNodes. */
    private void manage(DaemonSet ds, List<Node> nodeList, String hash) throws Exception {
        Map<String, List<Pod>> nodeToDaemonPods;
        try {
            nodeToDaemonPods = daemonPods.getNodesToDaemonPods(ds, false);
        } catch (ControllerRefManager.ClaimException e) {
            throw new DaemonSetSyncException("couldn't get node to daemon pod mapping for daemon set \""
                    + ds.getMetadata().getName() + "\": " + e.getMessage(), e);
        }
        List<String> nodesNeedingDaemonPods = new ArrayList<>();
        List<String> podsToDelete = new ArrayList<>();
        for (Node node : nodeList) {
            podsShouldBeOnNode(node, nodeToDaemonPods, ds, hash, nodesNeedingDaemonPods, podsToDelete);
        }
        podsToDelete.addAll(getUnscheduledPodsWithoutNode(nodeList, nodeToDaemonPods));
        daemonPods.syncNodes(ds, podsToDelete, nodesNeedingDaemonPods, hash);
    }

    /** Upstream's podsShouldBeOnNode: adds to the nodes needing a pod and the pods to delete. */
    void podsShouldBeOnNode(Node node, Map<String, List<Pod>> nodeToDaemonPods, DaemonSet ds, String hash,
            List<String> nodesNeedingDaemonPods, List<String> podsToDelete) {
        ShouldRun should = nodeShouldRunDaemonPod(node, ds);
        String nodeName = node.getMetadata().getName();
        List<Pod> daemonPods = nodeToDaemonPods.get(nodeName);
        boolean exists = daemonPods != null;
        if (should.shouldRun() && !exists) {
            nodesNeedingDaemonPods.add(nodeName);
        } else if (should.shouldContinueRunning()) {
            List<Pod> daemonPodsRunning = new ArrayList<>();
            for (Pod pod : daemonPods == null ? List.<Pod>of() : daemonPods) {
                if (pod.getMetadata().getDeletionTimestamp() != null) {
                    continue;
                }
                String phase = PodUtil.phase(pod);
                if ("Failed".equals(phase)) {
                    String backoffKey = failedPodsBackoffKey(ds, nodeName);
                    long now = failedPodsBackoff.now();
                    if (failedPodsBackoff.isInBackOffSinceUpdate(backoffKey, now)) {
                        Duration delay = failedPodsBackoff.get(backoffKey);
                        log.debugf("Deleting failed pod %s on node %s has been limited by backoff - %s remaining",
                                key(pod), nodeName, delay);
                        enqueueDaemonSetAfter(ds, delay);
                        continue;
                    }
                    failedPodsBackoff.next(backoffKey, now);
                    String msg = String.format("Found failed daemon pod %s/%s on node %s, will try to kill it",
                            pod.getMetadata().getNamespace(), pod.getMetadata().getName(), nodeName);
                    log.infof("Found failed daemon pod %s on node %s, will try to kill it", key(pod), nodeName);
                    eventRecorder.event(ds, EventRecorder.WARNING, FAILED_DAEMON_POD_REASON, msg);
                    podsToDelete.add(pod.getMetadata().getName());
                } else if ("Succeeded".equals(phase)) {
                    String msg = String.format("Found succeeded daemon pod %s/%s on node %s, will try to delete it",
                            pod.getMetadata().getNamespace(), pod.getMetadata().getName(), nodeName);
                    log.infof("Found succeeded daemon pod %s on node %s, will try to delete it", key(pod), nodeName);
                    eventRecorder.event(ds, EventRecorder.NORMAL, SUCCEEDED_DAEMON_POD_REASON, msg);
                    podsToDelete.add(pod.getMetadata().getName());
                } else {
                    daemonPodsRunning.add(pod);
                }
            }
            if (!DaemonSetUtil.allowsSurge(ds)) {
                if (daemonPodsRunning.size() <= 1) {
                    return;
                }
                daemonPodsRunning.sort(POD_BY_CREATION_TIMESTAMP_AND_PHASE);
                for (int i = 1; i < daemonPodsRunning.size(); i++) {
                    podsToDelete.add(daemonPodsRunning.get(i).getMetadata().getName());
                }
                return;
            }
            if (daemonPodsRunning.size() <= 1) {
                if (daemonPodsRunning.isEmpty() && should.shouldRun()) {
                    nodesNeedingDaemonPods.add(nodeName);
                }
                return;
            }
            Pod oldestNewPod = null;
            Pod oldestOldPod = null;
            daemonPodsRunning.sort(POD_BY_CREATION_TIMESTAMP_AND_PHASE);
            for (Pod pod : daemonPodsRunning) {
                if (Objects.equals(labelsOf(pod).get(DaemonSetUtil.DEFAULT_DAEMON_SET_UNIQUE_LABEL_KEY), hash)) {
                    if (oldestNewPod == null) {
                        oldestNewPod = pod;
                        continue;
                    }
                } else {
                    if (oldestOldPod == null) {
                        oldestOldPod = pod;
                        continue;
                    }
                }
                podsToDelete.add(pod.getMetadata().getName());
            }
            if (oldestNewPod != null && oldestOldPod != null) {
                if (!PodUtil.isReady(oldestOldPod)) {
                    log.tracef("Pod %s from daemonset %s is no longer ready and will be replaced with newer pod %s",
                            key(oldestOldPod), key(ds), key(oldestNewPod));
                    podsToDelete.add(oldestOldPod.getMetadata().getName());
                } else if (PodUtil.isAvailable(oldestNewPod, minReadySeconds(ds), Instant.now())) {
                    log.tracef("Pod %s from daemonset %s is now ready and will replace older pod %s",
                            key(oldestNewPod), key(ds), key(oldestOldPod));
                    podsToDelete.add(oldestOldPod.getMetadata().getName());
                }
            }
        } else if (!should.shouldContinueRunning() && exists) {
            for (Pod pod : daemonPods) {
                if (pod.getMetadata().getDeletionTimestamp() != null) {
                    continue;
                }
                podsToDelete.add(pod.getMetadata().getName());
            }
        }
    }

    // ---- status --------------------------------------------------------------------------------

    /** Upstream's updateDaemonSetStatus. */
    void updateDaemonSetStatus(DaemonSet ds, List<Node> nodeList, String hash, boolean updateObservedGen) throws Exception {
        log.tracef("Updating daemon set status %s", key(ds));
        Map<String, List<Pod>> nodeToDaemonPods;
        try {
            nodeToDaemonPods = daemonPods.getNodesToDaemonPods(ds, false);
        } catch (ControllerRefManager.ClaimException e) {
            throw new DaemonSetSyncException("couldn't get node to daemon pod mapping for daemon set \""
                    + ds.getMetadata().getName() + "\": " + e.getMessage(), e);
        }
        int desiredNumberScheduled = 0;
        int currentNumberScheduled = 0;
        int numberMisscheduled = 0;
        int numberReady = 0;
        int updatedNumberScheduled = 0;
        int numberAvailable = 0;
        Instant now = Instant.now();
        Long generation = DaemonSetUtil.templateGenerationOrNull(ds);
        for (Node node : nodeList) {
            ShouldRun should = nodeShouldRunDaemonPod(node, ds);
            List<Pod> daemonPods = nodeToDaemonPods.get(node.getMetadata().getName());
            boolean scheduled = daemonPods != null && !daemonPods.isEmpty();
            if (should.shouldRun()) {
                desiredNumberScheduled++;
                if (!scheduled) {
                    continue;
                }
                currentNumberScheduled++;
                List<Pod> sorted = new ArrayList<>(daemonPods);
                sorted.sort(POD_BY_CREATION_TIMESTAMP_AND_PHASE);
                Pod pod = sorted.get(0);
                if (PodUtil.isReady(pod)) {
                    numberReady++;
                    if (PodUtil.isAvailable(pod, minReadySeconds(ds), now)) {
                        numberAvailable++;
                    }
                }
                if (DaemonSetUtil.isPodUpdated(pod, hash, generation)) {
                    updatedNumberScheduled++;
                }
            } else if (scheduled) {
                numberMisscheduled++;
            }
        }
        int numberUnavailable = desiredNumberScheduled - numberAvailable;
        try {
            storeDaemonSetStatus(ds, desiredNumberScheduled, currentNumberScheduled, numberMisscheduled, numberReady,
                    updatedNumberScheduled, numberAvailable, numberUnavailable, updateObservedGen);
        } catch (RuntimeException e) {
            throw new DaemonSetSyncException("error storing status for daemon set " + key(ds) + ": "
                    + ApiErrors.message(e), e);
        }
        if (minReadySeconds(ds) > 0 && numberReady != numberAvailable) {
            enqueueDaemonSetAfter(ds, Duration.ofSeconds(minReadySeconds(ds)));
        }
    }

    private static int n(Integer i) {
        return i == null ? 0 : i;
    }

    /** Upstream's storeDaemonSetStatus: nothing when unchanged; one retry on a fresh GET after a failed update. */
    void storeDaemonSetStatus(DaemonSet ds, int desiredNumberScheduled, int currentNumberScheduled,
            int numberMisscheduled, int numberReady, int updatedNumberScheduled, int numberAvailable,
            int numberUnavailable, boolean updateObservedGen) {
        DaemonSetStatus st = ds.getStatus() == null ? new DaemonSetStatus() : ds.getStatus();
        long generation = ds.getMetadata().getGeneration() == null ? 0 : ds.getMetadata().getGeneration();
        long observed = st.getObservedGeneration() == null ? 0 : st.getObservedGeneration();
        if (n(st.getDesiredNumberScheduled()) == desiredNumberScheduled
                && n(st.getCurrentNumberScheduled()) == currentNumberScheduled
                && n(st.getNumberMisscheduled()) == numberMisscheduled && n(st.getNumberReady()) == numberReady
                && n(st.getUpdatedNumberScheduled()) == updatedNumberScheduled
                && n(st.getNumberAvailable()) == numberAvailable && n(st.getNumberUnavailable()) == numberUnavailable
                && observed >= generation) {
            return;
        }
        DaemonSet toUpdate = new DaemonSetBuilder(ds).build();
        RuntimeException updateErr;
        for (int i = 0;; i++) {
            if (toUpdate.getStatus() == null) {
                toUpdate.setStatus(new DaemonSetStatus());
            }
            DaemonSetStatus s = toUpdate.getStatus();
            if (updateObservedGen) {
                s.setObservedGeneration(generation);
            }
            s.setDesiredNumberScheduled(desiredNumberScheduled);
            s.setCurrentNumberScheduled(currentNumberScheduled);
            s.setNumberMisscheduled(numberMisscheduled);
            s.setNumberReady(numberReady);
            s.setUpdatedNumberScheduled(updatedNumberScheduled);
            s.setNumberAvailable(numberAvailable);
            s.setNumberUnavailable(numberUnavailable);
            try {
                context.client().apps().daemonSets().inNamespace(ds.getMetadata().getNamespace()).resource(toUpdate)
                        .updateStatus();
                return;
            } catch (RuntimeException e) {
                updateErr = e;
            }
            if (i >= STATUS_UPDATE_RETRIES) {
                break;
            }
            DaemonSet fresh = context.client().apps().daemonSets().inNamespace(ds.getMetadata().getNamespace())
                    .withName(ds.getMetadata().getName()).get();
            if (fresh == null) {
                throw new KubernetesClientException("daemonsets.apps \"" + ds.getMetadata().getName() + "\" not found",
                        404, null);
            }
            toUpdate = fresh;
        }
        throw updateErr;
    }
}
