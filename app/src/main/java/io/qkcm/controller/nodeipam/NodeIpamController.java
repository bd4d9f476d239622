package io.qkcm.controller.nodeipam;

import java.util.List;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.javaoperatorsdk.operator.api.reconciler.Ignore;
import io.qkcm.runtime.informers.ResourceEventHandlerFuncs;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.KeyReconciler;

/**
 * node-ipam-controller with upstream's default allocator, RangeAllocator (pkg/controller/nodeipam and
 * ipam/range_allocator.go): every node gets spec.podCIDR/podCIDRs, one block of each cluster CIDR,
 * in upstream's allocation order; a deleted node's blocks are free again.
 *
 * <p>Upstream's queue {@code cidrallocator_node} takes every node add and update (here JOSDK's primary
 * events: a node's update, resyncs included, syncs it) and runs {@link #CIDR_UPDATE_WORKERS} workers; a
 * deleted node is released by upstream's delete handler on the shared informer, not through the queue.
 */
@Ignore // runs in its own Operator, not quarkus-operator-sdk's default one
public final class NodeIpamController extends KeyReconciler<Node> {

    public static final String NAME = "node-ipam-controller";
    public static final String QUEUE = "cidrallocator_node";
    /** Upstream's cidrUpdateWorkers. */
    static final int CIDR_UPDATE_WORKERS = 30;
    /** The source component of upstream's allocator events. */
    static final String EVENT_SOURCE = "cidrAllocator";

    private final SharedIndexInformer<Node> nodes;
    private final RangeAllocator allocator;
    /** Whether this replica has rebuilt the sets since it started allocating (see {@link RangeAllocator}). */
    private volatile boolean primed;

    /**
     * Builds the allocator from {@code params} and the nodes as the API server lists them now; throws
     * upstream's error when that fails (the controller, and the process, do not start).
     */
    NodeIpamController(ControllerContext context, RangeAllocator.Params params) {
        super(context, Node.class, QUEUE, CIDR_UPDATE_WORKERS);
        this.nodes = context.informers().informerFor(Node.class);
        this.allocator = new RangeAllocator(context.client(), nodes.getStore(), context.recorderFor(EVENT_SOURCE),
                params, new CidrSetMetrics(context.metrics()));
        allocator.prime(this::listNodes);
        nodes.addEventHandler(ResourceEventHandlerFuncs.<Node>of(null, null, node -> {
            try {
                allocator.releaseCIDR(node);
            } catch (RuntimeException e) {
                log.errorf("error while processing CIDR Release: %s", e.getMessage());
            }
        }));
    }

    /** Upstream's listNodes: every node, from the API server rather than a cache. */
    private List<Node> listNodes() {
        try {
            return context.client().nodes().list().getItems();
        } catch (RuntimeException e) {
            log.errorf("Failed to list all nodes: %s", shortMessage(e));
            throw new IllegalStateException("failed to list all nodes, cannot proceed without updating CIDR map: "
                    + shortMessage(e), e);
        }
    }

    @Override
    protected List<SharedIndexInformer<?>> informers() {
        return List.of(nodes);
    }

    @Override
    public void onStart() {
        log.info("Starting range CIDR allocator");
    }

    @Override
    public void onShutdown() {
        log.info("Shutting down range CIDR allocator");
    }

    /** Upstream's syncNode. */
    @Override
    protected void sync(String key) throws Exception {
        ensurePrimed();
        Node node = nodes.getStore().getByKey(key);
        if (node == null) {
            log.debugf("node has been deleted: node %s", key);
            return;
        }
        if (node.getMetadata().getDeletionTimestamp() != null) {
            log.debugf("node is being deleted: node %s", key);
            return;
        }
        allocator.allocateOrOccupyCIDR(node);
    }

    /**
     * Before this replica's first allocation, the sets are rebuilt from the nodes as they are now: the
     * ones built at start may predate allocations made by another leader meanwhile. A failure fails the
     * sync (retried with backoff) and nothing is allocated from stale sets.
     */
    private void ensurePrimed() {
        if (primed) {
            return;
        }
        synchronized (this) {
            if (!primed) {
                allocator.prime(this::listNodes);
                primed = true;
            }
        }
    }

    RangeAllocator allocator() {
        return allocator;
    }
}
