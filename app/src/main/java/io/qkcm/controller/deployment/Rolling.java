package io.qkcm.controller.deployment;

import static io.qkcm.controller.deployment.util.DeploymentUtil.intOf;
import static io.qkcm.controller.deployment.util.DeploymentUtil.replicas;

import java.util.ArrayList;
import java.util.List;

import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.ReplicaSet;
import io.qkcm.controller.deployment.util.DeploymentUtil;

/** Upstream rolling.go: the RollingUpdate strategy. */
final class Rolling {

    private final Sync sync;
    private final Progress progress;

    Rolling(Sync sync, Progress progress) {
        this.sync = sync;
        this.progress = progress;
    }

    void rolloutRolling(Deployment d, List<ReplicaSet> rsList) throws Exception {
        Sync.NewAndOld rs = sync.getAllReplicaSetsAndSyncRevision(d, rsList, true);
        ReplicaSet newRS = rs.newRS();
        List<ReplicaSet> oldRSs = rs.oldRSs();
        List<ReplicaSet> allRSs = rs.all();

        if (reconcileNewReplicaSet(allRSs, newRS, d)) {
            progress.syncRolloutStatus(allRSs, newRS, d);
            return;
        }
        if (reconcileOldReplicaSets(allRSs, DeploymentUtil.filterActive(oldRSs), newRS, d)) {
            progress.syncRolloutStatus(allRSs, newRS, d);
            return;
        }
        if (DeploymentUtil.deploymentComplete(d, DeploymentContext.status(d))) {
            sync.cleanupDeployment(oldRSs, d);
        }
        progress.syncRolloutStatus(allRSs, newRS, d);
    }

    boolean reconcileNewReplicaSet(List<ReplicaSet> allRSs, ReplicaSet newRS, Deployment d) {
        if (replicas(newRS) == replicas(d)) {
            return false;
        }
        if (replicas(newRS) > replicas(d)) {
            return sync.scaleReplicaSetAndRecordEvent(newRS, replicas(d), d).scaled();
        }
        int newReplicasCount = DeploymentUtil.newRSNewReplicas(d, allRSs, newRS);
        return sync.scaleReplicaSetAndRecordEvent(newRS, newReplicasCount, d).scaled();
    }

    boolean reconcileOldReplicaSets(List<ReplicaSet> allRSs, List<ReplicaSet> oldRSs, ReplicaSet newRS, Deployment d) {
        int oldPodsCount = DeploymentUtil.replicaCount(oldRSs);
        if (oldPodsCount == 0) {
            return false;
        }
        int allPodsCount = DeploymentUtil.replicaCount(allRSs);
        int maxUnavailable = DeploymentUtil.maxUnavailable(d);
        int minAvailable = replicas(d) - maxUnavailable;
        int newRSUnavailablePodCount = replicas(newRS) - intOf(newRS.getStatus() == null ? null
                : newRS.getStatus().getAvailableReplicas());
        int maxScaledDown = allPodsCount - minAvailable - newRSUnavailablePodCount;
        if (maxScaledDown <= 0) {
            return false;
        }
        int cleanupCount;
        try {
            cleanupCount = cleanupUnhealthyReplicas(oldRSs, d, maxScaledDown);
        } catch (RuntimeException e) {
            return false; // upstream: return false, nil
        }
        List<ReplicaSet> all = new ArrayList<>(oldRSs);
        all.add(newRS);
        int scaledDownCount;
        try {
            scaledDownCount = scaleDownOldReplicaSetsForRollingUpdate(all, oldRSs, d);
        } catch (RuntimeException e) {
            return false;
        }
        return cleanupCount + scaledDownCount > 0;
    }

    /** Scales down old ReplicaSets' unavailable replicas; replaces entries of oldRSs with the updated objects. */
    int cleanupUnhealthyReplicas(List<ReplicaSet> oldRSs, Deployment d, int maxCleanupCount) {
        oldRSs.sort(DeploymentUtil.BY_CREATION_TIMESTAMP);
        int totalScaledDown = 0;
        for (int i = 0; i < oldRSs.size(); i++) {
            ReplicaSet target = oldRSs.get(i);
            if (totalScaledDown >= maxCleanupCount) {
                break;
            }
            if (replicas(target) == 0) {
                continue;
            }
            int available = intOf(target.getStatus() == null ? null : target.getStatus().getAvailableReplicas());
            if (replicas(target) == available) {
                continue;
            }
            int scaledDownCount = Math.min(maxCleanupCount - totalScaledDown, replicas(target) - available);
            int newReplicasCount = replicas(target) - scaledDownCount;
            if (newReplicasCount > replicas(target)) {
                throw new IllegalStateException(String.format(
                        "when cleaning up unhealthy replicas, got invalid request to scale down %s/%s %d -> %d",
                        target.getMetadata().getNamespace(), target.getMetadata().getName(), replicas(target),
                        newReplicasCount));
            }
            Sync.Scaled s = sync.scaleReplicaSetAndRecordEvent(target, newReplicasCount, d);
            totalScaledDown += scaledDownCount;
            oldRSs.set(i, s.rs());
        }
        return totalScaledDown;
    }

    int scaleDownOldReplicaSetsForRollingUpdate(List<ReplicaSet> allRSs, List<ReplicaSet> oldRSs, Deployment d) {
        int maxUnavailable = DeploymentUtil.maxUnavailable(d);
        int minAvailable = replicas(d) - maxUnavailable;
        int availablePodCount = DeploymentUtil.availableReplicaCount(allRSs);
        if (availablePodCount <= minAvailable) {
            return 0;
        }
        oldRSs.sort(DeploymentUtil.BY_CREATION_TIMESTAMP);
        int totalScaledDown = 0;
        int totalScaleDownCount = availablePodCount - minAvailable;
        for (ReplicaSet target : oldRSs) {
            if (totalScaledDown >= totalScaleDownCount) {
                break;
            }
            if (replicas(target) == 0) {
                continue;
            }
            int scaleDownCount = Math.min(replicas(target), totalScaleDownCount - totalScaledDown);
            int newReplicasCount = replicas(target) - scaleDownCount;
            if (newReplicasCount > replicas(target)) {
                throw new IllegalStateException("when scaling down old RS, got invalid request to scale down");
            }
            sync.scaleReplicaSetAndRecordEvent(target, newReplicasCount, d);
            totalScaledDown += scaleDownCount;
        }
        return totalScaledDown;
    }
}
