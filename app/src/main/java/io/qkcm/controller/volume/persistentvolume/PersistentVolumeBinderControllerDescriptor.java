package io.qkcm.controller.volume.persistentvolume;

import io.qkcm.runtime.josdk.Controller;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.ControllerDescriptor;

/**
 * persistentvolume-binder-controller's descriptor and start function (upstream's
 * {@code newPersistentVolumeBinderControllerDescriptor} and {@code startPersistentVolumeBinderController}:
 * client {@code persistent-volume-binder}, flags {@code --pvclaimbinder-sync-period} and
 * {@code --enable-dynamic-provisioning}; the volume plugins' {@code --enable-hostpath-provisioner} and
 * {@code --pv-recycler-*} flags, as {@code ProbeProvisionableRecyclableVolumePlugins} reads them).
 */
public final class PersistentVolumeBinderControllerDescriptor {

    public static final ControllerDescriptor DESCRIPTOR = ControllerDescriptor.of(PersistentVolumeController.NAME)
            .withAliases("persistentvolume-binder")
            .withClientName("persistent-volume-binder")
            .startedBy(PersistentVolumeBinderControllerDescriptor::start);

    private PersistentVolumeBinderControllerDescriptor() {
    }

    static Controller start(ControllerContext context) {
        PersistentVolumeController controller = newController(context);
        return context.operate(controller, controller.claimReconciler());
    }

    /** The controller with its flags read once. */
    static PersistentVolumeController newController(ControllerContext context) {
        var options = context.options();
        InTreePlugins plugins = InTreePlugins.of(options.integer("pv-recycler-minimum-timeout-hostpath"),
                options.integer("pv-recycler-timeout-increment-hostpath"),
                options.string("pv-recycler-pod-template-filepath-hostpath"),
                options.integer("pv-recycler-minimum-timeout-nfs"), options.integer("pv-recycler-increment-timeout-nfs"),
                options.string("pv-recycler-pod-template-filepath-nfs"), options.bool("enable-hostpath-provisioner"));
        return new PersistentVolumeController(context, options.duration("pvclaimbinder-sync-period"),
                options.bool("enable-dynamic-provisioning"), plugins);
    }
}
