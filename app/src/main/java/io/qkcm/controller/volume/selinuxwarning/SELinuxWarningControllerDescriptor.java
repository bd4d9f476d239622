package io.qkcm.controller.volume.selinuxwarning;

import io.qkcm.runtime.josdk.Controller;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.ControllerDescriptor;

/**
 * selinux-warning-controller's descriptor and start function (upstream's
 * {@code newSELinuxWarningControllerDescriptor} and {@code startSELinuxWarningController}): off by default,
 * gate SELinuxChangePolicy; the labels are computed only with SELinuxMountReadWriteOncePod on, as upstream.
 */
public final class SELinuxWarningControllerDescriptor {

    public static final ControllerDescriptor DESCRIPTOR = ControllerDescriptor.of(SELinuxWarningController.NAME)
            .offByDefault()
            .requiringFeatureGates("SELinuxChangePolicy")
            .partially("no flex volume plugins are probed: flex volumes are skipped")
            .startedBy(SELinuxWarningControllerDescriptor::start);

    private SELinuxWarningControllerDescriptor() {
    }

    static Controller start(ControllerContext context) {
        return context.operate(newController(context));
    }

    static SELinuxWarningController newController(ControllerContext context) {
        return new SELinuxWarningController(context,
                context.options().featureGates().enabled("SELinuxMountReadWriteOncePod"));
    }
}
