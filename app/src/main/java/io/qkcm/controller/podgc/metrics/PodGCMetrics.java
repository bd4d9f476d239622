package io.qkcm.controller.podgc.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;

/**
 * Upstream's pod_gc_collector_* metrics (pkg/controller/podgc/metrics): force deletions and their
 * errors, labelled with the pod's namespace and the reason of the deletion.
 */
public final class PodGCMetrics {

    private static final String SUBSYSTEM = "pod.gc.collector.";

    /** A terminated pod above --terminated-pod-gc-threshold. */
    public static final String REASON_TERMINATED = "terminated";
    /** A terminating pod on a not-ready node tainted node.kubernetes.io/out-of-service. */
    public static final String REASON_TERMINATING_OUT_OF_SERVICE = "out-of-service";
    /** A pod bound to a node that no longer exists. */
    public static final String REASON_ORPHANED = "orphaned";
    /** A terminating pod never scheduled. */
    public static final String REASON_TERMINATING_UNSCHEDULED = "unscheduled";

    private final MeterRegistry registry;

    public PodGCMetrics(MeterRegistry registry) {
        this.registry = registry;
    }

    /** pod_gc_collector_force_delete_pods_total{namespace, reason}. */
    public void deleting(String namespace, String reason) {
        Counter.builder(SUBSYSTEM + "force.delete.pods")
                .description("Number of pods that are being forcefully deleted since the Pod GC Controller started.")
                .tag("namespace", namespace).tag("reason", reason).register(registry).increment();
    }

    /** pod_gc_collector_force_delete_pod_errors_total{namespace, reason}. */
    public void deletingError(String namespace, String reason) {
        Counter.builder(SUBSYSTEM + "force.delete.pod.errors")
                .description("Number of errors encountered when forcefully deleting the pods since the Pod GC Controller started.")
                .tag("namespace", namespace).tag("reason", reason).register(registry).increment();
    }

    /** The count so far (tests). */
    public double deletingCount(String namespace, String reason) {
        Counter c = registry.find(SUBSYSTEM + "force.delete.pods").tag("namespace", namespace).tag("reason", reason).counter();
        return c == null ? 0 : c.count();
    }

    /** The error count so far (tests). */
    public double deletingErrorCount(String namespace, String reason) {
        Counter c = registry.find(SUBSYSTEM + "force.delete.pod.errors").tag("namespace", namespace).tag("reason", reason)
                .counter();
        return c == null ? 0 : c.count();
    }
}
