package io.qkcm.controller.storageversionmigrator;

import java.time.Clock;

import io.qkcm.runtime.josdk.Controller;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.ControllerDescriptor;

/**
 * storage-version-migrator-controller's descriptor and start function (upstream's
 * {@code newStorageVersionMigratorControllerDescriptor} and {@code startSVMController}): alias {@code svm},
 * gate StorageVersionMigrator; not started unless client-go's InformerResourceVersion gate is on too, and an
 * error when the garbage collector is disabled. Its two loops (the resource-version recorder and the
 * migrator) run in one Operator; the client's QPS and burst are raised (20× and 100×) as upstream's.
 */
public final class StorageVersionMigratorControllerDescriptor {

    public static final ControllerDescriptor DESCRIPTOR = ControllerDescriptor.of(SVMController.NAME)
            .withAliases("svm")
            .requiringFeatureGates("StorageVersionMigrator")
            .startedBy(StorageVersionMigratorControllerDescriptor::start);

    private StorageVersionMigratorControllerDescriptor() {
    }

    static Controller start(ControllerContext context) {
        // the StorageVersionMigrator gate is checked by the selection; upstream also needs client-go's
        if (!context.options().featureGates().enabled("InformerResourceVersion")) {
            return null;
        }
        if (!context.options().bool("enable-garbage-collector")) {
            throw new IllegalStateException("storage version migrator requires garbage collector");
        }
        SVMController migrator = newController(context, Clock.systemUTC());
        return context.operate(migrator, migrator.resourceVersionController());
    }

    static SVMController newController(ControllerContext context, Clock clock) {
        Resources resources = new Resources(context.client(), context.controllerName());
        return new SVMController(context, resources, clock, new ResourceVersionController(context, resources, clock));
    }
}
