package io.qkcm.controller.nodelifecycle;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.NodeCondition;
import io.fabric8.kubernetes.api.model.NodeConditionBuilder;
import io.fabric8.kubernetes.api.model.NodeStatus;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Taint;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.qkcm.controller.ApiErrors;
import io.qkcm.controller.PodStatusPatch;
import io.qkcm.controller.nodelifecycle.metrics.NodeLifecycleMetrics;
import io.qkcm.controller.nodelifecycle.scheduler.RateLimitedTimedQueue;
import io.qkcm.controller.nodelifecycle.scheduler.RateLimiter;
import io.qkcm.runtime.DeepCopy;
import io.qkcm.runtime.events.EventRecorder;

/**
 * node-lifecycle-controller's health monitoring (upstream's monitorNodeHealth, tryUpdateNodeHealth,
 * handleDisruption, processTaintBaseEviction and doNoExecuteTaintingPass): every --node-monitor-period the
 * nodes' Leases and statuses are compared with what was seen before; a node heard of neither for
 * --node-monitor-grace-period (--node-startup-grace-period before it ever posted a status) gets its Ready,
 * MemoryPressure, DiskPressure and PIDPressure conditions set to Unknown; a node not Ready is queued in its
 * zone's rate-limited queue for the NoExecute taint {@code not-ready} or {@code unreachable} (swapped at once
 * when it carries the other one), and its pods are marked not ready; a Ready node loses both taints. Zones
 * are Normal, PartialDisruption (the queue slows to --secondary-node-eviction-rate, or stops in a zone of
 * at most --large-cluster-size-threshold nodes) or FullDisruption (and when every zone is, tainting stops
 * and the NoExecute taints are removed). Every time read here is {@link #clock}'s.
 */
final class NodeHealthMonitor {

    private static final Logger LOG = Logger.getLogger(NodeHealthMonitor.class);

    static final String NODE_LEASE_NAMESPACE = "kube-node-lease";
    /** Nodes with this label are left out of the zones' disruption counts. */
    static final String LABEL_NODE_DISRUPTION_EXCLUSION = "node.kubernetes.io/exclude-disruption";
    /** Between two tries of a node health write (retrySleepTime). */
    private static final long RETRY_SLEEP_MILLIS = 20;
    /** Upstream's nodeUpdateWorkerSize: nodes checked in parallel. */
    static final int NODE_UPDATE_WORKER_SIZE = 8;
    private static final List<String> UNKNOWN_CONDITION_TYPES = List.of("Ready", "MemoryPressure", "DiskPressure",
            "PIDPressure");

    /** The controller's settings (upstream's NewNodeLifecycleController arguments). */
    record Settings(Duration nodeMonitorPeriod, Duration nodeStartupGracePeriod, Duration nodeMonitorGracePeriod,
            float evictionLimiterQps, float secondaryEvictionLimiterQps, int largeClusterThreshold,
            float unhealthyZoneThreshold) {
    }

    /** What tryUpdateNodeHealth saw: the grace period applied, the Ready condition before and after. */
    record HealthUpdate(Duration gracePeriod, NodeCondition observedReady, NodeCondition currentReady) {
    }

    private final Settings settings;
    private final Clock clock;
    private final KubernetesClient client;
    private final Function<String, Node> nodeByName;
    private final java.util.function.Supplier<List<Node>> allNodes;
    private final Function<String, Lease> leaseByKey;
    private final Function<String, List<Pod>> podsOnNode;
    private final EventRecorder recorder;
    private final NodeLifecycleMetrics metrics;
    private final NodeTaints taints;
    private final PodReadiness podReadiness;
    private final ExecutorService workers;

    final NodeHealth nodeHealthMap = new NodeHealth();
    /** The nodes seen by the previous pass (monitor thread only). */
    private final Map<String, Node> knownNodeSet = new HashMap<>();
    /** evictorLock: guards the zones' queues and states. */
    private final Object evictorLock = new Object();
    private final Map<String, RateLimitedTimedQueue> zoneNoExecuteTainter = new ConcurrentHashMap<>();
    private final Map<String, ZoneState> zoneStates = new ConcurrentHashMap<>();
    /** Nodes whose pods must be marked not ready again on the next pass. */
    private final Set<String> nodesToRetry = ConcurrentHashMap.newKeySet();
    private final Object monitorLock = new Object();
    private final Object taintingLock = new Object();

    NodeHealthMonitor(Settings settings, Clock clock, KubernetesClient client, Function<String, Node> nodeByName,
            java.util.function.Supplier<List<Node>> allNodes, Function<String, Lease> leaseByKey,
            Function<String, List<Pod>> podsOnNode, EventRecorder recorder, NodeLifecycleMetrics metrics,
            ExecutorService workers) {
        this.settings = settings;
        this.clock = clock;
        this.client = client;
        this.nodeByName = nodeByName;
        this.allNodes = allNodes;
        this.leaseByKey = leaseByKey;
        this.podsOnNode = podsOnNode;
        this.recorder = recorder;
        this.metrics = metrics;
        this.workers = workers;
        this.taints = new NodeTaints(client, nodeByName);
        this.podReadiness = new PodReadiness(client, recorder, clock);
    }

    /** The node informer's delete handler: a deleted node needs no retry. */
    void nodeDeleted(String name) {
        nodesToRetry.remove(name);
    }

    // ---- monitorNodeHealth ----

    /**
     * One pass over every cached node (upstream's monitorNodeHealth): new and removed nodes, each node's
     * health (in parallel), then the zones' states.
     */
    void monitorNodeHealth() throws InterruptedException {
        synchronized (monitorLock) {
            long start = System.nanoTime();
            try {
                monitorNodeHealthLocked();
            } finally {
                metrics.observeUpdateAllNodesHealth((System.nanoTime() - start) / 1e9);
            }
        }
    }

    private void monitorNodeHealthLocked() throws InterruptedException {
        // the cache: small delays are tolerated, it is eventually consistent anyway
        List<Node> nodes = allNodes.get();
        List<Node> added = new ArrayList<>();
        List<Node> deleted = new ArrayList<>();
        List<Node> newZoneRepresentatives = new ArrayList<>();
        classifyNodes(nodes, added, deleted, newZoneRepresentatives);
        for (Node n : newZoneRepresentatives) {
            addPodEvictorForNewZone(n);
        }
        for (Node n : added) {
            String name = n.getMetadata().getName();
            LOG.debugf("Controller observed a new Node %s", name);
            recordNodeEvent(n, EventRecorder.NORMAL, "RegisteredNode", "Registered Node " + name + " in Controller");
            knownNodeSet.put(name, n);
            addPodEvictorForNewZone(n);
            markNodeAsReachable(n);
        }
        for (Node n : deleted) {
            String name = n.getMetadata().getName();
            LOG.debugf("Controller observed a Node deletion %s", name);
            recordNodeEvent(n, EventRecorder.NORMAL, "RemovingNode", "Removing Node " + name + " from Controller");
            knownNodeSet.remove(name);
        }

        Map<String, List<NodeCondition>> zoneToNodeConditions = new ConcurrentHashMap<>();
        // marking pods not ready is one write per pod: nodes are handled with bounded concurrency
        parallelize(nodes.size(), i -> updateNode(nodes.get(i), zoneToNodeConditions));
        handleDisruption(zoneToNodeConditions, nodes);
    }

    /** workqueue.ParallelizeUntil: {@code pieces} pieces over at most nodeUpdateWorkerSize workers. */
    private void parallelize(int pieces, java.util.function.IntConsumer piece) throws InterruptedException {
        AtomicInteger next = new AtomicInteger();
        Runnable worker = () -> {
            for (int i = next.getAndIncrement(); i < pieces; i = next.getAndIncrement()) {
                try {
                    piece.accept(i);
                } catch (RuntimeException e) {
                    LOG.errorf("node health update failed: %s", ApiErrors.message(e));
                }
            }
        };
        List<Future<?>> running = new ArrayList<>();
        for (int w = 0; w < Math.min(NODE_UPDATE_WORKER_SIZE, pieces); w++) {
            running.add(workers.submit(worker));
        }
        for (Future<?> f : running) {
            try {
                f.get();
            } catch (java.util.concurrent.ExecutionException e) {
                LOG.errorf("node health worker failed: %s", e.getCause());
            }
        }
    }

    /** updateNodeFunc: one node's health, its taint queue, and its pods' readiness. */
    private void updateNode(Node cached, Map<String, List<NodeCondition>> zoneToNodeConditions) {
        long start = System.nanoTime();
        try {
            Node node = DeepCopy.of(cached);
            HealthUpdate update = null;
            for (int attempt = 0; attempt < RateLimitedTimedQueue.NODE_HEALTH_UPDATE_RETRY; attempt++) {
                try {
                    update = tryUpdateNodeHealth(node);
                    break;
                } catch (RuntimeException e) {
                    String name = node.getMetadata().getName();
                    try {
                        node = client.nodes().withName(name).get();
                    } catch (RuntimeException getError) {
                        node = null;
                    }
                    if (node == null) {
                        LOG.errorf("Failed while getting a Node to retry updating node health. Probably Node %s was deleted",
                                name);
                        return;
                    }
                    sleep(RETRY_SLEEP_MILLIS);
                }
            }
            if (update == null) {
                LOG.errorf("Update health of Node %s from Controller error, Skipping - no pods will be evicted",
                        node.getMetadata().getName());
                return;
            }
            String name = node.getMetadata().getName();
            if (!isNodeExcludedFromDisruptionChecks(node)) {
                // a null Ready condition counts as not ready in computeZoneState
                zoneToNodeConditions.computeIfAbsent(zoneKey(node), z -> java.util.Collections.synchronizedList(
                        new ArrayList<>())).add(update.currentReady());
            }
            NodeCondition current = update.currentReady();
            if (current != null) {
                List<Pod> pods = podsOnNode.apply(name);
                processTaintBaseEviction(node, current);
                boolean needsRetry = nodesToRetry.contains(name);
                boolean becameNotReady = !"True".equals(current.getStatus())
                        && "True".equals(update.observedReady().getStatus());
                if (becameNotReady) {
                    // reported once, when the status changed
                    recordNodeStatusChange(node, "NodeNotReady");
                }
                if (becameNotReady || (needsRetry && !"True".equals(update.observedReady().getStatus()))) {
                    try {
                        podReadiness.markPodsNotReady(pods, name);
                    } catch (RuntimeException e) {
                        LOG.errorf("unable to mark all pods NotReady on node %s: %s; queuing for retry", name,
                                e.getMessage());
                        nodesToRetry.add(name);
                        return;
                    }
                }
            }
            nodesToRetry.remove(name);
        } finally {
            metrics.observeUpdateNodeHealth((System.nanoTime() - start) / 1e9);
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    static boolean isNodeExcludedFromDisruptionChecks(Node node) {
        Map<String, String> labels = node.getMetadata().getLabels();
        return labels != null && labels.containsKey(LABEL_NODE_DISRUPTION_EXCLUSION);
    }

    // ---- tryUpdateNodeHealth ----

    /**
     * Upstream's tryUpdateNodeHealth on {@code node} (a copy it changes): refreshes the node's health data
     * from its status and Lease and, past the grace period, writes the Unknown conditions. Throws when the
     * status write fails (the caller retries from a fresh read).
     */
    HealthUpdate tryUpdateNodeHealth(Node node) {
        String name = node.getMetadata().getName();
        if (node.getStatus() == null) {
            node.setStatus(new NodeStatus());
        }
        NodeStatus status = node.getStatus();
        NodeHealth.Data nodeHealth = nodeHealthMap.get(name);
        Instant creation = Instant.parse(node.getMetadata().getCreationTimestamp());
        Duration gracePeriod;
        NodeCondition observedReady;
        NodeCondition currentReady = condition(status, "Ready");
        try {
            if (currentReady == null) {
                // the kubelet never posted a status: a made-up Unknown condition as of the node's creation
                observedReady = new NodeConditionBuilder().withType("Ready").withStatus("Unknown")
                        .withLastHeartbeatTime(node.getMetadata().getCreationTimestamp())
                        .withLastTransitionTime(node.getMetadata().getCreationTimestamp()).build();
                gracePeriod = settings.nodeStartupGracePeriod();
                if (nodeHealth != null) {
                    nodeHealth.status = status;
                } else {
                    nodeHealth = new NodeHealth.Data(status, creation, creation, null);
                }
            } else {
                observedReady = new NodeConditionBuilder(currentReady).build();
                gracePeriod = settings.nodeMonitorGracePeriod();
            }
            NodeCondition savedCondition = null;
            Lease savedLease = null;
            if (nodeHealth != null) {
                savedCondition = condition(nodeHealth.status, "Ready");
                savedLease = nodeHealth.lease;
            }
            Instant now = clock.instant();
            if (nodeHealth == null) {
                LOG.infof("Missing timestamp for Node %s. Assuming now as a timestamp", name);
                nodeHealth = new NodeHealth.Data(status, now, now, null);
            } else if (savedCondition == null && currentReady != null) {
                LOG.debugf("Creating timestamp entry for newly observed Node %s", name);
                nodeHealth = new NodeHealth.Data(status, now, now, null);
            } else if (savedCondition != null && currentReady == null) {
                LOG.errorf("ReadyCondition was removed from Status of Node %s", name);
                nodeHealth = new NodeHealth.Data(status, now, now, null);
            } else if (savedCondition != null && currentReady != null
                    && !sameTime(savedCondition.getLastHeartbeatTime(), currentReady.getLastHeartbeatTime())) {
                Instant transitionTime;
                // the Ready condition changed since last seen: its transition is now
                if (!sameTime(savedCondition.getLastTransitionTime(), currentReady.getLastTransitionTime())) {
                    LOG.debugf("ReadyCondition for Node %s transitioned from %s to %s", name,
                            savedCondition.getStatus(), currentReady.getStatus());
                    transitionTime = now;
                } else {
                    transitionTime = nodeHealth.readyTransitionTimestamp;
                }
                LOG.tracef("Node %s ReadyCondition updated. Updating timestamp", name);
                nodeHealth = new NodeHealth.Data(status, now, transitionTime, null);
            }
            // a renewed Lease always counts as a probe: a kubelet that renews its Lease but never posts a
            // status is taken as healthy
            Lease observedLease = leaseByKey.apply(NODE_LEASE_NAMESPACE + "/" + name);
            if (observedLease != null && (savedLease == null || renewedAfter(savedLease, observedLease))) {
                nodeHealth.lease = observedLease;
                nodeHealth.probeTimestamp = now;
            }

            if (now.isAfter(nodeHealth.probeTimestamp.plus(gracePeriod))) {
                // neither status nor Lease for longer than the grace period: Unknown, whatever it was
                String nowTimestamp = PodStatusPatch.metaTime(now);
                List<NodeCondition> conditions = status.getConditions() == null ? new ArrayList<>()
                        : new ArrayList<>(status.getConditions());
                status.setConditions(conditions);
                // NetworkUnavailable is left alone: it is managed on the control plane's side
                for (String type : UNKNOWN_CONDITION_TYPES) {
                    NodeCondition current = condition(status, type);
                    if (current == null) {
                        LOG.debugf("Condition %s of node %s was never updated by kubelet", type, name);
                        conditions.add(new NodeConditionBuilder().withType(type).withStatus("Unknown")
                                .withReason("NodeStatusNeverUpdated").withMessage("Kubelet never posted node status.")
                                .withLastHeartbeatTime(node.getMetadata().getCreationTimestamp())
                                .withLastTransitionTime(nowTimestamp).build());
                    } else {
                        LOG.debugf("Node %s hasn't been updated for %s. Last %s is: %s", name,
                                Duration.between(nodeHealth.probeTimestamp, now), type, current.getStatus());
                        if (!"Unknown".equals(current.getStatus())) {
                            current.setStatus("Unknown");
                            current.setReason("NodeStatusUnknown");
                            current.setMessage("Kubelet stopped posting node status.");
                            current.setLastTransitionTime(nowTimestamp);
                        }
                    }
                }
                currentReady = condition(status, "Ready");
                if (!semanticEqual(currentReady, observedReady)) {
                    try {
                        client.nodes().resource(node).updateStatus();
                    } catch (RuntimeException e) {
                        LOG.errorf("Error updating node %s: %s", name, ApiErrors.message(e));
                        throw e;
                    }
                    nodeHealth = new NodeHealth.Data(status, nodeHealth.probeTimestamp, now, observedLease);
                }
            }
            return new HealthUpdate(gracePeriod, observedReady, currentReady);
        } finally {
            nodeHealthMap.set(name, nodeHealth);
        }
    }

    /** MicroTime.Before: false when either renew time is missing. */
    private static boolean renewedAfter(Lease saved, Lease observed) {
        java.time.ZonedDateTime a = saved.getSpec() == null ? null : saved.getSpec().getRenewTime();
        java.time.ZonedDateTime b = observed.getSpec() == null ? null : observed.getSpec().getRenewTime();
        if (a == null || b == null) {
            return false;
        }
        return a.toInstant().isBefore(b.toInstant());
    }

    private static boolean sameTime(String a, String b) {
        return Objects.equals(instant(a), instant(b));
    }

    private static Instant instant(String t) {
        return t == null || t.isEmpty() ? null : Instant.parse(t);
    }

    /** apiequality.Semantic.DeepEqual of two node conditions (times as instants). */
    static boolean semanticEqual(NodeCondition a, NodeCondition b) {
        if (a == null || b == null) {
            return a == b;
        }
        return Objects.equals(a.getType(), b.getType()) && Objects.equals(a.getStatus(), b.getStatus())
                && Objects.equals(emptyToNull(a.getReason()), emptyToNull(b.getReason()))
                && Objects.equals(emptyToNull(a.getMessage()), emptyToNull(b.getMessage()))
                && sameTime(a.getLastHeartbeatTime(), b.getLastHeartbeatTime())
                && sameTime(a.getLastTransitionTime(), b.getLastTransitionTime());
    }

    private static String emptyToNull(String s) {
        return s == null || s.isEmpty() ? null : s;
    }

    /** GetNodeCondition: the status's condition of that type, or null. */
    static NodeCondition condition(NodeStatus status, String type) {
        if (status == null || status.getConditions() == null) {
            return null;
        }
        return status.getConditions().stream().filter(c -> type.equals(c.getType())).findFirst().orElse(null);
    }

    // ---- taints ----

    /** processTaintBaseEviction: queue, swap or remove the node's NoExecute taint per its Ready condition. */
    void processTaintBaseEviction(Node node, NodeCondition currentReady) {
        String name = node.getMetadata().getName();
        switch (String.valueOf(currentReady.getStatus())) {
            case "False" -> {
                // already unreachable-tainted: swap at once, without waiting for the queue
                if (NodeTaints.taintExists(node, NodeTaints.UNREACHABLE_NO_EXECUTE)) {
                    if (!taints.swapNodeControllerTaint(List.of(NodeTaints.NOT_READY_NO_EXECUTE),
                            List.of(NodeTaints.UNREACHABLE_NO_EXECUTE), node, clock.instant())) {
                        LOG.error("Failed to instantly swap UnreachableTaint to NotReadyTaint. Will try again in the next cycle");
                    }
                } else if (markNodeForTainting(node, "False")) {
                    LOG.debugf("Node %s is NotReady as of %s. Adding it to the Taint queue", name, clock.instant());
                }
            }
            case "Unknown" -> {
                if (NodeTaints.taintExists(node, NodeTaints.NOT_READY_NO_EXECUTE)) {
                    if (!taints.swapNodeControllerTaint(List.of(NodeTaints.UNREACHABLE_NO_EXECUTE),
                            List.of(NodeTaints.NOT_READY_NO_EXECUTE), node, clock.instant())) {
                        LOG.error("Failed to instantly swap NotReadyTaint to UnreachableTaint. Will try again in the next cycle");
                    }
                } else if (markNodeForTainting(node, "Unknown")) {
                    LOG.debugf("Node %s is unresponsive as of %s. Adding it to the Taint queue", name, clock.instant());
                }
            }
            case "True" -> {
                if (markNodeAsReachable(node)) {
                    LOG.debugf("Node %s is healthy again, removed all taints", name);
                }
            }
            default -> {
            }
        }
    }

    /**
     * markNodeForTainting: (re)queues the node in its zone's queue; a node not yet carrying the taint its
     * status calls for is taken out first, so it is queued again even if it was processed before.
     */
    boolean markNodeForTainting(Node node, String status) {
        synchronized (evictorLock) {
            RateLimitedTimedQueue queue = zoneNoExecuteTainter.get(zoneKey(node));
            if (queue == null) {
                return false;
            }
            if ("False".equals(status) && !NodeTaints.taintExists(node, NodeTaints.NOT_READY_NO_EXECUTE)) {
                queue.remove(node.getMetadata().getName());
            }
            if ("Unknown".equals(status) && !NodeTaints.taintExists(node, NodeTaints.UNREACHABLE_NO_EXECUTE)) {
                queue.remove(node.getMetadata().getName());
            }
            return queue.add(node.getMetadata().getName(), node.getMetadata().getUid());
        }
    }

    /**
     * markNodeAsReachable: removes both NoExecute taints and takes the node out of its zone's queue.
     * Returns whether it was queued; false (logged) when a taint could not be removed.
     */
    boolean markNodeAsReachable(Node node) {
        String name = node.getMetadata().getName();
        try {
            taints.removeTaintOffNode(name, node, List.of(NodeTaints.UNREACHABLE_NO_EXECUTE));
        } catch (RuntimeException | InterruptedException e) {
            interruptedAgain(e);
            LOG.errorf("Failed to remove unreachable taint from node %s: %s", name, ApiErrors.message(e));
            return false;
        }
        try {
            taints.removeTaintOffNode(name, node, List.of(NodeTaints.NOT_READY_NO_EXECUTE));
        } catch (RuntimeException | InterruptedException e) {
            interruptedAgain(e);
            LOG.errorf("Failed to remove not-ready taint from node %s: %s", name, ApiErrors.message(e));
            return false;
        }
        synchronized (evictorLock) {
            RateLimitedTimedQueue queue = zoneNoExecuteTainter.get(zoneKey(node));
            return queue != null && queue.remove(name);
        }
    }

    private static void interruptedAgain(Exception e) {
        if (e instanceof InterruptedException) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * doNoExecuteTaintingPass: each zone's queue, within its rate, adds the NoExecute taint matching the
     * queued node's Ready condition now (and removes the other one); a node Ready again is dropped.
     */
    void doNoExecuteTaintingPass() {
        synchronized (taintingLock) {
            List<String> zones;
            synchronized (evictorLock) {
                zones = new ArrayList<>(zoneNoExecuteTainter.keySet());
            }
            for (String zone : zones) {
                RateLimitedTimedQueue queue;
                synchronized (evictorLock) {
                    // zones are never removed, so the queue is there
                    queue = zoneNoExecuteTainter.get(zone);
                }
                queue.tryEach(value -> taintQueued(value.value()));
            }
        }
    }

    private RateLimitedTimedQueue.Outcome taintQueued(String nodeName) {
        Node node = nodeByName.apply(nodeName);
        if (node == null) {
            LOG.infof("Node %s no longer present in nodeLister", nodeName);
            return RateLimitedTimedQueue.Outcome.DONE;
        }
        NodeCondition ready = condition(node.getStatus(), "Ready");
        if (ready == null) {
            LOG.infof("Failed to get NodeCondition from the node status of %s", nodeName);
            return RateLimitedTimedQueue.Outcome.retryAfter(Duration.ofMillis(50));
        }
        // unreachable and not-ready mirror the Ready condition: never both
        Taint toAdd;
        Taint opposite;
        switch (String.valueOf(ready.getStatus())) {
            case "False" -> {
                toAdd = NodeTaints.NOT_READY_NO_EXECUTE;
                opposite = NodeTaints.UNREACHABLE_NO_EXECUTE;
            }
            case "Unknown" -> {
                toAdd = NodeTaints.UNREACHABLE_NO_EXECUTE;
                opposite = NodeTaints.NOT_READY_NO_EXECUTE;
            }
            default -> {
                LOG.debugf("Node %s was in a taint queue, but it's ready now. Ignoring taint request", nodeName);
                return RateLimitedTimedQueue.Outcome.DONE;
            }
        }
        boolean result = taints.swapNodeControllerTaint(List.of(toAdd), List.of(opposite), node, clock.instant());
        if (result) {
            metrics.evictions(zoneKey(node), 1);
            return RateLimitedTimedQueue.Outcome.DONE;
        }
        return RateLimitedTimedQueue.Outcome.retryAfter(Duration.ZERO);
    }

    // ---- zones ----

    /**
     * handleDisruption: each zone's state from its nodes' Ready conditions, and its queue's rate. When every
     * zone is fully disrupted (the control plane is likely the one cut off), tainting stops everywhere and
     * the NoExecute taints are removed; when one comes back, every node's probe time restarts from now.
     */
    void handleDisruption(Map<String, List<NodeCondition>> zoneToNodeConditions, List<Node> nodes) {
        Map<String, ZoneState> newZoneStates = new HashMap<>();
        boolean allAreFullyDisrupted = true;
        for (Map.Entry<String, List<NodeCondition>> e : zoneToNodeConditions.entrySet()) {
            String zone = e.getKey();
            List<NodeCondition> conditions = e.getValue();
            metrics.zoneSize(zone, conditions.size());
            ZoneStateResult r = computeZoneState(conditions);
            metrics.zoneHealth(zone, 100.0 * (conditions.size() - r.unhealthy()) / conditions.size());
            metrics.unhealthyNodes(zone, r.unhealthy());
            if (r.state() != ZoneState.FULL_DISRUPTION) {
                allAreFullyDisrupted = false;
            }
            newZoneStates.put(zone, r.state());
            if (!zoneStates.containsKey(zone)) {
                LOG.errorf("Setting initial state for unseen zone %s", zone);
                zoneStates.put(zone, ZoneState.INITIAL);
            }
        }

        boolean allWasFullyDisrupted = true;
        for (String zone : new ArrayList<>(zoneStates.keySet())) {
            ZoneState v = zoneStates.get(zone);
            if (!zoneToNodeConditions.containsKey(zone)) {
                metrics.zoneSize(zone, 0);
                metrics.zoneHealth(zone, 100);
                metrics.unhealthyNodes(zone, 0);
                zoneStates.remove(zone);
                continue;
            }
            if (v != ZoneState.FULL_DISRUPTION) {
                allWasFullyDisrupted = false;
                break;
            }
        }

        // at least one node answered in this pass or the previous one
        if (!allAreFullyDisrupted || !allWasFullyDisrupted) {
            if (allAreFullyDisrupted) {
                LOG.info("Controller detected that all Nodes are not-Ready. Entering master disruption mode");
                for (Node n : nodes) {
                    if (!markNodeAsReachable(n)) {
                        LOG.debugf("NoExecute taints of Node %s not removed, or it was not queued", n.getMetadata().getName());
                    }
                }
                // no more tainting anywhere
                for (String zone : zoneStates.keySet()) {
                    RateLimitedTimedQueue queue = zoneNoExecuteTainter.get(zone);
                    if (queue != null) {
                        queue.swapLimiter(0);
                    }
                }
                for (String zone : zoneStates.keySet()) {
                    zoneStates.put(zone, ZoneState.FULL_DISRUPTION);
                }
                return;
            }
            if (allWasFullyDisrupted) {
                LOG.info("Controller detected that some Nodes are Ready. Exiting master disruption mode");
                // the nodes were unheard of while the control plane was cut off: start their grace afresh
                Instant now = clock.instant();
                for (Node n : nodes) {
                    NodeHealth.Data v = nodeHealthMap.get(n.getMetadata().getName());
                    if (v == null) {
                        continue;
                    }
                    v.probeTimestamp = now;
                    v.readyTransitionTimestamp = now;
                    nodeHealthMap.set(n.getMetadata().getName(), v);
                }
                for (String zone : zoneStates.keySet()) {
                    List<NodeCondition> c = zoneToNodeConditions.get(zone);
                    setLimiterInZone(zone, c == null ? 0 : c.size(), newZoneStates.get(zone));
                    zoneStates.put(zone, newZoneStates.get(zone));
                }
                return;
            }
            for (String zone : zoneStates.keySet()) {
                ZoneState v = zoneStates.get(zone);
                ZoneState newState = newZoneStates.get(zone);
                if (v == newState) {
                    continue;
                }
                LOG.infof("Controller detected that zone %s is now in new state %s", zone, newState);
                List<NodeCondition> c = zoneToNodeConditions.get(zone);
                setLimiterInZone(zone, c == null ? 0 : c.size(), newState);
                zoneStates.put(zone, newState);
            }
        }
    }

    private void setLimiterInZone(String zone, int zoneSize, ZoneState state) {
        RateLimitedTimedQueue queue = zoneNoExecuteTainter.get(zone);
        if (queue == null || state == null) {
            return;
        }
        switch (state) {
            case NORMAL -> queue.swapLimiter(settings.evictionLimiterQps());
            case PARTIAL_DISRUPTION -> queue.swapLimiter(reducedQps(zoneSize));
            case FULL_DISRUPTION -> queue.swapLimiter(healthyQps(zoneSize));
            default -> {
            }
        }
    }

    /** HealthyQPSFunc: the normal rate, whatever the zone's size. */
    float healthyQps(int nodeNum) {
        return settings.evictionLimiterQps();
    }

    /** ReducedQPSFunc: the secondary rate in a large zone, none in a small one. */
    float reducedQps(int nodeNum) {
        if (nodeNum > settings.largeClusterThreshold()) {
            return settings.secondaryEvictionLimiterQps();
        }
        return 0;
    }

    record ZoneStateResult(int unhealthy, ZoneState state) {
    }

    /**
     * ComputeZoneState: FullDisruption when no node is Ready, PartialDisruption when more than 2 are not and
     * they are at least --unhealthy-zone-threshold of the zone, else Normal.
     */
    ZoneStateResult computeZoneState(List<NodeCondition> readyConditions) {
        int readyNodes = 0;
        int notReadyNodes = 0;
        for (NodeCondition c : readyConditions) {
            if (c != null && "True".equals(c.getStatus())) {
                readyNodes++;
            } else {
                notReadyNodes++;
            }
        }
        if (readyNodes == 0 && notReadyNodes > 0) {
            return new ZoneStateResult(notReadyNodes, ZoneState.FULL_DISRUPTION);
        }
        if (notReadyNodes > 2
                && (float) notReadyNodes / (float) (notReadyNodes + readyNodes) >= settings.unhealthyZoneThreshold()) {
            return new ZoneStateResult(notReadyNodes, ZoneState.PARTIAL_DISRUPTION);
        }
        return new ZoneStateResult(notReadyNodes, ZoneState.NORMAL);
    }

    /**
     * classifyNodes: nodes not known yet, known nodes no longer listed, and known nodes whose zone has no
     * state (a zone that emptied and came back).
     */
    private void classifyNodes(List<Node> all, List<Node> added, List<Node> deleted, List<Node> newZoneRepresentatives) {
        for (Node n : all) {
            if (!knownNodeSet.containsKey(n.getMetadata().getName())) {
                added.add(n);
            } else if (!zoneStates.containsKey(zoneKey(n))) {
                newZoneRepresentatives.add(n);
            }
        }
        if (knownNodeSet.size() + added.size() != all.size()) {
            Map<String, Node> known = new HashMap<>(knownNodeSet);
            for (Node n : all) {
                known.remove(n.getMetadata().getName());
            }
            deleted.addAll(known.values());
        }
    }

    /** addPodEvictorForNewZone: a new zone gets its state and its tainting queue at --node-eviction-rate. */
    private void addPodEvictorForNewZone(Node node) {
        synchronized (evictorLock) {
            String zone = zoneKey(node);
            if (!zoneStates.containsKey(zone)) {
                zoneStates.put(zone, ZoneState.INITIAL);
                zoneNoExecuteTainter.put(zone, new RateLimitedTimedQueue(RateLimiter.tokenBucket(
                        settings.evictionLimiterQps(), RateLimitedTimedQueue.EVICTION_RATE_LIMITER_BURST), clock));
                LOG.infof("Initializing eviction metric for zone %s", zone);
                metrics.evictions(zone, 0);
            }
        }
    }

    /**
     * topology.GetZoneKey: {@code region:\0:zone} from the beta failure-domain labels, else the topology
     * ones; empty when the node has neither.
     */
    static String zoneKey(Node node) {
        Map<String, String> labels = node.getMetadata().getLabels();
        if (labels == null) {
            return "";
        }
        String zone = labels.containsKey("failure-domain.beta.kubernetes.io/zone")
                ? labels.get("failure-domain.beta.kubernetes.io/zone")
                : labels.getOrDefault("topology.kubernetes.io/zone", "");
        String region = labels.containsKey("failure-domain.beta.kubernetes.io/region")
                ? labels.get("failure-domain.beta.kubernetes.io/region")
                : labels.getOrDefault("topology.kubernetes.io/region", "");
        if (region.isEmpty() && zone.isEmpty()) {
            return "";
        }
        return region + ":\0:" + zone;
    }

    // ---- pods ----

    /**
     * processPod: a pod newly bound to a node whose last seen Ready condition is not True is marked not
     * ready (the pods already there are handled by the health pass). Throws to be retried.
     */
    void processPod(Pod pod) {
        String nodeName = pod.getSpec().getNodeName();
        NodeHealth.Data nodeHealth = nodeHealthMap.get(nodeName);
        if (nodeHealth == null) {
            // not gathered yet, or the node was removed meanwhile
            return;
        }
        if (nodeByName.apply(nodeName) == null) {
            throw new IllegalStateException("node \"" + nodeName + "\" not found");
        }
        NodeCondition currentReady = condition(nodeHealth.status, "Ready");
        if (currentReady == null) {
            // only right after the node was added; its next update handles the pod
            return;
        }
        if (!"True".equals(currentReady.getStatus())) {
            podReadiness.markPodsNotReady(List.of(pod), nodeName);
        }
    }

    // ---- events ----

    /** RecordNodeEvent: "Node X event: ..." on a reference to the node (name and UID). */
    private void recordNodeEvent(Node node, String type, String reason, String event) {
        String name = node.getMetadata().getName();
        recorder.event(nodeRef(node), type, reason, "Node " + name + " event: " + event);
    }

    /** RecordNodeStatusChange: "Node X status is now: NodeNotReady". */
    private void recordNodeStatusChange(Node node, String newStatus) {
        String name = node.getMetadata().getName();
        recorder.event(nodeRef(node), EventRecorder.NORMAL, newStatus, "Node " + name + " status is now: " + newStatus);
    }

    private static Node nodeRef(Node node) {
        return new NodeBuilder().withNewMetadata().withName(node.getMetadata().getName())
                .withUid(node.getMetadata().getUid()).endMetadata().build();
    }

    // ---- tests ----

    ZoneState zoneState(String zone) {
        return zoneStates.get(zone);
    }

    RateLimitedTimedQueue zoneTainter(String zone) {
        synchronized (evictorLock) {
            return zoneNoExecuteTainter.get(zone);
        }
    }
}
