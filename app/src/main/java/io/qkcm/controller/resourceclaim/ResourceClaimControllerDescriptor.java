package io.qkcm.controller.resourceclaim;

import io.qkcm.runtime.josdk.Controller;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.ControllerDescriptor;

/**
 * resourceclaim-controller's descriptor and start function (upstream's
 * {@code newResourceClaimControllerDescriptor} and {@code startResourceClaimController}: alias and client
 * {@code resource-claim-controller}, gate DynamicResourceAllocation, 50 workers).
 */
public final class ResourceClaimControllerDescriptor {

    /** Upstream's defaultResourceClaimControllerWorkers. */
    static final int DEFAULT_WORKERS = 50;

    public static final ControllerDescriptor DESCRIPTOR = ControllerDescriptor.of(ResourceClaimController.NAME)
            .withAliases("resource-claim-controller")
            .withClientName("resource-claim-controller")
            .requiringFeatureGates("DynamicResourceAllocation")
            .startedBy(ResourceClaimControllerDescriptor::start);

    private ResourceClaimControllerDescriptor() {
    }

    static Controller start(ControllerContext context) {
        ResourceClaimController controller = newController(context);
        return context.operate(controller);
    }

    static ResourceClaimController newController(ControllerContext context) {
        return new ResourceClaimController(context, DEFAULT_WORKERS);
    }
}
