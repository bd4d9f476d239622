package io.qkcm.controller.daemon;

import io.qkcm.runtime.informers.Indexes;

import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.ControllerRevision;
import io.fabric8.kubernetes.api.model.apps.ControllerRevisionBuilder;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.api.model.apps.DaemonSetStatus;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.qkcm.controller.ApiErrors;
import io.qkcm.controller.ControllerRefManager;
import io.qkcm.controller.LabelSelectors;
import io.qkcm.controller.PodUtil;
import io.qkcm.controller.daemon.util.DaemonSetUtil;
import io.qkcm.controller.hash.ControllerHash;
import io.qkcm.runtime.josdk.KeyReconciler;
import org.jboss.logging.Logger;

/**
 * Upstream's update.go: the rolling update (by unavailability, or by surge), and the DaemonSet's
 * revision history (ControllerRevisions named {@code <ds>-<hash>}, holding the template as a
 * strategic-merge patch for {@code kubectl rollout undo}).
 */
final class Update {

    private static final Logger LOG = Logger.getLogger(Update.class);

    private final DaemonSetContext ctx;
    private final DaemonPods daemonPods;

    Update(DaemonSetContext ctx, DaemonPods daemonPods) {
        this.ctx = ctx;
        this.daemonPods = daemonPods;
    }

    // ---- rolling update ------------------------------------------------------------------------

    /** What updatedDesiredNodeCounts returns. */
    record NodeCounts(int maxSurge, int maxUnavailable, int desiredNumberScheduled) {
    }

    /** Upstream's rollingUpdate: the old pods to delete, or (surging) the nodes to get a new pod. */
    void rollingUpdate(DaemonSet ds, List<Node> nodeList, String hash) throws Exception {
        Map<String, List<Pod>> nodeToDaemonPods;
        try {
            nodeToDaemonPods = daemonPods.getNodesToDaemonPods(ds, false);
        } catch (ControllerRefManager.ClaimException e) {
            throw new DaemonSetContext.DaemonSetSyncException("couldn't get node to daemon pod mapping for daemon set \""
                    + ds.getMetadata().getName() + "\": " + e.getMessage(), e);
        }
        NodeCounts counts;
        try {
            counts = updatedDesiredNodeCounts(ds, nodeList, nodeToDaemonPods);
        } catch (DaemonSetUtil.ParseException e) {
            throw new DaemonSetContext.DaemonSetSyncException("couldn't get unavailable numbers: " + e.getMessage(), e);
        }
        Instant now = Instant.now();
        int minReady = DaemonSetContext.minReadySeconds(ds);
        int maxSurge = counts.maxSurge();
        int maxUnavailable = counts.maxUnavailable();
        Long generation = DaemonSetUtil.templateGenerationOrNull(ds);

        if (maxSurge == 0) {
            int numUnavailable = 0;
            List<String> allowedReplacementPods = new ArrayList<>();
            List<String> candidatePodsToDelete = new ArrayList<>();
            for (Map.Entry<String, List<Pod>> e : nodeToDaemonPods.entrySet()) {
                String nodeName = e.getKey();
                UpdatedPods found = findUpdatedPodsOnNode(e.getValue(), hash, generation);
                if (found == null) {
                    LOG.debugf("DaemonSet %s has excess pods on node %s, skipping to allow the core loop to process",
                            KeyReconciler.key(ds), nodeName);
                    numUnavailable++;
                    continue;
                }
                Pod newPod = found.newPod();
                Pod oldPod = found.oldPod();
                if ((oldPod == null && newPod == null) || (oldPod != null && newPod != null)) {
                    numUnavailable++;
                } else if (newPod != null) {
                    if (!PodUtil.isAvailable(newPod, minReady, now)) {
                        numUnavailable++;
                    }
                } else {
                    if (!PodUtil.isAvailable(oldPod, minReady, now)) {
                        LOG.tracef("DaemonSet %s pod %s on node %s is out of date and not available, allowing replacement",
                                KeyReconciler.key(ds), oldPod.getMetadata().getName(), nodeName);
                        allowedReplacementPods.add(oldPod.getMetadata().getName());
                        numUnavailable++;
                    } else if (numUnavailable >= maxUnavailable) {
                        continue;
                    } else {
                        LOG.tracef("DaemonSet %s pod %s on node %s is out of date, this is a candidate to replace",
                                KeyReconciler.key(ds), oldPod.getMetadata().getName(), nodeName);
                        candidatePodsToDelete.add(oldPod.getMetadata().getName());
                    }
                }
            }
            LOG.tracef("DaemonSet %s allowing %d replacements, maxUnavailable %d, numUnavailable %d, candidates %d",
                    KeyReconciler.key(ds), allowedReplacementPods.size(), maxUnavailable, numUnavailable,
                    candidatePodsToDelete.size());
            int remainingUnavailable = Math.max(0, maxUnavailable - numUnavailable);
            remainingUnavailable = Math.min(remainingUnavailable, candidatePodsToDelete.size());
            List<String> oldPodsToDelete = new ArrayList<>(allowedReplacementPods);
            oldPodsToDelete.addAll(candidatePodsToDelete.subList(0, remainingUnavailable));
            daemonPods.syncNodes(ds, oldPodsToDelete, List.of(), hash);
            return;
        }

        List<String> oldPodsToDelete = new ArrayList<>();
        List<String> shouldNotRunPodsToDelete = new ArrayList<>();
        List<String> candidateNewNodes = new ArrayList<>();
        List<String> allowedNewNodes = new ArrayList<>();
        int numSurge = 0;
        int numAvailable = 0;
        for (Map.Entry<String, List<Pod>> e : nodeToDaemonPods.entrySet()) {
            String nodeName = e.getKey();
            UpdatedPods found = findUpdatedPodsOnNode(e.getValue(), hash, generation);
            if (found == null) {
                LOG.debugf("DaemonSet %s has excess pods on node %s, skipping to allow the core loop to process",
                        KeyReconciler.key(ds), nodeName);
                numSurge++;
                continue;
            }
            Pod newPod = found.newPod();
            Pod oldPod = found.oldPod();
            if (oldPod != null) {
                if (PodUtil.isAvailable(oldPod, minReady, now)) {
                    numAvailable++;
                }
            } else if (newPod != null) {
                if (PodUtil.isAvailable(newPod, minReady, now)) {
                    numAvailable++;
                }
            }
            if (oldPod == null) {
                continue;
            }
            if (newPod == null) {
                Node node = ctx.nodes().getStore().getByKey(nodeName);
                if (node == null) {
                    throw new DaemonSetContext.DaemonSetSyncException("couldn't get node for nodeName \"" + nodeName
                            + "\": node \"" + nodeName + "\" not found", null);
                }
                boolean shouldRun = DaemonSetsController.nodeShouldRunDaemonPod(node, ds).shouldRun();
                if (!PodUtil.isAvailable(oldPod, minReady, now)) {
                    if (!shouldRun) {
                        LOG.tracef("DaemonSet %s pod %s on node %s is not available and does not match scheduling constraints, remove old pod",
                                KeyReconciler.key(ds), oldPod.getMetadata().getName(), nodeName);
                        oldPodsToDelete.add(oldPod.getMetadata().getName());
                        continue;
                    }
                    allowedNewNodes.add(nodeName);
                } else {
                    if (!shouldRun) {
                        shouldNotRunPodsToDelete.add(oldPod.getMetadata().getName());
                        continue;
                    }
                    if (numSurge >= maxSurge) {
                        continue;
                    }
                    candidateNewNodes.add(nodeName);
                }
            } else {
                if (!PodUtil.isAvailable(newPod, minReady, now)) {
                    numSurge++;
                    continue;
                }
                LOG.tracef("DaemonSet %s pod %s on node %s is available, remove old pod %s", KeyReconciler.key(ds),
                        newPod.getMetadata().getName(), nodeName, oldPod.getMetadata().getName());
                oldPodsToDelete.add(oldPod.getMetadata().getName());
            }
        }
        int remainingSurge = maxSurge - numSurge;
        int deletablePodsNumber = numAvailable - counts.desiredNumberScheduled();
        if (deletablePodsNumber > 0) {
            deletablePodsNumber = Math.min(deletablePodsNumber, shouldNotRunPodsToDelete.size());
            for (String podName : shouldNotRunPodsToDelete.subList(0, deletablePodsNumber)) {
                Pod pod = ctx.pods().getStore().getByKey(ds.getMetadata().getNamespace() + "/" + podName);
                if (pod == null) {
                    continue;
                }
                LOG.tracef("DaemonSet %s pod %s on node %s should be deleted due to scheduling constraints",
                        KeyReconciler.key(ds), podName, DaemonSetContext.nodeNameOf(pod));
                oldPodsToDelete.add(podName);
            }
        }
        remainingSurge = Math.max(0, remainingSurge);
        remainingSurge = Math.min(remainingSurge, candidateNewNodes.size());
        List<String> newNodesToCreate = new ArrayList<>(allowedNewNodes);
        newNodesToCreate.addAll(candidateNewNodes.subList(0, remainingSurge));
        daemonPods.syncNodes(ds, oldPodsToDelete, newNodesToCreate, hash);
    }

    /** One new and one old pod at most; null when a node has more (the manage loop prunes it first). */
    record UpdatedPods(Pod newPod, Pod oldPod) {
    }

    /** Upstream's findUpdatedPodsOnNode (its {@code ok == false} is null). */
    static UpdatedPods findUpdatedPodsOnNode(List<Pod> podsOnNode, String hash, Long generation) {
        Pod newPod = null;
        Pod oldPod = null;
        if (podsOnNode != null) {
            for (Pod pod : podsOnNode) {
                if (pod.getMetadata().getDeletionTimestamp() != null) {
                    continue;
                }
                if (DaemonSetUtil.isPodUpdated(pod, hash, generation)) {
                    if (newPod != null) {
                        return null;
                    }
                    newPod = pod;
                } else {
                    if (oldPod != null) {
                        return null;
                    }
                    oldPod = pod;
                }
            }
        }
        return new UpdatedPods(newPod, oldPod);
    }

    /**
     * Upstream's updatedDesiredNodeCounts: maxSurge and maxUnavailable scaled to the nodes that
     * should run the pod (each added to {@code nodeToDaemonPods}, empty, when it has none); neither
     * set means maxUnavailable 1.
     */
    static NodeCounts updatedDesiredNodeCounts(DaemonSet ds, List<Node> nodeList, Map<String, List<Pod>> nodeToDaemonPods)
            throws DaemonSetUtil.ParseException {
        int desiredNumberScheduled = 0;
        for (Node node : nodeList) {
            if (!DaemonSetsController.nodeShouldRunDaemonPod(node, ds).shouldRun()) {
                continue;
            }
            desiredNumberScheduled++;
            nodeToDaemonPods.putIfAbsent(node.getMetadata().getName(), new ArrayList<>());
        }
        int maxUnavailable;
        try {
            maxUnavailable = DaemonSetUtil.unavailableCount(ds, desiredNumberScheduled);
        } catch (DaemonSetUtil.ParseException e) {
            throw new DaemonSetUtil.ParseException("invalid value for MaxUnavailable: " + e.getMessage());
        }
        int maxSurge;
        try {
            maxSurge = DaemonSetUtil.surgeCount(ds, desiredNumberScheduled);
        } catch (DaemonSetUtil.ParseException e) {
            throw new DaemonSetUtil.ParseException("invalid value for MaxSurge: " + e.getMessage());
        }
        if (desiredNumberScheduled > 0 && maxUnavailable == 0 && maxSurge == 0) {
            LOG.infof("DaemonSet %s is not configured for surge or unavailability, defaulting to accepting unavailability",
                    KeyReconciler.key(ds));
            maxUnavailable = 1;
        }
        return new NodeCounts(maxSurge, maxUnavailable, desiredNumberScheduled);
    }

    // ---- revision history ----------------------------------------------------------------------

    /** The current revision and the others. */
    record Histories(ControllerRevision cur, List<ControllerRevision> old) {
    }

    /**
     * Upstream's constructHistory: claims the DaemonSet's revisions, labels those missing the hash
     * label, splits current (same template) from old, creates the current one if missing (or dedups
     * several) and raises its revision number above the old ones.
     */
    Histories constructHistory(DaemonSet ds) throws Exception {
        List<ControllerRevision> histories = controlledHistories(ds);
        List<ControllerRevision> currentHistories = new ArrayList<>();
        List<ControllerRevision> old = new ArrayList<>();
        String patch = RevisionData.getPatch(ds);
        for (ControllerRevision history : histories) {
            Map<String, String> labels = history.getMetadata().getLabels();
            if (labels == null || !labels.containsKey(DaemonSetUtil.DEFAULT_DAEMON_SET_UNIQUE_LABEL_KEY)) {
                ControllerRevision toUpdate = new ControllerRevisionBuilder(history).build();
                Map<String, String> newLabels = labels == null ? new LinkedHashMap<>() : new LinkedHashMap<>(labels);
                newLabels.put(DaemonSetUtil.DEFAULT_DAEMON_SET_UNIQUE_LABEL_KEY, toUpdate.getMetadata().getName());
                toUpdate.getMetadata().setLabels(newLabels);
                // keep the stored bytes of the data
                toUpdate.setData(RevisionData.rawValue(RevisionData.rawData(history)));
                history = ctx.client().apps().controllerRevisions().inNamespace(ds.getMetadata().getNamespace())
                        .resource(toUpdate).update();
            }
            if (patch.equals(RevisionData.rawData(history))) {
                currentHistories.add(history);
            } else {
                old.add(history);
            }
        }
        long currRevision = maxRevision(old) + 1;
        ControllerRevision cur;
        if (currentHistories.isEmpty()) {
            cur = snapshot(ds, currRevision, patch);
        } else {
            cur = dedupCurHistories(ds, currentHistories);
            if (revisionOf(cur) < currRevision) {
                ControllerRevision toUpdate = new ControllerRevisionBuilder(cur).build();
                toUpdate.setRevision(currRevision);
                toUpdate.setData(RevisionData.rawValue(RevisionData.rawData(cur)));
                ctx.client().apps().controllerRevisions().inNamespace(ds.getMetadata().getNamespace())
                        .resource(toUpdate).update();
            }
        }
        return new Histories(cur, old);
    }

    static long revisionOf(ControllerRevision r) {
        return r.getRevision() == null ? 0 : r.getRevision();
    }

    /** Upstream's cleanupHistory: deletes the oldest revisions beyond revisionHistoryLimit that no pod uses. */
    void cleanupHistory(DaemonSet ds, List<ControllerRevision> old) throws Exception {
        Map<String, List<Pod>> nodesToDaemonPods = daemonPods.getNodesToDaemonPods(ds, true);
        int toKeep = ds.getSpec().getRevisionHistoryLimit() == null ? 10 : ds.getSpec().getRevisionHistoryLimit();
        int toKill = old.size() - toKeep;
        if (toKill <= 0) {
            return;
        }
        Set<String> liveHashes = new HashSet<>();
        for (List<Pod> pods : nodesToDaemonPods.values()) {
            for (Pod pod : pods) {
                String hash = pod.getMetadata().getLabels() == null ? null
                        : pod.getMetadata().getLabels().get(DaemonSetUtil.DEFAULT_DAEMON_SET_UNIQUE_LABEL_KEY);
                if (hash != null && !hash.isEmpty()) {
                    liveHashes.add(hash);
                }
            }
        }
        List<ControllerRevision> sorted = new ArrayList<>(old);
        sorted.sort((a, b) -> Long.compare(revisionOf(a), revisionOf(b)));
        for (ControllerRevision history : sorted) {
            if (toKill <= 0) {
                break;
            }
            String hash = history.getMetadata().getLabels() == null ? null
                    : history.getMetadata().getLabels().get(DaemonSetUtil.DEFAULT_DAEMON_SET_UNIQUE_LABEL_KEY);
            if (hash != null && liveHashes.contains(hash)) {
                continue;
            }
            ctx.client().apps().controllerRevisions().inNamespace(ds.getMetadata().getNamespace())
                    .withName(history.getMetadata().getName()).delete();
            toKill--;
        }
    }

    static long maxRevision(List<ControllerRevision> histories) {
        long max = 0;
        for (ControllerRevision h : histories) {
            max = Math.max(max, revisionOf(h));
        }
        return max;
    }

    /**
     * Upstream's dedupCurHistories: keeps the current revision with the highest number, relabels the
     * pods to its hash (merge patch) and deletes the duplicates.
     */
    ControllerRevision dedupCurHistories(DaemonSet ds, List<ControllerRevision> curHistories) throws Exception {
        if (curHistories.size() == 1) {
            return curHistories.get(0);
        }
        long maxRevision = 0;
        ControllerRevision keepCur = null;
        for (ControllerRevision cur : curHistories) {
            if (revisionOf(cur) >= maxRevision) {
                keepCur = cur;
                maxRevision = revisionOf(cur);
            }
        }
        String keepHash = keepCur.getMetadata().getLabels() == null ? null
                : keepCur.getMetadata().getLabels().get(DaemonSetUtil.DEFAULT_DAEMON_SET_UNIQUE_LABEL_KEY);
        List<Pod> pods = daemonPods.getDaemonPods(ds);
        for (Pod pod : pods) {
            String podHash = pod.getMetadata().getLabels() == null ? null
                    : pod.getMetadata().getLabels().get(DaemonSetUtil.DEFAULT_DAEMON_SET_UNIQUE_LABEL_KEY);
            if (!Objects.equals(podHash == null ? "" : podHash, keepHash == null ? "" : keepHash)) {
                Map<String, Object> labels = new LinkedHashMap<>();
                labels.put(DaemonSetUtil.DEFAULT_DAEMON_SET_UNIQUE_LABEL_KEY, keepHash == null ? "" : keepHash);
                String patch = io.qkcm.runtime.Json.mapper()
                        .writeValueAsString(Map.of("metadata", Map.of("labels", labels)));
                ctx.client().pods().inNamespace(ds.getMetadata().getNamespace())
                        .withName(pod.getMetadata().getName()).patch(PatchContext.of(PatchType.JSON_MERGE), patch);
            }
        }
        for (ControllerRevision cur : curHistories) {
            if (cur.getMetadata().getName().equals(keepCur.getMetadata().getName())) {
                continue;
            }
            ctx.client().apps().controllerRevisions().inNamespace(ds.getMetadata().getNamespace())
                    .withName(cur.getMetadata().getName()).delete();
        }
        return keepCur;
    }

    /**
     * Upstream's controlledHistories: every revision of the namespace the DaemonSet controls or may
     * adopt, claimed with a ControllerRevision ref manager.
     */
    List<ControllerRevision> controlledHistories(DaemonSet ds) throws Exception {
        LabelSelectors.Selector selector = LabelSelectors.fromLabelSelector(ds.getSpec().getSelector());
        List<ControllerRevision> histories = Indexes.byIndex(ctx.histories(), io.fabric8.kubernetes.client.informers.cache.Cache.NAMESPACE_INDEX, ds.getMetadata().getNamespace());
        ControllerRefManager<ControllerRevision> cm = ControllerRefManager.forControllerRevisions(ctx.client(), ds,
                selector, DaemonSetContext.API_VERSION, DaemonSetContext.KIND, daemonPods.dsNotDeleted(ds));
        return cm.claim(new ArrayList<>(histories));
    }

    /** Upstream's Match: the revision holds the DaemonSet's current template. */
    static boolean match(DaemonSet ds, ControllerRevision history) {
        return RevisionData.getPatch(ds).equals(RevisionData.rawData(history));
    }

    /**
     * Upstream's snapshot: creates the revision {@code <ds>-<hash>}; on a name collision with a
     * different template, bumps {@code status.collisionCount} (unless the cached one was stale) and
     * fails the sync so the next one computes a new name.
     */
    ControllerRevision snapshot(DaemonSet ds, long revision, String patch) throws Exception {
        Integer collisionCount = ds.getStatus() == null ? null : ds.getStatus().getCollisionCount();
        String hash = ControllerHash.computeHash(ds.getSpec().getTemplate(), collisionCount);
        String name = ds.getMetadata().getName() + "-" + hash;
        String namespace = ds.getMetadata().getNamespace();
        Map<String, String> templateLabels = ds.getSpec().getTemplate().getMetadata() == null ? null
                : ds.getSpec().getTemplate().getMetadata().getLabels();
        Map<String, String> labels = templateLabels == null ? new LinkedHashMap<>() : new LinkedHashMap<>(templateLabels);
        labels.put(DaemonSetUtil.DEFAULT_DAEMON_SET_UNIQUE_LABEL_KEY, hash);
        ObjectMeta meta = new ObjectMeta();
        meta.setName(name);
        meta.setNamespace(namespace);
        meta.setLabels(labels);
        if (ds.getMetadata().getAnnotations() != null && !ds.getMetadata().getAnnotations().isEmpty()) {
            meta.setAnnotations(new LinkedHashMap<>(ds.getMetadata().getAnnotations()));
        }
        meta.setOwnerReferences(new ArrayList<>(List.of(
                ControllerRefManager.newControllerRef(ds, DaemonSetContext.API_VERSION, DaemonSetContext.KIND))));
        ControllerRevision history = new ControllerRevision();
        history.setApiVersion("apps/v1");
        history.setKind("ControllerRevision");
        history.setMetadata(meta);
        history.setData(RevisionData.rawValue(patch));
        history.setRevision(revision);
        var revisions = ctx.client().apps().controllerRevisions().inNamespace(namespace);
        try {
            return revisions.resource(history).create();
        } catch (KubernetesClientException outerErr) {
            if (!ApiErrors.isAlreadyExists(outerErr)) {
                throw outerErr;
            }
            ControllerRevision existed = revisions.withName(name).get();
            if (existed == null) {
                throw new KubernetesClientException("controllerrevisions.apps \"" + name + "\" not found", 404, null);
            }
            if (patch.equals(RevisionData.rawData(existed))) {
                return existed;
            }
            DaemonSet currDS = ctx.client().apps().daemonSets().inNamespace(namespace)
                    .withName(ds.getMetadata().getName()).get();
            if (currDS == null) {
                throw new KubernetesClientException("daemonsets.apps \"" + ds.getMetadata().getName() + "\" not found",
                        404, null);
            }
            Integer currCount = currDS.getStatus() == null ? null : currDS.getStatus().getCollisionCount();
            if (!Objects.equals(currCount, collisionCount)) {
                throw new DaemonSetContext.DaemonSetSyncException(String.format(
                        "found a stale collision count (%s, expected %s) of DaemonSet \"%s\" while processing; will retry until it is updated",
                        collisionCount, currCount, ds.getMetadata().getName()), null);
            }
            if (currDS.getStatus() == null) {
                currDS.setStatus(new DaemonSetStatus());
            }
            currDS.getStatus().setCollisionCount(currCount == null ? 1 : currCount + 1);
            ctx.client().apps().daemonSets().inNamespace(namespace).resource(currDS).updateStatus();
            LOG.infof("Found a hash collision for DaemonSet %s - bumping collisionCount to %d to resolve it",
                    KeyReconciler.key(ds), currDS.getStatus().getCollisionCount());
            throw outerErr;
        }
    }
}
