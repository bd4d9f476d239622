package io.qkcm.controller.volume.pvprotection;

import io.qkcm.runtime.josdk.Controller;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.ControllerDescriptor;

/**
 * persistentvolume-protection-controller's descriptor and start function (upstream's
 * {@code newPersistentVolumeProtectionControllerDescriptor} and {@code startPersistentVolumeProtectionController}:
 * client {@code pv-protection-controller}, one worker).
 */
public final class PersistentVolumeProtectionControllerDescriptor {

    public static final ControllerDescriptor DESCRIPTOR = ControllerDescriptor.of(PVProtectionController.NAME)
            .withAliases("pv-protection")
            .withClientName("pv-protection-controller")
            .startedBy(PersistentVolumeProtectionControllerDescriptor::start);

    private PersistentVolumeProtectionControllerDescriptor() {
    }

    static Controller start(ControllerContext context) {
        return context.operate(newController(context));
    }

    static PVProtectionController newController(ControllerContext context) {
        return new PVProtectionController(context, 1);
    }
}
