package io.qkcm.controller.garbagecollector;

import io.qkcm.runtime.josdk.Controller;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.ControllerDescriptor;

/**
 * garbage-collector-controller's descriptor and start function (upstream's
 * {@code newGarbageCollectorControllerDescriptor} and its start function in cmd/kube-controller-
 * manager/app/core.go): --enable-garbage-collector and --concurrent-gc-syncs.
 */
public final class GarbageCollectorControllerDescriptor {

    public static final ControllerDescriptor DESCRIPTOR = ControllerDescriptor.of(GarbageCollector.NAME)
            .withAliases("garbagecollector")
            .withClientName("generic-garbage-collector")
            .startedBy(GarbageCollectorControllerDescriptor::start);

    private GarbageCollectorControllerDescriptor() {
    }

    /** Null when {@code --enable-garbage-collector=false}: upstream then does not start the controller. */
    static Controller start(ControllerContext context) {
        if (!context.options().bool("enable-garbage-collector")) {
            return null;
        }
        return new GarbageCollector(context, context.options().concurrentSyncs("gc"));
    }
}
