package io.qkcm.controller.job;

import io.qkcm.runtime.josdk.Controller;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.ControllerDescriptor;

/**
 * job-controller's descriptor and start function (upstream's {@code newJobControllerDescriptor} and its start
 * function in cmd/kube-controller-manager/app/batch.go): its concurrency, --concurrent-job-syncs.
 */
public final class JobControllerDescriptor {

    public static final ControllerDescriptor DESCRIPTOR = ControllerDescriptor.of(JobController.NAME)
            .withAliases("job")
            .startedBy(JobControllerDescriptor::start);

    private JobControllerDescriptor() {
    }

    static Controller start(ControllerContext context) {
        return context.operate(newController(context));
    }

    /** The controller with its flag read once: --concurrent-job-syncs. */
    static JobController newController(ControllerContext context) {
        return new JobController(context, context.options().concurrentSyncs("job"));
    }
}
