package io.qkcm.controller.devicetainteviction;

import java.time.Clock;

import io.qkcm.runtime.josdk.Controller;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.ControllerDescriptor;

/**
 * device-taint-eviction-controller's descriptor and start function (upstream's
 * {@code newDeviceTaintEvictionControllerDescriptor} and {@code startDeviceTaintEvictionController}): gates
 * DynamicResourceAllocation and DRADeviceTaints, no flags; DRAConsumableCapacity gives CEL selectors
 * {@code device.allowMultipleAllocations}.
 */
public final class DeviceTaintEvictionControllerDescriptor {

    public static final ControllerDescriptor DESCRIPTOR = ControllerDescriptor.of(DeviceTaintEvictionController.NAME)
            .requiringFeatureGates("DynamicResourceAllocation", "DRADeviceTaints")
            .partially("a CEL selector (of a DeviceTaintRule or the DeviceClass it names) calling a function of "
                    + "Kubernetes' URL or format libraries or string.format is not evaluated: such a rule "
                    + "taints no device; the CEL runtime cost limit is not enforced")
            .startedBy(DeviceTaintEvictionControllerDescriptor::start);

    private DeviceTaintEvictionControllerDescriptor() {
    }

    static Controller start(ControllerContext context) {
        return context.operate(newController(context, Clock.systemUTC()));
    }

    static DeviceTaintEvictionController newController(ControllerContext context, Clock clock) {
        return new DeviceTaintEvictionController(context, clock,
                context.options().featureGates().enabled("DRAConsumableCapacity"));
    }
}
