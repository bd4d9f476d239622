package io.qkcm.controller.serviceaccount;

import io.qkcm.runtime.josdk.Controller;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.ControllerDescriptor;

/**
 * serviceaccount-controller's descriptor and start function (upstream's
 * {@code newServiceAccountControllerDescriptor} and its start function in cmd/kube-controller-manager/app/core.go).
 */
public final class ServiceAccountControllerDescriptor {

    public static final ControllerDescriptor DESCRIPTOR = ControllerDescriptor.of(ServiceAccountsController.NAME)
            .withAliases("serviceaccount")
            .withClientName("service-account-controller")
            .startedBy(ServiceAccountControllerDescriptor::start);

    private ServiceAccountControllerDescriptor() {
    }

    static Controller start(ControllerContext context) {
        return context.operate(new ServiceAccountsController(context));
    }
}
