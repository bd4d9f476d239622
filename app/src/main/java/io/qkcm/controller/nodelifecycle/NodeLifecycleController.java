package io.qkcm.controller.nodelifecycle;

import io.qkcm.controller.PodIndexes;
import io.javaoperatorsdk.operator.api.reconciler.Ignore;
import io.qkcm.runtime.josdk.KeyReconciler;
import java.time.Clock;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeCondition;
import io.fabric8.kubernetes.api.model.Taint;
import io.fabric8.kubernetes.api.model.TaintBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.qkcm.controller.nodelifecycle.metrics.NodeLifecycleMetrics;
import io.qkcm.controller.nodelifecycle.scheduler.RateLimitedTimedQueue;
import io.qkcm.runtime.informers.Indexes;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.qkcm.runtime.josdk.ControllerContext;

/**
 * node-lifecycle-controller (upstream pkg/controller/nodelifecycle). Its node queue is the NoSchedule
 * tainting pass (upstream doNoScheduleTaintingPass): every node carries exactly the NoSchedule taints its
 * conditions call for — Ready=False {@code node.kubernetes.io/not-ready}, Ready=Unknown {@code unreachable},
 * Memory/Disk/PID pressure, NetworkUnavailable — plus {@code unschedulable} when cordoned; this is what lets
 * a new node (which the API server registers with the not-ready taint) take pods once it reports Ready. The
 * same pass reconciles the beta OS and arch labels (reconcileNodeLabels).
 *
 * <p>Beside the queue, as upstream's Run starts them once the caches have synced: the health pass every
 * --node-monitor-period and the NoExecute tainting pass every 100 ms ({@link NodeHealthMonitor}), and the
 * pod queue ({@link NodeLifecyclePodReconciler}). Evicting the pods of a NoExecute-tainted node is
 * taint-eviction-controller's job.
 */
@Ignore // runs in its own Operator (io.qkcm.runtime.josdk), not quarkus-operator-sdk's default one
public final class NodeLifecycleController extends KeyReconciler<Node> {

    public static final String NAME = "node-lifecycle-controller";
    /** Upstream's event source component (its recorder's, and its client's name). */
    static final String EVENT_SOURCE = "node-controller";

    static final String TAINT_NOT_READY = "node.kubernetes.io/not-ready";
    static final String TAINT_UNREACHABLE = "node.kubernetes.io/unreachable";
    static final String TAINT_UNSCHEDULABLE = "node.kubernetes.io/unschedulable";

    /** Node condition → status → taint key, as upstream's nodeConditionToTaintKeyStatusMap. */
    static final Map<String, Map<String, String>> CONDITION_TAINTS = Map.of(
            "Ready", Map.of("False", TAINT_NOT_READY, "Unknown", TAINT_UNREACHABLE),
            "MemoryPressure", Map.of("True", "node.kubernetes.io/memory-pressure"),
            "DiskPressure", Map.of("True", "node.kubernetes.io/disk-pressure"),
            "NetworkUnavailable", Map.of("True", "node.kubernetes.io/network-unavailable"),
            "PIDPressure", Map.of("True", "node.kubernetes.io/pid-pressure"));

    static final List<String> CONDITION_TAINT_KEYS = List.of(TAINT_NOT_READY, TAINT_UNREACHABLE,
            "node.kubernetes.io/memory-pressure", "node.kubernetes.io/disk-pressure",
            "node.kubernetes.io/network-unavailable", "node.kubernetes.io/pid-pressure");

    /** labelReconcileInfo: the beta label kept equal to (and created from) the stable one. */
    static final Map<String, String> LABEL_RECONCILE = new java.util.LinkedHashMap<>(Map.of(
            "kubernetes.io/os", "beta.kubernetes.io/os",
            "kubernetes.io/arch", "beta.kubernetes.io/arch"));

    private final SharedIndexInformer<Node> nodes;
    private final List<SharedIndexInformer<?>> waitFor;
    private final NodeHealthMonitor monitor;
    private final NodeLifecyclePodReconciler podReconciler;
    private final NodeHealthMonitor.Settings settings;
    private final boolean runPasses;
    private final ExecutorService nodeWorkers;
    private ScheduledExecutorService passes;

    /**
     * Upstream's NewNodeLifecycleController. {@code clock} is the time of the health and tainting passes;
     * {@code runPasses} false leaves them to the caller (tests run them by hand, as upstream's tests call
     * monitorNodeHealth and doNoExecuteTaintingPass).
     */
    public NodeLifecycleController(ControllerContext context, NodeHealthMonitor.Settings settings, Clock clock,
            boolean runPasses) {
        // upstream runs the tainting pass from a plain queue with 8 workers (nodeUpdateWorkerSize)
        super(context, Node.class, "node_lifecycle_controller", NodeHealthMonitor.NODE_UPDATE_WORKER_SIZE);
        this.settings = settings;
        this.runPasses = runPasses;
        this.nodes = context.informers().informerFor(Node.class);
        SharedIndexInformer<Pod> pods = context.informers().informerFor(Pod.class);
        SharedIndexInformer<Lease> leases = context.informers().informerFor(Lease.class);
        // upstream waits for the DaemonSet cache too (it once skipped daemon pods when evicting)
        SharedIndexInformer<DaemonSet> daemonSets = context.informers().informerFor(DaemonSet.class);
        this.waitFor = List.of(leases, nodes, pods, daemonSets);
        PodIndexes.addPodNodeNameIndexer(pods);
        this.nodeWorkers = context.newApiCallPool(NAME, NodeHealthMonitor.NODE_UPDATE_WORKER_SIZE);
        var nodeStore = nodes.getStore();
        var leaseStore = leases.getStore();
        this.monitor = new NodeHealthMonitor(settings, clock, context.client(), nodeStore::getByKey, nodeStore::list,
                leaseStore::getByKey, nodeName -> Indexes.byIndex(pods, PodIndexes.POD_NODE_NAME_INDEX, nodeName),
                context.recorderFor(EVENT_SOURCE), new NodeLifecycleMetrics(context.metrics()), nodeWorkers);
        this.podReconciler = new NodeLifecyclePodReconciler(context, monitor, waitFor);
        // Node adds and updates reach the reconciler as JOSDK's primary events, as upstream's handler
        // queues them (a deleted node is synced once more and found gone: nothing to untaint)
        nodes.addEventHandler(new ResourceEventHandler<>() {
            @Override
            public void onAdd(Node node) {
            }

            @Override
            public void onUpdate(Node oldNode, Node newNode) {
            }

            @Override
            public void onDelete(Node node, boolean deletedFinalStateUnknown) {
                monitor.nodeDeleted(node.getMetadata().getName());
            }
        });
    }

    /** The pod queue's reconciler, operated beside this one. */
    NodeLifecyclePodReconciler podReconciler() {
        return podReconciler;
    }

    NodeHealthMonitor monitor() {
        return monitor;
    }

    @Override
    protected List<SharedIndexInformer<?>> informers() {
        return waitFor;
    }

    /** Upstream's Run, after the caches synced: the health pass and the NoExecute tainting pass. */
    @Override
    public void onStart() {
        log.info("Starting node controller");
        if (!runPasses) {
            return;
        }
        passes = Executors.newScheduledThreadPool(2, r -> {
            Thread t = new Thread(r, "node-lifecycle-passes");
            t.setDaemon(true);
            return t;
        });
        // wait.UntilWithContext: each pass a period after the previous one ended
        passes.scheduleWithFixedDelay(this::taintingPass, 0, RateLimitedTimedQueue.NODE_EVICTION_PERIOD.toNanos(),
                TimeUnit.NANOSECONDS);
        passes.scheduleWithFixedDelay(this::healthPass, 0, settings.nodeMonitorPeriod().toNanos(), TimeUnit.NANOSECONDS);
    }

    @Override
    public void onShutdown() {
        log.info("Shutting down node controller");
        if (passes != null) {
            passes.shutdownNow();
        }
        nodeWorkers.shutdownNow();
    }

    private void taintingPass() {
        try {
            monitor.doNoExecuteTaintingPass();
        } catch (RuntimeException e) {
            log.errorf("NoExecute tainting pass failed: %s", shortMessage(e));
        }
    }

    private void healthPass() {
        try {
            monitor.monitorNodeHealth();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            log.errorf("Error monitoring node health: %s", shortMessage(e));
        }
    }



    @Override
    protected void sync(String name) {
        Node cached = nodes.getStore().getByKey(name);
        if (cached == null) {
            return;
        }
        try {
            doNoScheduleTaintingPass(name, cached);
        } finally {
            // upstream reconciles the labels whether the taint pass failed or not
            reconcileNodeLabels(name);
        }
    }

    private void doNoScheduleTaintingPass(String name, Node cached) {
        List<Taint> desired = desiredNoScheduleTaints(cached);
        if (sameKeys(desired, managedTaints(cached))) {
            return;
        }
        // Swap on the live object with optimistic concurrency; a conflict requeues with backoff.
        context.client().nodes().withName(name).edit(node -> swap(node, desired, Instant.now()));
        log.debugf("updated NoSchedule condition taints of node %s: %s", name,
                desired.stream().map(Taint::getKey).toList());
    }

    /**
     * reconcileNodeLabels: each beta label set to its stable label's value where it differs or is missing,
     * in one strategic merge patch of the labels that change.
     */
    private void reconcileNodeLabels(String name) {
        Node node = nodes.getStore().getByKey(name);
        if (node == null) {
            return;
        }
        Map<String, String> toUpdate = labelsToReconcile(node);
        if (toUpdate.isEmpty()) {
            return;
        }
        try {
            String patch = io.qkcm.runtime.Json.mapper().writeValueAsString(
                    Map.of("metadata", Map.of("labels", new java.util.TreeMap<>(toUpdate))));
            context.client().nodes().withName(name).patch(PatchContext.of(PatchType.STRATEGIC_MERGE), patch);
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalStateException(e);
        } catch (RuntimeException e) {
            log.errorf("Failed to reconcile labels for node %s: %s", name, shortMessage(e));
        }
    }

    /** The beta labels a node's stable OS and arch labels call for. */
    static Map<String, String> labelsToReconcile(Node node) {
        Map<String, String> labels = node.getMetadata().getLabels();
        Map<String, String> toUpdate = new java.util.LinkedHashMap<>();
        if (labels == null) {
            return toUpdate;
        }
        for (Map.Entry<String, String> r : LABEL_RECONCILE.entrySet()) {
            String primary = labels.get(r.getKey());
            if (primary == null) {
                continue;
            }
            String secondary = labels.get(r.getValue());
            if (!primary.equals(secondary)) {
                toUpdate.put(r.getValue(), primary);
            }
        }
        return toUpdate;
    }

    /** The NoSchedule taints a node's conditions and cordon call for. */
    static List<Taint> desiredNoScheduleTaints(Node node) {
        List<Taint> taints = new ArrayList<>();
        if (node.getStatus() != null && node.getStatus().getConditions() != null) {
            for (NodeCondition c : node.getStatus().getConditions()) {
                Map<String, String> byStatus = CONDITION_TAINTS.get(c.getType());
                if (byStatus != null && byStatus.containsKey(c.getStatus())) {
                    taints.add(noSchedule(byStatus.get(c.getStatus())));
                }
            }
        }
        if (node.getSpec() != null && Boolean.TRUE.equals(node.getSpec().getUnschedulable())) {
            taints.add(noSchedule(TAINT_UNSCHEDULABLE));
        }
        return taints;
    }

    /** The node's taints this pass owns: NoSchedule condition taints and the unschedulable taint. */
    static List<Taint> managedTaints(Node node) {
        if (node.getSpec() == null || node.getSpec().getTaints() == null) {
            return List.of();
        }
        return node.getSpec().getTaints().stream().filter(t -> "NoSchedule".equals(t.getEffect()))
                .filter(t -> TAINT_UNSCHEDULABLE.equals(t.getKey()) || CONDITION_TAINT_KEYS.contains(t.getKey()))
                .toList();
    }

    /** Replaces the managed taints with {@code desired}, stamping timeAdded on new ones. */
    static Node swap(Node node, List<Taint> desired, Instant now) {
        List<Taint> managed = managedTaints(node);
        List<Taint> result = new ArrayList<>();
        if (node.getSpec().getTaints() != null) {
            for (Taint t : node.getSpec().getTaints()) {
                boolean isManaged = managed.contains(t);
                if (!isManaged || desired.stream().anyMatch(d -> d.getKey().equals(t.getKey()))) {
                    result.add(t);
                }
            }
        }
        for (Taint d : desired) {
            if (result.stream().noneMatch(t -> Objects.equals(t.getKey(), d.getKey())
                    && Objects.equals(t.getEffect(), d.getEffect()))) {
                result.add(new TaintBuilder(d).withTimeAdded(now.truncatedTo(ChronoUnit.SECONDS).toString()).build());
            }
        }
        node.getSpec().setTaints(result);
        return node;
    }

    private static boolean sameKeys(List<Taint> a, List<Taint> b) {
        return a.size() == b.size() && a.stream().allMatch(x -> b.stream().anyMatch(y -> y.getKey().equals(x.getKey())));
    }

    private static Taint noSchedule(String key) {
        return new TaintBuilder().withKey(key).withEffect("NoSchedule").build();
    }
}
