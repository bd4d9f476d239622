package io.qkcm.controller.nodelifecycle;

import io.qkcm.runtime.josdk.Controller;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.ControllerDescriptor;

/**
 * node-lifecycle-controller's descriptor and start function (upstream's
 * {@code newNodeLifecycleControllerDescriptor} and its start function in cmd/kube-controller-manager/app/core.go),
 * implemented in part.
 */
public final class NodeLifecycleControllerDescriptor {

    public static final ControllerDescriptor DESCRIPTOR = ControllerDescriptor.of(NodeLifecycleController.NAME)
            .withAliases("nodelifecycle")
            .withClientName("node-controller")
            .partially("only the NoSchedule taint pass (node condition and unschedulable taints); node health"
                    + " monitoring (Unknown conditions, NoExecute taints, evictions) is not ported")
            .startedBy(NodeLifecycleControllerDescriptor::start);

    private NodeLifecycleControllerDescriptor() {
    }

    static Controller start(ControllerContext context) {
        return context.operate(new NodeLifecycleController(context));
    }
}
