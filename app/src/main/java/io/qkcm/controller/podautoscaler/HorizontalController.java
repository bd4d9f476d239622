package io.qkcm.controller.podautoscaler;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.autoscaling.v1.Scale;
import io.fabric8.kubernetes.api.model.autoscaling.v2.HorizontalPodAutoscaler;
import io.fabric8.kubernetes.api.model.autoscaling.v2.HorizontalPodAutoscalerStatus;
import io.fabric8.kubernetes.api.model.autoscaling.v2.MetricSpec;
import io.fabric8.kubernetes.api.model.autoscaling.v2.MetricStatus;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import io.javaoperatorsdk.operator.api.reconciler.Ignore;
import io.javaoperatorsdk.operator.processing.event.source.filter.OnAddFilter;
import io.javaoperatorsdk.operator.processing.event.source.filter.OnUpdateFilter;
import io.qkcm.runtime.informers.Indexes;
import io.qkcm.controller.ApiErrors;
import io.qkcm.controller.podautoscaler.metrics.MetricsClient;
import io.qkcm.controller.podautoscaler.metrics.RestMetricsClient;
import io.qkcm.controller.podautoscaler.monitor.Monitor;
import io.qkcm.runtime.DeepCopy;
import io.qkcm.runtime.Json;
import io.qkcm.runtime.events.EventRecorder;
import io.qkcm.runtime.informers.MetaNamespaceKey;
import io.qkcm.runtime.josdk.ControllerContext;
import io.qkcm.runtime.josdk.KeyReconciler;
import io.qkcm.runtime.workqueue.RateLimiter;

/**
 * horizontal-pod-autoscaler-controller (upstream pkg/controller/podautoscaler/horizontal.go): every
 * --horizontal-pod-autoscaler-sync-period, each autoscaling/v2 HPA reads its target's scale subresource,
 * computes the replicas each metric proposes (resource metrics from metrics.k8s.io, pods and object
 * metrics from custom.metrics.k8s.io, external metrics from external.metrics.k8s.io) with the
 * {@link ReplicaCalculator}, takes the highest, stabilizes and limits it ({@link ScaleRecommendations}),
 * writes the scale when it changed, and records status, conditions and events as upstream.
 *
 * <p>Upstream's queue delays every add by the sync period (a fixed-interval rate limiter): an added or
 * updated HPA, and each HPA after its sync, is queued for one period later; so the shared informer's
 * adds and updates do not queue through JOSDK here but through {@link #enqueue}. Deletes go through
 * JOSDK, whose sync of the gone key forgets the HPA's recommendations.
 */
@Ignore // runs in its own Operator, not quarkus-operator-sdk's default one
public final class HorizontalController extends KeyReconciler<HorizontalPodAutoscaler> {

    public static final String NAME = "horizontal-pod-autoscaler-controller";
    public static final String QUEUE = "horizontalpodautoscaler";
    /** The events' source component, as upstream's recorder. */
    public static final String COMPONENT = "horizontal-pod-autoscaler";

    /** The controller's flags (and the feature gates it reads). */
    public record Settings(Duration resyncPeriod, Duration downscaleStabilisationWindow, double tolerance,
            Duration cpuInitializationPeriod, Duration delayOfInitialReadinessStatus, boolean configurableTolerance,
            boolean podLevelResources) {
    }

    /** An error of the HPA's spec (upstream's errSpec wrapping), for the monitor's error label. */
    static final class SpecException extends Exception {
        SpecException(String message) {
            super(message);
        }
    }

    private final SharedIndexInformer<HorizontalPodAutoscaler> hpas;
    private final SharedIndexInformer<Pod> pods;
    private final Settings settings;
    private final Clock clock;
    private final EventRecorder recorder;
    private final ScaleClient scales;
    private final Monitor monitor;
    final ReplicaCalculator replicaCalc;
    final ScaleRecommendations recommendations;
    final MetricComputation metricComputation;
    /** Upstream's hpaSelectors: the selector of each HPA that has computed one (nothing until then). */
    final Map<String, PodSelector> hpaSelectors = new ConcurrentHashMap<>();

    /** {@code workers}: --concurrent-horizontal-pod-autoscaler-syncs. */
    public HorizontalController(ControllerContext context, int workers, Settings settings, Clock clock) {
        this(context, workers, settings, clock, null);
    }

    /** With {@code metricsClient} null, the REST client of the aggregated metrics APIs. */
    HorizontalController(ControllerContext context, int workers, Settings settings, Clock clock,
            MetricsClient metricsClient) {
        super(context, HorizontalPodAutoscaler.class, QUEUE, workers, fixedInterval(settings.resyncPeriod()));
        this.settings = settings;
        this.clock = clock;
        this.hpas = context.informers().informerFor(HorizontalPodAutoscaler.class);
        this.pods = context.informers().informerFor(Pod.class);
        this.recorder = context.recorderFor(COMPONENT);
        this.scales = new ScaleClient(context.client());
        this.monitor = new Monitor(context.metrics());
        MetricsClient metrics = metricsClient != null ? metricsClient
                : new RestMetricsClient(context.client(), scales::groupResource);
        this.replicaCalc = new ReplicaCalculator(metrics, this::listPods, settings.cpuInitializationPeriod(),
                settings.delayOfInitialReadinessStatus(), settings.podLevelResources(), clock);
        this.recommendations = new ScaleRecommendations(clock, settings.downscaleStabilisationWindow());
        this.metricComputation = new MetricComputation(replicaCalc, recorder, monitor, clock, this::tolerancesFor);
        hpas.addEventHandler(new ResourceEventHandler<>() {
            @Override
            public void onAdd(HorizontalPodAutoscaler hpa) {
                enqueue(hpa);
            }

            @Override
            public void onUpdate(HorizontalPodAutoscaler old, HorizontalPodAutoscaler cur) {
                enqueue(cur);
            }

            @Override
            public void onDelete(HorizontalPodAutoscaler hpa, boolean unknownFinalState) {
                String key = key(hpa);
                queue.forget(key);
                hpaSelectors.remove(key);
            }
        });
    }

    /** Upstream's FixedItemIntervalRateLimiter: every (re)queue waits one sync period. */
    static RateLimiter<String> fixedInterval(Duration interval) {
        return new RateLimiter<>() {
            @Override
            public Duration when(String item) {
                return interval;
            }

            @Override
            public void forget(String item) {
            }

            @Override
            public int numRequeues(String item) {
                return 1;
            }
        };
    }

    @Override
    protected List<SharedIndexInformer<?>> informers() {
        return List.of(hpas, pods);
    }

    @Override
    protected OnAddFilter<? super HorizontalPodAutoscaler> primaryAddFilter() {
        return hpa -> false;
    }

    @Override
    protected OnUpdateFilter<? super HorizontalPodAutoscaler> primaryUpdateFilter() {
        return (cur, old) -> false;
    }

    @Override
    public void onStart() {
        log.info("Starting HPA controller");
    }

    @Override
    public void onShutdown() {
        log.info("Shutting down HPA controller");
    }

    /** Upstream's enqueueHPA: queued one period later; the HPA selects nothing until it has synced. */
    void enqueue(HorizontalPodAutoscaler hpa) {
        String key = key(hpa);
        queue.addRateLimited(key);
        hpaSelectors.putIfAbsent(key, PodSelector.NOTHING);
    }

    /** Upstream's processNextWorkItem: errors are logged, and an HPA that exists is queued again. */
    @Override
    protected void sync(String key) {
        boolean deleted = false;
        try {
            deleted = reconcileKey(key);
        } catch (Exception e) {
            log.errorf("%s", shortMessage(e));
        } finally {
            if (!deleted) {
                queue.addRateLimited(key);
            }
        }
    }

    /** Upstream's reconcileKey: true when the HPA is gone (its memory forgotten). */
    boolean reconcileKey(String key) throws Exception {
        HorizontalPodAutoscaler hpa = hpas.getStore().getByKey(key);
        if (hpa == null) {
            MetaNamespaceKey k = MetaNamespaceKey.split(key);
            log.infof("Horizontal Pod Autoscaler has been deleted: HPA %s/%s", k.namespace(), k.name());
            recommendations.forget(key);
            return true;
        }
        reconcileAutoscaler(hpa, key);
        return false;
    }

    /** Pods of the shared cache in {@code namespace} matching {@code selector}. */
    List<Pod> listPods(String namespace, PodSelector selector) {
        List<Pod> out = new ArrayList<>();
        for (Pod p : Indexes.byIndex(pods.getIndexer(), Cache.NAMESPACE_INDEX, namespace)) {
            if (selector.matches(p.getMetadata().getLabels())) {
                out.add(p);
            }
        }
        return out;
    }

    /** Upstream's tolerancesForHpa: the flag, or the behavior's own when HPAConfigurableTolerance is on. */
    ReplicaCalculator.Tolerances tolerancesFor(HorizontalPodAutoscaler hpa) {
        double down = settings.tolerance();
        double up = settings.tolerance();
        var behavior = hpa.getSpec().getBehavior();
        if (behavior != null && settings.configurableTolerance()) {
            if (behavior.getScaleDown() != null && behavior.getScaleDown().getTolerance() != null) {
                down = Quantity.getAmountInBytes(behavior.getScaleDown().getTolerance()).doubleValue();
            }
            if (behavior.getScaleUp() != null && behavior.getScaleUp().getTolerance() != null) {
                up = Quantity.getAmountInBytes(behavior.getScaleUp().getTolerance()).doubleValue();
            }
        }
        return new ReplicaCalculator.Tolerances(down, up);
    }

    /** Upstream's reconcileAutoscaler. */
    void reconcileAutoscaler(HorizontalPodAutoscaler shared, String key) throws Exception {
        String[] action = {Monitor.ACTION_NONE};
        Instant start = clock.instant();
        Exception failure = null;
        try {
            reconcile(shared, key, action);
        } catch (Exception e) {
            failure = e;
            throw e;
        } finally {
            String error = failure == null ? Monitor.ERROR_NONE
                    : failure instanceof SpecException ? Monitor.ERROR_SPEC : Monitor.ERROR_INTERNAL;
            monitor.observeReconciliationResult(action[0], error, Duration.between(start, clock.instant()));
        }
    }

    private void reconcile(HorizontalPodAutoscaler shared, String key, String[] action) throws Exception {
        HorizontalPodAutoscaler hpa = DeepCopy.of(shared);
        if (hpa.getStatus() == null) {
            hpa.setStatus(new HorizontalPodAutoscalerStatus());
        }
        HorizontalPodAutoscalerStatus original = DeepCopy.of(hpa.getStatus());
        String namespace = hpa.getMetadata().getNamespace();
        var ref = hpa.getSpec().getScaleTargetRef();
        String reference = ref.getKind() + "/" + namespace + "/" + ref.getName();
        Instant now = clock.instant();

        ScaleClient.Mapping mapping;
        try {
            ScaleClient.parseGroupVersion(ref.getApiVersion());
        } catch (IllegalArgumentException e) {
            failedGetScale(hpa, original, e.getMessage(), now);
            throw new SpecException("invalid API version in scale target reference: " + e.getMessage());
        }
        try {
            mapping = scales.mapping(ref.getApiVersion(), ref.getKind());
        } catch (IllegalArgumentException e) {
            failedGetScale(hpa, original, e.getMessage(), now);
            throw new Exception("unable to determine resource for scale target reference: " + e.getMessage());
        }
        Scale scale;
        try {
            scale = scales.get(mapping, namespace, ref.getName());
        } catch (RuntimeException e) {
            String message = ApiErrors.message(e);
            failedGetScale(hpa, original, message, now);
            throw new Exception("failed to query scale subresource for " + reference + ": " + message);
        }
        Conditions.set(hpa, Conditions.ABLE_TO_SCALE, "True", "SucceededGetScale",
                "the HPA controller was able to get the target's current scale", now);
        int currentReplicas = replicas(scale);
        recommendations.recordInitial(currentReplicas, key);

        List<MetricStatus> metricStatuses = null;
        int desiredReplicas = 0;
        String rescaleReason = "";
        int minReplicas = hpa.getSpec().getMinReplicas() != null ? hpa.getSpec().getMinReplicas() : 1;
        int maxReplicas = hpa.getSpec().getMaxReplicas() == null ? 0 : hpa.getSpec().getMaxReplicas();
        boolean rescale = true;
        Exception retErr = null;

        if (currentReplicas == 0 && minReplicas != 0) {
            // autoscaling is off for a target scaled to zero by hand
            desiredReplicas = 0;
            rescale = false;
            Conditions.set(hpa, Conditions.SCALING_ACTIVE, "False", "ScalingDisabled",
                    "scaling is disabled since the replica count of the target is zero", now);
        } else if (currentReplicas > maxReplicas) {
            rescaleReason = "Current number of replicas above Spec.MaxReplicas";
            desiredReplicas = maxReplicas;
        } else if (currentReplicas < minReplicas) {
            rescaleReason = "Current number of replicas below Spec.MinReplicas";
            desiredReplicas = minReplicas;
        } else {
            MetricComputation.Result result = metricComputation.computeReplicasForMetrics(hpa, scale,
                    hpa.getSpec().getMetrics() == null ? List.<MetricSpec>of() : hpa.getSpec().getMetrics(),
                    this::validateAndParseSelector);
            metricStatuses = result.statuses();
            if (result.error() != null && result.replicas() == -1) {
                setStatus(hpa, currentReplicas, hpa.getStatus().getDesiredReplicas() == null ? 0
                        : hpa.getStatus().getDesiredReplicas(), metricStatuses, false);
                updateStatusIfNeeded(original, hpa);
                recorder.event(hpa, EventRecorder.WARNING, "FailedComputeMetricsReplicas", result.error().getMessage());
                Exception e = new Exception("failed to compute desired number of replicas based on listed metrics for "
                        + reference + ": " + result.error().getMessage());
                throw result.error() instanceof SpecException ? new SpecException(e.getMessage()) : e;
            }
            if (result.error() != null) {
                retErr = result.error();
            }
            log.debugf("Proposing desired replicas: desiredReplicas %d metric %s tolerances %s timestamp %s scaleTarget %s",
                    result.replicas(), result.metric(), tolerancesFor(hpa), result.timestamp(), reference);
            String rescaleMetric = "";
            if (result.replicas() > desiredReplicas) {
                desiredReplicas = result.replicas();
                rescaleMetric = result.metric();
            }
            if (desiredReplicas > currentReplicas) {
                rescaleReason = rescaleMetric + " above target";
            }
            if (desiredReplicas < currentReplicas) {
                rescaleReason = "All metrics below target";
            }
            if (hpa.getSpec().getBehavior() == null) {
                desiredReplicas = recommendations.normalizeDesiredReplicas(hpa, key, currentReplicas, desiredReplicas,
                        minReplicas);
            } else {
                desiredReplicas = recommendations.normalizeDesiredReplicasWithBehaviors(hpa, key, currentReplicas,
                        desiredReplicas, minReplicas);
            }
            rescale = desiredReplicas != currentReplicas;
        }

        now = clock.instant();
        if (rescale) {
            try {
                scale = updateScale(mapping, namespace, ref.getName(), scale, desiredReplicas);
            } catch (RuntimeException e) {
                String message = ApiErrors.message(e);
                recorder.eventf(hpa, EventRecorder.WARNING, "FailedRescale", "New size: %d; reason: %s; error: %s",
                        desiredReplicas, rescaleReason, message);
                Conditions.set(hpa, Conditions.ABLE_TO_SCALE, "False", "FailedUpdateScale",
                        "the HPA controller was unable to update the target scale: " + message, now);
                setStatus(hpa, currentReplicas, hpa.getStatus().getDesiredReplicas() == null ? 0
                        : hpa.getStatus().getDesiredReplicas(), metricStatuses, false);
                updateStatusIfNeeded(original, hpa);
                throw new Exception("failed to rescale " + reference + ": " + message);
            }
            Conditions.set(hpa, Conditions.ABLE_TO_SCALE, "True", "SucceededRescale",
                    "the HPA controller was able to update the target scale to " + desiredReplicas, now);
            recorder.eventf(hpa, EventRecorder.NORMAL, "SuccessfulRescale", "New size: %d; reason: %s", desiredReplicas,
                    rescaleReason);
            recommendations.storeScaleEvent(hpa.getSpec().getBehavior(), key, currentReplicas, desiredReplicas);
            log.infof("Successfully rescaled: HPA %s/%s currentReplicas %d desiredReplicas %d reason %s", namespace,
                    hpa.getMetadata().getName(), currentReplicas, desiredReplicas, rescaleReason);
            action[0] = desiredReplicas > currentReplicas ? Monitor.ACTION_SCALE_UP : Monitor.ACTION_SCALE_DOWN;
        } else {
            log.debugf("Decided not to scale: scaleTarget %s desiredReplicas %d lastScaleTime %s", reference,
                    desiredReplicas, hpa.getStatus().getLastScaleTime());
            desiredReplicas = currentReplicas;
        }
        setStatus(hpa, currentReplicas, desiredReplicas, metricStatuses, rescale);
        updateStatusIfNeeded(original, hpa);
        if (retErr != null) {
            throw retErr;
        }
    }

    private static int replicas(Scale scale) {
        return scale.getSpec() == null || scale.getSpec().getReplicas() == null ? 0 : scale.getSpec().getReplicas();
    }

    /** FailedGetScale's event and AbleToScale=False, the status written when it changed. */
    private void failedGetScale(HorizontalPodAutoscaler hpa, HorizontalPodAutoscalerStatus original, String message,
            Instant now) {
        recorder.event(hpa, EventRecorder.WARNING, "FailedGetScale", message);
        Conditions.set(hpa, Conditions.ABLE_TO_SCALE, "False", "FailedGetScale",
                "the HPA controller was unable to get the target's current scale: " + message, now);
        try {
            updateStatusIfNeeded(original, hpa);
        } catch (Exception e) {
            log.errorf("%s", e.getMessage());
        }
    }

    /**
     * retry.RetryOnConflict(DefaultRetry) around the scale's update: on a conflict, the latest scale is
     * read and the update tried again (5 attempts, 10 ms apart).
     */
    private Scale updateScale(ScaleClient.Mapping mapping, String namespace, String name, Scale scale, int desired)
            throws InterruptedException {
        RuntimeException last = null;
        for (int attempt = 0; attempt < 5; attempt++) {
            if (attempt > 0) {
                Thread.sleep(10);
            }
            scale.getSpec().setReplicas(desired);
            try {
                return scales.update(mapping, namespace, scale);
            } catch (RuntimeException e) {
                last = e;
                try {
                    scale = scales.get(mapping, namespace, name);
                } catch (RuntimeException getErr) {
                    log.errorf("error getting latest scale for %s/%s during conflict retry: %s", namespace, name,
                            ApiErrors.message(getErr));
                }
                if (!ApiErrors.isConflict(e)) {
                    throw e;
                }
            }
        }
        throw last;
    }

    /**
     * Upstream's validateAndParseSelector: the scale's selector, refused when missing, unparsable, or when
     * the pods it selects are also selected by another HPA of the namespace.
     */
    PodSelector validateAndParseSelector(HorizontalPodAutoscaler hpa, String selector) throws MetricComputation.Invalid {
        Instant now = clock.instant();
        if (selector == null || selector.isEmpty()) {
            String errMsg = "selector is required";
            recorder.event(hpa, EventRecorder.WARNING, "SelectorRequired", errMsg);
            Conditions.set(hpa, Conditions.SCALING_ACTIVE, "False", "InvalidSelector",
                    "the HPA target's scale is missing a selector", now);
            throw new MetricComputation.Invalid(errMsg);
        }
        PodSelector parsed;
        try {
            parsed = PodSelector.parse(selector);
        } catch (IllegalArgumentException e) {
            String errMsg = "couldn't convert selector into a corresponding internal selector object: " + e.getMessage();
            recorder.event(hpa, EventRecorder.WARNING, "InvalidSelector", errMsg);
            Conditions.set(hpa, Conditions.SCALING_ACTIVE, "False", "InvalidSelector", errMsg, now);
            throw new MetricComputation.Invalid(errMsg);
        }
        String hpaKey = key(hpa);
        hpaSelectors.computeIfPresent(hpaKey, (k, old) -> parsed);
        String namespace = hpa.getMetadata().getNamespace();
        List<Pod> podList = listPods(namespace, parsed);
        TreeSet<String> selecting = new TreeSet<>();
        for (Pod pod : podList) {
            for (Map.Entry<String, PodSelector> e : hpaSelectors.entrySet()) {
                if (e.getKey().startsWith(namespace + "/") && e.getValue().matches(pod.getMetadata().getLabels())) {
                    selecting.add(e.getKey());
                }
            }
        }
        if (selecting.size() > 1) {
            // Go's %v of the HPAs' keys: [ns/a ns/b]
            String errMsg = "pods by selector " + selector + " are controlled by multiple HPAs: ["
                    + String.join(" ", selecting) + "]";
            recorder.event(hpa, EventRecorder.WARNING, "AmbiguousSelector", errMsg);
            Conditions.set(hpa, Conditions.SCALING_ACTIVE, "False", "AmbiguousSelector", errMsg, now);
            throw new MetricComputation.Invalid(errMsg);
        }
        return parsed;
    }

    /** Upstream's setStatus: lastScaleTime moves on a rescale; conditions are kept. */
    void setStatus(HorizontalPodAutoscaler hpa, int currentReplicas, int desiredReplicas, List<MetricStatus> statuses,
            boolean rescale) {
        HorizontalPodAutoscalerStatus old = hpa.getStatus();
        HorizontalPodAutoscalerStatus status = new HorizontalPodAutoscalerStatus();
        status.setCurrentReplicas(currentReplicas);
        status.setDesiredReplicas(desiredReplicas);
        status.setLastScaleTime(old.getLastScaleTime());
        status.setCurrentMetrics(statuses == null || statuses.isEmpty() ? null : statuses);
        status.setConditions(old.getConditions());
        // upstream's setStatus builds the status without observedGeneration: it is never set (v1.34)
        if (rescale) {
            status.setLastScaleTime(clock.instant().truncatedTo(ChronoUnit.SECONDS).toString());
        }
        hpa.setStatus(status);
    }

    /** updateStatusIfNeeded: written only when it differs; a failed write is a FailedUpdateStatus event. */
    void updateStatusIfNeeded(HorizontalPodAutoscalerStatus original, HorizontalPodAutoscaler hpa) throws Exception {
        if (Objects.equals(Json.mapper().readTree(Json.api().asJson(original)),
                Json.mapper().readTree(Json.api().asJson(hpa.getStatus())))) {
            return;
        }
        try {
            context.client().autoscaling().v2().horizontalPodAutoscalers().inNamespace(hpa.getMetadata().getNamespace())
                    .resource(hpa).updateStatus();
        } catch (RuntimeException e) {
            String message = ApiErrors.message(e);
            recorder.event(hpa, EventRecorder.WARNING, "FailedUpdateStatus", message);
            throw new Exception("failed to update status for " + hpa.getMetadata().getName() + ": " + message);
        }
        log.debugf("Successfully updated status: HPA %s/%s", hpa.getMetadata().getNamespace(), hpa.getMetadata().getName());
    }
}
