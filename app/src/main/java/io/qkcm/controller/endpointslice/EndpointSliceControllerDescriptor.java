package io.qkcm.controller.endpointslice;

import io.qkcm.runtime.josdk.Controller;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.ControllerDescriptor;

/**
 * endpointslice-controller's descriptor and start function (upstream's {@code newEndpointSliceControllerDescriptor}
 * and its start function in cmd/kube-controller-manager/app/discovery.go): --concurrent-service-endpoint-syncs,
 * --endpointslice-updates-batch-period, --max-endpoints-per-slice.
 */
public final class EndpointSliceControllerDescriptor {

    public static final ControllerDescriptor DESCRIPTOR = ControllerDescriptor.of(EndpointSliceController.NAME)
            .withAliases("endpointslice")
            .startedBy(EndpointSliceControllerDescriptor::start);

    private EndpointSliceControllerDescriptor() {
    }

    static Controller start(ControllerContext context) {
        return context.operate(new EndpointSliceController(context,
                context.options().integer("concurrent-service-endpoint-syncs"),
                context.options().duration("endpointslice-updates-batch-period"),
                context.options().integer("max-endpoints-per-slice")));
    }
}
