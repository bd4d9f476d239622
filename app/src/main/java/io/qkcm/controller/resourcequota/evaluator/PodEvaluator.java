package io.qkcm.controller.resourcequota.evaluator;

import java.time.Clock;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Pattern;

import io.fabric8.kubernetes.api.model.Affinity;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodAffinityTerm;
import io.fabric8.kubernetes.api.model.ScopedResourceSelectorRequirement;
import io.fabric8.kubernetes.api.model.WeightedPodAffinityTerm;
import io.qkcm.controller.resourcequota.quota.Evaluator;
import io.qkcm.controller.resourcequota.quota.GroupResource;
import io.qkcm.controller.resourcequota.quota.ObjectCountEvaluator;
import io.qkcm.controller.util.GoQuantity;
import io.qkcm.controller.resourcequota.quota.ResourceLists;
import io.qkcm.controller.resourcequota.quota.ScopeSelectors;
import io.qkcm.controller.resourcequota.quota.UsageStats;
import io.qkcm.controller.resourcequota.quota.UsageStatsOptions;

/**
 * Upstream's podEvaluator (pkg/quota/v1/evaluator/core/pods.go): {@code pods}, {@code count/pods},
 * cpu, memory and ephemeral-storage requests and limits, hugepages and {@code requests.<extended>};
 * the scopes Terminating, NotTerminating, BestEffort, NotBestEffort, PriorityClass and
 * CrossNamespacePodAffinity. A pod in a terminal phase, or past its deletion grace period, is charged
 * its object count only.
 */
public final class PodEvaluator implements Evaluator {

    public static final GroupResource PODS = new GroupResource("", "pods");
    static final String POD_OBJECT_COUNT_NAME = ObjectCountEvaluator.objectCountQuotaResourceNameFor(PODS);

    static final List<String> POD_RESOURCES = List.of(POD_OBJECT_COUNT_NAME, "cpu", "memory", "ephemeral-storage",
            "requests.cpu", "requests.memory", "requests.ephemeral-storage", "limits.cpu", "limits.memory",
            "limits.ephemeral-storage", "pods");
    static final List<String> POD_RESOURCE_PREFIXES = List.of("hugepages-", "requests.hugepages-");
    static final List<String> REQUESTED_RESOURCE_PREFIXES = List.of("hugepages-");

    private static final Pattern QUALIFIED_NAME_PART = Pattern.compile("^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$");
    private static final Pattern DNS1123_SUBDOMAIN = Pattern
            .compile("^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$");

    private final UsageStats.ListFunc listFunc;
    private final Clock clock;
    private final QuotaFeatures features;

    public PodEvaluator(UsageStats.ListFunc listFunc, Clock clock, QuotaFeatures features) {
        this.listFunc = listFunc;
        this.clock = clock;
        this.features = features;
    }

    @Override
    public GroupResource groupResource() {
        return PODS;
    }

    @Override
    public List<String> matchingResources(List<String> input) {
        List<String> result = new ArrayList<>(ResourceLists.intersection(input, POD_RESOURCES));
        for (String resource : input) {
            if (ResourceLists.containsPrefix(POD_RESOURCE_PREFIXES, resource)) {
                result.add(resource);
            }
            if (isExtendedResourceNameForQuota(resource)) {
                result.add(resource);
            }
        }
        return result;
    }

    @Override
    public Map<String, GoQuantity> usageStats(UsageStatsOptions options) throws Exception {
        return UsageStats.calculate(options, listFunc, PodEvaluator::podMatchesScope, o -> usage((Pod) o));
    }

    /** PodUsageFunc. */
    public Map<String, GoQuantity> usage(Pod pod) {
        Map<String, GoQuantity> result = new TreeMap<>();
        // the object count is charged whatever the pod's state: count/pods tracks every stored pod
        result.put(POD_OBJECT_COUNT_NAME, GoQuantity.of(1));
        if (!quotaV1Pod(pod, clock.instant())) {
            return result;
        }
        Map<String, GoQuantity> requests = PodResources.podRequests(pod, features.inPlacePodVerticalScaling(),
                !features.podLevelResources());
        Map<String, GoQuantity> limits = PodResources.podLimits(pod, features.inPlacePodVerticalScaling(),
                !features.podLevelResources());
        return ResourceLists.add(result, podComputeUsageHelper(requests, limits));
    }

    /** podComputeUsageHelper. */
    static Map<String, GoQuantity> podComputeUsageHelper(Map<String, GoQuantity> requests, Map<String, GoQuantity> limits) {
        Map<String, GoQuantity> result = new TreeMap<>();
        result.put("pods", GoQuantity.of(1));
        for (String r : List.of("cpu", "memory", "ephemeral-storage")) {
            GoQuantity request = requests.get(r);
            if (request != null) {
                result.put(r, request);
                result.put("requests." + r, request);
            }
            GoQuantity limit = limits.get(r);
            if (limit != null) {
                result.put("limits." + r, limit);
            }
        }
        requests.forEach((resource, request) -> {
            if (ResourceLists.containsPrefix(REQUESTED_RESOURCE_PREFIXES, resource)) {
                result.put(resource, request);
                result.put("requests." + resource, request);
            }
            if (isExtendedResourceName(resource)) {
                // extended resources are quota'd as requests.<name> only: they cannot be overcommitted
                result.put("requests." + resource, request);
            }
        });
        return result;
    }

    /** helper.IsNativeResource: unprefixed, or in the kubernetes.io/ namespace. */
    static boolean isNativeResource(String name) {
        return !name.contains("/") || name.contains("kubernetes.io/");
    }

    static boolean isExtendedResourceNameForQuota(String name) {
        return !isNativeResource(name) && name.startsWith("requests.");
    }

    /** helper.IsExtendedResourceName. */
    static boolean isExtendedResourceName(String name) {
        if (isNativeResource(name) || name.startsWith("requests.")) {
            return false;
        }
        return isQualifiedName("requests." + name);
    }

    static boolean isQualifiedName(String value) {
        String[] parts = value.split("/", -1);
        String name;
        if (parts.length == 1) {
            name = parts[0];
        } else if (parts.length == 2) {
            String prefix = parts[0];
            if (prefix.isEmpty() || prefix.length() > 253 || !DNS1123_SUBDOMAIN.matcher(prefix).matches()) {
                return false;
            }
            name = parts[1];
        } else {
            return false;
        }
        return !name.isEmpty() && name.length() <= 63 && QUALIFIED_NAME_PART.matcher(name).matches();
    }

    /** podMatchesScopeFunc. */
    static boolean podMatchesScope(ScopedResourceSelectorRequirement selector, Object object) {
        Pod pod = (Pod) object;
        String scope = selector.getScopeName() == null ? "" : selector.getScopeName();
        switch (scope) {
            case "Terminating":
                return isTerminating(pod);
            case "NotTerminating":
                return !isTerminating(pod);
            case "BestEffort":
                return isBestEffort(pod);
            case "NotBestEffort":
                return !isBestEffort(pod);
            case "PriorityClass":
                String priorityClass = pod.getSpec().getPriorityClassName();
                if ("Exists".equals(selector.getOperator())) {
                    return priorityClass != null && !priorityClass.isEmpty();
                }
                Map<String, String> labels = priorityClass == null || priorityClass.isEmpty() ? Map.of()
                        : Map.of("PriorityClass", priorityClass);
                return ScopeSelectors.matches(selector, labels);
            case "CrossNamespacePodAffinity":
                return usesCrossNamespacePodAffinity(pod);
            default:
                return false;
        }
    }

    /** PodLevelResources is GA and locked on in v1.34: pod-level requests and limits decide the QoS. */
    static boolean isBestEffort(Pod pod) {
        return "BestEffort".equals(PodQOS.getPodQOS(pod, true));
    }

    /** IsTerminating: an activeDeadlineSeconds of zero or more. */
    public static boolean isTerminating(Pod pod) {
        Long deadline = pod.getSpec() == null ? null : pod.getSpec().getActiveDeadlineSeconds();
        return deadline != null && deadline >= 0;
    }

    /**
     * QuotaV1Pod: a pod counts unless it is in a terminal phase, or it is being deleted and its grace
     * period is over (a pod stuck terminating on a lost node must not keep its quota).
     */
    public static boolean quotaV1Pod(Pod pod, Instant now) {
        String phase = pod.getStatus() == null ? null : pod.getStatus().getPhase();
        if ("Failed".equals(phase) || "Succeeded".equals(phase)) {
            return false;
        }
        var meta = pod.getMetadata();
        if (meta.getDeletionTimestamp() != null && meta.getDeletionGracePeriodSeconds() != null) {
            try {
                Instant deletion = Instant.parse(meta.getDeletionTimestamp());
                if (now.isAfter(deletion.plusSeconds(meta.getDeletionGracePeriodSeconds()))) {
                    return false;
                }
            } catch (DateTimeParseException e) {
                return true;
            }
        }
        return true;
    }

    private static boolean crossNamespaceTerm(PodAffinityTerm term) {
        return (term.getNamespaces() != null && !term.getNamespaces().isEmpty()) || term.getNamespaceSelector() != null;
    }

    private static boolean crossNamespaceTerms(List<PodAffinityTerm> terms) {
        return terms != null && terms.stream().anyMatch(PodEvaluator::crossNamespaceTerm);
    }

    private static boolean crossNamespaceWeightedTerms(List<WeightedPodAffinityTerm> terms) {
        return terms != null && terms.stream()
                .anyMatch(t -> t.getPodAffinityTerm() != null && crossNamespaceTerm(t.getPodAffinityTerm()));
    }

    static boolean usesCrossNamespacePodAffinity(Pod pod) {
        Affinity affinity = pod.getSpec() == null ? null : pod.getSpec().getAffinity();
        if (affinity == null) {
            return false;
        }
        var a = affinity.getPodAffinity();
        if (a != null && (crossNamespaceTerms(a.getRequiredDuringSchedulingIgnoredDuringExecution())
                || crossNamespaceWeightedTerms(a.getPreferredDuringSchedulingIgnoredDuringExecution()))) {
            return true;
        }
        var anti = affinity.getPodAntiAffinity();
        return anti != null && (crossNamespaceTerms(anti.getRequiredDuringSchedulingIgnoredDuringExecution())
                || crossNamespaceWeightedTerms(anti.getPreferredDuringSchedulingIgnoredDuringExecution()));
    }
}
