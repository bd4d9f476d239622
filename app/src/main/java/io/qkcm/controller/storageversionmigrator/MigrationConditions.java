package io.qkcm.controller.storageversionmigrator;

import java.time.Clock;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;

import io.fabric8.kubernetes.api.model.storagemigration.v1alpha1.MigrationCondition;
import io.fabric8.kubernetes.api.model.storagemigration.v1alpha1.StorageVersionMigration;
import io.fabric8.kubernetes.api.model.storagemigration.v1alpha1.StorageVersionMigrationStatus;
import io.qkcm.runtime.informers.GroupVersionResource;

/** Upstream's util.go: the migration's resource and its conditions (Running, Succeeded, Failed). */
final class MigrationConditions {

    static final String RUNNING = "Running";
    static final String SUCCEEDED = "Succeeded";
    static final String FAILED = "Failed";

    static final String SUCCEEDED_REASON = "StorageVersionMigrationSucceeded";
    static final String RUNNING_REASON = "StorageVersionMigrationInProgress";
    static final String FAILED_REASON = "StorageVersionMigrationFailed";

    private MigrationConditions() {
    }

    static GroupVersionResource resourceOf(StorageVersionMigration svm) {
        var r = svm.getSpec() == null ? null : svm.getSpec().getResource();
        if (r == null) {
            return new GroupVersionResource("", "", "");
        }
        return new GroupVersionResource(nullToEmpty(r.getGroup()), nullToEmpty(r.getVersion()), nullToEmpty(r.getResource()));
    }

    private static String nullToEmpty(String s) {
        return s == null ? "" : s;
    }

    /** A condition of {@code type} with status True. */
    static boolean isTrue(StorageVersionMigration svm, String type) {
        return indexOfTrue(svm, type) >= 0;
    }

    /** Succeeded or Failed: nothing is left to do. */
    static boolean finished(StorageVersionMigration svm) {
        return isTrue(svm, SUCCEEDED) || isTrue(svm, FAILED);
    }

    private static int indexOfTrue(StorageVersionMigration svm, String type) {
        List<MigrationCondition> conditions = svm.getStatus() == null ? null : svm.getStatus().getConditions();
        if (conditions == null) {
            return -1;
        }
        for (int i = 0; i < conditions.size(); i++) {
            MigrationCondition c = conditions.get(i);
            if (type.equals(c.getType()) && "True".equals(c.getStatus())) {
                return i;
            }
        }
        return -1;
    }

    /**
     * Upstream's setStatusConditions: appends a True condition of {@code type} unless one is there; a
     * final condition (Succeeded, Failed) turns a True Running condition False. Changes {@code svm}.
     */
    static StorageVersionMigration set(StorageVersionMigration svm, String type, String reason, String message, Clock clock) {
        if (isTrue(svm, type)) {
            return svm;
        }
        if (svm.getStatus() == null) {
            svm.setStatus(new StorageVersionMigrationStatus());
        }
        List<MigrationCondition> conditions = svm.getStatus().getConditions() == null ? new ArrayList<>()
                : new ArrayList<>(svm.getStatus().getConditions());
        if (SUCCEEDED.equals(type) || FAILED.equals(type)) {
            int running = indexOfTrue(svm, RUNNING);
            if (running >= 0) {
                conditions.get(running).setStatus("False");
            }
        }
        // Go's omitempty: an empty message is not written
        conditions.add(new MigrationCondition(clock.instant().truncatedTo(ChronoUnit.SECONDS).toString(),
                message == null || message.isEmpty() ? null : message, reason, "True", type));
        svm.getStatus().setConditions(conditions);
        return svm;
    }
}
