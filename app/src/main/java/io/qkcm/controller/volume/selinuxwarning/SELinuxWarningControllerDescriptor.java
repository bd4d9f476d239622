package io.qkcm.controller.volume.selinuxwarning;

import java.nio.file.Path;

import io.qkcm.runtime.josdk.Controller;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.ControllerDescriptor;

/**
 * selinux-warning-controller's descriptor and start function (upstream's
 * {@code newSELinuxWarningControllerDescriptor} and {@code startSELinuxWarningController}): off by default,
 * gate SELinuxChangePolicy; the labels are computed only with SELinuxMountReadWriteOncePod on, as upstream; the
 * dynamic FlexVolume prober on {@code --flex-volume-plugin-dir}, as the attach/detach controller's.
 */
public final class SELinuxWarningControllerDescriptor {

    public static final ControllerDescriptor DESCRIPTOR = ControllerDescriptor.of(SELinuxWarningController.NAME)
            .offByDefault()
            .requiringFeatureGates("SELinuxChangePolicy")
            .startedBy(SELinuxWarningControllerDescriptor::start);

    private SELinuxWarningControllerDescriptor() {
    }

    static Controller start(ControllerContext context) {
        return context.operate(newController(context));
    }

    static SELinuxWarningController newController(ControllerContext context) {
        return new SELinuxWarningController(context,
                context.options().featureGates().enabled("SELinuxMountReadWriteOncePod"),
                Path.of(context.options().string("flex-volume-plugin-dir")));
    }
}
