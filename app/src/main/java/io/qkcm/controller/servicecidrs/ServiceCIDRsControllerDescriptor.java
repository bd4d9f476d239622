package io.qkcm.controller.servicecidrs;

import io.qkcm.runtime.josdk.Controller;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.ControllerDescriptor;

/**
 * service-cidr-controller's descriptor and start function (upstream's {@code newServiceCIDRsControllerDescriptor}
 * and {@code startServiceCIDRsController} in cmd/kube-controller-manager/app/networking.go): gated on
 * MultiCIDRServiceAllocator (GA, on, in v1.34), client {@code service-cidrs-controller}, 5 workers.
 */
public final class ServiceCIDRsControllerDescriptor {

    public static final ControllerDescriptor DESCRIPTOR = ControllerDescriptor.of(ServiceCIDRsController.NAME)
            .withClientName("service-cidrs-controller")
            .requiringFeatureGates("MultiCIDRServiceAllocator")
            .startedBy(ServiceCIDRsControllerDescriptor::start);

    private ServiceCIDRsControllerDescriptor() {
    }

    static Controller start(ControllerContext context) {
        return context.operate(new ServiceCIDRsController(context));
    }
}
