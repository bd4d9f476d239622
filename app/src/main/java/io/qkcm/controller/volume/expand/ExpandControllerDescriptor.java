package io.qkcm.controller.volume.expand;

import io.qkcm.runtime.josdk.Controller;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.ControllerDescriptor;

/**
 * persistentvolume-expander-controller's descriptor and start function (upstream's
 * {@code newPersistentVolumeExpanderControllerDescriptor} and {@code startPersistentVolumeExpanderController}:
 * client {@code expand-controller}, its 10 workers). Upstream initialises this controller's plugins with no
 * dynamic prober, so the drivers under {@code --flex-volume-plugin-dir} are never its plugins: a FlexVolume PV
 * waits for an external controller like any volume without an in-tree expander.
 */
public final class ExpandControllerDescriptor {

    public static final ControllerDescriptor DESCRIPTOR = ControllerDescriptor.of(ExpandController.NAME)
            .withAliases("persistentvolume-expander")
            .withClientName("expand-controller")
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
