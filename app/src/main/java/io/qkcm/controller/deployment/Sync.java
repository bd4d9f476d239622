package io.qkcm.controller.deployment;

import static io.qkcm.controller.deployment.util.DeploymentUtil.intOf;
import static io.qkcm.controller.deployment.util.DeploymentUtil.replicas;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentCondition;
import io.fabric8.kubernetes.api.model.apps.DeploymentStatus;
import io.fabric8.kubernetes.api.model.apps.ReplicaSet;
import io.fabric8.kubernetes.api.model.apps.ReplicaSetBuilder;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import io.qkcm.controller.ApiErrors;
import io.qkcm.controller.ControllerRefManager;
import io.qkcm.controller.deployment.util.DeploymentUtil;
import io.qkcm.controller.hash.ControllerHash;
import io.qkcm.runtime.events.EventRecorder;

/** Upstream sync.go: syncing and scaling, new ReplicaSet creation, history cleanup, status. */
final class Sync {

    static final int MAX_REV_HISTORY_LENGTH_IN_CHARS = 2000;
    /** validation.DNS1123SubdomainMaxLength. */
    private static final int DNS1123_SUBDOMAIN_MAX_LENGTH = 253;

    private final DeploymentContext ctx;

    Sync(DeploymentContext ctx) {
        this.ctx = ctx;
    }

    /** newRS (may be null) and allOldRSs. */
    record NewAndOld(ReplicaSet newRS, List<ReplicaSet> oldRSs) {
        List<ReplicaSet> all() {
            List<ReplicaSet> all = new ArrayList<>(oldRSs);
            all.add(newRS);
            return all;
        }
    }

    void syncStatusOnly(Deployment d, List<ReplicaSet> rsList) throws Exception {
        NewAndOld rs = getAllReplicaSetsAndSyncRevision(d, rsList, false);
        syncDeploymentStatus(rs.all(), rs.newRS(), d);
    }

    void sync(Deployment d, List<ReplicaSet> rsList) throws Exception {
        NewAndOld rs = getAllReplicaSetsAndSyncRevision(d, rsList, false);
        scale(d, rs.newRS(), rs.oldRSs());
        if (Boolean.TRUE.equals(d.getSpec().getPaused()) && Rollback.getRollbackTo(d) == null) {
            cleanupDeployment(rs.oldRSs(), d);
        }
        syncDeploymentStatus(rs.all(), rs.newRS(), d);
    }

    void checkPausedConditions(Deployment d) {
        if (!DeploymentUtil.hasProgressDeadline(d)) {
            return;
        }
        DeploymentCondition cond = DeploymentUtil.getCondition(d.getStatus(), DeploymentUtil.PROGRESSING);
        if (cond != null && DeploymentUtil.TIMED_OUT_REASON.equals(cond.getReason())) {
            return;
        }
        boolean pausedCondExists = cond != null && DeploymentUtil.PAUSED_DEPLOY_REASON.equals(cond.getReason());
        boolean paused = Boolean.TRUE.equals(d.getSpec().getPaused());
        boolean needsUpdate = false;
        if (paused && !pausedCondExists) {
            DeploymentUtil.setCondition(DeploymentContext.status(d), DeploymentUtil.newCondition(ctx.clock(), DeploymentUtil.PROGRESSING,
                    "Unknown", DeploymentUtil.PAUSED_DEPLOY_REASON, "Deployment is paused"));
            needsUpdate = true;
        } else if (!paused && pausedCondExists) {
            DeploymentUtil.setCondition(DeploymentContext.status(d), DeploymentUtil.newCondition(ctx.clock(), DeploymentUtil.PROGRESSING,
                    "Unknown", DeploymentUtil.RESUMED_DEPLOY_REASON, "Deployment is resumed"));
            needsUpdate = true;
        }
        if (needsUpdate) {
            ctx.updateStatus(d);
        }
    }

    NewAndOld getAllReplicaSetsAndSyncRevision(Deployment d, List<ReplicaSet> rsList, boolean createIfNotExisted)
            throws Exception {
        List<ReplicaSet> allOldRSs = DeploymentUtil.findOldReplicaSets(d, rsList).get(1);
        ReplicaSet newRS = getNewReplicaSet(d, rsList, allOldRSs, createIfNotExisted);
        return new NewAndOld(newRS, new ArrayList<>(allOldRSs));
    }

    ReplicaSet getNewReplicaSet(Deployment d, List<ReplicaSet> rsList, List<ReplicaSet> oldRSs, boolean createIfNotExisted)
            throws Exception {
        ReplicaSet existingNewRS = DeploymentUtil.findNewReplicaSet(d, rsList);
        long maxOldRevision = DeploymentUtil.maxRevision(oldRSs);
        String newRevision = Long.toString(maxOldRevision + 1);

        if (existingNewRS != null) {
            ReplicaSet rsCopy = io.qkcm.runtime.DeepCopy.of(existingNewRS);
            boolean annotationsUpdated = DeploymentUtil.setNewReplicaSetAnnotations(d, rsCopy, newRevision, true,
                    MAX_REV_HISTORY_LENGTH_IN_CHARS);
            boolean minReadySecondsNeedsUpdate = intOf(rsCopy.getSpec().getMinReadySeconds()) != intOf(
                    d.getSpec().getMinReadySeconds());
            if (annotationsUpdated || minReadySecondsNeedsUpdate) {
                rsCopy.getSpec().setMinReadySeconds(d.getSpec().getMinReadySeconds());
                return ctx.updateReplicaSet(rsCopy);
            }
            boolean needsUpdate = DeploymentUtil.setDeploymentRevision(d,
                    rsCopy.getMetadata().getAnnotations().getOrDefault(DeploymentUtil.REVISION_ANNOTATION, ""));
            DeploymentCondition cond = DeploymentUtil.getCondition(d.getStatus(), DeploymentUtil.PROGRESSING);
            if (DeploymentUtil.hasProgressDeadline(d) && cond == null) {
                String msg = String.format("Found new replica set \"%s\"", rsCopy.getMetadata().getName());
                DeploymentUtil.setCondition(DeploymentContext.status(d), DeploymentUtil.newCondition(ctx.clock(),
                        DeploymentUtil.PROGRESSING, "True", DeploymentUtil.FOUND_NEW_RS_REASON, msg));
                needsUpdate = true;
            }
            if (needsUpdate) {
                ctx.updateStatus(d);
            }
            return rsCopy;
        }

        if (!createIfNotExisted) {
            return null;
        }

        PodTemplateSpec newRSTemplate = io.qkcm.runtime.DeepCopy.of(d.getSpec().getTemplate());
        Integer collisionCount = d.getStatus() == null ? null : d.getStatus().getCollisionCount();
        String hash = ControllerHash.computeHash(newRSTemplate, collisionCount);
        if (newRSTemplate.getMetadata() == null) {
            newRSTemplate.setMetadata(new io.fabric8.kubernetes.api.model.ObjectMeta());
        }
        Map<String, String> labels = DeploymentUtil.cloneAndAddLabel(
                d.getSpec().getTemplate().getMetadata() == null ? null : d.getSpec().getTemplate().getMetadata().getLabels(),
                DeploymentUtil.DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY, hash);
        newRSTemplate.getMetadata().setLabels(labels);
        ReplicaSet newRS = new ReplicaSetBuilder()
                .withMetadata(new ObjectMetaBuilder().withName(generateReplicaSetName(d.getMetadata().getName(), hash))
                        .withNamespace(d.getMetadata().getNamespace())
                        .withOwnerReferences(ControllerRefManager.newControllerRef(d, DeploymentContext.API_VERSION,
                                DeploymentContext.KIND))
                        .withLabels(new java.util.TreeMap<>(labels)).build())
                .withNewSpec().withReplicas(0).withMinReadySeconds(d.getSpec().getMinReadySeconds())
                .withSelector(DeploymentUtil.cloneSelectorAndAddLabel(d.getSpec().getSelector(),
                        DeploymentUtil.DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY, hash))
                .withTemplate(newRSTemplate).endSpec().build();
        List<ReplicaSet> allRSs = new ArrayList<>(oldRSs);
        allRSs.add(newRS);
        int newReplicasCount = DeploymentUtil.newRSNewReplicas(d, allRSs, newRS);
        newRS.getSpec().setReplicas(newReplicasCount);
        DeploymentUtil.setNewReplicaSetAnnotations(d, newRS, newRevision, false, MAX_REV_HISTORY_LENGTH_IN_CHARS);

        boolean alreadyExists = false;
        ReplicaSet createdRS;
        try {
            createdRS = ctx.client().apps().replicaSets().inNamespace(d.getMetadata().getNamespace()).resource(newRS).create();
        } catch (RuntimeException err) {
            if (ApiErrors.isAlreadyExists(err)) {
                alreadyExists = true;
                ReplicaSet rs = ctx.replicaSets().getIndexer().getByKey(
                        Cache.namespaceKeyFunc(newRS.getMetadata().getNamespace(), newRS.getMetadata().getName()));
                if (rs == null) {
                    throw new IllegalStateException("replicaset.apps \"" + newRS.getMetadata().getName() + "\" not found");
                }
                rs = ctx.latest(rs); // as the sync's list: this controller's own last update, if not cached yet
                var ref = ControllerRefManager.controllerOf(rs);
                if (ref != null && Objects.equals(ref.getUid(), d.getMetadata().getUid())
                        && DeploymentUtil.equalIgnoreHash(d.getSpec().getTemplate(), rs.getSpec().getTemplate())) {
                    createdRS = rs;
                } else {
                    // a hash collision: bump collisionCount so the next sync computes another name
                    DeploymentStatus st = DeploymentContext.status(d);
                    int pre = st.getCollisionCount() == null ? 0 : st.getCollisionCount();
                    st.setCollisionCount(pre + 1);
                    try {
                        ctx.updateStatus(d);
                        ctx.log().debugf("Found a hash collision for deployment %s - bumping collisionCount (%d->%d) to resolve it",
                                d.getMetadata().getName(), pre, pre + 1);
                    } catch (RuntimeException ignored) {
                        // upstream only logs
                    }
                    throw err;
                }
            } else if (ApiErrors.hasStatusCause(err, ApiErrors.NAMESPACE_TERMINATING_CAUSE)) {
                throw err;
            } else {
                String msg = String.format("Failed to create new replica set \"%s\": %s", newRS.getMetadata().getName(),
                        ApiErrors.message(err));
                if (DeploymentUtil.hasProgressDeadline(d)) {
                    DeploymentUtil.setCondition(DeploymentContext.status(d), DeploymentUtil.newCondition(ctx.clock(),
                            DeploymentUtil.PROGRESSING, "False", DeploymentUtil.FAILED_RS_CREATE_REASON, msg));
                    try {
                        ctx.updateStatus(d);
                    } catch (RuntimeException ignored) {
                        // upstream ignores this error
                    }
                }
                ctx.recorder().event(d, EventRecorder.WARNING, DeploymentUtil.FAILED_RS_CREATE_REASON, msg);
                throw err;
            }
        }
        if (!alreadyExists && newReplicasCount > 0) {
            ctx.recorder().eventf(d, EventRecorder.NORMAL, "ScalingReplicaSet", "Scaled up replica set %s from 0 to %d",
                    createdRS.getMetadata().getName(), newReplicasCount);
        }
        boolean needsUpdate = DeploymentUtil.setDeploymentRevision(d, newRevision);
        if (!alreadyExists && DeploymentUtil.hasProgressDeadline(d)) {
            String msg = String.format("Created new replica set \"%s\"", createdRS.getMetadata().getName());
            DeploymentUtil.setCondition(DeploymentContext.status(d), DeploymentUtil.newCondition(ctx.clock(),
                    DeploymentUtil.PROGRESSING, "True", DeploymentUtil.NEW_REPLICA_SET_REASON, msg));
            needsUpdate = true;
        }
        if (needsUpdate) {
            ctx.updateStatus(d);
        }
        return createdRS;
    }

    void scale(Deployment d, ReplicaSet newRS, List<ReplicaSet> oldRSs) throws Exception {
        ReplicaSet activeOrLatest = DeploymentUtil.findActiveOrLatest(newRS, oldRSs);
        if (activeOrLatest != null) {
            if (replicas(activeOrLatest) == replicas(d)) {
                return;
            }
            scaleReplicaSetAndRecordEvent(activeOrLatest, replicas(d), d);
            return;
        }
        if (DeploymentUtil.isSaturated(d, newRS)) {
            for (ReplicaSet old : DeploymentUtil.filterActive(oldRSs)) {
                scaleReplicaSetAndRecordEvent(old, 0, d);
            }
            return;
        }
        if (DeploymentUtil.isRollingUpdate(d)) {
            List<ReplicaSet> all = new ArrayList<>(oldRSs);
            all.add(newRS);
            List<ReplicaSet> allRSs = DeploymentUtil.filterActive(all);
            int allRSsReplicas = DeploymentUtil.replicaCount(allRSs);
            int allowedSize = 0;
            if (replicas(d) > 0) {
                allowedSize = replicas(d) + DeploymentUtil.maxSurge(d);
            }
            int toAdd = allowedSize - allRSsReplicas;
            if (toAdd > 0) {
                allRSs.sort(DeploymentUtil.BY_SIZE_NEWER);
            } else if (toAdd < 0) {
                allRSs.sort(DeploymentUtil.BY_SIZE_OLDER);
            }
            int added = 0;
            Map<String, Integer> nameToSize = new HashMap<>();
            for (ReplicaSet rs : allRSs) {
                if (toAdd != 0) {
                    int proportion = DeploymentUtil.replicaSetProportion(rs, d, toAdd, added);
                    nameToSize.put(rs.getMetadata().getName(), replicas(rs) + proportion);
                    added += proportion;
                } else {
                    nameToSize.put(rs.getMetadata().getName(), replicas(rs));
                }
            }
            for (int i = 0; i < allRSs.size(); i++) {
                ReplicaSet rs = allRSs.get(i);
                String name = rs.getMetadata().getName();
                if (i == 0 && toAdd != 0) {
                    int leftover = toAdd - added;
                    nameToSize.put(name, Math.max(0, nameToSize.get(name) + leftover));
                }
                scaleReplicaSet(rs, nameToSize.get(name), d);
            }
        }
    }

    /** {scaled, rs}. */
    record Scaled(boolean scaled, ReplicaSet rs) {
    }

    Scaled scaleReplicaSetAndRecordEvent(ReplicaSet rs, int newScale, Deployment d) {
        if (replicas(rs) == newScale) {
            return new Scaled(false, rs);
        }
        return scaleReplicaSet(rs, newScale, d);
    }

    Scaled scaleReplicaSet(ReplicaSet rs, int newScale, Deployment d) {
        boolean sizeNeedsUpdate = replicas(rs) != newScale;
        int max = replicas(d) + DeploymentUtil.maxSurge(d);
        boolean annotationsNeedUpdate = DeploymentUtil.replicasAnnotationsNeedUpdate(rs, replicas(d), max);
        boolean scaled = false;
        if (sizeNeedsUpdate || annotationsNeedUpdate) {
            int oldScale = replicas(rs);
            ReplicaSet rsCopy = io.qkcm.runtime.DeepCopy.of(rs);
            rsCopy.getSpec().setReplicas(newScale);
            DeploymentUtil.setReplicasAnnotations(rsCopy, replicas(d), max);
            rs = ctx.updateReplicaSet(rsCopy);
            if (sizeNeedsUpdate) {
                scaled = true;
                ctx.recorder().eventf(d, EventRecorder.NORMAL, "ScalingReplicaSet", "Scaled %s replica set %s from %d to %d",
                        oldScale < newScale ? "up" : "down", rs.getMetadata().getName(), oldScale, newScale);
            }
        }
        return new Scaled(scaled, rs);
    }

    void cleanupDeployment(List<ReplicaSet> oldRSs, Deployment d) {
        if (!DeploymentUtil.hasRevisionHistoryLimit(d)) {
            return;
        }
        List<ReplicaSet> cleanable = new ArrayList<>();
        for (ReplicaSet rs : oldRSs) {
            if (rs != null && rs.getMetadata().getDeletionTimestamp() == null) {
                cleanable.add(rs);
            }
        }
        int diff = cleanable.size() - d.getSpec().getRevisionHistoryLimit();
        if (diff <= 0) {
            return;
        }
        cleanable.sort(DeploymentUtil.BY_REVISION);
        for (int i = 0; i < diff; i++) {
            ReplicaSet rs = cleanable.get(i);
            var st = rs.getStatus();
            if (st != null && intOf(st.getReplicas()) != 0 || replicas(rs) != 0
                    || DeploymentUtil.longOf(rs.getMetadata().getGeneration()) > DeploymentUtil.longOf(
                            st == null ? null : st.getObservedGeneration())
                    || rs.getMetadata().getDeletionTimestamp() != null) {
                continue;
            }
            try {
                ctx.client().apps().replicaSets().inNamespace(rs.getMetadata().getNamespace())
                        .withName(rs.getMetadata().getName()).delete();
            } catch (RuntimeException e) {
                if (!ApiErrors.isNotFound(e)) {
                    throw e;
                }
            }
        }
    }

    void syncDeploymentStatus(List<ReplicaSet> allRSs, ReplicaSet newRS, Deployment d) {
        DeploymentStatus newStatus = calculateStatus(allRSs, newRS, d);
        if (statusEquals(d.getStatus(), newStatus)) {
            return;
        }
        d.setStatus(newStatus);
        ctx.updateStatus(d);
    }

    DeploymentStatus calculateStatus(List<ReplicaSet> allRSs, ReplicaSet newRS, Deployment d) {
        int available = DeploymentUtil.availableReplicaCount(allRSs);
        int total = DeploymentUtil.replicaCount(allRSs);
        int unavailable = Math.max(0, total - available);
        List<ReplicaSet> newOnly = new ArrayList<>();
        newOnly.add(newRS);
        DeploymentStatus status = new DeploymentStatus();
        status.setObservedGeneration(DeploymentUtil.longOf(d.getMetadata().getGeneration()));
        status.setReplicas(DeploymentUtil.actualReplicaCount(allRSs));
        status.setUpdatedReplicas(DeploymentUtil.actualReplicaCount(newOnly));
        status.setReadyReplicas(DeploymentUtil.readyReplicaCount(allRSs));
        status.setAvailableReplicas(available);
        status.setUnavailableReplicas(unavailable);
        status.setCollisionCount(d.getStatus() == null ? null : d.getStatus().getCollisionCount());
        if (ctx.terminatingReplicasGate()) {
            status.setTerminatingReplicas(DeploymentUtil.terminatingReplicaCount(allRSs));
        }
        List<DeploymentCondition> conditions = new ArrayList<>();
        if (d.getStatus() != null && d.getStatus().getConditions() != null) {
            for (DeploymentCondition c : d.getStatus().getConditions()) {
                conditions.add(io.qkcm.runtime.DeepCopy.of(c));
            }
        }
        status.setConditions(conditions);
        if (available >= replicas(d) - DeploymentUtil.maxUnavailable(d)) {
            DeploymentUtil.setCondition(status, DeploymentUtil.newCondition(ctx.clock(), DeploymentUtil.AVAILABLE, "True",
                    DeploymentUtil.MINIMUM_REPLICAS_AVAILABLE, "Deployment has minimum availability."));
        } else {
            DeploymentUtil.setCondition(status, DeploymentUtil.newCondition(ctx.clock(), DeploymentUtil.AVAILABLE, "False",
                    DeploymentUtil.MINIMUM_REPLICAS_UNAVAILABLE, "Deployment does not have minimum availability."));
        }
        return status;
    }

    /** reflect.DeepEqual of two statuses, zero values and absent fields being the same. */
    static boolean statusEquals(DeploymentStatus a, DeploymentStatus b) {
        if (a == null) {
            a = new DeploymentStatus();
        }
        if (b == null) {
            b = new DeploymentStatus();
        }
        return DeploymentUtil.longOf(a.getObservedGeneration()) == DeploymentUtil.longOf(b.getObservedGeneration())
                && intOf(a.getReplicas()) == intOf(b.getReplicas())
                && intOf(a.getUpdatedReplicas()) == intOf(b.getUpdatedReplicas())
                && intOf(a.getReadyReplicas()) == intOf(b.getReadyReplicas())
                && intOf(a.getAvailableReplicas()) == intOf(b.getAvailableReplicas())
                && intOf(a.getUnavailableReplicas()) == intOf(b.getUnavailableReplicas())
                && Objects.equals(a.getTerminatingReplicas(), b.getTerminatingReplicas())
                && Objects.equals(a.getCollisionCount(), b.getCollisionCount())
                && conditionsEqual(a.getConditions(), b.getConditions());
    }

    private static boolean conditionsEqual(List<DeploymentCondition> a, List<DeploymentCondition> b) {
        List<DeploymentCondition> x = a == null ? List.of() : a;
        List<DeploymentCondition> y = b == null ? List.of() : b;
        if (x.size() != y.size()) {
            return false;
        }
        for (int i = 0; i < x.size(); i++) {
            DeploymentCondition p = x.get(i);
            DeploymentCondition q = y.get(i);
            if (!Objects.equals(p.getType(), q.getType()) || !Objects.equals(p.getStatus(), q.getStatus())
                    || !Objects.equals(p.getReason(), q.getReason()) || !Objects.equals(p.getMessage(), q.getMessage())
                    || !sameTime(p.getLastUpdateTime(), q.getLastUpdateTime())
                    || !sameTime(p.getLastTransitionTime(), q.getLastTransitionTime())) {
                return false;
            }
        }
        return true;
    }

    private static boolean sameTime(String a, String b) {
        if (a == null || b == null) {
            return a == null && b == null;
        }
        return DeploymentUtil.parseTime(a).equals(DeploymentUtil.parseTime(b));
    }

    boolean isScalingEvent(Deployment d, List<ReplicaSet> rsList) throws Exception {
        NewAndOld rs = getAllReplicaSetsAndSyncRevision(d, rsList, false);
        for (ReplicaSet r : DeploymentUtil.filterActive(rs.all())) {
            Integer desired = DeploymentUtil.nonNegativeInt32Annotation(r, DeploymentUtil.DESIRED_REPLICAS_ANNOTATION);
            if (desired == null) {
                continue;
            }
            if (desired != replicas(d)) {
                return true;
            }
        }
        return false;
    }

    static String generateReplicaSetName(String deploymentName, String hash) {
        int maxLen = DNS1123_SUBDOMAIN_MAX_LENGTH - 1 - hash.length();
        if (deploymentName.length() > maxLen && maxLen > 0) {
            return deploymentName.substring(0, maxLen) + "-" + hash;
        }
        return deploymentName + "-" + hash;
    }
}
