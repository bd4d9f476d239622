package io.qkcm.runtime.josdk;

import io.qkcm.runtime.workqueue.WorkqueueMetrics;
import java.time.Duration;
import java.util.List;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.javaoperatorsdk.operator.api.config.ConfigurationService;
import io.qkcm.runtime.informers.SharedInformers;

/**
 * Builds each controller's Operator from one base JOSDK configuration (quarkus-operator-sdk's, in
 * the application) and one {@link WorkqueueMetrics} for the process.
 */
public final class Operators {

    private final ConfigurationService base;
    private final WorkqueueMetrics metrics;
    private final Duration terminationTimeout;

    public Operators(ConfigurationService base, WorkqueueMetrics metrics, Duration terminationTimeout) {
        // JOSDK puts each event's resource into the logging MDC; qkcm's log lines do not show it, and it
        // costs a few map writes per event on the hot path. JOSDK reads the property once, when its MDCUtils
        // loads: at the first event, after the Operators are built (here, not in a static initializer, so that
        // loading this class changes nothing process-wide).
        if (System.getProperty("JAVA_OPERATOR_SDK_USE_MDC") == null) {
            System.setProperty("JAVA_OPERATOR_SDK_USE_MDC", "false");
        }
        this.base = base;
        this.metrics = metrics;
        this.terminationTimeout = terminationTimeout;
    }

    /** The controller {@code name}, running {@code reconcilers} with {@code client}, on the shared informers. */
    public OperatorController operate(String name, KubernetesClient client, SharedInformers informers,
            List<KeyReconciler<?>> reconcilers) {
        return new OperatorController(name, base, client, informers, metrics, terminationTimeout, reconcilers);
    }

    public WorkqueueMetrics metrics() {
        return metrics;
    }
}
