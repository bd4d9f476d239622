package io.qkcm.controller.resourcequota;

import java.time.Clock;
import java.time.Duration;

import io.qkcm.runtime.josdk.Controller;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.ControllerDescriptor;

/**
 * resourcequota-controller's descriptor and start function (upstream's
 * {@code newResourceQuotaControllerDescriptor} and {@code startResourceQuotaController} in
 * cmd/kube-controller-manager/app/core.go): --concurrent-resource-quota-syncs and
 * --resource-quota-sync-period; discovery of new types every 30 seconds
 * ({@code qkcm.internal.resourcequota.discovery-period} shortens it in tests); a usage is lowered no
 * sooner than 3 seconds after admission last raised it ({@code qkcm.internal.resourcequota.admission-settle}).
 */
public final class ResourceQuotaControllerDescriptor {

    public static final ControllerDescriptor DESCRIPTOR = ControllerDescriptor.of(ResourceQuotaController.NAME)
            .withAliases("resourcequota")
            .startedBy(ResourceQuotaControllerDescriptor::start);

    private ResourceQuotaControllerDescriptor() {
    }

    static Controller start(ControllerContext context) {
        return context.operate(newController(context));
    }

    static ResourceQuotaController newController(ControllerContext context) {
        Duration discoveryPeriod = context.options().internal("resourcequota.discovery-period")
                .map(io.qkcm.runtime.options.GoDuration::parse).orElse(ResourceQuotaController.DISCOVERY_PERIOD);
        Duration admissionSettle = context.options().internal("resourcequota.admission-settle")
                .map(io.qkcm.runtime.options.GoDuration::parse).orElse(ResourceQuotaController.ADMISSION_SETTLE);
        return new ResourceQuotaController(context, context.options().concurrentSyncs("resource-quota"),
                context.options().duration("resource-quota-sync-period"), discoveryPeriod, admissionSettle,
                Clock.systemUTC());
    }
}
