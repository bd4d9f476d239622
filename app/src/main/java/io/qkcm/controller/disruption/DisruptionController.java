package io.qkcm.controller.disruption;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.LabelSelectorRequirement;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.ReplicationController;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.ReplicaSet;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import io.javaoperatorsdk.operator.api.reconciler.Ignore;
import io.qkcm.controller.ApiErrors;
import io.qkcm.controller.LabelSelectors;
import io.qkcm.runtime.events.EventRecorder;
import io.qkcm.runtime.informers.Indexes;
import io.qkcm.runtime.informers.MetaNamespaceKey;
import io.qkcm.runtime.informers.MetadataClient;
import io.qkcm.runtime.informers.ResourceEventHandlerFuncs;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.KeyReconciler;
import io.qkcm.runtime.workqueue.WorkQueue;

/**
 * disruption-controller (upstream pkg/controller/disruption): keeps each PodDisruptionBudget's status —
 * expectedPods, currentHealthy, desiredHealthy, disruptionsAllowed, disruptedPods, observedGeneration and
 * the DisruptionAllowed condition — which the API server's eviction subresource reads and decrements.
 *
 * <p>Three queues as upstream: the PDB queue ({@code disruption}, JOSDK's, fed by every add, update and
 * delete of a PDB — JOSDK's primary events — and by the pods' handlers); {@code disruption_recheck}, a
 * delaying queue holding a PDB until its earliest disrupted-pods entry expires, whose worker moves it to
 * the PDB queue rate-limited; and {@code stale_pod_disruption}, pods whose DisruptionTarget condition is
 * to be reset once stale. One worker each, as upstream's Run. Concerns: {@link ExpectedPods} (with
 * {@link ScaleSubresource}), {@link BudgetStatus}, {@link StalePodDisruption}, sharing a
 * {@link DisruptionContext}.
 */
@Ignore // runs in its own Operator, not quarkus-operator-sdk's default one
public final class DisruptionController extends KeyReconciler<PodDisruptionBudget> {

    public static final String NAME = "disruption-controller";
    static final String QUEUE = "disruption";
    static final String RECHECK_QUEUE = "disruption_recheck";
    static final String STALE_POD_DISRUPTION_QUEUE = "stale_pod_disruption";
    /** Upstream's recorder: {@code EventSource{Component: "controllermanager"}}. */
    static final String EVENT_SOURCE = "controllermanager";

    private final DisruptionContext ctx;
    private final ExpectedPods expectedPods;
    private final BudgetStatus budgetStatus;
    private final StalePodDisruption stalePods;
    private final WorkQueue<String> recheckQueue;
    private final WorkQueue<String> stalePodDisruptionQueue;
    private final List<Thread> workers = new ArrayList<>();

    /** Upstream's NewDisruptionController: the real clock and the 2-minute stale-condition timeout. */
    public DisruptionController(ControllerContext context) {
        this(context, Clock.systemUTC(), StalePodDisruption.STALE_POD_DISRUPTION_TIMEOUT);
    }

    /** Upstream's NewDisruptionControllerInternal: a clock and stalePodDisruptionTimeout of the test's. */
    DisruptionController(ControllerContext context, Clock clock, Duration stalePodDisruptionTimeout) {
        super(context, PodDisruptionBudget.class, QUEUE, 1);
        this.ctx = new DisruptionContext(context.client(),
                context.informers().informerFor(PodDisruptionBudget.class),
                context.informers().informerFor(Pod.class),
                context.informers().informerFor(ReplicationController.class),
                context.informers().informerFor(ReplicaSet.class),
                context.informers().informerFor(Deployment.class),
                context.informers().informerFor(StatefulSet.class),
                context.recorderFor(EVENT_SOURCE), clock);
        this.expectedPods = new ExpectedPods(ctx, new ScaleSubresource(new MetadataClient(context.client())));
        this.budgetStatus = new BudgetStatus(ctx);
        this.stalePods = new StalePodDisruption(ctx, stalePodDisruptionTimeout,
                context.options().featureGates().enabled("PodObservedGenerationTracking"));
        this.recheckQueue = context.newQueue(RECHECK_QUEUE);
        this.stalePodDisruptionQueue = context.newQueue(STALE_POD_DISRUPTION_QUEUE);
        // upstream's addPod, updatePod, deletePod; the PDBs' own events are JOSDK's primary events
        ctx.pods().addEventHandler(ResourceEventHandlerFuncs.of(this::addPod, (oldPod, cur) -> updatePod(cur),
                this::deletePod));
    }

    @Override
    protected List<SharedIndexInformer<?>> informers() {
        return List.of(ctx.pods(), ctx.pdbs(), ctx.replicationControllers(), ctx.replicaSets(), ctx.deployments(),
                ctx.statefulSets());
    }

    @Override
    public synchronized void onStart() {
        log.info("Starting disruption controller");
        if (!workers.isEmpty()) {
            return;
        }
        workers.add(worker("recheck", this::recheckWorker));
        workers.add(worker("stale-pod-disruption", this::stalePodDisruptionWorker));
    }

    private Thread worker(String name, Runnable body) {
        Thread t = new Thread(body, context.controllerName() + "-" + name + "-worker");
        t.setDaemon(true);
        t.start();
        return t;
    }

    @Override
    public synchronized void onShutdown() {
        log.info("Shutting down disruption controller");
        recheckQueue.shutDown();
        stalePodDisruptionQueue.shutDown();
    }

    @Override
    protected void logRetry(String key, int requeues, Exception e) {
        if (ApiErrors.isConflict(e)) {
            log.debugf("Error syncing PodDisruptionBudget, requeuing: key %s: %s", key, shortMessage(e));
        } else {
            log.errorf("Error syncing PodDisruptionBudget, requeuing: key %s: %s", key, shortMessage(e));
        }
    }

    // ---- pod handlers ----------------------------------------------------------------------

    private void addPod(Pod pod) {
        log.tracef("AddPod called on pod %s", podKey(pod));
        enqueuePdbOf(pod);
        enqueueIfStale(pod);
    }

    private void updatePod(Pod pod) {
        log.tracef("UpdatePod called on pod %s", podKey(pod));
        enqueuePdbOf(pod);
        enqueueIfStale(pod);
    }

    private void deletePod(Pod pod) {
        log.tracef("DeletePod called on pod %s", podKey(pod));
        enqueuePdbOf(pod);
    }

    private void enqueuePdbOf(Pod pod) {
        PodDisruptionBudget pdb = getPdbForPod(pod);
        if (pdb == null) {
            log.tracef("No matching PDB for pod %s", podKey(pod));
            return;
        }
        queue.add(key(pdb));
    }

    private void enqueueIfStale(Pod pod) {
        Duration cleanAfter = stalePods.staleIn(pod);
        if (cleanAfter != null) {
            stalePodDisruptionQueue.addAfter(podKey(pod), cleanAfter);
            log.tracef("Enqueued pod to cleanup stale DisruptionTarget condition: pod %s", podKey(pod));
        }
    }

    /**
     * Upstream's getPdbForPod: the first PDB of the pod's namespace whose selector matches it (the
     * lister's GetPodPodDisruptionBudgets: an empty selector matches every pod, an invalid one none); a
     * pod matched by several gets a MultiplePodDisruptionBudgets event.
     */
    PodDisruptionBudget getPdbForPod(Pod pod) {
        List<PodDisruptionBudget> pdbs = new ArrayList<>();
        Map<String, String> labels = pod.getMetadata().getLabels();
        for (PodDisruptionBudget pdb : Indexes.byIndex(ctx.pdbs(), Cache.NAMESPACE_INDEX,
                pod.getMetadata().getNamespace())) {
            LabelSelectors.Selector selector;
            try {
                selector = LabelSelectors.fromLabelSelector(pdb.getSpec().getSelector());
            } catch (IllegalArgumentException e) {
                continue;
            }
            if (selector.matches(labels == null ? Map.of() : labels)) {
                pdbs.add(pdb);
            }
        }
        if (pdbs.isEmpty()) {
            log.tracef("No PodDisruptionBudgets found for pod %s, PodDisruptionBudget controller will avoid syncing.",
                    podKey(pod));
            return null;
        }
        if (pdbs.size() > 1) {
            String msg = String.format("Pod \"%s\"/\"%s\" matches multiple PodDisruptionBudgets.  Chose \"%s\" arbitrarily.",
                    pod.getMetadata().getNamespace(), pod.getMetadata().getName(), pdbs.get(0).getMetadata().getName());
            log.info(msg);
            ctx.recorder().event(pod, EventRecorder.WARNING, "MultiplePodDisruptionBudgets", msg);
        }
        return pdbs.get(0);
    }

    /** Upstream's getPodsForPdb: the pods of the PDB's namespace its selector matches. */
    private List<Pod> getPodsForPdb(PodDisruptionBudget pdb) {
        LabelSelectors.Selector selector = LabelSelectors.fromLabelSelector(pdb.getSpec().getSelector());
        List<Pod> pods = new ArrayList<>();
        for (Pod pod : Indexes.byIndex(ctx.pods(), Cache.NAMESPACE_INDEX, pdb.getMetadata().getNamespace())) {
            Map<String, String> labels = pod.getMetadata().getLabels();
            if (selector.matches(labels == null ? Map.of() : labels)) {
                pods.add(pod);
            }
        }
        return pods;
    }

    // ---- the PDB queue ---------------------------------------------------------------------

    /** Upstream's sync: a computation that fails is reported through the fail-safe status; a conflict is retried. */
    @Override
    protected void sync(String key) throws Exception {
        Instant start = ctx.clock().instant();
        try {
            PodDisruptionBudget pdb = ctx.pdbs().getStore().getByKey(key);
            if (pdb == null) {
                log.tracef("podDisruptionBudget has been deleted: key %s", key);
                return;
            }
            try {
                trySync(pdb);
            } catch (Exception e) {
                if (ApiErrors.isConflict(e)) {
                    throw e;
                }
                String message = e instanceof DisruptionException ? e.getMessage() : ApiErrors.message(e);
                log.errorf("Failed to sync PDB: podDisruptionBudget %s: %s", key, message);
                budgetStatus.failSafe(pdb, message);
            }
        } finally {
            log.tracef("Finished syncing PodDisruptionBudget: key %s duration %s", key,
                    Duration.between(start, ctx.clock().instant()));
        }
    }

    /** Upstream's trySync. */
    private void trySync(PodDisruptionBudget pdb) throws Exception {
        List<Pod> pods;
        try {
            pods = getPodsForPdb(pdb);
        } catch (IllegalArgumentException e) {
            ctx.recorder().eventf(pdb, EventRecorder.WARNING, "NoPods", "Failed to get pods: %s", e.getMessage());
            throw new DisruptionException(e.getMessage());
        }
        if (pods.isEmpty()) {
            ctx.recorder().event(pdb, EventRecorder.NORMAL, "NoPods", "No matching pods found");
        }
        ExpectedPods.Counts counts;
        try {
            counts = expectedPods.getExpectedPodCount(pdb, pods);
        } catch (Exception e) {
            String message = e instanceof DisruptionException ? e.getMessage() : ApiErrors.message(e);
            ctx.recorder().eventf(pdb, EventRecorder.WARNING, "CalculateExpectedPodCountFailed",
                    "Failed to calculate the number of expected pods: %s", message);
            throw e;
        }
        // unmanaged pods are reported, not retried: a hot loop would only rewrite the status
        if (!counts.unmanagedPods().isEmpty()) {
            log.tracef("Found unmanaged pods associated with this PDB: pods %s", counts.unmanagedPods());
            ctx.recorder().eventf(pdb, EventRecorder.WARNING, "UnmanagedPods",
                    "Pods selected by this PodDisruptionBudget (selector: %s) were found to be unmanaged. As a result, "
                            + "the status of the PDB cannot be calculated correctly, which may result in undefined "
                            + "behavior. To account for these pods please set \".spec.minAvailable\" field of the PDB "
                            + "to an integer value.",
                    goString(pdb.getSpec().getSelector()));
        }
        Instant now = ctx.clock().instant();
        BudgetStatus.DisruptedPods disrupted = budgetStatus.buildDisruptedPodMap(pods, pdb, now);
        int currentHealthy = BudgetStatus.countHealthyPods(pods, disrupted.pods(), now);
        budgetStatus.updatePdbStatus(pdb, currentHealthy, counts.desiredHealthy(), counts.expectedCount(),
                disrupted.pods());
        if (disrupted.recheckTime() != null) {
            // at most one wait per PDB: the earliest expiry wins
            recheckQueue.addAfter(key(pdb), Duration.between(now, disrupted.recheckTime()));
        }
    }

    /** Upstream's recheck worker: an expired wait goes to the PDB queue, rate-limited. */
    private void recheckWorker() {
        try {
            context.informers().waitForSync(informers());
            while (true) {
                String key = recheckQueue.get();
                if (key == null) {
                    return;
                }
                try {
                    queue.addRateLimited(key);
                } finally {
                    recheckQueue.done(key);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    // ---- the stale pod disruption queue ----------------------------------------------------

    private void stalePodDisruptionWorker() {
        try {
            context.informers().waitForSync(informers());
            while (true) {
                String key = stalePodDisruptionQueue.get();
                if (key == null) {
                    return;
                }
                try {
                    Duration again = stalePods.sync(key);
                    if (again != null) {
                        stalePodDisruptionQueue.addAfter(key, again);
                    }
                    stalePodDisruptionQueue.forget(key);
                } catch (RuntimeException e) {
                    log.errorf("error syncing Pod %s to clear DisruptionTarget condition, requeueing: %s", key,
                            shortMessage(e));
                    stalePodDisruptionQueue.addRateLimited(key);
                } finally {
                    stalePodDisruptionQueue.done(key);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static String podKey(Pod pod) {
        return MetaNamespaceKey.of(pod);
    }

    /** Go's {@code %v} of a *metav1.LabelSelector (its generated String()). */
    static String goString(LabelSelector s) {
        if (s == null) {
            return "nil";
        }
        StringBuilder b = new StringBuilder("&LabelSelector{MatchLabels:map[string]string{");
        if (s.getMatchLabels() != null) {
            new java.util.TreeMap<>(s.getMatchLabels()).forEach((k, v) -> b.append(k).append(": ").append(v).append(','));
        }
        b.append("},MatchExpressions:[]LabelSelectorRequirement{");
        if (s.getMatchExpressions() != null) {
            for (LabelSelectorRequirement r : s.getMatchExpressions()) {
                b.append("LabelSelectorRequirement{Key:").append(r.getKey()).append(",Operator:").append(r.getOperator())
                        .append(",Values:[").append(String.join(" ", r.getValues() == null ? List.of() : r.getValues()))
                        .append("],},");
            }
        }
        return b.append("},}").toString();
    }
}
