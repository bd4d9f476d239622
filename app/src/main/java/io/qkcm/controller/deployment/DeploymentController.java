package io.qkcm.controller.deployment;

import io.qkcm.runtime.informers.Indexes;

import io.javaoperatorsdk.operator.api.reconciler.Ignore;
import io.qkcm.runtime.josdk.KeyReconciler;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.ReplicaSet;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import io.qkcm.controller.OwnWrites;
import io.qkcm.controller.ApiErrors;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.controller.ControllerRefManager;
import io.qkcm.controller.ControllerRefs;
import io.qkcm.controller.OwnerEnqueueingHandler;
import io.qkcm.controller.LabelSelectors;
import io.qkcm.runtime.informers.ResourceEventHandlerFuncs;
import io.qkcm.controller.deployment.util.DeploymentUtil;
import io.qkcm.runtime.events.EventRecorder;

/**
 * The Deployment controller (upstream pkg/controller/deployment): owns ReplicaSets, one per pod
 * template, and rolls from old to new ones by the Deployment's strategy. This file is upstream's
 * deployment_controller.go (event handlers, claiming, syncDeployment); the other concerns live in
 * {@link Sync}, {@link Rolling}, {@link Recreate}, {@link Progress} and {@link Rollback}, each built here
 * once with the {@link DeploymentContext} (and the concerns whose functions upstream's file calls) and
 * none holding this controller.
 */
@Ignore // runs in its own Operator (io.qkcm.runtime.josdk), not quarkus-operator-sdk's default one
public class DeploymentController extends KeyReconciler<Deployment> {

    public static final String NAME = "deployment-controller";
    public static final String QUEUE = "deployment";
    /** Upstream's maxRetries: a key failing this many times in a row is dropped. */
    static final int MAX_RETRIES = 15;

    private final SharedIndexInformer<Deployment> dInformer;
    private final SharedIndexInformer<ReplicaSet> rsInformer;
    private final SharedIndexInformer<Pod> podInformer;
    private final Sync sync;
    private final Rolling rolling;
    private final Recreate recreate;
    private final Rollback rollback;
    /** For syncDeployment's own status write of a selector-all Deployment. */
    private final DeploymentContext ctx;
    private final OwnWrites<Deployment> ownWrites;
    /** The answers of this controller's ReplicaSet updates its cache has not shown yet. */
    private final OwnWrites<ReplicaSet> replicaSetWrites;

    /** {@code workers}: --concurrent-deployment-syncs. */
    public DeploymentController(ControllerContext context, int workers) {
        this(context, workers, java.time.Clock.systemUTC());
    }

    /** With upstream's clock (nowFn): condition times and the progress deadline. */
    DeploymentController(ControllerContext context, int workers, java.time.Clock clock) {
        super(context, Deployment.class, QUEUE, workers);
        dInformer = context.informers().informerFor(Deployment.class);
        rsInformer = context.informers().informerFor(ReplicaSet.class);
        podInformer = context.informers().informerFor(Pod.class);
        boolean shadow = context.options().bool("shadow");
        ownWrites = new OwnWrites<>(!shadow);
        dInformer.addEventHandler(ownWrites.forgetOnCacheUpdate());
        replicaSetWrites = new OwnWrites<>(!shadow);
        rsInformer.addEventHandler(replicaSetWrites.forgetOnCacheUpdate());
        DeploymentContext ctx = new DeploymentContext(context.client(), rsInformer, context.events(), clock,
                d -> queue.addRateLimited(Cache.metaNamespaceKeyFunc(d)),
                (d, after) -> queue.addAfter(Cache.metaNamespaceKeyFunc(d), after),
                context.options().featureGates().enabled("DeploymentReplicaSetTerminatingReplicas"), ownWrites,
                replicaSetWrites, log);
        this.sync = new Sync(ctx);
        Progress progress = new Progress(ctx, sync);
        this.rolling = new Rolling(sync, progress);
        this.recreate = new Recreate(sync, progress);
        this.rollback = new Rollback(ctx, sync);
        this.ctx = ctx;

        // Deployment adds, updates and deletes reach the reconciler as JOSDK's primary events (upstream's
        // handler queues all three)
        owned(ReplicaSet.class, new OwnerEnqueueingHandler<ReplicaSet, Deployment>(this::resolveControllerRef,
                this::enqueue) {
            @Override
            protected void orphanAdded(ReplicaSet rs) {
                // an orphan: every matching Deployment may adopt it
                getDeploymentsForReplicaSet(rs).forEach(DeploymentController.this::enqueue);
            }

            @Override
            protected void orphanUpdated(ReplicaSet old, ReplicaSet cur) {
                getDeploymentsForReplicaSet(cur).forEach(DeploymentController.this::enqueue);
            }
        });
        // upstream only watches pod deletions
        podInformer.addEventHandler(ResourceEventHandlerFuncs.of(null, null, this::deletePod));
    }

    @Override
    protected List<SharedIndexInformer<?>> informers() {
        return List.of(dInformer, rsInformer, podInformer);
    }

    // ---- queue ----------------------------------------------------------------------------

    private void enqueue(Deployment d) {
        queue.add(Cache.metaNamespaceKeyFunc(d));
    }

    @Override
    protected int maxRetries() {
        return MAX_RETRIES;
    }

    @Override
    protected boolean handleErrorFirst(String key, Exception e) {
        // a write refused because the namespace is terminating: nothing to retry (upstream's handleErr)
        if (ApiErrors.hasStatusCause(e, ApiErrors.NAMESPACE_TERMINATING_CAUSE)) {
            queue.forget(key);
            return true;
        }
        return false;
    }

    @Override
    protected void logRetry(String key, int requeues, Exception e) {
        if (ApiErrors.isConflict(e)) {
            log.debugf("Error syncing deployment %s: %s", key, e.getMessage());
        } else {
            log.infof("Error syncing deployment %s: %s", key, ApiErrors.message(e));
        }
    }

    @Override
    protected void logDropped(String key, Exception e) {
        log.errorf("Dropping deployment %s out of the queue: %s", key, ApiErrors.message(e));
    }

    // ---- event handlers -------------------------------------------------------------------

    private List<Deployment> getDeploymentsForReplicaSet(ReplicaSet rs) {
        List<Deployment> out = ControllerRefs.selecting(dInformer, rs.getMetadata().getNamespace(),
                rs.getMetadata().getLabels(), d -> d.getSpec().getSelector(), true);
        if (out.size() > 1) {
            log.debugf("user error: more than one deployment is selecting replica set %s/%s",
                    rs.getMetadata().getNamespace(), rs.getMetadata().getName());
        }
        return out;
    }

    private void deletePod(Pod pod) {
        Deployment d = getDeploymentForPod(pod);
        if (d == null) {
            return;
        }
        if (DeploymentUtil.RECREATE.equals(DeploymentUtil.strategyType(d))) {
            try {
                List<ReplicaSet> rsList = listReplicaSetsLive(d);
                Map<String, List<Pod>> podMap = getPodMapForDeployment(d, rsList);
                int numPods = podMap.values().stream().mapToInt(List::size).sum();
                if (numPods == 0) {
                    enqueue(d);
                }
            } catch (RuntimeException e) {
                log.debugf("deletePod: cannot list replica sets of %s: %s", Cache.metaNamespaceKeyFunc(d), e.toString());
            }
        }
    }

    /** util.ListReplicaSets(d, RsListFromClient): a live list by selector, filtered to those d controls. */
    private List<ReplicaSet> listReplicaSetsLive(Deployment d) {
        LabelSelectors.fromLabelSelector(d.getSpec().getSelector()); // invalid selector: fail as upstream does
        LabelSelector sel = d.getSpec().getSelector();
        List<ReplicaSet> all = context.client().apps().replicaSets().inNamespace(d.getMetadata().getNamespace())
                .withLabelSelector(sel).list().getItems();
        List<ReplicaSet> owned = new ArrayList<>();
        for (ReplicaSet rs : all) {
            if (ControllerRefManager.isControlledBy(rs, d)) {
                owned.add(rs);
            }
        }
        return owned;
    }

    private Deployment getDeploymentForPod(Pod pod) {
        OwnerReference ref = ControllerRefManager.controllerOf(pod);
        if (ref == null || !"ReplicaSet".equals(ref.getKind())) {
            return null;
        }
        ReplicaSet rs = rsInformer.getIndexer().getByKey(Cache.namespaceKeyFunc(pod.getMetadata().getNamespace(), ref.getName()));
        if (rs == null || !Objects.equals(rs.getMetadata().getUid(), ref.getUid())) {
            return null;
        }
        OwnerReference rsRef = ControllerRefManager.controllerOf(rs);
        if (rsRef == null) {
            return null;
        }
        return resolveControllerRef(rs.getMetadata().getNamespace(), rsRef);
    }

    private Deployment resolveControllerRef(String namespace, OwnerReference ref) {
        return ControllerRefs.resolveControllerRef(DeploymentContext.KIND, dInformer, namespace, ref);
    }

    // ---- sync -----------------------------------------------------------------------------

    private List<ReplicaSet> getReplicaSetsForDeployment(Deployment d) throws Exception {
        List<ReplicaSet> rsList = new ArrayList<>(
                Indexes.byIndex(rsInformer, Cache.NAMESPACE_INDEX, d.getMetadata().getNamespace()));
        // the answers of this controller's own ReplicaSet updates the cache has not shown yet (not upstream's:
        // it saves the 409 Conflict of scaling a ReplicaSet again from the version before the last scale); before
        // claiming, so that the selector and controllerRef checks see the objects the sync goes on with. A
        // ReplicaSet the cache no longer holds stays out, whatever was written to it.
        rsList.replaceAll(ctx::latest);
        LabelSelectors.Selector selector;
        try {
            selector = LabelSelectors.fromLabelSelector(d.getSpec().getSelector());
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException("deployment " + d.getMetadata().getNamespace() + "/" + d.getMetadata().getName()
                    + " has invalid label selector: " + e.getMessage());
        }
        ControllerRefManager.CanAdopt canAdopt = ControllerRefManager.recheckDeletionTimestamp(d, DeploymentContext.KIND,
                () -> context.client().apps().deployments().inNamespace(d.getMetadata().getNamespace())
                        .withName(d.getMetadata().getName()).get());
        ControllerRefManager<ReplicaSet> cm = ControllerRefManager.forReplicaSets(context.client(), d, selector,
                DeploymentContext.API_VERSION, DeploymentContext.KIND, canAdopt);
        // claim() may hand back cached objects; callers never mutate them in place
        return cm.claim(rsList);
    }

    /** Pods selected by d, grouped by the UID of the ReplicaSet (of rsList) controlling them. */
    private Map<String, List<Pod>> getPodMapForDeployment(Deployment d, List<ReplicaSet> rsList) {
        LabelSelectors.Selector selector = LabelSelectors.fromLabelSelector(d.getSpec().getSelector());
        Map<String, List<Pod>> podMap = new HashMap<>();
        for (ReplicaSet rs : rsList) {
            podMap.put(rs.getMetadata().getUid(), new ArrayList<>());
        }
        for (Pod pod : Indexes.byIndex(podInformer, Cache.NAMESPACE_INDEX, d.getMetadata().getNamespace())) {
            if (!selector.matches(pod.getMetadata().getLabels())) {
                continue;
            }
            OwnerReference ref = ControllerRefManager.controllerOf(pod);
            if (ref == null) {
                continue;
            }
            List<Pod> list = podMap.get(ref.getUid());
            if (list != null) {
                list.add(pod);
            }
        }
        return podMap;
    }

    @Override
    protected void sync(String key) throws Exception {
        // the answer to this controller's last status write while the cache has not shown it (not upstream's:
        // it saves the 409 Conflict a write from the older version gets)
        Deployment cached = ownWrites.latest(key, dInformer.getIndexer().getByKey(key));
        if (cached == null) {
            log.debugf("Deployment %s has been deleted", key);
            return;
        }
        Deployment d = io.qkcm.runtime.DeepCopy.of(cached);
        try (var rendering = DeploymentUtil.SyncRendering.open(d)) {
            syncDeployment(d);
        }
    }

    private void syncDeployment(Deployment d) throws Exception {
        LabelSelector sel = d.getSpec().getSelector();
        if (sel != null && (sel.getMatchLabels() == null || sel.getMatchLabels().isEmpty())
                && (sel.getMatchExpressions() == null || sel.getMatchExpressions().isEmpty())) {
            context.events().event(d, EventRecorder.WARNING, "SelectingAll",
                    "This deployment is selecting all pods. A non-empty selector is required.");
            if (DeploymentUtil.longOf(DeploymentContext.status(d).getObservedGeneration()) < DeploymentUtil.longOf(d.getMetadata().getGeneration())) {
                DeploymentContext.status(d).setObservedGeneration(d.getMetadata().getGeneration());
                try {
                    ctx.updateStatus(d);
                } catch (RuntimeException e) {
                    // upstream ignores this error
                }
            }
            return;
        }

        List<ReplicaSet> rsList = getReplicaSetsForDeployment(d);
        // upstream builds the pod map here, on every sync, and reads it only in rolloutRecreate: built there
        // instead (a pass over every pod of the namespace, 11% of qkcm's CPU in the scale-up,
        // bench/results/2026-11-28-ab/profile.md); its one error, an invalid selector, failed the line above

        if (d.getMetadata().getDeletionTimestamp() != null) {
            sync.syncStatusOnly(d, rsList);
            return;
        }

        sync.checkPausedConditions(d);

        if (Boolean.TRUE.equals(d.getSpec().getPaused())) {
            sync.sync(d, rsList);
            return;
        }

        if (Rollback.getRollbackTo(d) != null) {
            rollback.rollback(d, rsList);
            return;
        }

        if (sync.isScalingEvent(d, rsList)) {
            sync.sync(d, rsList);
            return;
        }

        String type = DeploymentUtil.strategyType(d);
        if (DeploymentUtil.RECREATE.equals(type)) {
            recreate.rolloutRecreate(d, rsList, getPodMapForDeployment(d, rsList));
        } else if (DeploymentUtil.ROLLING_UPDATE.equals(type)) {
            rolling.rolloutRolling(d, rsList);
        } else {
            throw new IllegalStateException("unexpected deployment strategy type: " + type);
        }
    }
}
