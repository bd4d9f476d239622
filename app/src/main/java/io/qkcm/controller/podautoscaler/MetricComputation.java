package io.qkcm.controller.podautoscaler;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.autoscaling.v1.Scale;
import io.fabric8.kubernetes.api.model.autoscaling.v2.ContainerResourceMetricStatus;
import io.fabric8.kubernetes.api.model.autoscaling.v2.ExternalMetricStatus;
import io.fabric8.kubernetes.api.model.autoscaling.v2.HorizontalPodAutoscaler;
import io.fabric8.kubernetes.api.model.autoscaling.v2.MetricIdentifier;
import io.fabric8.kubernetes.api.model.autoscaling.v2.MetricSpec;
import io.fabric8.kubernetes.api.model.autoscaling.v2.MetricStatus;
import io.fabric8.kubernetes.api.model.autoscaling.v2.MetricTarget;
import io.fabric8.kubernetes.api.model.autoscaling.v2.MetricValueStatus;
import io.fabric8.kubernetes.api.model.autoscaling.v2.ObjectMetricStatus;
import io.fabric8.kubernetes.api.model.autoscaling.v2.PodsMetricStatus;
import io.fabric8.kubernetes.api.model.autoscaling.v2.ResourceMetricStatus;
import io.qkcm.controller.podautoscaler.metrics.MetricsException;
import io.qkcm.controller.podautoscaler.metrics.RestMetricsClient;
import io.qkcm.controller.podautoscaler.monitor.Monitor;
import io.qkcm.runtime.events.EventRecorder;

/**
 * Upstream's computeReplicasForMetrics and the computeStatusFor* functions: one proposal per metric of
 * the HPA, its MetricStatus, and on failure the event and ScalingActive=False condition of the failed
 * metric source (FailedGetResourceMetric, FailedGetPodsMetric, ...).
 */
final class MetricComputation {

    /** The selector or a metric's spec is unusable; the message is upstream's error. */
    static final class Invalid extends Exception {
        Invalid(String message) {
            super(message);
        }
    }

    /** The highest proposal, its metric's description and every metric's status; or the error. */
    record Result(int replicas, String metric, List<MetricStatus> statuses, Instant timestamp, Exception error) {
    }

    /** validateAndParseSelector of the controller (it keeps the HPAs' selectors). */
    @FunctionalInterface
    interface SelectorValidator {
        PodSelector validate(HorizontalPodAutoscaler hpa, String selector) throws Invalid;
    }

    /** A failed metric's condition (already evented) and error. */
    private static final class Failure extends Exception {
        final String reason;
        final String conditionMessage;

        Failure(String reason, String conditionMessage, String message, boolean spec) {
            super(message);
            this.reason = reason;
            this.conditionMessage = conditionMessage;
            this.spec = spec;
        }

        final boolean spec;
    }

    /** One metric's proposal. */
    private record Proposal(int replicas, String metric, Instant timestamp) {
    }

    private final ReplicaCalculator calc;
    private final EventRecorder recorder;
    private final Monitor monitor;
    private final Clock clock;
    private final Function<HorizontalPodAutoscaler, ReplicaCalculator.Tolerances> tolerances;

    MetricComputation(ReplicaCalculator calc, EventRecorder recorder, Monitor monitor, Clock clock,
            Function<HorizontalPodAutoscaler, ReplicaCalculator.Tolerances> tolerances) {
        this.calc = calc;
        this.recorder = recorder;
        this.monitor = monitor;
        this.clock = clock;
        this.tolerances = tolerances;
    }

    Result computeReplicasForMetrics(HorizontalPodAutoscaler hpa, Scale scale, List<MetricSpec> specs,
            SelectorValidator validator) {
        PodSelector selector;
        try {
            selector = validator.validate(hpa, scale.getStatus() == null ? null : scale.getStatus().getSelector());
        } catch (Invalid e) {
            return new Result(-1, "", null, Instant.EPOCH, e);
        }
        int specReplicas = scale.getSpec() == null || scale.getSpec().getReplicas() == null ? 0 : scale.getSpec().getReplicas();
        int statusReplicas = scale.getStatus() == null || scale.getStatus().getReplicas() == null ? 0
                : scale.getStatus().getReplicas();
        List<MetricStatus> statuses = new ArrayList<>();
        int replicas = 0;
        String metric = "";
        Instant timestamp = Instant.EPOCH;
        int invalidCount = 0;
        Failure invalid = null;
        for (MetricSpec spec : specs) {
            // a metric that fails keeps an empty status, as upstream's (type "")
            MetricStatus status = new MetricStatus();
            status.setType("");
            statuses.add(status);
            Proposal p;
            try {
                p = computeReplicasForMetric(hpa, spec, specReplicas, statusReplicas, selector, status);
            } catch (Failure f) {
                if (invalidCount <= 0) {
                    invalid = f;
                }
                invalidCount++;
                continue;
            }
            if (replicas == 0 || p.replicas() > replicas) {
                timestamp = p.timestamp();
                replicas = p.replicas();
                metric = p.metric();
            }
        }
        Exception error = null;
        if (invalid != null) {
            String message = "invalid metrics (" + invalidCount + " invalid out of " + specs.size()
                    + "), first error is: " + invalid.getMessage();
            error = invalid.spec ? new HorizontalController.SpecException(message) : new Exception(message);
        }
        // a metric that failed may have wanted more: no scale down while one is missing
        if (invalidCount >= specs.size() || (invalidCount > 0 && replicas < specReplicas)) {
            if (invalid != null) {
                Conditions.set(hpa, Conditions.SCALING_ACTIVE, "False", invalid.reason, invalid.conditionMessage,
                        clock.instant());
            }
            return new Result(-1, "", statuses, Instant.EPOCH,
                    error != null ? error : new Exception("invalid metrics (0 invalid out of 0), first error is: <nil>"));
        }
        Conditions.set(hpa, Conditions.SCALING_ACTIVE, "True", "ValidMetricFound",
                "the HPA was able to successfully calculate a replica count from " + metric, clock.instant());
        return new Result(replicas, metric, statuses, timestamp, error);
    }

    /** getUnableComputeReplicaCountCondition: the event now, the condition for later. */
    private Failure unable(HorizontalPodAutoscaler hpa, String reason, String cause, String message, boolean spec) {
        recorder.event(hpa, EventRecorder.WARNING, reason, cause);
        return new Failure(reason, "the HPA was unable to compute the replica count: " + cause, message, spec);
    }

    private Proposal computeReplicasForMetric(HorizontalPodAutoscaler hpa, MetricSpec spec, int specReplicas,
            int statusReplicas, PodSelector selector, MetricStatus status) throws Failure {
        Instant start = clock.instant();
        String type = spec.getType() == null ? "" : spec.getType();
        Proposal proposal = null;
        Failure failure = null;
        try {
            proposal = switch (type) {
                case "Object" -> objectMetric(hpa, spec, specReplicas, statusReplicas, selector, status);
                case "Pods" -> podsMetric(hpa, spec, specReplicas, selector, status);
                case "Resource" -> resourceMetric(hpa, spec, specReplicas, selector, status);
                case "ContainerResource" -> containerResourceMetric(hpa, spec, specReplicas, selector, status);
                case "External" -> externalMetric(hpa, spec, specReplicas, statusReplicas, selector, status);
                default -> {
                    String err = "unknown metric source type \"" + type + "\"";
                    throw unable(hpa, "InvalidMetricSourceType", err, err, true);
                }
            };
            return proposal;
        } catch (Failure f) {
            failure = f;
            throw f;
        } finally {
            String action = Monitor.ACTION_NONE;
            int current = hpa.getStatus() == null || hpa.getStatus().getCurrentReplicas() == null ? 0
                    : hpa.getStatus().getCurrentReplicas();
            int proposed = proposal == null ? 0 : proposal.replicas();
            if (proposed > current) {
                action = Monitor.ACTION_SCALE_UP;
            } else if (proposed < current) {
                action = Monitor.ACTION_SCALE_DOWN;
            }
            String error = Monitor.ERROR_NONE;
            if (failure != null) {
                error = failure.spec ? Monitor.ERROR_SPEC : Monitor.ERROR_INTERNAL;
                action = Monitor.ACTION_NONE;
            }
            monitor.observeMetricComputationResult(action, error, Duration.between(start, clock.instant()), type);
        }
    }

    private static MetricIdentifier identifier(String name, LabelSelector selector) {
        MetricIdentifier id = new MetricIdentifier();
        id.setName(name);
        id.setSelector(selector);
        return id;
    }

    private static String metricSelector(LabelSelector selector) throws IllegalArgumentException {
        return PodSelector.format(selector);
    }

    private static long milli(Quantity q) {
        return RestMetricsClient.milliValue(q.toString());
    }

    private static Quantity milliQuantity(long milli, boolean binary) {
        return new Quantity(MilliQuantity.format(milli, binary));
    }

    /** computeStatusForObjectMetric. */
    private Proposal objectMetric(HorizontalPodAutoscaler hpa, MetricSpec spec, int specReplicas, int statusReplicas,
            PodSelector selector, MetricStatus status) throws Failure {
        var object = spec.getObject();
        String metricSelector;
        try {
            metricSelector = metricSelector(object.getMetric().getSelector());
        } catch (IllegalArgumentException e) {
            throw unable(hpa, "FailedGetObjectMetric", e.getMessage(), "failed to get object metric value: " + e.getMessage(), false);
        }
        ObjectMetricStatus objectStatus = new ObjectMetricStatus();
        objectStatus.setDescribedObject(object.getDescribedObject());
        objectStatus.setMetric(identifier(object.getMetric().getName(), object.getMetric().getSelector()));
        MetricValueStatus current = new MetricValueStatus();
        objectStatus.setCurrent(current);
        MetricTarget target = object.getTarget();
        ReplicaCalculator.Tolerances tol = tolerances.apply(hpa);
        String namespace = hpa.getMetadata().getNamespace();
        try {
            if ("Value".equals(target.getType()) && target.getValue() != null) {
                ReplicaCalculator.UsageReplicas r = calc.getObjectMetricReplicas(specReplicas, milli(target.getValue()),
                        object.getMetric().getName(), tol, namespace, object.getDescribedObject(), selector, metricSelector);
                current.setValue(milliQuantity(r.usage(), false));
                fill(status, "Object").setObject(objectStatus);
                return new Proposal(r.replicas(), object.getDescribedObject().getKind() + " metric "
                        + object.getMetric().getName(), r.timestamp());
            } else if ("AverageValue".equals(target.getType()) && target.getAverageValue() != null) {
                ReplicaCalculator.UsageReplicas r;
                try {
                    r = calc.getObjectPerPodMetricReplicas(statusReplicas, milli(target.getAverageValue()),
                            object.getMetric().getName(), tol, namespace, object.getDescribedObject(), metricSelector);
                } catch (MetricsException e) {
                    throw unable(hpa, "FailedGetObjectMetric", e.getMessage(), "failed to get object metric value: failed to get "
                            + object.getMetric().getName() + " object metric: " + e.getMessage(), false);
                }
                current.setAverageValue(milliQuantity(r.usage(), false));
                fill(status, "Object").setObject(objectStatus);
                return new Proposal(r.replicas(), "external metric " + object.getMetric().getName() + "("
                        + GoFormat.labelSelector(object.getMetric().getSelector()) + ")", r.timestamp());
            }
        } catch (MetricsException e) {
            throw unable(hpa, "FailedGetObjectMetric", e.getMessage(), "failed to get object metric value: " + e.getMessage(), false);
        }
        String err = "invalid object metric source: neither a value target nor an average value target was set";
        throw unable(hpa, "FailedGetObjectMetric", err, "failed to get object metric value: " + err, false);
    }

    /** computeStatusForPodsMetric. */
    private Proposal podsMetric(HorizontalPodAutoscaler hpa, MetricSpec spec, int currentReplicas, PodSelector selector,
            MetricStatus status) throws Failure {
        var pods = spec.getPods();
        String metricSelector;
        try {
            metricSelector = metricSelector(pods.getMetric().getSelector());
        } catch (IllegalArgumentException e) {
            throw unable(hpa, "FailedGetPodsMetric", e.getMessage(), "failed to get pods metric value: " + e.getMessage(), false);
        }
        ReplicaCalculator.UsageReplicas r;
        try {
            r = calc.getMetricReplicas(currentReplicas, milli(pods.getTarget().getAverageValue()), pods.getMetric().getName(),
                    tolerances.apply(hpa), hpa.getMetadata().getNamespace(), selector, metricSelector);
        } catch (MetricsException e) {
            throw unable(hpa, "FailedGetPodsMetric", e.getMessage(), "failed to get pods metric value: " + e.getMessage(), false);
        }
        PodsMetricStatus podsStatus = new PodsMetricStatus();
        podsStatus.setMetric(identifier(pods.getMetric().getName(), pods.getMetric().getSelector()));
        MetricValueStatus current = new MetricValueStatus();
        current.setAverageValue(milliQuantity(r.usage(), false));
        podsStatus.setCurrent(current);
        fill(status, "Pods").setPods(podsStatus);
        return new Proposal(r.replicas(), "pods metric " + pods.getMetric().getName(), r.timestamp());
    }

    private record ResourceResult(Proposal proposal, MetricValueStatus current) {
    }

    /** computeStatusForResourceMetricGeneric: an average value or an average utilization target. */
    private ResourceResult resourceGeneric(HorizontalPodAutoscaler hpa, int currentReplicas, MetricTarget target,
            String resource, String container, PodSelector selector, boolean containerSource) throws MetricsException {
        String namespace = hpa.getMetadata().getNamespace();
        ReplicaCalculator.Tolerances tol = tolerances.apply(hpa);
        boolean binary = "memory".equals(resource);
        if (target.getAverageValue() != null) {
            ReplicaCalculator.UsageReplicas r;
            try {
                r = calc.getRawResourceReplicas(currentReplicas, milli(target.getAverageValue()), resource, tol, namespace,
                        selector, container);
            } catch (MetricsException e) {
                throw new MetricsException("failed to get " + resource + " usage: " + e.getMessage());
            }
            MetricValueStatus current = new MetricValueStatus();
            current.setAverageValue(milliQuantity(r.usage(), binary));
            return new ResourceResult(new Proposal(r.replicas(), resource + " resource", r.timestamp()), current);
        }
        if (target.getAverageUtilization() == null) {
            throw new MetricsException(
                    "invalid resource metric source: neither an average utilization target nor an average value (usage) target was set");
        }
        ReplicaCalculator.ResourceReplicas r;
        try {
            r = calc.getResourceReplicas(currentReplicas, target.getAverageUtilization(), resource, tol, namespace, selector,
                    container);
        } catch (MetricsException e) {
            throw new MetricsException("failed to get " + resource + " utilization: " + e.getMessage());
        }
        String name = containerSource ? resource + " container resource utilization (percentage of request)"
                : resource + " resource utilization (percentage of request)";
        MetricValueStatus current = new MetricValueStatus();
        current.setAverageUtilization(r.utilization());
        current.setAverageValue(milliQuantity(r.rawUtilization(), binary));
        return new ResourceResult(new Proposal(r.replicas(), name, r.timestamp()), current);
    }

    /** computeStatusForResourceMetric. */
    private Proposal resourceMetric(HorizontalPodAutoscaler hpa, MetricSpec spec, int currentReplicas,
            PodSelector selector, MetricStatus status) throws Failure {
        String resource = spec.getResource().getName();
        ResourceResult r;
        try {
            r = resourceGeneric(hpa, currentReplicas, spec.getResource().getTarget(), resource, "", selector, false);
        } catch (MetricsException e) {
            throw unable(hpa, "FailedGetResourceMetric", e.getMessage(),
                    "failed to get " + resource + " resource metric value: " + e.getMessage(), false);
        }
        ResourceMetricStatus resourceStatus = new ResourceMetricStatus();
        resourceStatus.setName(resource);
        resourceStatus.setCurrent(r.current());
        fill(status, "Resource").setResource(resourceStatus);
        return r.proposal();
    }

    /** computeStatusForContainerResourceMetric. */
    private Proposal containerResourceMetric(HorizontalPodAutoscaler hpa, MetricSpec spec, int currentReplicas,
            PodSelector selector, MetricStatus status) throws Failure {
        var source = spec.getContainerResource();
        ResourceResult r;
        try {
            r = resourceGeneric(hpa, currentReplicas, source.getTarget(), source.getName(), source.getContainer(), selector,
                    true);
        } catch (MetricsException e) {
            throw unable(hpa, "FailedGetContainerResourceMetric", e.getMessage(),
                    "failed to get " + source.getContainer() + " container metric value: " + e.getMessage(), false);
        }
        ContainerResourceMetricStatus containerStatus = new ContainerResourceMetricStatus();
        containerStatus.setName(source.getName());
        containerStatus.setContainer(source.getContainer());
        containerStatus.setCurrent(r.current());
        fill(status, "ContainerResource").setContainerResource(containerStatus);
        return r.proposal();
    }

    /** computeStatusForExternalMetric. */
    private Proposal externalMetric(HorizontalPodAutoscaler hpa, MetricSpec spec, int specReplicas, int statusReplicas,
            PodSelector selector, MetricStatus status) throws Failure {
        var external = spec.getExternal();
        String name = external.getMetric().getName();
        String selectorText = GoFormat.labelSelector(external.getMetric().getSelector());
        String metricSelector;
        try {
            metricSelector = metricSelector(external.getMetric().getSelector());
        } catch (IllegalArgumentException e) {
            throw unable(hpa, "FailedGetExternalMetric", e.getMessage(),
                    "failed to get " + name + " external metric value: " + e.getMessage(), false);
        }
        String namespace = hpa.getMetadata().getNamespace();
        ReplicaCalculator.Tolerances tol = tolerances.apply(hpa);
        ExternalMetricStatus externalStatus = new ExternalMetricStatus();
        externalStatus.setMetric(identifier(name, external.getMetric().getSelector()));
        MetricValueStatus current = new MetricValueStatus();
        externalStatus.setCurrent(current);
        String described = "external metric " + name + "(" + selectorText + ")";
        if (external.getTarget().getAverageValue() != null) {
            ReplicaCalculator.UsageReplicas r;
            try {
                r = calc.getExternalPerPodMetricReplicas(statusReplicas, milli(external.getTarget().getAverageValue()), name,
                        tol, namespace, metricSelector, selectorText);
            } catch (MetricsException e) {
                throw unable(hpa, "FailedGetExternalMetric", e.getMessage(), "failed to get " + name
                        + " external metric value: failed to get " + name + " external metric: " + e.getMessage(), false);
            }
            current.setAverageValue(milliQuantity(r.usage(), false));
            fill(status, "External").setExternal(externalStatus);
            return new Proposal(r.replicas(), described, r.timestamp());
        }
        if (external.getTarget().getValue() != null) {
            ReplicaCalculator.UsageReplicas r;
            try {
                r = calc.getExternalMetricReplicas(specReplicas, milli(external.getTarget().getValue()), name, tol, namespace,
                        metricSelector, selectorText, selector);
            } catch (MetricsException e) {
                throw unable(hpa, "FailedGetExternalMetric", e.getMessage(), "failed to get " + name
                        + " external metric value: failed to get external metric " + name + ": " + e.getMessage(), false);
            }
            current.setValue(milliQuantity(r.usage(), false));
            fill(status, "External").setExternal(externalStatus);
            return new Proposal(r.replicas(), described, r.timestamp());
        }
        String err = "invalid external metric source: neither a value target nor an average value target was set";
        throw unable(hpa, "FailedGetExternalMetric", err, "failed to get " + name + " external metric value: " + err, false);
    }

    private static MetricStatus fill(MetricStatus status, String type) {
        status.setType(type);
        return status;
    }
}
