package io.qkcm.controller.daemon;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;

import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodList;
import io.fabric8.kubernetes.api.model.PodTemplateSpec;
import io.fabric8.kubernetes.api.model.PodTemplateSpecBuilder;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.qkcm.controller.ApiErrors;
import io.qkcm.controller.CacheCatchUp;
import io.qkcm.controller.ControllerRefManager;
import io.qkcm.controller.LabelSelectors;
import io.qkcm.controller.PodIndexes;
import io.qkcm.controller.PodUtil;
import io.qkcm.controller.SlowStart;
import io.qkcm.controller.daemon.util.DaemonSetUtil;
import io.qkcm.runtime.josdk.KeyReconciler;

/**
 * A DaemonSet's daemon pods, as both upstream files use them (daemon_controller.go's getDaemonPods,
 * getNodesToDaemonPods and syncNodes, which update.go calls too): claimed from the shared pod cache, and
 * created or deleted under the expectations. Held by the controller and by {@link Update}, so that
 * neither calls the other.
 */
final class DaemonPods {

    private final DaemonSetContext ctx;

    DaemonPods(DaemonSetContext ctx) {
        this.ctx = ctx;
    }

    /** Upstream's getDaemonPods: the pods the DaemonSet owns, after adopting matching orphans and releasing the rest. */
    List<Pod> getDaemonPods(DaemonSet ds) throws Exception {
        LabelSelectors.Selector selector = LabelSelectors.fromLabelSelector(ds.getSpec().getSelector());
        List<Pod> pods = PodIndexes.filterPodsByOwner(ctx.pods(), ds.getMetadata().getNamespace(), DaemonSetContext.KIND,
                ds.getMetadata().getName(), ds.getMetadata().getUid(), true);
        ControllerRefManager<Pod> cm = ControllerRefManager.forPods(ctx.podControl(), ds, selector,
                DaemonSetContext.API_VERSION, DaemonSetContext.KIND, dsNotDeleted(ds));
        return cm.claim(pods);
    }

    /** Upstream's RecheckDeletionTimestamp on an uncached GET of the DaemonSet. */
    ControllerRefManager.CanAdopt dsNotDeleted(DaemonSet ds) {
        return ControllerRefManager.recheckDeletionTimestamp(ds, DaemonSetContext.KIND, () -> ctx.client().apps()
                .daemonSets().inNamespace(ds.getMetadata().getNamespace()).withName(ds.getMetadata().getName()).get());
    }

    /** Upstream's getNodesToDaemonPods: the claimed pods by target node. */
    Map<String, List<Pod>> getNodesToDaemonPods(DaemonSet ds, boolean includeDeletedTerminal) throws Exception {
        List<Pod> claimedPods = getDaemonPods(ds);
        Map<String, List<Pod>> nodeToDaemonPods = new LinkedHashMap<>();
        for (Pod pod : claimedPods) {
            if (!includeDeletedTerminal && PodUtil.isTerminal(pod) && pod.getMetadata().getDeletionTimestamp() != null) {
                continue;
            }
            String nodeName;
            try {
                nodeName = DaemonSetUtil.getTargetNodeName(pod);
            } catch (DaemonSetUtil.ParseException e) {
                ctx.log().debugf("Failed to get target node name of Pod %s in DaemonSet %s", KeyReconciler.key(pod),
                        KeyReconciler.key(ds));
                continue;
            }
            nodeToDaemonPods.computeIfAbsent(nodeName, k -> new ArrayList<>()).add(pod);
        }
        return nodeToDaemonPods;
    }

    /**
     * Upstream's syncNodes: expectations first, then the creations in slow-start batches (each pod
     * bound to its node by a required node affinity) and the deletions in parallel, at most
     * {@link DaemonSetsController#BURST_REPLICAS} of each. A failed write lowers the expectations as upstream,
     * except one whose outcome is unknown ({@link ApiErrors#isOutcomeUnknown}), which keeps them raised and marks
     * the DaemonSet (not in upstream; settled by {@link #resolveUncertainWrites}).
     */
    void syncNodes(DaemonSet ds, List<String> podsToDelete, List<String> nodesNeedingDaemonPods, String hash)
            throws Exception {
        String dsKey = KeyReconciler.key(ds);
        int createDiff = Math.min(nodesNeedingDaemonPods.size(), ctx.burstReplicas());
        int deleteDiff = Math.min(podsToDelete.size(), ctx.burstReplicas());
        ctx.expectations().setExpectations(dsKey, createDiff, deleteDiff);

        List<Exception> errors = java.util.Collections.synchronizedList(new ArrayList<>());
        ctx.log().debugf("Nodes needing daemon pods for daemon set %s: %s, creating %d", dsKey, nodesNeedingDaemonPods,
                createDiff);
        Long generation = DaemonSetUtil.templateGenerationOrNull(ds);
        PodTemplateSpec template = DaemonSetUtil.createPodTemplate(ds.getSpec().getTemplate(), generation, hash);
        OwnerReference controllerRef = ControllerRefManager.newControllerRef(ds, DaemonSetContext.API_VERSION, DaemonSetContext.KIND);
        int batchSize = Math.min(createDiff, SlowStart.INITIAL_BATCH_SIZE);
        for (int pos = 0; createDiff > pos; ) {
            int errorCount = errors.size();
            List<Future<?>> futures = new ArrayList<>();
            for (int i = pos; i < pos + batchSize; i++) {
                String nodeName = nodesNeedingDaemonPods.get(i);
                futures.add(ctx.apiCalls().submit(() -> {
                    PodTemplateSpec podTemplate = new PodTemplateSpecBuilder(template).build();
                    podTemplate.getSpec().setAffinity(
                            DaemonSetUtil.replaceDaemonSetPodNodeNameNodeAffinity(podTemplate.getSpec().getAffinity(), nodeName));
                    try {
                        ctx.podControl().createPods(ds.getMetadata().getNamespace(), podTemplate, ds, controllerRef);
                    } catch (RuntimeException e) {
                        if (ApiErrors.hasStatusCause(e, ApiErrors.NAMESPACE_TERMINATING_CAUSE)) {
                            return;
                        }
                        if (ApiErrors.isOutcomeUnknown(e)) {
                            // the pod may exist: keep expecting it (settled by resolveUncertainWrites), so
                            // that a cache without it never makes a second pod for this node
                            ctx.log().infof("Creation of a daemon pod on node %s for daemon set %s ended without an answer (%s); waiting for the pod cache to catch up",
                                    nodeName, dsKey, e.getMessage());
                            ctx.expectations().markUncertain(dsKey);
                        } else {
                            ctx.log().debugf("Failed creation, decrementing expectations for daemon set %s", dsKey);
                            ctx.expectations().creationObserved(dsKey);
                        }
                        errors.add(e);
                        ctx.log().errorf("%s", ApiErrors.message(e));
                    }
                }));
            }
            waitAll(futures);
            int skippedPods = createDiff - (batchSize + pos);
            if (errorCount < errors.size() && skippedPods > 0) {
                ctx.log().debugf("Slow-start failure. Skipping creation of %d pods, decrementing expectations for daemon set %s",
                        skippedPods, dsKey);
                ctx.expectations().lowerExpectations(dsKey, skippedPods, 0);
                break;
            }
            pos += batchSize;
            batchSize = Math.min(2 * batchSize, createDiff - pos);
        }

        ctx.log().debugf("Pods to delete for daemon set %s: %s, deleting %d", dsKey, podsToDelete, deleteDiff);
        List<Future<?>> deletions = new ArrayList<>();
        for (int i = 0; i < deleteDiff; i++) {
            String podName = podsToDelete.get(i);
            deletions.add(ctx.apiCalls().submit(() -> {
                try {
                    ctx.podControl().deletePod(ds.getMetadata().getNamespace(), podName, ds);
                } catch (RuntimeException e) {
                    if (ApiErrors.isOutcomeUnknown(e)) {
                        // the pod may be going: keep expecting its deletion (settled by resolveUncertainWrites)
                        ctx.log().infof("Deletion of %s/%s for daemon set %s ended without an answer (%s); waiting for the pod cache to catch up",
                                ds.getMetadata().getNamespace(), podName, dsKey, e.getMessage());
                        ctx.expectations().markUncertain(dsKey);
                        errors.add(e);
                        ctx.log().errorf("%s", ApiErrors.message(e));
                        return;
                    }
                    ctx.expectations().deletionObserved(dsKey);
                    if (!ApiErrors.isNotFound(e)) {
                        ctx.log().debugf("Failed deletion, decremented expectations for daemon set %s", dsKey);
                        errors.add(e);
                        ctx.log().errorf("%s", ApiErrors.message(e));
                    }
                }
            }));
        }
        waitAll(deletions);
        if (errors.size() == 1) {
            throw errors.get(0);
        }
        if (!errors.isEmpty()) {
            List<String> msgs = new ArrayList<>();
            errors.forEach(e -> msgs.add(ApiErrors.message(e)));
            throw new DaemonSetContext.DaemonSetSyncException("[" + String.join(", ", msgs) + "]", errors.get(0));
        }
    }

    /**
     * Not in upstream: after a pod write of {@code ds} whose outcome is unknown (see
     * {@link io.qkcm.controller.ControllerExpectations#markUncertain}), lists the DaemonSet's pods from the
     * API server (a consistent read) and, when the cache holds what the list holds ({@link CacheCatchUp}),
     * drops the expectations so that this sync acts on a cache that includes the write. Returns whether it
     * did; if not, the caller checks again shortly. The expectations' timeout still bounds the wait.
     */
    boolean resolveUncertainWrites(DaemonSet ds) {
        String dsKey = KeyReconciler.key(ds);
        String namespace = ds.getMetadata().getNamespace();
        LabelSelectors.Selector selector;
        PodList live;
        try {
            selector = LabelSelectors.fromLabelSelector(ds.getSpec().getSelector());
            live = ctx.client().pods().inNamespace(namespace).withLabelSelector(ds.getSpec().getSelector()).list();
        } catch (KubernetesClientException | IllegalArgumentException e) {
            ctx.log().debugf("Daemon set %s: listing its pods to settle writes of unknown outcome failed: %s", dsKey,
                    e.getMessage());
            return false;
        }
        // the list is by selector: compare the cached pods it could have returned
        List<Pod> cachedPods = PodIndexes.podsInNamespace(ctx.pods(), namespace).stream()
                .filter(p -> selector.matches(p.getMetadata().getLabels())).toList();
        boolean caughtUp = CacheCatchUp.caughtUp(ds.getMetadata().getUid(), live.getItems(),
                live.getMetadata().getResourceVersion(), podKey -> ctx.pods().getStore().getByKey(podKey), cachedPods);
        if (!caughtUp) {
            ctx.log().debugf("Daemon set %s: the pod cache has not caught up with the API server after writes of unknown outcome",
                    dsKey);
            return false;
        }
        ctx.log().infof("Daemon set %s: the pod cache has caught up with the API server; writes of unknown outcome settled",
                dsKey);
        ctx.expectations().deleteExpectations(dsKey);
        return true;
    }

    private static void waitAll(List<Future<?>> futures) throws InterruptedException {
        for (Future<?> f : futures) {
            try {
                f.get();
            } catch (ExecutionException e) {
                // every task catches its own failures
            }
        }
    }
}
