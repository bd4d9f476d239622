package io.qkcm.controller.endpoint;

import io.qkcm.runtime.josdk.Controller;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.ControllerDescriptor;

/**
 * endpoints-controller's descriptor and start function (upstream's {@code newEndpointsControllerDescriptor} and its
 * start function in cmd/kube-controller-manager/app/core.go).
 */
public final class EndpointsControllerDescriptor {

    public static final ControllerDescriptor DESCRIPTOR = ControllerDescriptor.of(EndpointsController.NAME)
            .withAliases("endpoint")
            .withClientName(EndpointsController.CONTROLLER_NAME)
            .startedBy(EndpointsControllerDescriptor::start);

    private EndpointsControllerDescriptor() {
    }

    static Controller start(ControllerContext context) {
        return context.operate(newController(context));
    }

    /** The controller with its flags read once: --concurrent-endpoint-syncs, --endpoint-updates-batch-period. */
    static EndpointsController newController(ControllerContext context) {
        return new EndpointsController(context, context.options().integer("concurrent-endpoint-syncs"),
                context.options().duration("endpoint-updates-batch-period"));
    }
}
