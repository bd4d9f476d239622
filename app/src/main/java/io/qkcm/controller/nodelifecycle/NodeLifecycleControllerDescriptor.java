package io.qkcm.controller.nodelifecycle;

import java.time.Clock;

import io.qkcm.runtime.josdk.Controller;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.ControllerDescriptor;
import io.qkcm.runtime.options.ControllerManagerOptions;

/**
 * node-lifecycle-controller's descriptor and start function (upstream's
 * {@code newNodeLifecycleControllerDescriptor} and {@code startNodeLifecycleController} in
 * cmd/kube-controller-manager/app/core.go): --node-monitor-period, --node-startup-grace-period,
 * --node-monitor-grace-period, --node-eviction-rate, --secondary-node-eviction-rate,
 * --large-cluster-size-threshold and --unhealthy-zone-threshold; the client of the node-controller.
 */
public final class NodeLifecycleControllerDescriptor {

    public static final ControllerDescriptor DESCRIPTOR = ControllerDescriptor.of(NodeLifecycleController.NAME)
            .withAliases("nodelifecycle")
            .withClientName("node-controller")
            .startedBy(NodeLifecycleControllerDescriptor::start);

    private NodeLifecycleControllerDescriptor() {
    }

    static Controller start(ControllerContext context) {
        NodeLifecycleController controller = new NodeLifecycleController(context, settings(context.options()),
                Clock.systemUTC(), true);
        return context.operate(controller, controller.podReconciler());
    }

    /** The controller's flags, read once. */
    static NodeHealthMonitor.Settings settings(ControllerManagerOptions options) {
        return new NodeHealthMonitor.Settings(options.duration("node-monitor-period"),
                options.duration("node-startup-grace-period"), options.duration("node-monitor-grace-period"),
                (float) options.decimal("node-eviction-rate"), (float) options.decimal("secondary-node-eviction-rate"),
                options.integer("large-cluster-size-threshold"), (float) options.decimal("unhealthy-zone-threshold"));
    }
}
