package io.qkcm.controller.statefulset;

import io.qkcm.runtime.informers.Indexes;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;

import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.ControllerRevision;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.apps.StatefulSetStatus;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import io.javaoperatorsdk.operator.api.reconciler.Ignore;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.controller.ControllerRefManager;
import io.qkcm.controller.ControllerRefs;
import io.qkcm.controller.OwnerEnqueueingHandler;
import io.qkcm.controller.LabelSelectors;
import io.qkcm.controller.PodControl;
import io.qkcm.controller.PodIndexes;
import io.qkcm.controller.PodUtil;
import io.qkcm.controller.RealPodControl;
import io.qkcm.controller.history.RealHistory;
import io.qkcm.runtime.josdk.KeyReconciler;
import io.qkcm.runtime.options.FeatureGates;

/**
 * The StatefulSet controller (upstream pkg/controller/statefulset, stateful_set.go): for each set, adopts
 * orphan ControllerRevisions, claims its pods (by selector and by name, {@code <set>-<ordinal>}), and runs
 * {@link StatefulSetControl}. Upstream's pod handlers are registered on the shared pod informer; the set's
 * own adds, updates and deletes reach it as JOSDK primary events. No expectations (upstream has none here),
 * and none needed after a pod write whose answer is lost (unlike the ReplicaSet and DaemonSet controllers):
 * each pod has its ordinal's stable name, which the API server keeps taken until the pod's object is gone,
 * so a write repeated from a stale cache is answered AlreadyExists or names the same pod again
 * ({@code StatefulSetUncertainWritesTest}).
 */
@Ignore // run in its own Operator by the manager
public class StatefulSetController extends KeyReconciler<StatefulSet> {

    public static final String NAME = "statefulset-controller";
    public static final String QUEUE = "statefulset";

    private final SharedIndexInformer<Pod> podInformer;
    private final SharedIndexInformer<StatefulSet> setInformer;
    private final SharedIndexInformer<PersistentVolumeClaim> pvcInformer;
    private final SharedIndexInformer<ControllerRevision> revInformer;
    private final PodControl podControl;
    private final StatefulSetControl control;
    private final ExecutorService apiCalls;

    /** {@code workers}: --concurrent-statefulset-syncs. */
    public StatefulSetController(ControllerContext context, int workers) {
        this(context, workers, StatefulPodControl::new);
    }

    /** With the pod control {@code podControls} builds (tests lose write answers through it). */
    StatefulSetController(ControllerContext context, int workers, StatefulPodControl.Factory podControls) {
        super(context, StatefulSet.class, QUEUE, workers);
        this.podInformer = context.informers().informerFor(Pod.class);
        this.setInformer = context.informers().informerFor(StatefulSet.class);
        this.pvcInformer = context.informers().informerFor(PersistentVolumeClaim.class);
        this.revInformer = context.informers().informerFor(ControllerRevision.class);
        FeatureGates gates = context.options().featureGates();
        boolean autoDeletePVC = gates.enabled("StatefulSetAutoDeletePVC");
        boolean podIndexLabel = gates.enabled("PodIndexLabel");
        this.apiCalls = context.newApiCallPool(NAME, 64);
        StatefulPodControl spc = podControls.create(context.client(), podInformer, pvcInformer, context.events(),
                autoDeletePVC);
        spc.setPodIndexLabel(podIndexLabel);
        this.control = new StatefulSetControl(spc, new StatefulSetStatusUpdater(context.client(), setInformer),
                new RealHistory(context.client(), revInformer), apiCalls, autoDeletePVC,
                gates.enabled("MaxUnavailableStatefulSet"), gates.enabled("StatefulSetSemanticRevisionComparison"),
                podIndexLabel);
        control.setImageVolume(gates.enabled("ImageVolume"));
        this.podControl = new RealPodControl(context.client(), context.events());

        PodIndexes.addPodControllerIndexer(podInformer);
        // upstream's addPod, updatePod, deletePod
        owned(Pod.class, new OwnerEnqueueingHandler<Pod, StatefulSet>(
                (ns, ref) -> ControllerRefs.resolveControllerRef(StatefulSetUtils.KIND, setInformer, ns, ref), this::enqueue) {
            @Override
            protected void added(Pod pod, StatefulSet set) {
                log.tracef("Pod %s/%s created with labels %s", pod.getMetadata().getNamespace(),
                        pod.getMetadata().getName(), pod.getMetadata().getLabels());
                enqueue(set);
            }

            @Override
            protected void updated(Pod oldPod, Pod curPod, StatefulSet set) {
                enqueue(set);
                int minReady = StatefulSetUtils.minReadySeconds(set);
                if (!PodUtil.isReady(oldPod) && PodUtil.isReady(curPod) && minReady > 0) {
                    log.debugf("StatefulSet %s will be enqueued after %ds for availability check", key(set), minReady);
                    queue.addAfter(key(set), Duration.ofSeconds(minReady).plusSeconds(1));
                }
            }

            @Override
            protected void deleted(Pod pod, StatefulSet set) {
                log.tracef("Pod %s/%s deleted", pod.getMetadata().getNamespace(), pod.getMetadata().getName());
                enqueue(set);
            }

            @Override
            protected void orphanAdded(Pod pod) {
                getStatefulSetsForPod(pod).forEach(StatefulSetController.this::enqueue);
            }

            @Override
            protected void orphanUpdated(Pod oldPod, Pod curPod) {
                getStatefulSetsForPod(curPod).forEach(StatefulSetController.this::enqueue);
            }
        });
    }

    @Override
    protected List<SharedIndexInformer<?>> informers() {
        return List.of(podInformer, setInformer, pvcInformer, revInformer);
    }

    @Override
    public void onShutdown() {
        apiCalls.shutdownNow();
    }

    static String key(StatefulSet set) {
        return Cache.metaNamespaceKeyFunc(set);
    }

    // ---- pod handlers ----------------------------------------------------------------------

    private void enqueue(StatefulSet set) {
        queue.add(key(set));
    }

    /** The lister's GetPodStatefulSets: sets of the pod's namespace whose non-empty selector matches it. */
    private List<StatefulSet> getStatefulSetsForPod(Pod pod) {
        Map<String, String> labels = pod.getMetadata().getLabels();
        if (labels == null || labels.isEmpty()) {
            return List.of();
        }
        List<StatefulSet> result = new ArrayList<>();
        for (StatefulSet set : Indexes.byIndex(setInformer, Cache.NAMESPACE_INDEX, pod.getMetadata().getNamespace())) {
            LabelSelectors.Selector selector;
            try {
                selector = LabelSelectors.fromLabelSelector(set.getSpec().getSelector());
            } catch (IllegalArgumentException e) {
                continue;
            }
            if (selector.empty() || !selector.matches(labels)) {
                continue;
            }
            result.add(set);
        }
        if (result.size() > 1) {
            List<String> names = new ArrayList<>();
            result.forEach(s -> names.add(s.getMetadata().getName()));
            log.errorf("user error: more than one StatefulSet is selecting pods with labels: %s. Sets: %s", labels, names);
        }
        return result;
    }

    // ---- sync ------------------------------------------------------------------------------

    @Override
    protected void sync(String key) throws Exception {
        syncKey(key);
    }

    private void syncKey(String key) throws Exception {
        StatefulSet set = setInformer.getIndexer().getByKey(key);
        if (set == null) {
            log.infof("StatefulSet has been deleted: %s", key);
            return;
        }
        LabelSelectors.Selector selector;
        try {
            selector = LabelSelectors.fromLabelSelector(set.getSpec().getSelector());
        } catch (IllegalArgumentException e) {
            log.errorf("error converting StatefulSet %s selector: %s", key, e.getMessage());
            return;
        }
        adoptOrphanRevisions(set);
        List<Pod> pods = getPodsForStatefulSet(set, selector);
        syncStatefulSet(set, pods);
    }

    private ControllerRefManager.CanAdopt canAdoptFunc(StatefulSet set) {
        return ControllerRefManager.recheckDeletionTimestamp(set, StatefulSetUtils.KIND, () -> context.client().apps()
                .statefulSets().inNamespace(set.getMetadata().getNamespace()).withName(set.getMetadata().getName()).get());
    }

    private void adoptOrphanRevisions(StatefulSet set) throws Exception {
        List<ControllerRevision> revisions = control.listRevisions(set);
        List<ControllerRevision> orphans = new ArrayList<>();
        for (ControllerRevision r : revisions) {
            if (ControllerRefManager.controllerOf(r) == null) {
                orphans.add(r);
            }
        }
        if (!orphans.isEmpty()) {
            try {
                canAdoptFunc(set).check();
            } catch (Exception e) {
                throw new IllegalStateException("can't adopt ControllerRevisions: " + e.getMessage(), e);
            }
            control.adoptOrphanRevisions(set, orphans);
        }
    }

    private List<Pod> getPodsForStatefulSet(StatefulSet set, LabelSelectors.Selector selector) throws Exception {
        List<Pod> podsForSts = PodIndexes.filterPodsByOwner(podInformer, set.getMetadata().getNamespace(),
                StatefulSetUtils.KIND, set.getMetadata().getName(), set.getMetadata().getUid(), true);
        ControllerRefManager<Pod> cm = ControllerRefManager.forPods(podControl, set, selector,
                StatefulSetUtils.API_VERSION, StatefulSetUtils.KIND, canAdoptFunc(set));
        return cm.claim(podsForSts, pod -> StatefulSetUtils.isMemberOf(set, pod));
    }

    private void syncStatefulSet(StatefulSet set, List<Pod> pods) throws Exception {
        log.tracef("Syncing StatefulSet %s with %d pods", key(set), pods.size());
        StatefulSetStatus status = control.updateStatefulSet(set, pods);
        int minReady = StatefulSetUtils.minReadySeconds(set);
        if (minReady > 0 && status != null
                && StatefulSetUtils.statusInt(status.getAvailableReplicas()) != StatefulSetUtils.replicas(set)) {
            queue.addAfter(key(set), Duration.ofSeconds(minReady));
        }
    }
}
