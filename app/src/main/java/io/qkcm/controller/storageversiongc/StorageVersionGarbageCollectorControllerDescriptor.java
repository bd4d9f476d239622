package io.qkcm.controller.storageversiongc;

import java.time.Clock;

import io.qkcm.runtime.josdk.Controller;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.ControllerDescriptor;

/**
 * storageversion-garbage-collector-controller's descriptor and start function (upstream's
 * {@code newStorageVersionGarbageCollectorControllerDescriptor} and its start function in
 * cmd/kube-controller-manager/app/core.go): off unless APIServerIdentity and StorageVersionAPI are both on.
 */
public final class StorageVersionGarbageCollectorControllerDescriptor {

    public static final ControllerDescriptor DESCRIPTOR = ControllerDescriptor.of(StorageVersionGC.NAME)
            .withAliases("storage-version-gc")
            .withClientName("storage-version-garbage-collector")
            .requiringFeatureGates("APIServerIdentity", "StorageVersionAPI")
            .startedBy(StorageVersionGarbageCollectorControllerDescriptor::start);

    private StorageVersionGarbageCollectorControllerDescriptor() {
    }

    static Controller start(ControllerContext context) {
        return context.operate(new StorageVersionGC(context, Clock.systemUTC()));
    }
}
