package io.qkcm.controller.volume.pvcprotection;

import io.qkcm.runtime.josdk.Controller;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.ControllerDescriptor;

/**
 * persistentvolumeclaim-protection-controller's descriptor and start function (upstream's
 * {@code newPersistentVolumeClaimProtectionControllerDescriptor} and
 * {@code startPersistentVolumeClaimProtectionController}: client {@code pvc-protection-controller}, one
 * namespace worker).
 */
public final class PersistentVolumeClaimProtectionControllerDescriptor {

    public static final ControllerDescriptor DESCRIPTOR = ControllerDescriptor.of(PVCProtectionController.NAME)
            .withAliases("pvc-protection")
            .withClientName("pvc-protection-controller")
            .startedBy(PersistentVolumeClaimProtectionControllerDescriptor::start);

    private PersistentVolumeClaimProtectionControllerDescriptor() {
    }

    static Controller start(ControllerContext context) {
        return context.operate(newController(context));
    }

    static PVCProtectionController newController(ControllerContext context) {
        return new PVCProtectionController(context, 1);
    }
}
