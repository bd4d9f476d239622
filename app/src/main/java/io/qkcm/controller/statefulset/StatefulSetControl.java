package io.qkcm.controller.statefulset;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.ControllerRevision;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.apps.StatefulSetStatus;
import io.qkcm.controller.ApiErrors;
import io.qkcm.controller.history.ControllerHistory;
import io.qkcm.controller.history.History;

/**
 * Upstream's defaultStatefulSetControl (stateful_set_control.go): revisions, then the pods in ordinal
 * order (OrderedReady: one at a time, each waiting for its predecessors to be Running, Ready and
 * Available; Parallel: all at once in slow-start batches), scale-down from the highest ordinal, the
 * rolling update from the highest ordinal down to the partition, then the status and the history limit.
 */
class StatefulSetControl {

    private static final Logger LOG = Logger.getLogger(StatefulSetControl.class);

    /** Upstream's MaxBatchSize of slowStartBatch. */
    static final int MAX_BATCH_SIZE = 500;
    private static final int MAX_REVISION_EQUALITY_CACHE_ENTRIES = 10_000;

    private final StatefulPodControl podControl;
    private final StatefulSetStatusUpdater statusUpdater;
    private final History history;
    private final ExecutorService apiCalls;
    private final boolean autoDeletePVC;
    private final boolean maxUnavailableGate;
    private final boolean semanticRevisionComparison;
    private final boolean podIndexLabel;
    private volatile PodTemplateDefaults defaults = PodTemplateDefaults.DEFAULT_GATES;
    private final Map<String, Boolean> revisionEqualityCache = new LinkedHashMap<>(16, 0.75f, true) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
            return size() > MAX_REVISION_EQUALITY_CACHE_ENTRIES;
        }
    };

    StatefulSetControl(StatefulPodControl podControl, StatefulSetStatusUpdater statusUpdater, History history,
            ExecutorService apiCalls, boolean autoDeletePVC, boolean maxUnavailableGate,
            boolean semanticRevisionComparison, boolean podIndexLabel) {
        this.podControl = podControl;
        this.statusUpdater = statusUpdater;
        this.history = history;
        this.apiCalls = apiCalls;
        this.autoDeletePVC = autoDeletePVC;
        this.maxUnavailableGate = maxUnavailableGate;
        this.semanticRevisionComparison = semanticRevisionComparison;
        this.podIndexLabel = podIndexLabel;
    }

    /** The API's defaulting of templates under the ImageVolume gate's value (legacyscheme.Scheme.Default). */
    void setImageVolume(boolean imageVolume) {
        this.defaults = new PodTemplateDefaults(imageVolume);
    }

    /** Thrown with several failures (utilerrors.NewAggregate). */
    static final class Aggregate extends Exception {
        Aggregate(List<Exception> errs) {
            super(errs.size() == 1 ? StatefulPodControl.msg(errs.get(0))
                    : "[" + String.join(", ", errs.stream().map(StatefulPodControl::msg).toList()) + "]", errs.get(0));
        }
    }

    private record Revisions(ControllerRevision current, ControllerRevision update, int collisionCount) {
    }

    /** Upstream's UpdateStatefulSet: the status written, or an error. */
    StatefulSetStatus updateStatefulSet(StatefulSet set, List<Pod> pods) throws Exception {
        set = io.qkcm.runtime.DeepCopy.of(set);
        List<ControllerRevision> revisions = new ArrayList<>(listRevisions(set));
        ControllerHistory.sortControllerRevisions(revisions);

        ControllerRevision[] currentAndUpdate = new ControllerRevision[2];
        StatefulSetStatus status;
        try {
            status = performUpdate(set, pods, revisions, currentAndUpdate);
        } catch (Exception e) {
            List<Exception> errs = new ArrayList<>();
            if (e instanceof Aggregate a && a.getSuppressed().length > 0) {
                errs.addAll(Arrays.stream(a.getSuppressed()).map(t -> (Exception) t).toList());
            } else {
                errs.add(e);
            }
            try {
                truncateHistory(set, pods, revisions, currentAndUpdate[0], currentAndUpdate[1]);
            } catch (Exception te) {
                errs.add(te);
            }
            if (errs.size() == 1) {
                throw errs.get(0);
            }
            throw new Aggregate(errs);
        }
        truncateHistory(set, pods, revisions, currentAndUpdate[0], currentAndUpdate[1]);
        return status;
    }

    private StatefulSetStatus performUpdate(StatefulSet set, List<Pod> pods, List<ControllerRevision> revisions,
            ControllerRevision[] currentAndUpdate) throws Exception {
        Revisions r = getStatefulSetRevisions(set, revisions);
        currentAndUpdate[0] = r.current();
        currentAndUpdate[1] = r.update();
        StatefulSetStatus[] statusOut = new StatefulSetStatus[1];
        Exception err = null;
        try {
            updateStatefulSet(set, r.current(), r.update(), r.collisionCount(), pods, statusOut);
        } catch (Exception e) {
            err = e;
        }
        StatefulSetStatus currentStatus = statusOut[0];
        if (err != null && currentStatus == null) {
            throw err;
        }
        Exception statusErr = null;
        try {
            updateStatefulSetStatus(set, currentStatus);
            LOG.debugf("Updated status of StatefulSet %s/%s: replicas=%d readyReplicas=%d currentReplicas=%d updatedReplicas=%d",
                    set.getMetadata().getNamespace(), set.getMetadata().getName(), currentStatus.getReplicas(),
                    currentStatus.getReadyReplicas(), currentStatus.getCurrentReplicas(), currentStatus.getUpdatedReplicas());
        } catch (InterruptedException e) {
            throw e;
        } catch (Exception e) {
            statusErr = e;
        }
        if (err != null) {
            if (statusErr != null) {
                LOG.errorf("Could not update status of StatefulSet %s/%s: %s", set.getMetadata().getNamespace(),
                        set.getMetadata().getName(), statusErr.getMessage());
            }
            throw err;
        }
        if (statusErr != null) {
            throw statusErr;
        }
        return currentStatus;
    }

    List<ControllerRevision> listRevisions(StatefulSet set) {
        return history.listControllerRevisions(set, set.getSpec().getSelector());
    }

    void adoptOrphanRevisions(StatefulSet set, List<ControllerRevision> revisions) throws Exception {
        for (int i = 0; i < revisions.size(); i++) {
            revisions.set(i, history.adoptControllerRevision(set, StatefulSetUtils.API_VERSION, StatefulSetUtils.KIND,
                    revisions.get(i)));
        }
    }

    private void truncateHistory(StatefulSet set, List<Pod> pods, List<ControllerRevision> revisions,
            ControllerRevision current, ControllerRevision update) throws Exception {
        Set<String> live = new HashSet<>();
        if (current != null) {
            live.add(current.getMetadata().getName());
        }
        if (update != null) {
            live.add(update.getMetadata().getName());
        }
        for (Pod pod : pods) {
            live.add(StatefulSetUtils.podRevision(pod));
        }
        List<ControllerRevision> old = new ArrayList<>();
        for (ControllerRevision r : revisions) {
            if (!live.contains(r.getMetadata().getName())) {
                old.add(r);
            }
        }
        Integer limitBox = set.getSpec().getRevisionHistoryLimit();
        int limit = limitBox == null ? 10 : limitBox;
        if (limit < 0 || old.size() <= limit) {
            return;
        }
        for (ControllerRevision r : old.subList(0, old.size() - limit)) {
            history.deleteControllerRevision(r);
        }
    }

    private boolean setMatchesLatestExistingRevision(StatefulSet set, ControllerRevision proposed,
            ControllerRevision latest) {
        if (!semanticRevisionComparison) {
            return false;
        }
        String key = set.getMetadata().getUid() + "/" + set.getMetadata().getGeneration() + "/"
                + latest.getMetadata().getResourceVersion();
        synchronized (revisionEqualityCache) {
            if (revisionEqualityCache.containsKey(key)) {
                return true;
            }
        }
        StatefulSet latestSet;
        ControllerRevision reconstructed;
        try {
            latestSet = StatefulSetUtils.applyRevision(set, latest);
            // legacyscheme.Scheme.Default(latestSet), then newRevision: the restored template gets the
            // defaults today's API server would give it
            reconstructed = StatefulSetUtils.newRevision(latestSet, -1, null, defaults);
        } catch (RuntimeException e) {
            return false;
        }
        if (ControllerHistory.equalRevision(proposed, reconstructed)) {
            synchronized (revisionEqualityCache) {
                revisionEqualityCache.put(key, Boolean.TRUE);
            }
            return true;
        }
        return false;
    }

    private Revisions getStatefulSetRevisions(StatefulSet set, List<ControllerRevision> revisions) throws Exception {
        int revisionCount = revisions.size();
        ControllerHistory.sortControllerRevisions(revisions);
        int collisionCount = set.getStatus() != null && set.getStatus().getCollisionCount() != null
                ? set.getStatus().getCollisionCount()
                : 0;
        ControllerRevision updateRevision = StatefulSetUtils.newRevision(set, StatefulSetUtils.nextRevision(revisions),
                collisionCount);
        List<ControllerRevision> equalRevisions = ControllerHistory.findEqualRevisions(revisions, updateRevision);
        int equalCount = equalRevisions.size();
        if (equalCount > 0 && ControllerHistory.equalRevision(revisions.get(revisionCount - 1),
                equalRevisions.get(equalCount - 1))) {
            updateRevision = revisions.get(revisionCount - 1);
        } else if (equalCount > 0) {
            updateRevision = history.updateControllerRevision(equalRevisions.get(equalCount - 1),
                    updateRevision.getRevision());
        } else if (revisionCount > 0
                && setMatchesLatestExistingRevision(set, updateRevision, revisions.get(revisionCount - 1))) {
            updateRevision = revisions.get(revisionCount - 1);
        } else {
            AtomicInteger cc = new AtomicInteger(collisionCount);
            try {
                updateRevision = history.createControllerRevision(set, updateRevision, cc);
            } finally {
                collisionCount = cc.get();
            }
        }
        ControllerRevision currentRevision = null;
        String statusCurrent = set.getStatus() == null ? null : set.getStatus().getCurrentRevision();
        for (ControllerRevision r : revisions) {
            if (r.getMetadata().getName().equals(statusCurrent)) {
                currentRevision = r;
                break;
            }
        }
        if (currentRevision == null) {
            currentRevision = updateRevision;
        }
        return new Revisions(currentRevision, updateRevision, collisionCount);
    }

    /** fn for index k; true asks the caller to stop (monotonic runs only). */
    @FunctionalInterface
    interface IndexFn {
        boolean apply(int i) throws Exception;
    }

    /** Upstream's slowStartBatch: batches of 1, 2, 4, … (at most 500) in parallel; stops at a failing batch. */
    int slowStartBatch(int initialBatchSize, int remaining, IndexFn fn) throws Exception {
        int successes = 0;
        int j = 0;
        for (int batchSize = Math.min(remaining, initialBatchSize); batchSize > 0; batchSize = Math
                .min(Math.min(2 * batchSize, remaining), MAX_BATCH_SIZE)) {
            List<Future<?>> futures = new ArrayList<>();
            for (int i = 0; i < batchSize; i++) {
                int k = j++;
                futures.add(apiCalls.submit(() -> {
                    fn.apply(k);
                    return null;
                }));
            }
            List<Exception> errs = new ArrayList<>();
            for (Future<?> f : futures) {
                try {
                    f.get();
                } catch (ExecutionException e) {
                    errs.add(e.getCause() instanceof Exception ex ? ex : new RuntimeException(e.getCause()));
                }
            }
            successes += batchSize - errs.size();
            if (!errs.isEmpty()) {
                Aggregate agg = new Aggregate(errs);
                errs.forEach(agg::addSuppressed);
                throw agg;
            }
            remaining -= batchSize;
        }
        return successes;
    }

    private record ReplicaStatus(int replicas, int ready, int available, int current, int updated) {
    }

    private static ReplicaStatus computeReplicaStatus(List<Pod> pods, int minReadySeconds, ControllerRevision current,
            ControllerRevision update) {
        int replicas = 0;
        int ready = 0;
        int available = 0;
        int cur = 0;
        int upd = 0;
        for (Pod pod : pods) {
            if (pod == null) {
                continue;
            }
            if (StatefulSetUtils.isCreated(pod)) {
                replicas++;
            }
            if (StatefulSetUtils.isRunningAndReady(pod)) {
                ready++;
                if (StatefulSetUtils.isRunningAndAvailable(pod, minReadySeconds)) {
                    available++;
                }
            }
            if (StatefulSetUtils.isCreated(pod) && !StatefulSetUtils.isTerminating(pod)) {
                String revision = StatefulSetUtils.podRevision(pod);
                if (revision.equals(current.getMetadata().getName())) {
                    cur++;
                }
                if (revision.equals(update.getMetadata().getName())) {
                    upd++;
                }
            }
        }
        return new ReplicaStatus(replicas, ready, available, cur, upd);
    }

    @SafeVarargs
    private static void updateStatus(StatefulSetStatus status, int minReadySeconds, ControllerRevision current,
            ControllerRevision update, List<Pod>... podLists) {
        int replicas = 0;
        int ready = 0;
        int available = 0;
        int cur = 0;
        int upd = 0;
        for (List<Pod> list : podLists) {
            ReplicaStatus rs = computeReplicaStatus(list, minReadySeconds, current, update);
            replicas += rs.replicas();
            ready += rs.ready();
            available += rs.available();
            cur += rs.current();
            upd += rs.updated();
        }
        status.setReplicas(replicas);
        status.setReadyReplicas(ready);
        status.setAvailableReplicas(available);
        status.setCurrentReplicas(cur);
        status.setUpdatedReplicas(upd);
    }

    private boolean processReplica(StatefulSet set, StatefulSet updateSet, boolean monotonic, Pod[] replicas, int i)
            throws Exception {
        Pod replica = replicas[i];
        if (StatefulSetUtils.isFailed(replica) || StatefulSetUtils.isSucceeded(replica)) {
            if (replica.getMetadata().getDeletionTimestamp() == null) {
                podControl.deleteStatefulPod(set, replica);
            }
            return true;
        }
        if (!StatefulSetUtils.isCreated(replica)) {
            if (autoDeletePVC && podControl.podClaimIsStale(set, replica)) {
                // a claim still owned by a former pod of this ordinal: wait for its deletion
                return true;
            }
            podControl.createStatefulPod(set, replica);
            if (monotonic) {
                return true;
            }
        }
        if (StatefulSetUtils.isPending(replica)) {
            LOG.tracef("StatefulSet %s is triggering PVC creation for pending Pod %s", set.getMetadata().getName(),
                    replica.getMetadata().getName());
            podControl.createMissingPersistentVolumeClaims(set, replica);
        }
        if (StatefulSetUtils.isTerminating(replica) && monotonic) {
            LOG.tracef("StatefulSet %s is waiting for Pod %s to Terminate", set.getMetadata().getName(),
                    replica.getMetadata().getName());
            return true;
        }
        if (!StatefulSetUtils.isRunningAndReady(replica) && monotonic) {
            LOG.tracef("StatefulSet %s is waiting for Pod %s to be Running and Ready", set.getMetadata().getName(),
                    replica.getMetadata().getName());
            return true;
        }
        if (!StatefulSetUtils.isRunningAndAvailable(replica, StatefulSetUtils.minReadySeconds(set)) && monotonic) {
            LOG.tracef("StatefulSet %s is waiting for Pod %s to be Available", set.getMetadata().getName(),
                    replica.getMetadata().getName());
            return true;
        }
        boolean retentionMatch = true;
        if (autoDeletePVC) {
            try {
                retentionMatch = podControl.claimsMatchRetentionPolicy(updateSet, replica);
            } catch (RuntimeException e) {
                retentionMatch = true;
            }
        }
        if (StatefulSetUtils.identityMatches(set, replica) && StatefulSetUtils.storageMatches(set, replica)
                && retentionMatch) {
            return false;
        }
        podControl.updateStatefulPod(updateSet, new io.fabric8.kubernetes.api.model.PodBuilder(replica).build());
        return false;
    }

    private boolean processCondemned(StatefulSet set, Pod firstUnhealthyPod, boolean monotonic, List<Pod> condemned,
            int i) {
        Pod pod = condemned.get(i);
        if (StatefulSetUtils.isTerminating(pod)) {
            if (monotonic) {
                LOG.tracef("StatefulSet %s is waiting for Pod %s to Terminate prior to scale down",
                        set.getMetadata().getName(), pod.getMetadata().getName());
                return true;
            }
            return false;
        }
        int minReady = StatefulSetUtils.minReadySeconds(set);
        if (!StatefulSetUtils.isRunningAndReady(pod) && monotonic && pod != firstUnhealthyPod) {
            LOG.tracef("StatefulSet %s is waiting for Pod %s to be Running and Ready prior to scale down",
                    set.getMetadata().getName(), firstUnhealthyPod == null ? "" : firstUnhealthyPod.getMetadata().getName());
            return true;
        }
        if (!StatefulSetUtils.isRunningAndAvailable(pod, minReady) && monotonic && pod != firstUnhealthyPod) {
            LOG.tracef("StatefulSet %s is waiting for Pod %s to be Available prior to scale down",
                    set.getMetadata().getName(), firstUnhealthyPod == null ? "" : firstUnhealthyPod.getMetadata().getName());
            return true;
        }
        LOG.debugf("Pod %s of StatefulSet %s/%s is terminating for scale down", pod.getMetadata().getName(),
                set.getMetadata().getNamespace(), set.getMetadata().getName());
        podControl.deleteStatefulPod(set, pod);
        return true;
    }

    /** Upstream's runForAll: true (and the error, thrown) when the caller must stop. */
    private boolean runForAll(int count, IndexFn fn, boolean monotonic) throws Exception {
        if (monotonic) {
            for (int i = 0; i < count; i++) {
                if (fn.apply(i)) {
                    return true;
                }
            }
        } else {
            slowStartBatch(1, count, fn);
        }
        return false;
    }

    private void updateStatefulSet(StatefulSet set, ControllerRevision currentRevision,
            ControllerRevision updateRevision, int collisionCount, List<Pod> pods, StatefulSetStatus[] statusOut)
            throws Exception {
        StatefulSet currentSet = StatefulSetUtils.applyRevision(set, currentRevision);
        StatefulSet updateSet = StatefulSetUtils.applyRevision(set, updateRevision);
        int minReady = StatefulSetUtils.minReadySeconds(set);

        StatefulSetStatus status = new StatefulSetStatus();
        status.setObservedGeneration(set.getMetadata().getGeneration());
        status.setCurrentRevision(currentRevision.getMetadata().getName());
        status.setUpdateRevision(updateRevision.getMetadata().getName());
        status.setCollisionCount(collisionCount);
        updateStatus(status, minReady, currentRevision, updateRevision, pods);
        statusOut[0] = status;

        int replicaCount = StatefulSetUtils.replicas(set);
        Pod[] replicas = new Pod[Math.max(replicaCount, 0)];
        List<Pod> condemned = new ArrayList<>();
        int start = StatefulSetUtils.startOrdinal(set);
        int end = StatefulSetUtils.endOrdinal(set);
        for (Pod pod : pods) {
            if (StatefulSetUtils.podInOrdinalRange(pod, set)) {
                replicas[StatefulSetUtils.ordinal(pod) - start] = pod;
            } else if (StatefulSetUtils.ordinal(pod) >= 0) {
                condemned.add(pod);
            }
        }
        for (int ord = start; ord <= end; ord++) {
            int idx = ord - start;
            if (replicas[idx] == null) {
                replicas[idx] = StatefulSetUtils.newVersionedStatefulSetPod(currentSet, updateSet,
                        currentRevision.getMetadata().getName(), updateRevision.getMetadata().getName(), ord,
                        podIndexLabel);
            }
        }
        condemned.sort(StatefulSetUtils.DESCENDING_ORDINAL);

        int unavailable = 0;
        Pod firstUnavailablePod = null;
        for (Pod replica : replicas) {
            if (StatefulSetUtils.isUnavailable(replica, minReady)) {
                unavailable++;
                if (firstUnavailablePod == null) {
                    firstUnavailablePod = replica;
                }
            }
        }
        for (int i = condemned.size() - 1; i >= 0; i--) {
            if (StatefulSetUtils.isUnavailable(condemned.get(i), minReady)) {
                unavailable++;
                if (firstUnavailablePod == null) {
                    firstUnavailablePod = condemned.get(i);
                }
            }
        }
        if (unavailable > 0) {
            LOG.tracef("StatefulSet %s has %d unavailable Pods, first %s", set.getMetadata().getName(), unavailable,
                    firstUnavailablePod.getMetadata().getName());
        }
        if (set.getMetadata().getDeletionTimestamp() != null) {
            return;
        }
        boolean monotonic = !StatefulSetUtils.allowsBurst(set);
        List<Pod> replicaList = Arrays.asList(replicas);
        try {
            if (runForAll(replicas.length, i -> processReplica(set, updateSet, monotonic, replicas, i), monotonic)) {
                return;
            }
            if (autoDeletePVC) {
                IndexFn fixPodClaim = i -> {
                    if (!podControl.claimsMatchRetentionPolicy(updateSet, condemned.get(i))) {
                        podControl.updatePodClaimForRetentionPolicy(updateSet, condemned.get(i));
                    }
                    return false;
                };
                if (runForAll(condemned.size(), fixPodClaim, monotonic)) {
                    return;
                }
            }
            Pod firstUnhealthy = firstUnavailablePod;
            if (runForAll(condemned.size(), i -> processCondemned(set, firstUnhealthy, monotonic, condemned, i),
                    monotonic)) {
                return;
            }
        } finally {
            updateStatus(status, minReady, currentRevision, updateRevision, replicaList, condemned);
        }

        if (StatefulSetUtils.ON_DELETE.equals(StatefulSetUtils.updateStrategyType(set))) {
            return;
        }
        if (maxUnavailableGate) {
            updateStatefulSetAfterInvariantEstablished(set, replicas, updateRevision, status);
            return;
        }
        Integer partition = StatefulSetUtils.partition(set);
        int updateMin = partition == null ? 0 : partition;
        for (int target = replicas.length - 1; target >= updateMin; target--) {
            if (!StatefulSetUtils.podRevision(replicas[target]).equals(updateRevision.getMetadata().getName())
                    && !StatefulSetUtils.isTerminating(replicas[target])) {
                LOG.debugf("Pod %s of StatefulSet %s/%s is terminating for update",
                        replicas[target].getMetadata().getName(), set.getMetadata().getNamespace(),
                        set.getMetadata().getName());
                try {
                    podControl.deleteStatefulPod(set, replicas[target]);
                } catch (RuntimeException e) {
                    if (!ApiErrors.isNotFound(e)) {
                        throw e;
                    }
                }
                status.setCurrentReplicas(status.getCurrentReplicas() - 1);
                return;
            }
            if (StatefulSetUtils.isUnavailable(replicas[target], minReady)) {
                LOG.tracef("StatefulSet %s is waiting for Pod %s to update", set.getMetadata().getName(),
                        replicas[target].getMetadata().getName());
                return;
            }
        }
    }

    /** Upstream's updateStatefulSetAfterInvariantEstablished (MaxUnavailableStatefulSet on). */
    private void updateStatefulSetAfterInvariantEstablished(StatefulSet set, Pod[] replicas,
            ControllerRevision updateRevision, StatefulSetStatus status) {
        int replicaCount = StatefulSetUtils.replicas(set);
        Integer partition = StatefulSetUtils.partition(set);
        int updateMin = 0;
        int maxUnavailable = 1;
        if (partition != null) {
            updateMin = partition;
            maxUnavailable = StatefulSetUtils.maxUnavailable(
                    set.getSpec().getUpdateStrategy().getRollingUpdate().getMaxUnavailable(), replicaCount);
        }
        int minReady = StatefulSetUtils.minReadySeconds(set);
        int unavailablePods = 0;
        for (int target = replicas.length - 1; target >= 0; target--) {
            if (StatefulSetUtils.isUnavailable(replicas[target], minReady)) {
                unavailablePods++;
            }
        }
        if (unavailablePods >= maxUnavailable) {
            LOG.debugf("StatefulSet %s found %d unavailablePods, more than or equal to allowed maxUnavailable %d",
                    set.getMetadata().getName(), unavailablePods, maxUnavailable);
            return;
        }
        int podsToDelete = maxUnavailable - unavailablePods;
        int deleted = 0;
        for (int target = replicas.length - 1; target >= updateMin && deleted < podsToDelete; target--) {
            if (!StatefulSetUtils.podRevision(replicas[target]).equals(updateRevision.getMetadata().getName())
                    && !StatefulSetUtils.isTerminating(replicas[target])) {
                try {
                    podControl.deleteStatefulPod(set, replicas[target]);
                } catch (RuntimeException e) {
                    if (!ApiErrors.isNotFound(e)) {
                        throw e;
                    }
                }
                deleted++;
                status.setCurrentReplicas(status.getCurrentReplicas() - 1);
            }
        }
    }

    private void updateStatefulSetStatus(StatefulSet set, StatefulSetStatus status) throws Exception {
        StatefulSetUtils.completeRollingUpdate(set, status);
        if (!StatefulSetUtils.inconsistentStatus(set, status)) {
            return;
        }
        statusUpdater.updateStatefulSetStatus(io.qkcm.runtime.DeepCopy.of(set), status);
    }
}
