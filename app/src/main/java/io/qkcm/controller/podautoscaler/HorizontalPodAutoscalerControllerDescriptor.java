package io.qkcm.controller.podautoscaler;

import java.time.Clock;

import io.qkcm.runtime.josdk.Controller;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.ControllerDescriptor;
import io.qkcm.runtime.options.ControllerManagerOptions;

/**
 * horizontal-pod-autoscaler-controller's descriptor and start function (upstream's
 * {@code newHorizontalPodAutoscalerControllerDescriptor} and {@code startHPAControllerWithMetricsClient}
 * in cmd/kube-controller-manager/app/autoscaling.go): --concurrent-horizontal-pod-autoscaler-syncs,
 * --horizontal-pod-autoscaler-sync-period, -downscale-stabilization, -tolerance,
 * -cpu-initialization-period and -initial-readiness-delay; the client of horizontal-pod-autoscaler.
 */
public final class HorizontalPodAutoscalerControllerDescriptor {

    public static final ControllerDescriptor DESCRIPTOR = ControllerDescriptor.of(HorizontalController.NAME)
            .withAliases("horizontalpodautoscaling")
            .withClientName("horizontal-pod-autoscaler")
            .startedBy(HorizontalPodAutoscalerControllerDescriptor::start);

    private HorizontalPodAutoscalerControllerDescriptor() {
    }

    static Controller start(ControllerContext context) {
        ControllerManagerOptions options = context.options();
        return context.operate(new HorizontalController(context,
                options.integer("concurrent-horizontal-pod-autoscaler-syncs"), settings(options), Clock.systemUTC()));
    }

    /** The controller's flags and the feature gates it reads, once. */
    static HorizontalController.Settings settings(ControllerManagerOptions options) {
        return new HorizontalController.Settings(options.duration("horizontal-pod-autoscaler-sync-period"),
                options.duration("horizontal-pod-autoscaler-downscale-stabilization"),
                options.decimal("horizontal-pod-autoscaler-tolerance"),
                options.duration("horizontal-pod-autoscaler-cpu-initialization-period"),
                options.duration("horizontal-pod-autoscaler-initial-readiness-delay"),
                options.featureGates().enabled("HPAConfigurableTolerance"),
                options.featureGates().enabled("PodLevelResources"));
    }
}
