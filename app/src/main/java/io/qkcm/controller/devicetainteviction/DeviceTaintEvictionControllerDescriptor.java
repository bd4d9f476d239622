package io.qkcm.controller.devicetainteviction;

import java.time.Clock;

import io.qkcm.runtime.josdk.Controller;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.ControllerDescriptor;

/**
 * device-taint-eviction-controller's descriptor and start function (upstream's
 * {@code newDeviceTaintEvictionControllerDescriptor} and {@code startDeviceTaintEvictionController}): gates
 * DynamicResourceAllocation and DRADeviceTaints, no flags.
 */
public final class DeviceTaintEvictionControllerDescriptor {

    public static final ControllerDescriptor DESCRIPTOR = ControllerDescriptor.of(DeviceTaintEvictionController.NAME)
            .requiringFeatureGates("DynamicResourceAllocation", "DRADeviceTaints")
            .partially("CEL selectors of DeviceTaintRules (and of the DeviceClasses they name) are not evaluated: "
                    + "such a rule taints no device")
            .startedBy(DeviceTaintEvictionControllerDescriptor::start);

    private DeviceTaintEvictionControllerDescriptor() {
    }

    static Controller start(ControllerContext context) {
        return context.operate(newController(context, Clock.systemUTC()));
    }

    static DeviceTaintEvictionController newController(ControllerContext context, Clock clock) {
        return new DeviceTaintEvictionController(context, clock);
    }
}
