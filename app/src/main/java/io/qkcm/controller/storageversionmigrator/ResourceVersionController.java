package io.qkcm.controller.storageversionmigrator;

import java.time.Clock;
import java.util.List;

import io.fabric8.kubernetes.api.model.storagemigration.v1alpha1.StorageVersionMigration;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.javaoperatorsdk.operator.api.reconciler.Ignore;
import io.qkcm.runtime.DeepCopy;
import io.qkcm.runtime.informers.ApiDiscovery;
import io.qkcm.runtime.informers.GroupVersionResource;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.KeyReconciler;

/**
 * Upstream's ResourceVersionController (resourceversion.go): for a migration not finished and without
 * {@code status.resourceVersion}, records the resource's current resourceVersion (a LIST of at most one
 * object; in a namespace no object can be in when the resource is namespaced), or marks the migration
 * Failed when discovery does not serve the resource. The migrator waits for that resourceVersion.
 * One worker, queue {@code resource-version-controller}; upstream queues adds and updates, and a
 * delete's sync here finds nothing and returns.
 */
@Ignore // runs in its storage-version-migrator-controller's Operator
public final class ResourceVersionController extends KeyReconciler<StorageVersionMigration> {

    public static final String NAME = "resource-version-controller";
    /** Upstream's fakeSVMNamespaceName: not a valid namespace name, so the list is empty and cheap. */
    static final String FAKE_NAMESPACE = "@fake:svm_ns!";

    private final SharedIndexInformer<StorageVersionMigration> migrations;
    private final Resources resources;
    private final Clock clock;

    ResourceVersionController(ControllerContext context, Resources resources, Clock clock) {
        super(context, StorageVersionMigration.class, NAME, 1);
        this.migrations = context.informers().informerFor(StorageVersionMigration.class);
        this.resources = resources;
        this.clock = clock;
    }

    @Override
    protected List<SharedIndexInformer<?>> informers() {
        return List.of(migrations);
    }

    @Override
    protected void sync(String key) throws Exception {
        StorageVersionMigration cached = migrations.getStore().getByKey(key);
        if (cached == null) {
            return;
        }
        StorageVersionMigration svm = DeepCopy.of(cached);
        String name = svm.getMetadata().getName();
        if (MigrationConditions.finished(svm)) {
            log.debugf("Migration has already succeeded or failed previously, skipping: svm %s", name);
            return;
        }
        if (svm.getStatus() != null && svm.getStatus().getResourceVersion() != null
                && !svm.getStatus().getResourceVersion().isEmpty()) {
            log.debugf("Resource version is already set: svm %s", name);
            return;
        }
        GroupVersionResource gvr = MigrationConditions.resourceOf(svm);
        ApiDiscovery.ApiResource served = resources.served(gvr);
        if (served == null) {
            MigrationConditions.set(svm, MigrationConditions.FAILED, MigrationConditions.FAILED_REASON,
                    "resource does not exist in discovery", clock);
            resources.updateStatus(svm);
            return;
        }
        String namespace = served.namespaced() ? FAKE_NAMESPACE : null;
        if (svm.getStatus() == null) {
            svm.setStatus(new io.fabric8.kubernetes.api.model.storagemigration.v1alpha1.StorageVersionMigrationStatus());
        }
        svm.getStatus().setResourceVersion(resources.latestResourceVersion(gvr, namespace));
        resources.updateStatus(svm);
        log.debugf("Resource version has been successfully added: svm %s", key);
    }
}
