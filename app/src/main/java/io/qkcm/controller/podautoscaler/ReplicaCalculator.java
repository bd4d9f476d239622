package io.qkcm.controller.podautoscaler;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.autoscaling.v2.CrossVersionObjectReference;
import io.qkcm.controller.PodUtil;
import io.qkcm.controller.podautoscaler.metrics.MetricsClient;
import io.qkcm.controller.podautoscaler.metrics.MetricsException;
import io.qkcm.controller.podautoscaler.metrics.PodMetric;
import io.qkcm.controller.podautoscaler.metrics.RestMetricsClient;
import io.qkcm.controller.podautoscaler.metrics.Utilization;

/**
 * Upstream's ReplicaCalculator (replica_calculator.go): the replica count a metric proposes, from the
 * metrics client and the pods of the target's selector. Ready pods count as they are; pods without a
 * metric ("missing") count at 100% (or the target) when scaling down and 0 when scaling up; unready pods
 * (pending, or for CPU within the initialization period or not yet ready) count as 0 when scaling up and
 * are left out otherwise; deleted and failed pods are ignored. A result that would flip the direction, or
 * stays within the tolerance, keeps the current count.
 */
public final class ReplicaCalculator {

    /** The pods of a namespace matching a selector (the shared pod cache). */
    @FunctionalInterface
    public interface PodLister {
        List<Pod> list(String namespace, PodSelector selector);
    }

    /** Upstream's Tolerances: the ratio band around 1 within which nothing scales. */
    public record Tolerances(double scaleDown, double scaleUp) {
        boolean isWithin(double usageRatio) {
            return (1.0 - scaleDown) <= usageRatio && usageRatio <= (1.0 + scaleUp);
        }

        @Override
        public String toString() {
            return String.format("[down:%.1f%%, up:%.1f%%]", scaleDown * 100., scaleUp * 100.);
        }
    }

    /** GetResourceReplicas' results. */
    public record ResourceReplicas(int replicas, int utilization, long rawUtilization, Instant timestamp) {
    }

    /** The results of the value-based calculations. */
    public record UsageReplicas(int replicas, long usage, Instant timestamp) {
    }

    /** Go's zero time, what an unset metav1.Time compares as. */
    static final Instant GO_ZERO_TIME = Instant.parse("0001-01-01T00:00:00Z");

    private final MetricsClient metricsClient;
    private final PodLister pods;
    private final Duration cpuInitializationPeriod;
    private final Duration delayOfInitialReadinessStatus;
    private final boolean podLevelResources;
    private final Clock clock;

    public ReplicaCalculator(MetricsClient metricsClient, PodLister pods, Duration cpuInitializationPeriod,
            Duration delayOfInitialReadinessStatus, boolean podLevelResources, Clock clock) {
        this.metricsClient = metricsClient;
        this.pods = pods;
        this.cpuInitializationPeriod = cpuInitializationPeriod;
        this.delayOfInitialReadinessStatus = delayOfInitialReadinessStatus;
        this.podLevelResources = podLevelResources;
        this.clock = clock;
    }

    /** GetResourceReplicas: a utilization target (percent of the requests). */
    public ResourceReplicas getResourceReplicas(int currentReplicas, int targetUtilization, String resource,
            Tolerances tolerances, String namespace, PodSelector selector, String container) throws MetricsException {
        MetricsClient.PodMetrics fetched;
        try {
            fetched = metricsClient.getResourceMetric(resource, namespace, selector.text(), container);
        } catch (MetricsException e) {
            throw new MetricsException("unable to get metrics for resource " + resource + ": " + e.getMessage());
        }
        Map<String, PodMetric> metrics = new HashMap<>(fetched.metrics());
        Instant timestamp = fetched.timestamp();
        List<Pod> podList = pods.list(namespace, selector);
        if (podList.isEmpty()) {
            throw new MetricsException("no pods returned by selector while calculating replica count");
        }
        Groups groups = groupPods(podList, metrics, resource);
        metrics.keySet().removeAll(groups.ignored);
        metrics.keySet().removeAll(groups.unready);
        if (metrics.isEmpty()) {
            throw new MetricsException("did not receive metrics for targeted pods (pods might be unready)");
        }
        Map<String, Long> requests = calculateRequests(podList, container, resource);
        Utilization.ResourceRatio ratio = Utilization.resourceUtilizationRatio(metrics, requests, targetUtilization);
        double usageRatio = ratio.ratio();
        boolean scaleUpWithUnready = !groups.unready.isEmpty() && usageRatio > 1.0;
        if (!scaleUpWithUnready && groups.missing.isEmpty()) {
            if (tolerances.isWithin(usageRatio)) {
                return new ResourceReplicas(currentReplicas, ratio.utilization(), ratio.rawAverageValue(), timestamp);
            }
            return new ResourceReplicas((int) Math.ceil(usageRatio * groups.ready), ratio.utilization(),
                    ratio.rawAverageValue(), timestamp);
        }
        if (!groups.missing.isEmpty()) {
            if (usageRatio < 1.0) {
                // on a scale down, a pod without a metric is taken to use its whole request (or the target)
                long fallback = Math.max(100, targetUtilization);
                for (String pod : groups.missing) {
                    metrics.put(pod, PodMetric.of(requests.getOrDefault(pod, 0L) * fallback / 100));
                }
            } else if (usageRatio > 1.0) {
                for (String pod : groups.missing) {
                    metrics.put(pod, PodMetric.of(0));
                }
            }
        }
        if (scaleUpWithUnready) {
            for (String pod : groups.unready) {
                metrics.put(pod, PodMetric.of(0));
            }
        }
        double newUsageRatio = Utilization.resourceUtilizationRatio(metrics, requests, targetUtilization).ratio();
        if (tolerances.isWithin(newUsageRatio) || (usageRatio < 1.0 && newUsageRatio > 1.0)
                || (usageRatio > 1.0 && newUsageRatio < 1.0)) {
            return new ResourceReplicas(currentReplicas, ratio.utilization(), ratio.rawAverageValue(), timestamp);
        }
        int newReplicas = (int) Math.ceil(newUsageRatio * metrics.size());
        if ((newUsageRatio < 1.0 && newReplicas > currentReplicas) || (newUsageRatio > 1.0 && newReplicas < currentReplicas)) {
            return new ResourceReplicas(currentReplicas, ratio.utilization(), ratio.rawAverageValue(), timestamp);
        }
        return new ResourceReplicas(newReplicas, ratio.utilization(), ratio.rawAverageValue(), timestamp);
    }

    /** GetRawResourceReplicas: an average value target of a resource. */
    public UsageReplicas getRawResourceReplicas(int currentReplicas, long targetUsage, String resource,
            Tolerances tolerances, String namespace, PodSelector selector, String container) throws MetricsException {
        MetricsClient.PodMetrics fetched;
        try {
            fetched = metricsClient.getResourceMetric(resource, namespace, selector.text(), container);
        } catch (MetricsException e) {
            throw new MetricsException("unable to get metrics for resource " + resource + ": " + e.getMessage());
        }
        long[] usage = new long[1];
        int replicas = calcPlainMetricReplicas(new HashMap<>(fetched.metrics()), currentReplicas, targetUsage,
                tolerances, namespace, selector, resource, usage);
        return new UsageReplicas(replicas, usage[0], fetched.timestamp());
    }

    /** GetMetricReplicas: a pods metric of the custom metrics API, average value target. */
    public UsageReplicas getMetricReplicas(int currentReplicas, long targetUsage, String metricName,
            Tolerances tolerances, String namespace, PodSelector selector, String metricSelector) throws MetricsException {
        MetricsClient.PodMetrics fetched;
        try {
            fetched = metricsClient.getRawMetric(metricName, namespace, selector.text(), metricSelector);
        } catch (MetricsException e) {
            throw new MetricsException("unable to get metric " + metricName + ": " + e.getMessage());
        }
        long[] usage = new long[1];
        int replicas = calcPlainMetricReplicas(new HashMap<>(fetched.metrics()), currentReplicas, targetUsage,
                tolerances, namespace, selector, "", usage);
        return new UsageReplicas(replicas, usage[0], fetched.timestamp());
    }

    private int calcPlainMetricReplicas(Map<String, PodMetric> metrics, int currentReplicas, long targetUsage,
            Tolerances tolerances, String namespace, PodSelector selector, String resource, long[] usageOut)
            throws MetricsException {
        List<Pod> podList = pods.list(namespace, selector);
        if (podList.isEmpty()) {
            throw new MetricsException("no pods returned by selector while calculating replica count");
        }
        Groups groups = groupPods(podList, metrics, resource);
        metrics.keySet().removeAll(groups.ignored);
        metrics.keySet().removeAll(groups.unready);
        if (metrics.isEmpty()) {
            throw new MetricsException("did not receive metrics for targeted pods (pods might be unready)");
        }
        Utilization.UsageRatio ratio = Utilization.metricUsageRatio(metrics, targetUsage);
        double usageRatio = ratio.ratio();
        usageOut[0] = ratio.usage();
        boolean scaleUpWithUnready = !groups.unready.isEmpty() && usageRatio > 1.0;
        if (!scaleUpWithUnready && groups.missing.isEmpty()) {
            if (tolerances.isWithin(usageRatio)) {
                return currentReplicas;
            }
            return (int) Math.ceil(usageRatio * groups.ready);
        }
        if (!groups.missing.isEmpty()) {
            if (usageRatio < 1.0) {
                for (String pod : groups.missing) {
                    metrics.put(pod, PodMetric.of(targetUsage));
                }
            } else if (usageRatio > 1.0) {
                for (String pod : groups.missing) {
                    metrics.put(pod, PodMetric.of(0));
                }
            }
        }
        if (scaleUpWithUnready) {
            for (String pod : groups.unready) {
                metrics.put(pod, PodMetric.of(0));
            }
        }
        double newUsageRatio = Utilization.metricUsageRatio(metrics, targetUsage).ratio();
        if (tolerances.isWithin(newUsageRatio) || (usageRatio < 1.0 && newUsageRatio > 1.0)
                || (usageRatio > 1.0 && newUsageRatio < 1.0)) {
            return currentReplicas;
        }
        int newReplicas = (int) Math.ceil(newUsageRatio * metrics.size());
        if ((newUsageRatio < 1.0 && newReplicas > currentReplicas) || (newUsageRatio > 1.0 && newReplicas < currentReplicas)) {
            return currentReplicas;
        }
        return newReplicas;
    }

    /** GetObjectMetricReplicas: an object metric with a value target. */
    public UsageReplicas getObjectMetricReplicas(int currentReplicas, long targetUsage, String metricName,
            Tolerances tolerances, String namespace, CrossVersionObjectReference objectRef, PodSelector selector,
            String metricSelector) throws MetricsException {
        long usage;
        try {
            usage = metricsClient.getObjectMetric(metricName, namespace, objectRef, metricSelector).value();
        } catch (MetricsException e) {
            // upstream's format string pairs its arguments this way
            throw new MetricsException("unable to get metric " + metricName + ": " + objectRef.getKind() + " on "
                    + namespace + " " + objectRef.getName() + "/" + e.getMessage());
        }
        double usageRatio = (double) usage / (double) targetUsage;
        // upstream returns the zero time here, not the metric's
        return new UsageReplicas(usageRatioReplicaCount(currentReplicas, usageRatio, tolerances, namespace, selector),
                usage, Instant.EPOCH);
    }

    /** getUsageRatioReplicaCount: the ratio times the ready pods, or from zero the ratio itself. */
    private int usageRatioReplicaCount(int currentReplicas, double usageRatio, Tolerances tolerances, String namespace,
            PodSelector selector) throws MetricsException {
        if (currentReplicas != 0) {
            if (tolerances.isWithin(usageRatio)) {
                return currentReplicas;
            }
            long ready;
            try {
                ready = readyPodsCount(namespace, selector);
            } catch (MetricsException e) {
                throw new MetricsException("unable to calculate ready pods: " + e.getMessage());
            }
            return (int) Math.ceil(usageRatio * ready);
        }
        return (int) Math.ceil(usageRatio);
    }

    /** GetObjectPerPodMetricReplicas: an object metric with an average value target. */
    public UsageReplicas getObjectPerPodMetricReplicas(int statusReplicas, long targetAverageUsage, String metricName,
            Tolerances tolerances, String namespace, CrossVersionObjectReference objectRef, String metricSelector)
            throws MetricsException {
        MetricsClient.ObjectMetric metric;
        try {
            metric = metricsClient.getObjectMetric(metricName, namespace, objectRef, metricSelector);
        } catch (MetricsException e) {
            // upstream's format string pairs its arguments this way
            throw new MetricsException("unable to get metric " + metricName + ": " + objectRef.getKind() + " on "
                    + namespace + " " + objectRef.getName() + "/" + e.getMessage());
        }
        long usage = metric.value();
        int replicaCount = statusReplicas;
        double usageRatio = (double) usage / ((double) targetAverageUsage * replicaCount);
        if (!tolerances.isWithin(usageRatio)) {
            replicaCount = (int) Math.ceil((double) usage / (double) targetAverageUsage);
        }
        long perPod = (long) Math.ceil((double) usage / (double) statusReplicas);
        return new UsageReplicas(replicaCount, perPod, metric.timestamp());
    }

    private long readyPodsCount(String namespace, PodSelector selector) throws MetricsException {
        List<Pod> podList = pods.list(namespace, selector);
        if (podList.isEmpty()) {
            throw new MetricsException("no pods returned by selector while calculating replica count");
        }
        return podList.stream().filter(p -> "Running".equals(PodUtil.phase(p)) && PodUtil.isReady(p)).count();
    }

    /** GetExternalMetricReplicas: the external metric's total against a value target. */
    public UsageReplicas getExternalMetricReplicas(int currentReplicas, long targetUsage, String metricName,
            Tolerances tolerances, String namespace, String metricSelector, String metricSelectorText,
            PodSelector podSelector) throws MetricsException {
        MetricsClient.ExternalMetrics metrics;
        try {
            metrics = metricsClient.getExternalMetric(metricName, namespace, metricSelector);
        } catch (MetricsException e) {
            throw new MetricsException("unable to get external metric " + namespace + "/" + metricName + "/"
                    + metricSelectorText + ": " + e.getMessage());
        }
        long usage = 0;
        for (long v : metrics.values()) {
            usage += v;
        }
        double usageRatio = (double) usage / (double) targetUsage;
        return new UsageReplicas(usageRatioReplicaCount(currentReplicas, usageRatio, tolerances, namespace, podSelector),
                usage, Instant.EPOCH);
    }

    /** GetExternalPerPodMetricReplicas: the external metric's total against an average value target. */
    public UsageReplicas getExternalPerPodMetricReplicas(int statusReplicas, long targetUsagePerPod, String metricName,
            Tolerances tolerances, String namespace, String metricSelector, String metricSelectorText)
            throws MetricsException {
        MetricsClient.ExternalMetrics metrics;
        try {
            metrics = metricsClient.getExternalMetric(metricName, namespace, metricSelector);
        } catch (MetricsException e) {
            throw new MetricsException("unable to get external metric " + namespace + "/" + metricName + "/"
                    + metricSelectorText + ": " + e.getMessage());
        }
        long usage = 0;
        for (long v : metrics.values()) {
            usage += v;
            if (usage < 0) {
                usage = Long.MAX_VALUE;
                break;
            }
        }
        int replicaCount = statusReplicas;
        double usageRatio = (double) usage / ((double) targetUsagePerPod * replicaCount);
        if (!tolerances.isWithin(usageRatio)) {
            double result = Math.ceil((double) usage / (double) targetUsagePerPod);
            replicaCount = result > Integer.MAX_VALUE ? Integer.MAX_VALUE : (int) result;
        }
        if ((double) usage >= (double) Long.MAX_VALUE) {
            usage = Long.MAX_VALUE;
        } else {
            usage = (long) Math.ceil((double) usage / (double) statusReplicas);
        }
        return new UsageReplicas(replicaCount, usage, metrics.timestamp());
    }

    /** groupPods' sets. */
    static final class Groups {
        int ready;
        final Set<String> unready = new HashSet<>();
        final Set<String> missing = new HashSet<>();
        final Set<String> ignored = new HashSet<>();
    }

    /**
     * Upstream's groupPods. For CPU, a pod still in its initialization period is unready when not ready
     * or when its metric was (partly) taken before it became ready; after the period, only a pod that
     * never became ready within the initial readiness delay of its start is unready.
     */
    Groups groupPods(List<Pod> podList, Map<String, PodMetric> metrics, String resource) {
        Groups g = new Groups();
        Instant now = clock.instant();
        for (Pod pod : podList) {
            String name = pod.getMetadata().getName();
            String phase = PodUtil.phase(pod);
            if (pod.getMetadata().getDeletionTimestamp() != null || "Failed".equals(phase)) {
                g.ignored.add(name);
                continue;
            }
            if ("Pending".equals(phase)) {
                g.unready.add(name);
                continue;
            }
            PodMetric metric = metrics.get(name);
            if (metric == null) {
                g.missing.add(name);
                continue;
            }
            if ("cpu".equals(resource)) {
                boolean unready;
                PodCondition condition = PodUtil.readyCondition(pod);
                String startTime = pod.getStatus() == null ? null : pod.getStatus().getStartTime();
                if (condition == null || startTime == null) {
                    unready = true;
                } else {
                    Instant start = PodUtil.parseTime(startTime);
                    Instant transition = condition.getLastTransitionTime() == null ? GO_ZERO_TIME
                            : PodUtil.parseTime(condition.getLastTransitionTime());
                    if (start.plus(cpuInitializationPeriod).isAfter(now)) {
                        unready = "False".equals(condition.getStatus())
                                || metric.timestamp().isBefore(transition.plus(metric.window()));
                    } else {
                        unready = "False".equals(condition.getStatus())
                                && start.plus(delayOfInitialReadinessStatus).isAfter(transition);
                    }
                }
                if (unready) {
                    g.unready.add(name);
                    continue;
                }
            }
            g.ready++;
        }
        return g;
    }

    /**
     * Upstream's calculateRequests: per pod, the pod-level request when PodLevelResources is on, the pod
     * sets one and no container is named; otherwise the named container's (or all containers' and
     * restartable init containers') requests.
     */
    Map<String, Long> calculateRequests(List<Pod> podList, String container, String resource) throws MetricsException {
        Map<String, Long> requests = new HashMap<>();
        for (Pod pod : podList) {
            long request;
            if (podLevelResources && container.isEmpty() && podLevelRequestsSet(pod)) {
                Quantity q = pod.getSpec().getResources().getRequests().get(resource);
                if (q == null) {
                    throw new MetricsException("missing pod-level request for " + resource + " in Pod "
                            + pod.getMetadata().getName());
                }
                request = RestMetricsClient.milliValue(q.toString());
            } else {
                request = containerRequests(pod, container, resource);
            }
            requests.put(pod.getMetadata().getName(), request);
        }
        return requests;
    }

    /** resourcehelpers.IsPodLevelRequestsSet: a pod-level request of cpu or memory. */
    private static boolean podLevelRequestsSet(Pod pod) {
        if (pod.getSpec() == null || pod.getSpec().getResources() == null
                || pod.getSpec().getResources().getRequests() == null) {
            return false;
        }
        Map<String, Quantity> r = pod.getSpec().getResources().getRequests();
        return r.containsKey("cpu") || r.containsKey("memory");
    }

    private static long containerRequests(Pod pod, String container, String resource) throws MetricsException {
        List<Container> containers = new java.util.ArrayList<>(pod.getSpec().getContainers());
        if (pod.getSpec().getInitContainers() != null) {
            for (Container c : pod.getSpec().getInitContainers()) {
                if ("Always".equals(c.getRestartPolicy())) {
                    containers.add(c);
                }
            }
        }
        long request = 0;
        for (Container c : containers) {
            if (container.isEmpty() || container.equals(c.getName())) {
                Quantity q = c.getResources() == null || c.getResources().getRequests() == null ? null
                        : c.getResources().getRequests().get(resource);
                if (q == null) {
                    throw new MetricsException("missing request for " + resource + " in container " + c.getName()
                            + " of Pod " + pod.getMetadata().getName());
                }
                request += RestMetricsClient.milliValue(q.toString());
            }
        }
        return request;
    }
}
