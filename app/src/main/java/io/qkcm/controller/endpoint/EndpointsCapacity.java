package io.qkcm.controller.endpoint;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.fabric8.kubernetes.api.model.EndpointAddress;
import io.fabric8.kubernetes.api.model.EndpointSubset;

/**
 * Upstream's cap on the size of an Endpoints object: at most {@link #MAX_CAPACITY} addresses, the rest
 * dropped (ready ones kept first) and the object annotated {@code endpoints.kubernetes.io/over-capacity:
 * truncated}.
 */
final class EndpointsCapacity {

    static final int MAX_CAPACITY = 1000;
    static final String OVER_CAPACITY_ANNOTATION = "endpoints.kubernetes.io/over-capacity";
    static final String TRUNCATED = "truncated";

    private EndpointsCapacity() {
    }

    private static int size(List<?> l) {
        return l == null ? 0 : l.size();
    }

    /**
     * Upstream's capacityAnnotationSetCorrectly: false when the subsets hold more than the cap (they must
     * be truncated, so the annotation cannot be right); otherwise true only when the annotation is absent.
     */
    static boolean annotationSetCorrectly(Map<String, String> annotations, List<EndpointSubset> subsets) {
        int n = 0;
        if (subsets != null) {
            for (EndpointSubset s : subsets) {
                n += size(s.getAddresses()) + size(s.getNotReadyAddresses());
            }
        }
        if (n > MAX_CAPACITY) {
            return false;
        }
        return annotations == null || !annotations.containsKey(OVER_CAPACITY_ANNOTATION);
    }

    /**
     * Upstream's truncateEndpoints, in place: when over the cap, each subset keeps a share of the room
     * proportional to its size (rounded up, so the last subsets may get less). If the ready addresses alone
     * exceed the cap only they are shared out and every not-ready address goes; otherwise all ready
     * addresses stay and the not-ready ones share what is left. Returns whether anything was truncated.
     */
    static boolean truncate(List<EndpointSubset> subsets) {
        int totalReady = 0;
        int totalNotReady = 0;
        for (EndpointSubset s : subsets) {
            totalReady += size(s.getAddresses());
            totalNotReady += size(s.getNotReadyAddresses());
        }
        if (totalReady + totalNotReady <= MAX_CAPACITY) {
            return false;
        }
        boolean truncateReady = false;
        int max = MAX_CAPACITY - totalReady;
        int numTotal = totalNotReady;
        if (totalReady > MAX_CAPACITY) {
            truncateReady = true;
            max = MAX_CAPACITY;
            numTotal = totalReady;
        }
        int canBeAdded = max;
        for (EndpointSubset s : subsets) {
            int numInSubset = truncateReady ? size(s.getAddresses()) : size(s.getNotReadyAddresses());
            // float64 arithmetic as upstream, so the rounding matches
            int toBeAdded = (int) Math.ceil(((double) numInSubset / (double) numTotal) * (double) max);
            if (toBeAdded > canBeAdded) {
                toBeAdded = canBeAdded;
            }
            if (truncateReady) {
                s.setAddresses(prefix(s.getAddresses(), toBeAdded));
                s.setNotReadyAddresses(new ArrayList<>());
                canBeAdded -= size(s.getAddresses());
            } else {
                s.setNotReadyAddresses(prefix(s.getNotReadyAddresses(), toBeAdded));
                canBeAdded -= size(s.getNotReadyAddresses());
            }
        }
        return true;
    }

    private static List<EndpointAddress> prefix(List<EndpointAddress> addresses, int maxNum) {
        if (size(addresses) <= maxNum) {
            return addresses;
        }
        return new ArrayList<>(addresses.subList(0, maxNum));
    }
}
