package io.qkcm.controller.statefulset;

import io.qkcm.runtime.informers.Indexes;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.ControllerRevision;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.apps.StatefulSetStatus;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import io.javaoperatorsdk.operator.api.reconciler.Ignore;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.controller.ControllerRefManager;
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
 * own adds, updates and deletes reach it as JOSDK primary events. No expectations (upstream has none here).
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
    private final ThreadPoolExecutor apiCalls;

    public StatefulSetController(ControllerContext context) {
        super(context, StatefulSet.class, QUEUE, context.options().concurrentSyncs("statefulset"));
        this.podInformer = context.informers().informerFor(Pod.class);
        this.setInformer = context.informers().informerFor(StatefulSet.class);
        this.pvcInformer = context.informers().informerFor(PersistentVolumeClaim.class);
        this.revInformer = context.informers().informerFor(ControllerRevision.class);
        FeatureGates gates = context.options().featureGates();
        boolean autoDeletePVC = gates.enabled("StatefulSetAutoDeletePVC");
        boolean podIndexLabel = gates.enabled("PodIndexLabel");
        AtomicInteger n = new AtomicInteger();
        this.apiCalls = new ThreadPoolExecutor(64, 64, 30, TimeUnit.SECONDS, new LinkedBlockingQueue<>(), r -> {
            Thread t = new Thread(r, NAME + "-api-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        this.apiCalls.allowCoreThreadTimeOut(true);
        StatefulPodControl spc = new StatefulPodControl(context.client(), podInformer, pvcInformer, context.events(),
                autoDeletePVC);
        spc.setPodIndexLabel(podIndexLabel);
        this.control = new StatefulSetControl(spc, new StatefulSetStatusUpdater(context.client(), setInformer),
                new RealHistory(context.client(), revInformer), apiCalls, autoDeletePVC,
                gates.enabled("MaxUnavailableStatefulSet"), gates.enabled("StatefulSetSemanticRevisionComparison"),
                podIndexLabel);
        control.setImageVolume(gates.enabled("ImageVolume"));
        this.podControl = new RealPodControl(context.client(), context.events());

        PodIndexes.addPodControllerIndexer(podInformer);
        podInformer.addEventHandler(new ResourceEventHandler<Pod>() {
            @Override
            public void onAdd(Pod pod) {
                addPod(pod);
            }

            @Override
            public void onUpdate(Pod oldPod, Pod curPod) {
                updatePod(oldPod, curPod);
            }

            @Override
            public void onDelete(Pod pod, boolean finalStateUnknown) {
                deletePod(pod);
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

    private void addPod(Pod pod) {
        if (pod.getMetadata().getDeletionTimestamp() != null) {
            deletePod(pod);
            return;
        }
        OwnerReference ref = ControllerRefManager.controllerOf(pod);
        if (ref != null) {
            StatefulSet set = resolveControllerRef(pod.getMetadata().getNamespace(), ref);
            if (set == null) {
                return;
            }
            log.tracef("Pod %s/%s created with labels %s", pod.getMetadata().getNamespace(), pod.getMetadata().getName(),
                    pod.getMetadata().getLabels());
            queue.add(key(set));
            return;
        }
        for (StatefulSet set : getStatefulSetsForPod(pod)) {
            queue.add(key(set));
        }
    }

    private void updatePod(Pod oldPod, Pod curPod) {
        if (Objects.equals(curPod.getMetadata().getResourceVersion(), oldPod.getMetadata().getResourceVersion())) {
            return;
        }
        boolean labelChanged = !Objects.equals(labelsOf(curPod), labelsOf(oldPod));
        OwnerReference curRef = ControllerRefManager.controllerOf(curPod);
        OwnerReference oldRef = ControllerRefManager.controllerOf(oldPod);
        boolean refChanged = !Objects.equals(curRef, oldRef);
        if (refChanged && oldRef != null) {
            StatefulSet set = resolveControllerRef(oldPod.getMetadata().getNamespace(), oldRef);
            if (set != null) {
                queue.add(key(set));
            }
        }
        if (curRef != null) {
            StatefulSet set = resolveControllerRef(curPod.getMetadata().getNamespace(), curRef);
            if (set == null) {
                return;
            }
            queue.add(key(set));
            int minReady = StatefulSetUtils.minReadySeconds(set);
            if (!PodUtil.isReady(oldPod) && PodUtil.isReady(curPod) && minReady > 0) {
                log.debugf("StatefulSet %s will be enqueued after %ds for availability check", key(set), minReady);
                queue.addAfter(key(set), Duration.ofSeconds(minReady).plusSeconds(1));
            }
            return;
        }
        if (labelChanged || refChanged) {
            for (StatefulSet set : getStatefulSetsForPod(curPod)) {
                queue.add(key(set));
            }
        }
    }

    private void deletePod(Pod pod) {
        OwnerReference ref = ControllerRefManager.controllerOf(pod);
        if (ref == null) {
            return;
        }
        StatefulSet set = resolveControllerRef(pod.getMetadata().getNamespace(), ref);
        if (set == null) {
            return;
        }
        log.tracef("Pod %s/%s deleted", pod.getMetadata().getNamespace(), pod.getMetadata().getName());
        queue.add(key(set));
    }

    private static Map<String, String> labelsOf(Pod pod) {
        Map<String, String> l = pod.getMetadata().getLabels();
        return l == null ? Map.of() : l;
    }

    private StatefulSet resolveControllerRef(String namespace, OwnerReference ref) {
        if (!StatefulSetUtils.KIND.equals(ref.getKind())) {
            return null;
        }
        StatefulSet set = setInformer.getIndexer().getByKey(namespace + "/" + ref.getName());
        if (set == null || !Objects.equals(set.getMetadata().getUid(), ref.getUid())) {
            return null;
        }
        return set;
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
        long start = System.nanoTime();
        try {
            syncKey(key);
        } finally {
            log.tracef("Finished syncing statefulset %s (%d ms)", key, (System.nanoTime() - start) / 1_000_000);
        }
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
        String ns = set.getMetadata().getNamespace();
        String name = set.getMetadata().getName();
        String uid = set.getMetadata().getUid();
        return ControllerRefManager.recheckDeletionTimestamp(() -> {
            StatefulSet fresh = context.client().apps().statefulSets().inNamespace(ns).withName(name).get();
            if (fresh == null) {
                throw new KubernetesClientException("statefulsets.apps \"" + name + "\" not found", 404, null);
            }
            if (!Objects.equals(fresh.getMetadata().getUid(), uid)) {
                throw new IllegalStateException("original StatefulSet " + ns + "/" + name + " is gone: got uid "
                        + fresh.getMetadata().getUid() + ", wanted " + uid);
            }
            return fresh;
        });
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
