package io.qkcm.controller.volume.ephemeral;

import io.qkcm.runtime.josdk.Controller;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.ControllerDescriptor;

/**
 * ephemeral-volume-controller's descriptor and start function (upstream's
 * {@code newEphemeralVolumeControllerDescriptor} and {@code startEphemeralVolumeController}).
 */
public final class EphemeralVolumeControllerDescriptor {

    public static final ControllerDescriptor DESCRIPTOR = ControllerDescriptor.of(EphemeralController.NAME)
            .withAliases("ephemeral-volume")
            .startedBy(EphemeralVolumeControllerDescriptor::start);

    private EphemeralVolumeControllerDescriptor() {
    }

    static Controller start(ControllerContext context) {
        return context.operate(newController(context));
    }

    /** The controller with its flag read once: --concurrent-ephemeralvolume-syncs. */
    static EphemeralController newController(ControllerContext context) {
        return new EphemeralController(context, context.options().concurrentSyncs("ephemeralvolume"));
    }
}
