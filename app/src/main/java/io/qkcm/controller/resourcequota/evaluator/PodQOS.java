package io.qkcm.controller.resourcequota.evaluator;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Pod;
import io.qkcm.controller.util.GoQuantity;
import io.qkcm.controller.resourcequota.quota.ResourceLists;

/**
 * pkg/apis/core/v1/helper/qos GetPodQOS: status.qosClass when set, otherwise computed from the cpu
 * and memory requests and limits (pod-level ones where set and PodLevelResources is on).
 */
final class PodQOS {

    private PodQOS() {
    }

    static String getPodQOS(Pod pod, boolean podLevelResources) {
        if (pod.getStatus() != null && pod.getStatus().getQosClass() != null && !pod.getStatus().getQosClass().isEmpty()) {
            return pod.getStatus().getQosClass();
        }
        return computePodQOS(pod, podLevelResources);
    }

    private static boolean supported(String name) {
        return name.equals("cpu") || name.equals("memory");
    }

    private static void process(Map<String, GoQuantity> list, Map<String, GoQuantity> newList) {
        newList.forEach((name, q) -> {
            if (supported(name) && q.compareTo(GoQuantity.ZERO) > 0) {
                list.merge(name, q, GoQuantity::add);
            }
        });
    }

    static String computePodQOS(Pod pod, boolean podLevelResources) {
        Map<String, GoQuantity> requests = new TreeMap<>();
        Map<String, GoQuantity> limits = new TreeMap<>();
        boolean guaranteed = true;
        var podResources = pod.getSpec().getResources();
        if (podLevelResources && podResources != null) {
            if (podResources.getRequests() != null && !podResources.getRequests().isEmpty()) {
                process(requests, ResourceLists.of(podResources.getRequests()));
            }
            if (podResources.getLimits() != null && !podResources.getLimits().isEmpty()) {
                Map<String, GoQuantity> l = ResourceLists.of(podResources.getLimits());
                process(limits, l);
                Set<String> found = new HashSet<>();
                l.forEach((name, q) -> {
                    if (supported(name) && q.compareTo(GoQuantity.ZERO) > 0) {
                        found.add(name);
                    }
                });
                if (!found.containsAll(List.of("memory", "cpu"))) {
                    guaranteed = false;
                }
            }
        } else {
            List<Container> all = new ArrayList<>();
            if (pod.getSpec().getContainers() != null) {
                all.addAll(pod.getSpec().getContainers());
            }
            if (pod.getSpec().getInitContainers() != null) {
                all.addAll(pod.getSpec().getInitContainers());
            }
            for (Container c : all) {
                Map<String, GoQuantity> req = c.getResources() == null ? Map.of() : ResourceLists.of(c.getResources().getRequests());
                Map<String, GoQuantity> lim = c.getResources() == null ? Map.of() : ResourceLists.of(c.getResources().getLimits());
                process(requests, req);
                Set<String> found = new HashSet<>();
                lim.forEach((name, q) -> {
                    if (supported(name) && q.compareTo(GoQuantity.ZERO) > 0) {
                        found.add(name);
                    }
                });
                process(limits, lim);
                if (!found.containsAll(List.of("memory", "cpu"))) {
                    guaranteed = false;
                }
            }
        }
        if (requests.isEmpty() && limits.isEmpty()) {
            return "BestEffort";
        }
        if (guaranteed) {
            for (Map.Entry<String, GoQuantity> e : requests.entrySet()) {
                GoQuantity lim = limits.get(e.getKey());
                if (lim == null || lim.compareTo(e.getValue()) != 0) {
                    guaranteed = false;
                    break;
                }
            }
        }
        if (guaranteed && requests.size() == limits.size()) {
            return "Guaranteed";
        }
        return "Burstable";
    }
}
