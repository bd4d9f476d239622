package io.qkcm.controller.ttl;

import io.qkcm.runtime.josdk.Controller;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.ControllerDescriptor;

/**
 * ttl-controller's descriptor and start function (upstream's {@code newTTLControllerDescriptor} and
 * {@code startTTLController} in cmd/kube-controller-manager/app/core.go): alias {@code ttl}, its own
 * client, 5 workers (upstream hard-codes them; there is no flag).
 */
public final class TTLControllerDescriptor {

    public static final ControllerDescriptor DESCRIPTOR = ControllerDescriptor.of(TTLController.NAME)
            .withAliases("ttl")
            .startedBy(TTLControllerDescriptor::start);

    private TTLControllerDescriptor() {
    }

    static Controller start(ControllerContext context) {
        return context.operate(new TTLController(context));
    }
}
