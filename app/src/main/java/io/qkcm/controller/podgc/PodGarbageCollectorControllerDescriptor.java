package io.qkcm.controller.podgc;

import java.time.Duration;

import io.qkcm.runtime.josdk.Controller;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.ControllerDescriptor;
import io.qkcm.runtime.options.GoDuration;

/**
 * pod-garbage-collector-controller's descriptor and start function (upstream's
 * {@code newPodGarbageCollectorControllerDescriptor} and its start function in
 * cmd/kube-controller-manager/app/core.go): --terminated-pod-gc-threshold, and upstream's gcCheckPeriod (20s) and
 * quarantineTime (40s), which upstream does not expose as flags. Tests shorten them, as upstream's integration
 * tests do through NewPodGCInternal, with the internal config properties
 * {@code qkcm.internal.pod-gc.gc-check-period} and {@code qkcm.internal.pod-gc.quarantine-time} (Go durations);
 * they are no flags and not in --help.
 */
public final class PodGarbageCollectorControllerDescriptor {

    static final String GC_CHECK_PERIOD = "pod-gc.gc-check-period";
    static final String QUARANTINE_TIME = "pod-gc.quarantine-time";

    public static final ControllerDescriptor DESCRIPTOR = ControllerDescriptor.of(PodGCController.NAME)
            .withAliases("podgc")
            .withClientName("pod-garbage-collector")
            .startedBy(PodGarbageCollectorControllerDescriptor::start);

    private PodGarbageCollectorControllerDescriptor() {
    }

    static Controller start(ControllerContext context) {
        var options = context.options();
        Duration period = options.internal(GC_CHECK_PERIOD).map(GoDuration::parse)
                .orElse(PodGCController.GC_CHECK_PERIOD);
        Duration quarantine = options.internal(QUARANTINE_TIME).map(GoDuration::parse)
                .orElse(PodGCController.QUARANTINE_TIME);
        return context.operate(new PodGCController(context, options.integer("terminated-pod-gc-threshold"), period,
                quarantine));
    }
}
