package io.qkcm.controller.volume.vacprotection;

import io.qkcm.runtime.josdk.Controller;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.ControllerDescriptor;

/**
 * volumeattributesclass-protection-controller's descriptor and start function (upstream's
 * {@code newVolumeAttributesClassProtectionControllerDescriptor} and
 * {@code startVolumeAttributesClassProtectionController}: gate VolumeAttributesClass, one worker).
 */
public final class VolumeAttributesClassProtectionControllerDescriptor {

    public static final ControllerDescriptor DESCRIPTOR = ControllerDescriptor.of(VACProtectionController.NAME)
            .requiringFeatureGates("VolumeAttributesClass")
            .startedBy(VolumeAttributesClassProtectionControllerDescriptor::start);

    private VolumeAttributesClassProtectionControllerDescriptor() {
    }

    static Controller start(ControllerContext context) {
        return context.operate(newController(context));
    }

    static VACProtectionController newController(ControllerContext context) {
        return new VACProtectionController(context, 1);
    }
}
