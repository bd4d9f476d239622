package io.qkcm.controller.nodeipam;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.informers.cache.Store;
import io.qkcm.controller.ApiErrors;
import io.qkcm.runtime.Json;
import io.qkcm.runtime.events.EventRecorder;

/**
 * Upstream's rangeAllocator (pkg/controller/nodeipam/ipam/range_allocator.go): one {@link CidrSet} per
 * cluster CIDR, the service ranges taken out of them, every node's podCIDRs occupied, and a node
 * without podCIDRs given the next block of each set, written with upstream's strategic merge patch
 * (spec.podCIDR and spec.podCIDRs). A deleted node's blocks are released.
 *
 * <p>The sets are built by {@link #prime} from a fresh list of the nodes: once when the controller is
 * built, so that a bad configuration stops the process at start as upstream's constructor does, and
 * again when this replica starts allocating (before its first allocation), so that a replica taking
 * over from another leader starts from the nodes as they are then.
 */
final class RangeAllocator {

    private static final Logger LOG = Logger.getLogger(RangeAllocator.class);

    /** Upstream's cidrUpdateRetries: the patch is sent this many times before the sync fails. */
    static final int CIDR_UPDATE_RETRIES = 3;

    static final String CIDR_NOT_AVAILABLE = "CIDRNotAvailable";
    static final String CIDR_ASSIGNMENT_FAILED = "CIDRAssignmentFailed";

    /** What the allocator is built from (upstream's CIDRAllocatorParams). */
    record Params(List<IPNet> clusterCIDRs, IPNet serviceCIDR, IPNet secondaryServiceCIDR,
            List<Integer> nodeCIDRMaskSizes) {
    }

    private final KubernetesClient client;
    private final Store<Node> nodes;
    private final EventRecorder recorder;
    private final Params params;
    private final CidrSetMetrics metrics;
    private volatile List<CidrSet> cidrSets;

    RangeAllocator(KubernetesClient client, Store<Node> nodes, EventRecorder recorder, Params params,
            CidrSetMetrics metrics) {
        this.client = client;
        this.nodes = nodes;
        this.recorder = recorder;
        this.params = params;
        this.metrics = metrics;
    }

    /**
     * Upstream's NewCIDRRangeAllocator minus the handlers: fresh sets, the service ranges filtered out,
     * the podCIDRs of {@code nodeList} occupied. Throws upstream's error when a set cannot be made or a
     * node holds a CIDR outside the cluster CIDRs; the sets in use are then left as they were. The list
     * is taken under the same lock as releases, so that no deletion falls between the list and the sets.
     */
    synchronized void prime(java.util.function.Supplier<List<Node>> listNodes) {
        List<Node> nodeList = listNodes.get();
        List<CidrSet> sets = new ArrayList<>();
        for (int i = 0; i < params.clusterCIDRs().size(); i++) {
            sets.add(CidrSet.create(params.clusterCIDRs().get(i), params.nodeCIDRMaskSizes().get(i), metrics));
        }
        if (params.serviceCIDR() != null) {
            filterOutServiceRange(sets, params.serviceCIDR());
        } else {
            LOG.info("No Service CIDR provided. Skipping filtering out service addresses");
        }
        if (params.secondaryServiceCIDR() != null) {
            filterOutServiceRange(sets, params.secondaryServiceCIDR());
        } else {
            LOG.info("No Secondary Service CIDR provided. Skipping filtering out secondary service addresses");
        }
        for (Node node : nodeList) {
            if (podCIDRs(node).isEmpty()) {
                LOG.debugf("Node has no CIDR, ignoring: node %s", node.getMetadata().getName());
                continue;
            }
            LOG.debugf("Node has CIDR, occupying it in CIDR map: node %s podCIDR %s", node.getMetadata().getName(),
                    node.getSpec().getPodCIDR());
            occupyCIDRs(sets, node);
        }
        cidrSets = List.copyOf(sets);
    }

    /** The sets in use (tests). */
    List<CidrSet> cidrSets() {
        return cidrSets;
    }

    private static List<String> podCIDRs(Node node) {
        return node.getSpec() == null || node.getSpec().getPodCIDRs() == null ? List.of() : node.getSpec().getPodCIDRs();
    }

    /** Upstream's occupyCIDRs. */
    private static void occupyCIDRs(List<CidrSet> sets, Node node) {
        List<String> cidrs = podCIDRs(node);
        for (int idx = 0; idx < cidrs.size(); idx++) {
            String cidr = cidrs.get(idx);
            IPNet podCIDR;
            try {
                podCIDR = IPNet.parseSloppy(cidr);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(String.format("failed to parse node %s, CIDR %s",
                        node.getMetadata().getName(), node.getSpec().getPodCIDR()));
            }
            if (idx >= sets.size()) {
                throw new IllegalArgumentException(String.format(
                        "node:%s has an allocated cidr: %s at index:%d that does not exist in cluster cidrs configuration",
                        node.getMetadata().getName(), cidr, idx));
            }
            try {
                sets.get(idx).occupy(podCIDR);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(String.format(
                        "failed to mark cidr[%s] at idx [%d] as occupied for node: %s: %s", podCIDR, idx,
                        node.getMetadata().getName(), e.getMessage()));
            }
        }
    }

    /** Upstream's filterOutServiceRange: a service range overlapping a cluster CIDR is never handed out. */
    private static void filterOutServiceRange(List<CidrSet> sets, IPNet serviceCIDR) {
        for (CidrSet set : sets) {
            IPNet cidr = set.clusterCIDR();
            if (!cidr.contains(cidr.maskOf(serviceCIDR.ip())) && !serviceCIDR.contains(serviceCIDR.maskOf(cidr.ip()))) {
                continue;
            }
            try {
                set.occupy(serviceCIDR);
            } catch (IllegalArgumentException e) {
                LOG.errorf("Error filtering out service cidr out cluster cidr: CIDR %s serviceCIDR %s: %s", cidr,
                        serviceCIDR, e.getMessage());
            }
        }
    }

    /**
     * Upstream's AllocateOrOccupyCIDR: a node with podCIDRs has them occupied; one without gets the next
     * block of every set. When a set is exhausted the node gets upstream's CIDRNotAvailable event and the
     * sync fails (retried with backoff).
     */
    void allocateOrOccupyCIDR(Node node) throws InterruptedException {
        List<CidrSet> sets = cidrSets;
        if (!podCIDRs(node).isEmpty()) {
            occupyCIDRs(sets, node);
            return;
        }
        List<IPNet> allocated = new ArrayList<>();
        for (int idx = 0; idx < sets.size(); idx++) {
            try {
                allocated.add(sets.get(idx).allocateNext());
            } catch (CidrSet.NoCIDRsRemaining e) {
                recordNodeStatusChange(node, CIDR_NOT_AVAILABLE);
                // Upstream keeps the blocks already taken from the other sets until a restart; they are
                // given back here so that a dual-stack node retried with backoff does not drain the other
                // family (the next allocation still starts after them, as upstream's would).
                release(sets, allocated);
                throw new IllegalStateException(String.format(
                        "failed to allocate cidr from cluster cidr at idx:%d: %s", idx, e.getMessage()));
            }
        }
        LOG.debugf("Putting node with CIDR into the work queue: node %s CIDRs %s", node.getMetadata().getName(),
                allocated);
        updateCIDRsAllocation(sets, node.getMetadata().getName(), allocated);
    }

    /** Upstream's ReleaseCIDR: the deleted node's blocks are free again. */
    synchronized void releaseCIDR(Node node) {
        List<CidrSet> sets = cidrSets;
        List<String> cidrs = podCIDRs(node);
        if (sets == null || cidrs.isEmpty()) {
            return;
        }
        for (int idx = 0; idx < cidrs.size(); idx++) {
            String cidr = cidrs.get(idx);
            IPNet podCIDR;
            try {
                podCIDR = IPNet.parseSloppy(cidr);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(String.format("failed to parse CIDR %s on Node %s: %s", cidr,
                        node.getMetadata().getName(), e.getMessage()));
            }
            if (idx >= sets.size()) {
                throw new IllegalArgumentException(String.format(
                        "node:%s has an allocated cidr: %s at index:%d that does not exist in cluster cidrs configuration",
                        node.getMetadata().getName(), cidr, idx));
            }
            LOG.debugf("Release CIDR for node: CIDR %s node %s", cidr, node.getMetadata().getName());
            try {
                sets.get(idx).release(podCIDR);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(String.format("error when releasing CIDR %s: %s", cidr, e.getMessage()));
            }
        }
    }

    private static void release(List<CidrSet> sets, List<IPNet> allocated) {
        for (int idx = 0; idx < allocated.size(); idx++) {
            try {
                sets.get(idx).release(allocated.get(idx));
            } catch (IllegalArgumentException e) {
                LOG.errorf("Error when releasing CIDR: index %d CIDR %s: %s", idx, allocated.get(idx), e.getMessage());
            }
        }
    }

    /**
     * Upstream's updateCIDRsAllocation: the node as cached now; nothing to do when it already has these
     * CIDRs, the new blocks given back when it has others; otherwise the patch, sent up to
     * {@link #CIDR_UPDATE_RETRIES} times.
     */
    private void updateCIDRsAllocation(List<CidrSet> sets, String nodeName, List<IPNet> allocated)
            throws InterruptedException {
        List<String> cidrs = allocated.stream().map(IPNet::toString).toList();
        Node node = nodes.getByKey(nodeName);
        if (node == null) {
            LOG.errorf("Failed while getting node for updating Node.Spec.PodCIDRs: node %s not found", nodeName);
            release(sets, allocated);
            throw new IllegalStateException("node \"" + nodeName + "\" not found");
        }
        List<String> current = podCIDRs(node);
        if (current.equals(cidrs)) {
            LOG.debugf("Node already has allocated CIDR. It matches the proposed one: node %s CIDRs %s", nodeName, cidrs);
            return;
        }
        if (!current.isEmpty()) {
            LOG.errorf("Node already has a CIDR allocated. Releasing the new one: node %s podCIDRs %s", nodeName, current);
            release(sets, allocated);
            return;
        }
        RuntimeException error = null;
        for (int i = 0; i < CIDR_UPDATE_RETRIES; i++) {
            if (Thread.currentThread().isInterrupted()) {
                throw new InterruptedException();
            }
            try {
                patchNodeCIDRs(nodeName, cidrs);
                LOG.infof("Set node PodCIDR: node %s podCIDRs %s", nodeName, cidrs);
                return;
            } catch (RuntimeException e) {
                error = e;
            }
        }
        LOG.errorf("Failed to update node PodCIDR after multiple attempts: node %s podCIDRs %s: %s", nodeName, cidrs,
                ApiErrors.message(error));
        recordNodeStatusChange(node, CIDR_ASSIGNMENT_FAILED);
        // Upstream keeps the blocks only after a server timeout; qkcm also keeps them when the last
        // patch's outcome is unknown (it may have landed): freeing them could give them to a second node.
        if (!isServerTimeout(error) && !ApiErrors.isOutcomeUnknown(error)) {
            LOG.errorf("CIDR assignment for node failed. Releasing allocated CIDR: node %s", nodeName);
            release(sets, allocated);
        }
        throw error;
    }

    /** apimachinery's IsServerTimeout: reason ServerTimeout. */
    private static boolean isServerTimeout(Throwable t) {
        return t instanceof io.fabric8.kubernetes.client.KubernetesClientException k && k.getStatus() != null
                && "ServerTimeout".equals(k.getStatus().getReason());
    }

    /** component-helpers' PatchNodeCIDRs: a strategic merge patch of spec.podCIDR and spec.podCIDRs. */
    private void patchNodeCIDRs(String nodeName, List<String> cidrs) {
        Map<String, Object> spec = new java.util.LinkedHashMap<>();
        spec.put("podCIDR", cidrs.get(0));
        spec.put("podCIDRs", cidrs);
        String patch = Json.api().asJson(Map.of("spec", spec));
        client.nodes().withName(nodeName).patch(PatchContext.of(PatchType.STRATEGIC_MERGE), patch);
    }

    /** Upstream's RecordNodeStatusChange: a Normal event on the node, reason {@code status}. */
    private void recordNodeStatusChange(Node node, String status) {
        String name = node.getMetadata().getName();
        LOG.debugf("Recording status change event message for node: status %s node %s", status, name);
        Node ref = new NodeBuilder().withNewMetadata().withName(name).withUid(node.getMetadata().getUid())
                .endMetadata().build();
        recorder.eventf(ref, EventRecorder.NORMAL, status, "Node %s status is now: %s", name, status);
    }
}
