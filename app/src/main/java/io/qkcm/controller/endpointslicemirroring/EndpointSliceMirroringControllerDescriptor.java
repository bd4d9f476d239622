package io.qkcm.controller.endpointslicemirroring;

import io.qkcm.runtime.josdk.Controller;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.ControllerDescriptor;

/**
 * endpointslice-mirroring-controller's descriptor and start function (upstream's
 * {@code newEndpointSliceMirroringControllerDescriptor} and its start function in cmd/kube-controller-
 * manager/app/discovery.go): the --mirroring-* flags.
 */
public final class EndpointSliceMirroringControllerDescriptor {

    public static final ControllerDescriptor DESCRIPTOR = ControllerDescriptor.of(EndpointSliceMirroringController.NAME)
            .withAliases("endpointslicemirroring")
            .withClientName("endpointslicemirroring-controller")
            .startedBy(EndpointSliceMirroringControllerDescriptor::start);

    private EndpointSliceMirroringControllerDescriptor() {
    }

    static Controller start(ControllerContext context) {
        return context.operate(new EndpointSliceMirroringController(context,
                context.options().integer("mirroring-concurrent-service-endpoint-syncs"),
                context.options().integer("mirroring-max-endpoints-per-subset"),
                context.options().duration("mirroring-endpointslice-updates-batch-period")));
    }
}
