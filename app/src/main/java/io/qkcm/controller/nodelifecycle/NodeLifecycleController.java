package io.qkcm.controller.nodelifecycle;

import io.javaoperatorsdk.operator.api.reconciler.Ignore;
import io.qkcm.runtime.josdk.KeyReconciler;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeCondition;
import io.fabric8.kubernetes.api.model.Taint;
import io.fabric8.kubernetes.api.model.TaintBuilder;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.qkcm.runtime.josdk.ControllerContext;

/**
 * node-lifecycle-controller, its NoSchedule tainting pass (upstream doNoScheduleTaintingPass): every
 * node carries exactly the NoSchedule taints its conditions call for — Ready=False
 * {@code node.kubernetes.io/not-ready}, Ready=Unknown {@code unreachable}, Memory/Disk/PID pressure,
 * NetworkUnavailable — plus {@code unschedulable} when cordoned. This is what lets a new node (which
 * the API server registers with the not-ready taint) take pods once it reports Ready.
 *
 * <p>Not ported yet: node health monitoring (marking nodes Unknown after --node-monitor-grace-period)
 * and the NoExecute taints that drive eviction.
 */
@Ignore // runs in its own Operator (io.qkcm.runtime.josdk), not quarkus-operator-sdk's default one
public final class NodeLifecycleController extends KeyReconciler<Node> {

    public static final String NAME = "node-lifecycle-controller";

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

    private final SharedIndexInformer<Node> nodes;

    public NodeLifecycleController(ControllerContext context) {
        // upstream runs the tainting pass from a plain queue with 8 workers (scheduler.UpdateWorkerSize)
        super(context, Node.class, "node_lifecycle_controller", 8);
        this.nodes = context.informers().informerFor(Node.class);
        // Node adds and updates reach the reconciler as JOSDK's primary events, as upstream's handler
        // queues them (a deleted node is synced once more and found gone: nothing to untaint)
    }

    @Override
    protected List<SharedIndexInformer<?>> informers() {
        return List.of(nodes);
    }

    @Override
    protected void sync(String name) {
        Node cached = nodes.getStore().getByKey(name);
        if (cached == null) {
            return;
        }
        List<Taint> desired = desiredNoScheduleTaints(cached);
        if (sameKeys(desired, managedTaints(cached))) {
            return;
        }
        // Swap on the live object with optimistic concurrency; a conflict requeues with backoff.
        context.client().nodes().withName(name).edit(node -> swap(node, desired, Instant.now()));
        log.debugf("updated NoSchedule condition taints of node %s: %s", name,
                desired.stream().map(Taint::getKey).toList());
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
