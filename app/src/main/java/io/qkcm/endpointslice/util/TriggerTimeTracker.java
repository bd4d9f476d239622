package io.qkcm.endpointslice.util;

import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.Service;

/**
 * The value of the {@code endpoints.kubernetes.io/last-change-trigger-time} annotation (upstream
 * TriggerTimeTracker): the earliest time among the changes since the previous sync of a service — a
 * pod's Ready transition time newer than last seen, or the service's creation — and the service's
 * creation time on its first sync. {@code null} (Go's zero time) when nothing newer happened.
 */
public final class TriggerTimeTracker {

    private record ServiceState(Instant lastServiceTriggerTime, Map<String, Instant> lastPodTriggerTimes) {
    }

    private final Map<String, ServiceState> serviceStates = new HashMap<>();

    public Instant computeEndpointLastChangeTriggerTime(String namespace, Service service, List<Pod> pods) {
        String key = namespace + "/" + service.getMetadata().getName();
        ServiceState state;
        synchronized (this) {
            state = serviceStates.get(key);
        }
        boolean wasKnown = state != null;
        Map<String, Instant> lastPodTimes = wasKnown && state.lastPodTriggerTimes != null ? state.lastPodTriggerTimes
                : Map.of();
        Instant lastServiceTime = wasKnown ? state.lastServiceTriggerTime : null;

        Instant minChanged = null;
        Map<String, Instant> podTriggerTimes = new HashMap<>();
        for (Pod pod : pods) {
            Instant t = podTriggerTime(pod);
            if (t != null) {
                podTriggerTimes.put(pod.getMetadata().getName(), t);
                if (after(t, lastPodTimes.get(pod.getMetadata().getName()))) {
                    minChanged = min(minChanged, t);
                }
            }
        }
        Instant serviceTime = parse(service.getMetadata().getCreationTimestamp());
        if (serviceTime != null && after(serviceTime, lastServiceTime)) {
            minChanged = min(minChanged, serviceTime);
        }
        synchronized (this) {
            serviceStates.put(key, new ServiceState(serviceTime, podTriggerTimes));
        }
        if (!wasKnown) {
            return serviceTime;
        }
        return minChanged;
    }

    public synchronized void deleteService(String namespace, String name) {
        serviceStates.remove(namespace + "/" + name);
    }

    /** Go's t.After(u) where null is the zero time (before every set time). */
    private static boolean after(Instant t, Instant u) {
        return u == null || t.isAfter(u);
    }

    private static Instant min(Instant current, Instant candidate) {
        return current == null || candidate.isBefore(current) ? candidate : current;
    }

    private static Instant podTriggerTime(Pod pod) {
        if (pod.getStatus() == null || pod.getStatus().getConditions() == null) {
            return null;
        }
        for (PodCondition c : pod.getStatus().getConditions()) {
            if ("Ready".equals(c.getType())) {
                return parse(c.getLastTransitionTime());
            }
        }
        return null;
    }

    private static Instant parse(String timestamp) {
        if (timestamp == null || timestamp.isEmpty()) {
            return null;
        }
        return Instant.parse(timestamp);
    }
}
