package io.qkcm.controller.storageversionmigrator;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

import io.fabric8.kubernetes.api.model.storagemigration.v1alpha1.StorageVersionMigration;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.javaoperatorsdk.operator.api.reconciler.Ignore;
import io.qkcm.controller.ApiErrors;
import io.qkcm.runtime.DeepCopy;
import io.qkcm.runtime.informers.ApiDiscovery;
import io.qkcm.runtime.informers.GroupVersionResource;
import io.qkcm.runtime.informers.ObjectMetadata;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.KeyReconciler;

/**
 * storage-version-migrator-controller (upstream pkg/controller/storageversionmigrator, SVMController):
 * once {@link ResourceVersionController} has recorded the resource's resourceVersion, marks the migration
 * Running, writes every object of the resource back with a no-op server-side apply at the object's
 * resourceVersion (field manager: the controller's name; a conflict means the object was written since and
 * is skipped), and marks it Succeeded, or Failed on any other error. A resource the garbage collector keeps
 * no monitor of is retried for a minute after the migration's creation, then Failed ("resource not found").
 *
 * <p>Upstream reads the objects from the garbage collector's monitor of the resource once its last synced
 * resourceVersion has reached the recorded one. qkcm's garbage collector keeps its monitors to itself (no
 * controller reaches into another), so the objects come from a paginated metadata LIST with
 * {@code resourceVersionMatch=NotOlderThan} the recorded resourceVersion: the same objects, no older.
 * Five workers on the queue named after the controller.
 */
@Ignore // runs in its own Operator, not quarkus-operator-sdk's default one
public final class SVMController extends KeyReconciler<StorageVersionMigration> {

    public static final String NAME = "storage-version-migrator-controller";
    /** Upstream's workers. */
    static final int WORKERS = 5;
    /** How long a resource without a garbage-collector monitor is waited for. */
    static final Duration MONITOR_GRACE = Duration.ofMinutes(1);

    private final SharedIndexInformer<StorageVersionMigration> migrations;
    private final Resources resources;
    private final Clock clock;
    private final ResourceVersionController resourceVersionController;

    SVMController(ControllerContext context, Resources resources, Clock clock,
            ResourceVersionController resourceVersionController) {
        super(context, StorageVersionMigration.class, context.controllerName(), WORKERS);
        this.migrations = context.informers().informerFor(StorageVersionMigration.class);
        this.resources = resources;
        this.clock = clock;
        this.resourceVersionController = resourceVersionController;
    }

    /** The loop recording the resourceVersion to migrate to, run in this controller's Operator. */
    ResourceVersionController resourceVersionController() {
        return resourceVersionController;
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
        String listResourceVersion = svm.getStatus() == null ? null : svm.getStatus().getResourceVersion();
        if (listResourceVersion == null || listResourceVersion.isEmpty()) {
            log.debugf("The latest resource version is empty. We will attempt to migrate once the resource version is available: svm %s", name);
            return;
        }
        GroupVersionResource gvr = MigrationConditions.resourceOf(svm);
        if (!resources.monitoredByGarbageCollector(gvr)) {
            Instant created = Instant.parse(svm.getMetadata().getCreationTimestamp());
            if (created.plus(MONITOR_GRACE).isAfter(clock.instant())) {
                throw new IllegalStateException("resource does not exist in GC, requeuing to attempt again: no monitor found for resource " + gvr);
            }
            MigrationConditions.set(svm, MigrationConditions.FAILED, MigrationConditions.FAILED_REASON, "resource not found", clock);
            resources.updateStatus(svm);
            return;
        }
        parseResourceVersion(listResourceVersion);

        svm = resources.updateStatus(MigrationConditions.set(svm, MigrationConditions.RUNNING,
                MigrationConditions.RUNNING_REASON, "", clock));

        ApiDiscovery.ApiResource resource = resources.served(gvr);
        if (resource == null) {
            throw new IllegalStateException("no matches for " + gvr);
        }
        for (ObjectMetadata object : resources.listNotOlderThan(gvr, listResourceVersion, gvr.groupVersion(), resource.kind())) {
            try {
                resources.applyNoOp(resource, object);
            } catch (RuntimeException e) {
                if (ApiErrors.isConflict(e)) {
                    log.tracef("Resource ignored due to conflict: namespace %s name %s gvr %s", object.namespace(),
                            object.name(), gvr);
                    continue;
                }
                log.debugf("Failed to migrate the resource: namespace %s name %s gvr %s: %s", object.namespace(),
                        object.name(), gvr, ApiErrors.message(e));
                MigrationConditions.set(svm, MigrationConditions.FAILED, MigrationConditions.FAILED_REASON,
                        "migration encountered unhandled error", clock);
                resources.updateStatus(svm);
                return;
            }
            log.debugf("Successfully migrated the resource: namespace %s name %s gvr %s", object.namespace(), object.name(), gvr);
        }
        MigrationConditions.set(svm, MigrationConditions.SUCCEEDED, MigrationConditions.SUCCEEDED_REASON, "", clock);
        resources.updateStatus(svm);
        log.debugf("Finished syncing svm resource: key %s gvr %s", key, gvr);
    }

    /** Upstream compares the recorded resourceVersion as an integer; one that is not fails the sync. */
    static long parseResourceVersion(String rv) {
        try {
            return Long.parseLong(rv);
        } catch (NumberFormatException e) {
            throw new IllegalStateException("failed to parse resource version \"" + rv + "\": " + e.getMessage(), e);
        }
    }
}
