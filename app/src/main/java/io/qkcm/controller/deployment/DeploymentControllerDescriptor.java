package io.qkcm.controller.deployment;

import io.qkcm.runtime.josdk.Controller;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.ControllerDescriptor;

/**
 * deployment-controller's descriptor and start function (upstream's {@code newDeploymentControllerDescriptor} and
 * its start function in cmd/kube-controller-manager/app/apps.go): its concurrency, --concurrent-deployment-syncs.
 */
public final class DeploymentControllerDescriptor {

    public static final ControllerDescriptor DESCRIPTOR = ControllerDescriptor.of(DeploymentController.NAME)
            .withAliases("deployment")
            .startedBy(DeploymentControllerDescriptor::start);

    private DeploymentControllerDescriptor() {
    }

    static Controller start(ControllerContext context) {
        return context.operate(new DeploymentController(context, context.options().concurrentSyncs("deployment")));
    }
}
