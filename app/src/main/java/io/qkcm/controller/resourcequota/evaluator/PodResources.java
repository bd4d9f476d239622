package io.qkcm.controller.resourcequota.evaluator;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerStatus;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.qkcm.controller.util.GoQuantity;
import io.qkcm.controller.resourcequota.quota.ResourceLists;

/**
 * k8s.io/component-helpers/resource PodRequests and PodLimits as the pod evaluator calls them:
 * containers summed, init containers by the sidecar formula (restartable ones add up, each other one
 * counts with the restartable ones before it, the maximum wins), the status resources of a resized
 * container where InPlacePodVerticalScaling is on, pod-level cpu, memory and hugepages where set and
 * PodLevelResources is on, and the pod overhead.
 */
final class PodResources {

    private PodResources() {
    }

    static boolean isSupportedPodLevelResource(String name) {
        return name.equals("cpu") || name.equals("memory") || name.startsWith("hugepages-");
    }

    private static boolean anySupported(Map<String, ?> list) {
        if (list == null) {
            return false;
        }
        for (String name : list.keySet()) {
            if (isSupportedPodLevelResource(name)) {
                return true;
            }
        }
        return false;
    }

    static boolean isPodLevelResourcesSet(Pod pod) {
        var r = pod.getSpec().getResources();
        return r != null && (anySupported(r.getRequests()) || anySupported(r.getLimits()));
    }

    static boolean isPodLevelRequestsSet(Pod pod) {
        var r = pod.getSpec().getResources();
        return r != null && anySupported(r.getRequests());
    }

    static Map<String, GoQuantity> podRequests(Pod pod, boolean useStatusResources, boolean skipPodLevelResources) {
        Map<String, GoQuantity> reqs = aggregate(pod, useStatusResources, true);
        if (!skipPodLevelResources && isPodLevelRequestsSet(pod)) {
            ResourceLists.of(pod.getSpec().getResources().getRequests()).forEach((name, q) -> {
                if (isSupportedPodLevelResource(name)) {
                    reqs.put(name, q);
                }
            });
        }
        if (pod.getSpec().getOverhead() != null) {
            addInto(reqs, ResourceLists.of(pod.getSpec().getOverhead()));
        }
        return reqs;
    }

    static Map<String, GoQuantity> podLimits(Pod pod, boolean useStatusResources, boolean skipPodLevelResources) {
        Map<String, GoQuantity> limits = aggregate(pod, useStatusResources, false);
        if (!skipPodLevelResources && isPodLevelResourcesSet(pod)) {
            ResourceLists.of(pod.getSpec().getResources().getLimits()).forEach((name, q) -> {
                if (isSupportedPodLevelResource(name)) {
                    limits.put(name, q);
                }
            });
        }
        if (pod.getSpec().getOverhead() != null) {
            ResourceLists.of(pod.getSpec().getOverhead()).forEach((name, q) -> {
                GoQuantity value = limits.get(name);
                if (value != null && !value.isZero()) {
                    limits.put(name, value.add(q));
                }
            });
        }
        return limits;
    }

    /** AggregateContainerRequests (requests true) or AggregateContainerLimits. */
    private static Map<String, GoQuantity> aggregate(Pod pod, boolean useStatusResources, boolean requests) {
        Map<String, GoQuantity> result = new TreeMap<>();
        Map<String, ContainerStatus> statuses = new HashMap<>();
        if (useStatusResources && pod.getStatus() != null) {
            for (List<ContainerStatus> l : java.util.Arrays.asList(pod.getStatus().getContainerStatuses(),
                    pod.getStatus().getInitContainerStatuses())) {
                if (l != null) {
                    l.forEach(cs -> statuses.put(cs.getName(), cs));
                }
            }
        }
        for (Container c : list(pod.getSpec().getContainers())) {
            Map<String, GoQuantity> own = own(c, requests);
            if (useStatusResources) {
                ContainerStatus cs = statuses.get(c.getName());
                if (cs != null && cs.getResources() != null) {
                    own = fromStatus(pod, own, cs, requests);
                }
            }
            addInto(result, own);
        }
        Map<String, GoQuantity> restartable = new TreeMap<>();
        Map<String, GoQuantity> init = new TreeMap<>();
        for (Container c : list(pod.getSpec().getInitContainers())) {
            boolean sidecar = "Always".equals(c.getRestartPolicy());
            Map<String, GoQuantity> own = own(c, requests);
            if (useStatusResources && sidecar) {
                ContainerStatus cs = statuses.get(c.getName());
                if (cs != null && cs.getResources() != null) {
                    own = fromStatus(pod, own, cs, requests);
                }
            }
            Map<String, GoQuantity> use;
            if (sidecar) {
                addInto(result, own);
                addInto(restartable, own);
                use = restartable;
            } else {
                use = new TreeMap<>();
                addInto(use, own);
                addInto(use, restartable);
            }
            maxInto(init, use);
        }
        maxInto(result, init);
        return result;
    }

    private static Map<String, GoQuantity> own(Container c, boolean requests) {
        if (c.getResources() == null) {
            return Map.of();
        }
        return ResourceLists.of(requests ? c.getResources().getRequests() : c.getResources().getLimits());
    }

    /** determineContainerReqs / determineContainerLimits. */
    private static Map<String, GoQuantity> fromStatus(Pod pod, Map<String, GoQuantity> spec, ContainerStatus cs,
            boolean requests) {
        Map<String, GoQuantity> status = ResourceLists.of(requests ? cs.getResources().getRequests()
                : cs.getResources().getLimits());
        Map<String, GoQuantity> result = new TreeMap<>();
        if (requests) {
            Map<String, GoQuantity> allocated = ResourceLists.of(cs.getAllocatedResources());
            if (isPodResizeInfeasible(pod)) {
                result.putAll(status);
                maxInto(result, allocated);
            } else {
                result.putAll(spec);
                maxInto(result, status);
                maxInto(result, allocated);
            }
        } else if (isPodResizeInfeasible(pod)) {
            result.putAll(status);
        } else {
            result.putAll(spec);
            maxInto(result, status);
        }
        return result;
    }

    static boolean isPodResizeInfeasible(Pod pod) {
        if (pod.getStatus() == null || pod.getStatus().getConditions() == null) {
            return false;
        }
        for (PodCondition c : pod.getStatus().getConditions()) {
            if ("PodResizePending".equals(c.getType())) {
                return "Infeasible".equals(c.getReason());
            }
        }
        return false;
    }

    private static void addInto(Map<String, GoQuantity> list, Map<String, GoQuantity> add) {
        add.forEach((name, q) -> list.merge(name, q, GoQuantity::add));
    }

    private static void maxInto(Map<String, GoQuantity> list, Map<String, GoQuantity> other) {
        other.forEach((name, q) -> {
            GoQuantity v = list.get(name);
            if (v == null || q.compareTo(v) > 0) {
                list.put(name, q);
            }
        });
    }

    private static <T> List<T> list(List<T> l) {
        return l == null ? List.of() : l;
    }
}
