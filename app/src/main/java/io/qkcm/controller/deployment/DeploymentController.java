package io.qkcm.controller.deployment;

import io.qkcm.runtime.informers.Indexes;

import io.javaoperatorsdk.operator.api.reconciler.Ignore;
import io.qkcm.runtime.josdk.KeyReconciler;
import java.time.Duration;
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
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import io.qkcm.controller.ApiErrors;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.controller.ControllerRefManager;
import io.qkcm.controller.ControllerRefs;
import io.qkcm.controller.LabelSelectors;
import io.qkcm.runtime.informers.ResourceEventHandlerFuncs;
import io.qkcm.controller.deployment.util.DeploymentUtil;
import io.qkcm.runtime.events.EventRecorder;

/**
 * The Deployment controller (upstream pkg/controller/deployment): owns ReplicaSets, one per pod
 * template, and rolls from old to new ones by the Deployment's strategy. This file is upstream's
 * deployment_controller.go (event handlers, claiming, syncDeployment); the other concerns live in
 * {@link Sync}, {@link Rolling}, {@link Recreate}, {@link Progress} and {@link Rollback}.
 */
@Ignore // runs in its own Operator (io.qkcm.runtime.josdk), not quarkus-operator-sdk's default one
public class DeploymentController extends KeyReconciler<Deployment> {

    public static final String NAME = "deployment-controller";
    public static final String QUEUE = "deployment";
    /** Upstream's maxRetries: a key failing this many times in a row is dropped. */
    static final int MAX_RETRIES = 15;
    static final String API_VERSION = "apps/v1";
    static final String KIND = "Deployment";

    final SharedIndexInformer<Deployment> dInformer;
    final SharedIndexInformer<ReplicaSet> rsInformer;
    final SharedIndexInformer<Pod> podInformer;
    final Sync sync = new Sync(this);
    final Rolling rolling = new Rolling(this);
    final Recreate recreate = new Recreate(this);
    final Progress progress = new Progress(this);
    final Rollback rollback = new Rollback(this);
    final boolean terminatingReplicasGate;
    /** Upstream's clock (nowFn): condition times and the progress deadline. */
    final java.time.Clock clock;

    public DeploymentController(ControllerContext context) {
        this(context, java.time.Clock.systemUTC());
    }

    DeploymentController(ControllerContext context, java.time.Clock clock) {
        super(context, Deployment.class, QUEUE, context.options().concurrentSyncs("deployment"));
        this.clock = clock;
        this.terminatingReplicasGate = context.options().featureGates().enabled("DeploymentReplicaSetTerminatingReplicas");
        dInformer = context.informers().informerFor(Deployment.class);
        rsInformer = context.informers().informerFor(ReplicaSet.class);
        podInformer = context.informers().informerFor(Pod.class);

        // Deployment adds, updates and deletes reach the reconciler as JOSDK's primary events (upstream's
        // handler queues all three)
        rsInformer.addEventHandler(ResourceEventHandlerFuncs.of(this::addReplicaSet, this::updateReplicaSet,
                this::deleteReplicaSet));
        // upstream only watches pod deletions
        podInformer.addEventHandler(ResourceEventHandlerFuncs.of(null, null, this::deletePod));
    }

    @Override
    protected List<SharedIndexInformer<?>> informers() {
        return List.of(dInformer, rsInformer, podInformer);
    }

    org.jboss.logging.Logger log() {
        return log;
    }

    KubernetesClient client() {
        return context.client();
    }

    EventRecorder events() {
        return context.events();
    }

    // ---- queue ----------------------------------------------------------------------------

    void enqueue(Deployment d) {
        queue.add(Cache.metaNamespaceKeyFunc(d));
    }

    void enqueueRateLimited(Deployment d) {
        queue.addRateLimited(Cache.metaNamespaceKeyFunc(d));
    }

    void enqueueAfter(Deployment d, Duration after) {
        queue.addAfter(Cache.metaNamespaceKeyFunc(d), after);
    }

    @Override
    protected void handleError(String key, Exception e) {
        if (ApiErrors.hasStatusCause(e, ApiErrors.NAMESPACE_TERMINATING_CAUSE)) {
            queue.forget(key);
            return;
        }
        if (queue.numRequeues(key) < MAX_RETRIES) {
            if (ApiErrors.isConflict(e)) {
                log.debugf("Error syncing deployment %s: %s", key, e.getMessage());
            } else {
                log.infof("Error syncing deployment %s: %s", key, ApiErrors.message(e));
            }
            queue.addRateLimited(key);
            return;
        }
        log.errorf("Dropping deployment %s out of the queue: %s", key, ApiErrors.message(e));
        queue.forget(key);
    }

    // ---- event handlers -------------------------------------------------------------------

    private void addReplicaSet(ReplicaSet rs) {
        if (rs.getMetadata().getDeletionTimestamp() != null) {
            deleteReplicaSet(rs);
            return;
        }
        OwnerReference ref = ControllerRefManager.controllerOf(rs);
        if (ref != null) {
            Deployment d = resolveControllerRef(rs.getMetadata().getNamespace(), ref);
            if (d != null) {
                enqueue(d);
            }
            return;
        }
        for (Deployment d : getDeploymentsForReplicaSet(rs)) {
            enqueue(d);
        }
    }

    private List<Deployment> getDeploymentsForReplicaSet(ReplicaSet rs) {
        List<Deployment> out = ControllerRefs.selecting(dInformer, rs.getMetadata().getNamespace(),
                rs.getMetadata().getLabels(), d -> d.getSpec().getSelector(), true);
        if (out.size() > 1) {
            log.debugf("user error: more than one deployment is selecting replica set %s/%s",
                    rs.getMetadata().getNamespace(), rs.getMetadata().getName());
        }
        return out;
    }

    private void updateReplicaSet(ReplicaSet oldRS, ReplicaSet curRS) {
        if (Objects.equals(curRS.getMetadata().getResourceVersion(), oldRS.getMetadata().getResourceVersion())) {
            return;
        }
        OwnerReference curRef = ControllerRefManager.controllerOf(curRS);
        OwnerReference oldRef = ControllerRefManager.controllerOf(oldRS);
        boolean refChanged = !Objects.equals(curRef, oldRef);
        if (refChanged && oldRef != null) {
            Deployment d = resolveControllerRef(oldRS.getMetadata().getNamespace(), oldRef);
            if (d != null) {
                enqueue(d);
            }
        }
        if (curRef != null) {
            Deployment d = resolveControllerRef(curRS.getMetadata().getNamespace(), curRef);
            if (d != null) {
                enqueue(d);
            }
            return;
        }
        boolean labelChanged = !Objects.equals(curRS.getMetadata().getLabels(), oldRS.getMetadata().getLabels());
        if (labelChanged || refChanged) {
            for (Deployment d : getDeploymentsForReplicaSet(curRS)) {
                enqueue(d);
            }
        }
    }

    private void deleteReplicaSet(ReplicaSet rs) {
        OwnerReference ref = ControllerRefManager.controllerOf(rs);
        if (ref == null) {
            return;
        }
        Deployment d = resolveControllerRef(rs.getMetadata().getNamespace(), ref);
        if (d != null) {
            enqueue(d);
        }
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
        List<ReplicaSet> all = client().apps().replicaSets().inNamespace(d.getMetadata().getNamespace())
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
        return ControllerRefs.resolveControllerRef(KIND, dInformer, namespace, ref);
    }

    // ---- sync -----------------------------------------------------------------------------

    List<ReplicaSet> getReplicaSetsForDeployment(Deployment d) throws Exception {
        List<ReplicaSet> rsList = new ArrayList<>(
                Indexes.byIndex(rsInformer, Cache.NAMESPACE_INDEX, d.getMetadata().getNamespace()));
        LabelSelectors.Selector selector;
        try {
            selector = LabelSelectors.fromLabelSelector(d.getSpec().getSelector());
        } catch (IllegalArgumentException e) {
            throw new IllegalStateException("deployment " + d.getMetadata().getNamespace() + "/" + d.getMetadata().getName()
                    + " has invalid label selector: " + e.getMessage());
        }
        ControllerRefManager.CanAdopt canAdopt = ControllerRefManager.recheckDeletionTimestamp(() -> {
            Deployment fresh = client().apps().deployments().inNamespace(d.getMetadata().getNamespace())
                    .withName(d.getMetadata().getName()).require();
            if (!Objects.equals(fresh.getMetadata().getUid(), d.getMetadata().getUid())) {
                throw new IllegalStateException("original Deployment " + d.getMetadata().getNamespace() + "/"
                        + d.getMetadata().getName() + " is gone: got uid " + fresh.getMetadata().getUid() + ", wanted "
                        + d.getMetadata().getUid());
            }
            return fresh;
        });
        ControllerRefManager<ReplicaSet> cm = ControllerRefManager.forReplicaSets(client(), d, selector, API_VERSION, KIND,
                canAdopt);
        // claim() may hand back cached objects; callers never mutate them in place
        return cm.claim(rsList);
    }

    /** Pods selected by d, grouped by the UID of the ReplicaSet (of rsList) controlling them. */
    Map<String, List<Pod>> getPodMapForDeployment(Deployment d, List<ReplicaSet> rsList) {
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
        int slash = key.indexOf('/');
        String namespace = key.substring(0, slash);
        String name = key.substring(slash + 1);
        Deployment cached = dInformer.getIndexer().getByKey(key);
        if (cached == null) {
            log.debugf("Deployment %s has been deleted", key);
            return;
        }
        Deployment d = DeploymentUtil.deepCopy(cached);

        LabelSelector sel = d.getSpec().getSelector();
        if (sel != null && (sel.getMatchLabels() == null || sel.getMatchLabels().isEmpty())
                && (sel.getMatchExpressions() == null || sel.getMatchExpressions().isEmpty())) {
            events().event(d, EventRecorder.WARNING, "SelectingAll",
                    "This deployment is selecting all pods. A non-empty selector is required.");
            if (DeploymentUtil.longOf(status(d).getObservedGeneration()) < DeploymentUtil.longOf(d.getMetadata().getGeneration())) {
                status(d).setObservedGeneration(d.getMetadata().getGeneration());
                try {
                    updateStatus(d);
                } catch (RuntimeException e) {
                    // upstream ignores this error
                }
            }
            return;
        }

        List<ReplicaSet> rsList = getReplicaSetsForDeployment(d);
        Map<String, List<Pod>> podMap = getPodMapForDeployment(d, rsList);

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
            recreate.rolloutRecreate(d, rsList, podMap);
        } else if (DeploymentUtil.ROLLING_UPDATE.equals(type)) {
            rolling.rolloutRolling(d, rsList);
        } else {
            throw new IllegalStateException("unexpected deployment strategy type: " + type);
        }
    }

    static io.fabric8.kubernetes.api.model.apps.DeploymentStatus status(Deployment d) {
        if (d.getStatus() == null) {
            d.setStatus(new io.fabric8.kubernetes.api.model.apps.DeploymentStatus());
        }
        return d.getStatus();
    }

    /** UpdateStatus(d); like upstream the returned object is not used by callers that ignore it. */
    Deployment updateStatus(Deployment d) {
        return client().apps().deployments().inNamespace(d.getMetadata().getNamespace()).resource(d).updateStatus();
    }

    ReplicaSet updateReplicaSet(ReplicaSet rs) {
        return client().apps().replicaSets().inNamespace(rs.getMetadata().getNamespace()).resource(rs).update();
    }
}
