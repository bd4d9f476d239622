package io.qkcm.controller.podgc;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.function.Function;
import java.util.function.Supplier;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeCondition;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.PodConditionBuilder;
import io.fabric8.kubernetes.api.model.PodStatus;
import io.fabric8.kubernetes.api.model.Taint;
import io.qkcm.controller.PodStatusPatch;
import io.qkcm.runtime.workqueue.WorkQueue;
import io.qkcm.controller.podgc.metrics.PodGCMetrics;

/**
 * Upstream's pod garbage collection pass (pkg/controller/podgc gc_controller.go {@code gc} and its
 * parts), over the pods and nodes of the shared caches: terminated pods above the threshold (evicted
 * first, then oldest, then by name), terminating pods on not-ready nodes tainted
 * {@code node.kubernetes.io/out-of-service}, pods bound to nodes that are gone (after the nodes' quarantine
 * in {@code orphaned_pods_nodes} and a fresh GET), and terminating pods never scheduled. Each is marked
 * Failed first (orphans with a DisruptionTarget condition) when not terminal, then deleted with grace
 * period 0.
 */
final class PodGC {

    private static final Logger LOG = Logger.getLogger(PodGC.class);

    static final String TAINT_NODE_OUT_OF_SERVICE = "node.kubernetes.io/out-of-service";
    /** The kubelet eviction manager's pod status reason (pkg/kubelet/eviction Reason). */
    static final String EVICTION_REASON = "Evicted";
    static final String DISRUPTION_TARGET = "DisruptionTarget";

    /** What the pass asks of the API server: upstream's three calls. */
    interface Api {
        /** Upstream's PatchPodStatus on the status subresource; the patch is the strategic merge patch. */
        void patchPodStatus(String namespace, String name, String patch);

        /** Delete with {@code gracePeriodSeconds: 0}. */
        void deletePod(String namespace, String name);

        /** A fresh GET of the node: false only on NotFound; other errors are thrown. */
        boolean nodeExists(String name);
    }

    private final Api api;
    private final Function<String, Node> nodeLister;
    private final int terminatedPodThreshold;
    private final Duration quarantineTime;
    private final WorkQueue<String> nodeQueue;
    private final PodGCMetrics metrics;
    private final Executor deletions;
    private final boolean observedGenerationTracking;
    private final Supplier<Instant> clock;

    PodGC(Api api, Function<String, Node> nodeLister, int terminatedPodThreshold, Duration quarantineTime,
            WorkQueue<String> nodeQueue, PodGCMetrics metrics, Executor deletions, boolean observedGenerationTracking,
            Supplier<Instant> clock) {
        this.api = api;
        this.nodeLister = nodeLister;
        this.terminatedPodThreshold = terminatedPodThreshold;
        this.quarantineTime = quarantineTime;
        this.nodeQueue = nodeQueue;
        this.metrics = metrics;
        this.deletions = deletions;
        this.observedGenerationTracking = observedGenerationTracking;
        this.clock = clock;
    }

    WorkQueue<String> nodeQueue() {
        return nodeQueue;
    }

    /** One pass: upstream's {@code gc}. */
    void gc(List<Pod> pods, List<Node> nodes) throws InterruptedException {
        if (terminatedPodThreshold > 0) {
            gcTerminated(pods);
        }
        gcTerminating(pods);
        gcOrphaned(pods, nodes);
        gcUnscheduledTerminating(pods);
    }

    static boolean isPodTerminated(Pod pod) {
        String phase = phase(pod);
        return !"Pending".equals(phase) && !"Running".equals(phase) && !"Unknown".equals(phase);
    }

    static boolean isPodTerminating(Pod pod) {
        return pod.getMetadata().getDeletionTimestamp() != null;
    }

    void gcTerminating(List<Pod> pods) {
        LOG.trace("GC'ing terminating pods that are on out-of-service nodes");
        List<Pod> terminatingPods = new ArrayList<>();
        for (Pod pod : pods) {
            if (!isPodTerminating(pod)) {
                continue;
            }
            String nodeName = nodeName(pod);
            Node node = nodeName.isEmpty() ? null : nodeLister.apply(nodeName);
            if (node == null) {
                LOG.errorf("Failed to get node: node \"%s\" not found", nodeName);
                continue;
            }
            if (!isNodeReady(node) && taintKeyExists(node, TAINT_NODE_OUT_OF_SERVICE)) {
                LOG.tracef("Garbage collecting pod that is terminating: pod %s phase %s", podRef(pod), phase(pod));
                terminatingPods.add(pod);
            }
        }
        if (terminatingPods.isEmpty()) {
            return;
        }
        LOG.tracef("Garbage collecting pods that are terminating on node tainted with node.kubernetes.io/out-of-service: numPods %d",
                terminatingPods.size());
        terminatingPods.sort(BY_EVICTION_AND_CREATION_TIMESTAMP);
        inParallel(terminatingPods, pod -> {
            metrics.deleting(namespace(pod), PodGCMetrics.REASON_TERMINATING_OUT_OF_SERVICE);
            try {
                markFailedAndDeletePod(pod, null);
            } catch (RuntimeException e) {
                LOG.error(e.getMessage());
                metrics.deletingError(namespace(pod), PodGCMetrics.REASON_TERMINATING_OUT_OF_SERVICE);
            }
        });
    }

    void gcTerminated(List<Pod> pods) {
        List<Pod> terminatedPods = new ArrayList<>();
        for (Pod pod : pods) {
            if (isPodTerminated(pod)) {
                terminatedPods.add(pod);
            }
        }
        int deleteCount = terminatedPods.size() - terminatedPodThreshold;
        if (deleteCount <= 0) {
            return;
        }
        LOG.infof("Garbage collecting pods: numPods %d", deleteCount);
        terminatedPods.sort(BY_EVICTION_AND_CREATION_TIMESTAMP);
        inParallel(terminatedPods.subList(0, deleteCount), pod -> {
            try {
                markFailedAndDeletePod(pod, null);
            } catch (RuntimeException e) {
                LOG.error(e.getMessage());
                metrics.deletingError(namespace(pod), PodGCMetrics.REASON_TERMINATED);
            }
            metrics.deleting(namespace(pod), PodGCMetrics.REASON_TERMINATED);
        });
    }

    /** Pods bound to nodes that do not exist, once the nodes have been quarantined and fetched fresh. */
    void gcOrphaned(List<Pod> pods, List<Node> nodes) throws InterruptedException {
        LOG.trace("GC'ing orphaned");
        Set<String> existingNodeNames = new HashSet<>();
        for (Node node : nodes) {
            existingNodeNames.add(node.getMetadata().getName());
        }
        for (Pod pod : pods) {
            String nodeName = nodeName(pod);
            if (!nodeName.isEmpty() && !existingNodeNames.contains(nodeName)) {
                nodeQueue.addAfter(nodeName, quarantineTime);
            }
        }
        Set<String> deletedNodesNames = discoverDeletedNodes(existingNodeNames);
        if (deletedNodesNames == null) {
            return;
        }
        for (Pod pod : pods) {
            if (!deletedNodesNames.contains(nodeName(pod))) {
                continue;
            }
            LOG.debugf("Found orphaned Pod assigned to the Node, deleting: pod %s node %s", podRef(pod), nodeName(pod));
            PodCondition condition = new PodConditionBuilder()
                    .withType(DISRUPTION_TARGET)
                    .withObservedGeneration(conditionObservedGeneration(pod, DISRUPTION_TARGET))
                    .withStatus("True")
                    .withReason("DeletionByPodGC")
                    .withMessage("PodGC: node no longer exists")
                    .build();
            try {
                markFailedAndDeletePod(pod, condition);
                LOG.infof("Forced deletion of orphaned Pod succeeded: pod %s", podRef(pod));
            } catch (RuntimeException e) {
                LOG.error(e.getMessage());
                metrics.deletingError(namespace(pod), PodGCMetrics.REASON_ORPHANED);
            }
            metrics.deleting(namespace(pod), PodGCMetrics.REASON_ORPHANED);
        }
    }

    /** The quarantined nodes still missing from the cache and from the API server; null when shut down. */
    Set<String> discoverDeletedNodes(Set<String> existingNodeNames) throws InterruptedException {
        Set<String> deletedNodesNames = new HashSet<>();
        while (nodeQueue.length() > 0) {
            String nodeName = nodeQueue.get();
            if (nodeName == null) {
                return null;
            }
            try {
                if (!existingNodeNames.contains(nodeName)) {
                    try {
                        if (!api.nodeExists(nodeName)) {
                            deletedNodesNames.add(nodeName);
                        }
                    } catch (RuntimeException e) {
                        // the node comes back to the queue on a later pass if still needed
                        LOG.errorf("Error while getting node: node %s: %s", nodeName, e.getMessage());
                    }
                }
            } finally {
                nodeQueue.done(nodeName);
            }
        }
        return deletedNodesNames;
    }

    void gcUnscheduledTerminating(List<Pod> pods) {
        LOG.trace("GC'ing unscheduled pods which are terminating");
        for (Pod pod : pods) {
            if (pod.getMetadata().getDeletionTimestamp() == null || !nodeName(pod).isEmpty()) {
                continue;
            }
            LOG.debugf("Found unscheduled terminating Pod not assigned to any Node, deleting: pod %s", podRef(pod));
            try {
                markFailedAndDeletePod(pod, null);
                LOG.infof("Forced deletion of unscheduled terminating Pod succeeded: pod %s", podRef(pod));
            } catch (RuntimeException e) {
                LOG.error(e.getMessage());
                metrics.deletingError(namespace(pod), PodGCMetrics.REASON_TERMINATING_UNSCHEDULED);
            }
            metrics.deleting(namespace(pod), PodGCMetrics.REASON_TERMINATING_UNSCHEDULED);
        }
    }

    /**
     * Upstream's {@code markFailedAndDeletePodWithCondition}: a pod not yet terminal is patched to
     * phase Failed (with the condition, if any), so that a pod whose kubelet is gone does not stay
     * Running forever; then it is deleted with grace period 0.
     */
    void markFailedAndDeletePod(Pod pod, PodCondition condition) {
        LOG.infof("PodGC is force deleting Pod: pod %s", podRef(pod));
        String phase = phase(pod);
        if (!"Succeeded".equals(phase) && !"Failed".equals(phase)) {
            PodStatus newStatus = PodStatusPatch.copy(pod.getStatus());
            newStatus.setPhase("Failed");
            newStatus.setObservedGeneration(statusObservedGeneration(pod));
            if (condition != null) {
                PodStatusPatch.updatePodCondition(newStatus, condition, clock.get());
            }
            String patch = PodStatusPatch.prepare(pod.getMetadata().getUid(), pod.getStatus(), newStatus);
            if (patch != null) {
                api.patchPodStatus(namespace(pod), pod.getMetadata().getName(), patch);
            }
        }
        api.deletePod(namespace(pod), pod.getMetadata().getName());
    }

    /** Upstream's CalculatePodStatusObservedGeneration. */
    private Long statusObservedGeneration(Pod pod) {
        Long current = pod.getStatus() == null ? null : pod.getStatus().getObservedGeneration();
        if ((current != null && current != 0) || observedGenerationTracking) {
            return generation(pod);
        }
        return 0L;
    }

    /** Upstream's CalculatePodConditionObservedGeneration. */
    private Long conditionObservedGeneration(Pod pod, String type) {
        if (observedGenerationTracking) {
            return generation(pod);
        }
        if (pod.getStatus() != null && pod.getStatus().getConditions() != null) {
            for (PodCondition c : pod.getStatus().getConditions()) {
                if (type.equals(c.getType()) && c.getObservedGeneration() != null && c.getObservedGeneration() != 0) {
                    return generation(pod);
                }
            }
        }
        return 0L;
    }

    private static long generation(Pod pod) {
        return pod.getMetadata().getGeneration() == null ? 0L : pod.getMetadata().getGeneration();
    }

    /** Upstream's goroutine per pod and WaitGroup. */
    private void inParallel(List<Pod> pods, java.util.function.Consumer<Pod> action) {
        List<CompletableFuture<Void>> all = new ArrayList<>();
        for (Pod pod : pods) {
            all.add(CompletableFuture.runAsync(() -> action.accept(pod), deletions));
        }
        CompletableFuture.allOf(all.toArray(CompletableFuture[]::new)).join();
    }

    /**
     * Upstream's byEvictionAndCreationTimestamp: evicted pods first (so that terminated pods of
     * controllers go last), then by creation time, then by name.
     */
    static final Comparator<Pod> BY_EVICTION_AND_CREATION_TIMESTAMP = (a, b) -> {
        boolean aEvicted = isEvicted(a);
        boolean bEvicted = isEvicted(b);
        if (aEvicted != bEvicted) {
            return aEvicted ? -1 : 1;
        }
        Instant at = creation(a);
        Instant bt = creation(b);
        if (Objects.equals(at, bt)) {
            return name(a).compareTo(name(b));
        }
        if (at == null) {
            return -1;
        }
        if (bt == null) {
            return 1;
        }
        return at.compareTo(bt);
    };

    /** pkg/kubelet/eviction PodIsEvicted. */
    static boolean isEvicted(Pod pod) {
        return "Failed".equals(phase(pod)) && pod.getStatus() != null && EVICTION_REASON.equals(pod.getStatus().getReason());
    }

    /** pkg/util/node IsNodeReady. */
    static boolean isNodeReady(Node node) {
        if (node.getStatus() == null || node.getStatus().getConditions() == null) {
            return false;
        }
        for (NodeCondition c : node.getStatus().getConditions()) {
            if ("Ready".equals(c.getType())) {
                return "True".equals(c.getStatus());
            }
        }
        return false;
    }

    static boolean taintKeyExists(Node node, String key) {
        if (node.getSpec() == null || node.getSpec().getTaints() == null) {
            return false;
        }
        for (Taint t : node.getSpec().getTaints()) {
            if (key.equals(t.getKey())) {
                return true;
            }
        }
        return false;
    }

    private static Instant creation(Pod pod) {
        String ts = pod.getMetadata().getCreationTimestamp();
        return ts == null || ts.isEmpty() ? null : Instant.parse(ts);
    }

    private static String name(Pod pod) {
        return pod.getMetadata().getName() == null ? "" : pod.getMetadata().getName();
    }

    private static String phase(Pod pod) {
        return pod.getStatus() == null || pod.getStatus().getPhase() == null ? "" : pod.getStatus().getPhase();
    }

    static String nodeName(Pod pod) {
        return pod.getSpec() == null || pod.getSpec().getNodeName() == null ? "" : pod.getSpec().getNodeName();
    }

    private static String namespace(Pod pod) {
        return pod.getMetadata().getNamespace();
    }

    private static String podRef(Pod pod) {
        return namespace(pod) + "/" + pod.getMetadata().getName();
    }
}
