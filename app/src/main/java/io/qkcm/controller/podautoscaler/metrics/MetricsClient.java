package io.qkcm.controller.podautoscaler.metrics;

import java.time.Instant;
import java.util.List;
import java.util.Map;

import io.fabric8.kubernetes.api.model.autoscaling.v2.CrossVersionObjectReference;

/**
 * Upstream's metrics.MetricsClient: the resource metrics API (metrics.k8s.io), the custom metrics API
 * (custom.metrics.k8s.io) and the external metrics API (external.metrics.k8s.io). Selectors are label
 * selector strings (labels.Selector's String form); an empty one selects everything.
 */
public interface MetricsClient {

    /** The metrics of pods by name, and the first item's timestamp. */
    record PodMetrics(Map<String, PodMetric> metrics, Instant timestamp) {
    }

    /** A value in milli-units and its timestamp. */
    record ObjectMetric(long value, Instant timestamp) {
    }

    /** Values in milli-units, and the first item's timestamp. */
    record ExternalMetrics(List<Long> values, Instant timestamp) {
    }

    /** Per pod: the sum over its containers, or only {@code container} when not empty. */
    PodMetrics getResourceMetric(String resource, String namespace, String selector, String container)
            throws MetricsException;

    /** A pods metric of the custom metrics API for the pods of {@code selector}. */
    PodMetrics getRawMetric(String metricName, String namespace, String selector, String metricSelector)
            throws MetricsException;

    /** An object metric of the custom metrics API for the object {@code objectRef}. */
    ObjectMetric getObjectMetric(String metricName, String namespace, CrossVersionObjectReference objectRef,
            String metricSelector) throws MetricsException;

    ExternalMetrics getExternalMetric(String metricName, String namespace, String selector) throws MetricsException;
}
