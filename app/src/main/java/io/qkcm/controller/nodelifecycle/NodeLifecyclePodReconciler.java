package io.qkcm.controller.nodelifecycle;

import java.util.List;
import java.util.Objects;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.javaoperatorsdk.operator.api.reconciler.Ignore;
import io.javaoperatorsdk.operator.processing.event.source.filter.GenericFilter;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.KeyReconciler;

/**
 * node-lifecycle-controller's pod queue (upstream's podUpdateQueue {@code node_lifecycle_controller_pods},
 * 4 workers, processPod): a pod bound to a node — added bound, or its nodeName changed — is marked not
 * ready when the node's last seen Ready condition is not True. Pods already on a node when it turns
 * unhealthy are the health pass's; this queue only catches the ones the pass's cache missed.
 */
@Ignore // runs in the controller's own Operator
final class NodeLifecyclePodReconciler extends KeyReconciler<Pod> {

    /** Upstream's podUpdateWorkerSize. */
    static final int POD_UPDATE_WORKER_SIZE = 4;

    private final SharedIndexInformer<Pod> pods;
    private final List<SharedIndexInformer<?>> waitFor;
    private final NodeHealthMonitor monitor;

    NodeLifecyclePodReconciler(ControllerContext context, NodeHealthMonitor monitor, List<SharedIndexInformer<?>> waitFor) {
        super(context, Pod.class, "node_lifecycle_controller_pods", POD_UPDATE_WORKER_SIZE);
        this.pods = context.informers().informerFor(Pod.class);
        this.monitor = monitor;
        this.waitFor = waitFor;
        // upstream's podUpdated queues only a pod whose node is set or changed; JOSDK's primary events would
        // queue every pod update and delete
        pods.addEventHandler(new ResourceEventHandler<>() {
            @Override
            public void onAdd(Pod pod) {
                podUpdated(null, pod);
            }

            @Override
            public void onUpdate(Pod oldPod, Pod newPod) {
                podUpdated(oldPod, newPod);
            }

            @Override
            public void onDelete(Pod pod, boolean deletedFinalStateUnknown) {
                // podUpdated(pod, nil): nothing
            }
        });
    }

    private void podUpdated(Pod oldPod, Pod newPod) {
        String nodeName = newPod.getSpec() == null ? null : newPod.getSpec().getNodeName();
        if (nodeName != null && !nodeName.isEmpty()
                && (oldPod == null || !Objects.equals(nodeName, oldPod.getSpec().getNodeName()))) {
            queue.add(key(newPod));
        }
    }

    @Override
    protected GenericFilter<? super Pod> primaryFilter() {
        return pod -> false;
    }

    @Override
    protected List<SharedIndexInformer<?>> informers() {
        return waitFor;
    }

    @Override
    protected void sync(String key) {
        Pod pod = pods.getStore().getByKey(key);
        if (pod == null) {
            // deleted: nothing to mark
            return;
        }
        monitor.processPod(pod);
    }
}
