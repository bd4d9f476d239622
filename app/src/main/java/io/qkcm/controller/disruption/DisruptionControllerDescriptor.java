package io.qkcm.controller.disruption;

import io.qkcm.runtime.josdk.Controller;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.ControllerDescriptor;

/**
 * disruption-controller's descriptor and start function (upstream's {@code newDisruptionControllerDescriptor}
 * and {@code startDisruptionController} in cmd/kube-controller-manager/app/policy.go): client
 * {@code disruption-controller}, no flags, one worker per queue.
 */
public final class DisruptionControllerDescriptor {

    public static final ControllerDescriptor DESCRIPTOR = ControllerDescriptor.of(DisruptionController.NAME)
            .withAliases("disruption")
            .startedBy(DisruptionControllerDescriptor::start);

    private DisruptionControllerDescriptor() {
    }

    static Controller start(ControllerContext context) {
        return context.operate(new DisruptionController(context));
    }
}
