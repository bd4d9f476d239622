package io.qkcm.controller.deployment;

import static io.qkcm.controller.deployment.util.DeploymentUtil.replicas;

import java.util.List;
import java.util.Map;
import java.util.Objects;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.ReplicaSet;
import io.qkcm.controller.deployment.util.DeploymentUtil;

/** Upstream recreate.go: scale every old ReplicaSet to zero, wait for their pods to go, then scale up the new one. */
final class Recreate {

    private final Sync sync;
    private final Progress progress;

    Recreate(Sync sync, Progress progress) {
        this.sync = sync;
        this.progress = progress;
    }

    void rolloutRecreate(Deployment d, List<ReplicaSet> rsList, Map<String, List<Pod>> podMap) throws Exception {
        Sync.NewAndOld rs = sync.getAllReplicaSetsAndSyncRevision(d, rsList, false);
        ReplicaSet newRS = rs.newRS();
        List<ReplicaSet> oldRSs = rs.oldRSs();
        List<ReplicaSet> allRSs = rs.all();
        List<ReplicaSet> activeOldRSs = DeploymentUtil.filterActive(oldRSs);

        if (scaleDownOldReplicaSetsForRecreate(activeOldRSs, d)) {
            progress.syncRolloutStatus(allRSs, newRS, d);
            return;
        }
        if (oldPodsRunning(newRS, oldRSs, podMap)) {
            progress.syncRolloutStatus(allRSs, newRS, d);
            return;
        }
        if (newRS == null) {
            rs = sync.getAllReplicaSetsAndSyncRevision(d, rsList, true);
            newRS = rs.newRS();
            oldRSs = rs.oldRSs();
            allRSs = rs.all();
        }
        sync.scaleReplicaSetAndRecordEvent(newRS, replicas(d), d);
        if (DeploymentUtil.deploymentComplete(d, DeploymentContext.status(d))) {
            sync.cleanupDeployment(oldRSs, d);
        }
        progress.syncRolloutStatus(allRSs, newRS, d);
    }

    private boolean scaleDownOldReplicaSetsForRecreate(List<ReplicaSet> oldRSs, Deployment d) {
        boolean scaled = false;
        for (int i = 0; i < oldRSs.size(); i++) {
            ReplicaSet rs = oldRSs.get(i);
            if (replicas(rs) == 0) {
                continue;
            }
            Sync.Scaled s = sync.scaleReplicaSetAndRecordEvent(rs, 0, d);
            if (s.scaled()) {
                oldRSs.set(i, s.rs());
                scaled = true;
            }
        }
        return scaled;
    }

    static boolean oldPodsRunning(ReplicaSet newRS, List<ReplicaSet> oldRSs, Map<String, List<Pod>> podMap) {
        if (DeploymentUtil.actualReplicaCount(oldRSs) > 0) {
            return true;
        }
        for (Map.Entry<String, List<Pod>> e : podMap.entrySet()) {
            if (newRS != null && Objects.equals(newRS.getMetadata().getUid(), e.getKey())) {
                continue;
            }
            for (Pod pod : e.getValue()) {
                String phase = pod.getStatus() == null ? null : pod.getStatus().getPhase();
                if ("Failed".equals(phase) || "Succeeded".equals(phase)) {
                    continue;
                }
                return true;
            }
        }
        return false;
    }
}
