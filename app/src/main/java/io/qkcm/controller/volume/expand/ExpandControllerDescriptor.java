package io.qkcm.controller.volume.expand;

import io.qkcm.runtime.josdk.Controller;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.ControllerDescriptor;

/**
 * persistentvolume-expander-controller's descriptor and start function (upstream's
 * {@code newPersistentVolumeExpanderControllerDescriptor} and {@code startPersistentVolumeExpanderController}:
 * client {@code expand-controller}, its 10 workers).
 */
public final class ExpandControllerDescriptor {

    public static final ControllerDescriptor DESCRIPTOR = ControllerDescriptor.of(ExpandController.NAME)
            .withAliases("persistentvolume-expander")
            .withClientName("expand-controller")
            .partially("FlexVolume PVs (kubelet-expandable: upstream marks the resize in progress and completes it "
                    + "through its no-op controller plugin) only get the \"waiting for an external controller\" event")
            .startedBy(ExpandControllerDescriptor::start);

    private ExpandControllerDescriptor() {
    }

    static Controller start(ControllerContext context) {
        return context.operate(newController(context));
    }

    static ExpandController newController(ControllerContext context) {
        return new ExpandController(context, ExpandController.DEFAULT_WORKER_COUNT);
    }
}
