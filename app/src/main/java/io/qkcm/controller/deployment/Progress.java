package io.qkcm.controller.deployment;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentCondition;
import io.fabric8.kubernetes.api.model.apps.DeploymentStatus;
import io.fabric8.kubernetes.api.model.apps.ReplicaSet;
import io.fabric8.kubernetes.api.model.apps.ReplicaSetCondition;
import io.qkcm.controller.deployment.util.DeploymentUtil;

/** Upstream progress.go: the Progressing and ReplicaFailure conditions and the progress-deadline requeue. */
final class Progress {

    private final DeploymentContext ctx;
    /** calculateStatus, as upstream's progress.go takes it from sync.go. */
    private final Sync sync;

    Progress(DeploymentContext ctx, Sync sync) {
        this.ctx = ctx;
        this.sync = sync;
    }

    void syncRolloutStatus(List<ReplicaSet> allRSs, ReplicaSet newRS, Deployment d) {
        DeploymentStatus newStatus = sync.calculateStatus(allRSs, newRS, d);
        if (!DeploymentUtil.hasProgressDeadline(d)) {
            DeploymentUtil.removeCondition(newStatus, DeploymentUtil.PROGRESSING);
        }
        DeploymentCondition currentCond = DeploymentUtil.getCondition(d.getStatus(), DeploymentUtil.PROGRESSING);
        boolean isComplete = DeploymentUtil.intOf(newStatus.getReplicas()) == DeploymentUtil.intOf(newStatus.getUpdatedReplicas())
                && currentCond != null && DeploymentUtil.NEW_RS_AVAILABLE_REASON.equals(currentCond.getReason());
        if (DeploymentUtil.hasProgressDeadline(d) && !isComplete) {
            String name = d.getMetadata().getName();
            if (DeploymentUtil.deploymentComplete(d, newStatus)) {
                String msg = newRS != null
                        ? String.format("ReplicaSet \"%s\" has successfully progressed.", newRS.getMetadata().getName())
                        : String.format("Deployment \"%s\" has successfully progressed.", name);
                DeploymentUtil.setCondition(newStatus, DeploymentUtil.newCondition(ctx.clock(), DeploymentUtil.PROGRESSING, "True",
                        DeploymentUtil.NEW_RS_AVAILABLE_REASON, msg));
            } else if (DeploymentUtil.deploymentProgressing(d, newStatus)) {
                String msg = newRS != null
                        ? String.format("ReplicaSet \"%s\" is progressing.", newRS.getMetadata().getName())
                        : String.format("Deployment \"%s\" is progressing.", name);
                DeploymentCondition condition = DeploymentUtil.newCondition(ctx.clock(), DeploymentUtil.PROGRESSING, "True",
                        DeploymentUtil.REPLICA_SET_UPDATED_REASON, msg);
                if (currentCond != null) {
                    if ("True".equals(currentCond.getStatus())) {
                        condition.setLastTransitionTime(currentCond.getLastTransitionTime());
                    }
                    DeploymentUtil.removeCondition(newStatus, DeploymentUtil.PROGRESSING);
                }
                DeploymentUtil.setCondition(newStatus, condition);
            } else if (DeploymentUtil.deploymentTimedOut(d, newStatus, ctx.clock())) {
                String msg = newRS != null
                        ? String.format("ReplicaSet \"%s\" has timed out progressing.", newRS.getMetadata().getName())
                        : String.format("Deployment \"%s\" has timed out progressing.", name);
                DeploymentUtil.setCondition(newStatus, DeploymentUtil.newCondition(ctx.clock(), DeploymentUtil.PROGRESSING, "False",
                        DeploymentUtil.TIMED_OUT_REASON, msg));
            }
        }
        List<DeploymentCondition> failures = getReplicaFailures(allRSs, newRS);
        if (!failures.isEmpty()) {
            DeploymentUtil.setCondition(newStatus, failures.get(0));
        } else {
            DeploymentUtil.removeCondition(newStatus, DeploymentUtil.REPLICA_FAILURE);
        }
        if (Sync.statusEquals(d.getStatus(), newStatus)) {
            requeueStuckDeployment(d, newStatus);
            return;
        }
        d.setStatus(newStatus);
        ctx.updateStatus(d);
    }

    private static List<DeploymentCondition> getReplicaFailures(List<ReplicaSet> allRSs, ReplicaSet newRS) {
        List<DeploymentCondition> conditions = new ArrayList<>();
        if (newRS != null && newRS.getStatus() != null && newRS.getStatus().getConditions() != null) {
            for (ReplicaSetCondition c : newRS.getStatus().getConditions()) {
                if (DeploymentUtil.REPLICA_FAILURE.equals(c.getType())) {
                    conditions.add(DeploymentUtil.replicaSetToDeploymentCondition(c));
                }
            }
        }
        if (!conditions.isEmpty()) {
            return conditions;
        }
        for (ReplicaSet rs : allRSs) {
            if (rs == null || rs.getStatus() == null || rs.getStatus().getConditions() == null) {
                continue;
            }
            for (ReplicaSetCondition c : rs.getStatus().getConditions()) {
                if (DeploymentUtil.REPLICA_FAILURE.equals(c.getType())) {
                    conditions.add(DeploymentUtil.replicaSetToDeploymentCondition(c));
                }
            }
        }
        return conditions;
    }

    /** Requeues d to be checked at its progress deadline; returns the delay (negative: not requeued). */
    Duration requeueStuckDeployment(Deployment d, DeploymentStatus newStatus) {
        DeploymentCondition currentCond = DeploymentUtil.getCondition(d.getStatus(), DeploymentUtil.PROGRESSING);
        if (!DeploymentUtil.hasProgressDeadline(d) || currentCond == null) {
            return Duration.ofNanos(-1);
        }
        if (DeploymentUtil.deploymentComplete(d, newStatus)
                || DeploymentUtil.TIMED_OUT_REASON.equals(currentCond.getReason())) {
            return Duration.ofNanos(-1);
        }
        Instant deadline = DeploymentUtil.parseTime(currentCond.getLastUpdateTime())
                .plusSeconds(d.getSpec().getProgressDeadlineSeconds());
        Duration after = Duration.between(ctx.clock().instant(), deadline);
        if (after.compareTo(Duration.ofSeconds(1)) < 0) {
            ctx.enqueueRateLimited().accept(d);
            return Duration.ZERO;
        }
        ctx.enqueueAfter().accept(d, after.plusSeconds(1));
        return after;
    }
}
