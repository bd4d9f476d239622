package io.qkcm.controller.cronjob;

import io.qkcm.runtime.josdk.Controller;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.ControllerDescriptor;

/**
 * cronjob-controller's descriptor and start function (upstream's {@code newCronJobControllerDescriptor} and its
 * start function in cmd/kube-controller-manager/app/batch.go).
 */
public final class CronJobControllerDescriptor {

    public static final ControllerDescriptor DESCRIPTOR = ControllerDescriptor.of(CronJobController.NAME)
            .withAliases("cronjob")
            .startedBy(CronJobControllerDescriptor::start);

    private CronJobControllerDescriptor() {
    }

    static Controller start(ControllerContext context) {
        return context.operate(new CronJobController(context, workers(context)));
    }

    /** --concurrent-cron-job-syncs. */
    static int workers(ControllerContext context) {
        return context.options().concurrentSyncs("cron-job");
    }
}
