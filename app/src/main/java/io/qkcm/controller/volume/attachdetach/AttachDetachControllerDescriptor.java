package io.qkcm.controller.volume.attachdetach;

import java.nio.file.Path;
import java.time.Clock;

import io.qkcm.runtime.josdk.Controller;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.ControllerDescriptor;

/**
 * persistentvolume-attach-detach-controller's descriptor and start function (upstream's
 * {@code newPersistentVolumeAttachDetachControllerDescriptor} and
 * {@code startPersistentVolumeAttachDetachController}: client {@code attachdetach-controller}, the default
 * timers, the dynamic FlexVolume prober on {@code --flex-volume-plugin-dir}).
 */
public final class AttachDetachControllerDescriptor {

    public static final ControllerDescriptor DESCRIPTOR = ControllerDescriptor.of(AttachDetachController.NAME)
            .withAliases("attachdetach")
            .withClientName("attachdetach-controller")
            .startedBy(AttachDetachControllerDescriptor::start);

    private AttachDetachControllerDescriptor() {
    }

    static Controller start(ControllerContext context) {
        return context.operate(newController(context));
    }

    /** The controller with its flags read once. */
    static AttachDetachController newController(ControllerContext context) {
        return new AttachDetachController(context, AttachDetachController.TimerConfig.DEFAULT,
                context.options().duration("attach-detach-reconcile-sync-period"),
                context.options().bool("disable-attach-detach-reconcile-sync"),
                context.options().bool("disable-force-detach-on-timeout"), Clock.systemUTC(),
                Path.of(context.options().string("flex-volume-plugin-dir")));
    }
}
