package io.qkcm.endpointslice.topologycache;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeCondition;
import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointHints;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.api.model.discovery.v1.ForZone;

/** k8s.io/endpointslice/topologycache/utils.go. */
public final class TopologyUtils {

    private static final Logger LOG = Logger.getLogger(TopologyUtils.class);

    private TopologyUtils() {
    }

    /** The lists of slices to create and update after removing every hint (RemoveHintsFromSlices). */
    public record Slices(List<EndpointSlice> toCreate, List<EndpointSlice> toUpdate) {
    }

    /**
     * Drops hints from the slices to create and update; unchanged slices carrying hints are copied into
     * the update list without their hints.
     */
    public static Slices removeHintsFromSlices(SliceInfo si) {
        for (EndpointSlice slice : si.toCreate) {
            endpoints(slice).forEach(e -> e.setHints(null));
        }
        for (EndpointSlice slice : si.toUpdate) {
            endpoints(slice).forEach(e -> e.setHints(null));
        }
        List<EndpointSlice> still = new ArrayList<>();
        for (EndpointSlice slice : si.unchanged) {
            if (endpoints(slice).stream().anyMatch(e -> e.getHints() != null)) {
                EndpointSlice copy = io.qkcm.runtime.DeepCopy.of(slice);
                endpoints(copy).forEach(e -> e.setHints(null));
                si.toUpdate.add(copy);
            } else {
                still.add(slice);
            }
        }
        si.unchanged = still;
        return new Slices(si.toCreate, si.toUpdate);
    }

    /**
     * Moves hints from zones with more than their share to zones with less; returns the change of
     * allocated endpoints per zone.
     */
    static Map<String, Integer> redistributeHints(List<EndpointSlice> slices, Map<String, Integer> givingZones,
            Map<String, Integer> receivingZones) {
        Map<String, Integer> redistributions = new HashMap<>();
        for (EndpointSlice slice : slices) {
            for (Endpoint endpoint : endpoints(slice)) {
                if (!endpointReady(endpoint)) {
                    // upstream clears the hints of its loop copy only, so the slice keeps them
                    continue;
                }
                if (givingZones.isEmpty() || receivingZones.isEmpty()) {
                    return redistributions;
                }
                if (endpoint.getZone() == null || endpoint.getZone().isEmpty()) {
                    LOG.info("Endpoint found without zone specified");
                    continue;
                }
                String givingZone = endpoint.getZone();
                Integer numToGive = givingZones.get(givingZone);
                if (numToGive != null && numToGive > 0) {
                    for (Map.Entry<String, Integer> r : new ArrayList<>(receivingZones.entrySet())) {
                        String receivingZone = r.getKey();
                        int numToReceive = r.getValue();
                        if (numToReceive > 0) {
                            endpoint.setHints(new EndpointHints(null, new ArrayList<>(List.of(new ForZone(receivingZone)))));
                            if (numToGive == 1) {
                                givingZones.remove(givingZone);
                            } else {
                                givingZones.put(givingZone, numToGive - 1);
                            }
                            if (numToReceive == 1) {
                                receivingZones.remove(receivingZone);
                            } else {
                                receivingZones.put(receivingZone, numToReceive - 1);
                            }
                            redistributions.merge(receivingZone, 1, Integer::sum);
                            redistributions.merge(givingZone, -1, Integer::sum);
                            break;
                        }
                    }
                }
            }
        }
        return redistributions;
    }

    /** What each zone should give and receive: [giving, receiving]. */
    static List<Map<String, Integer>> givingAndReceivingZones(Map<String, TopologyCache.Allocation> allocations,
            Map<String, Integer> allocatedHintsByZone) {
        Map<String, Double> givingDesired = new LinkedHashMap<>();
        Map<String, Double> receivingDesired = new LinkedHashMap<>();
        allocations.forEach((zone, allocation) -> {
            int allocated = allocatedHintsByZone.getOrDefault(zone, 0);
            double target = allocation.desired();
            if (allocated > target) {
                givingDesired.put(zone, allocated - target);
            } else if (allocated < target) {
                receivingDesired.put(zone, target - allocated);
            }
        });
        Map<String, Integer> giving = new LinkedHashMap<>();
        Map<String, Integer> receiving = new LinkedHashMap<>();
        while (true) {
            Map.Entry<String, Double> give = most(givingDesired);
            Map.Entry<String, Double> receive = most(receivingDesired);
            if (give == null || receive == null || (give.getValue() < 1.0 && receive.getValue() < 1.0)
                    || give.getValue() < 0.5 || receive.getValue() < 0.5) {
                break;
            }
            giving.merge(give.getKey(), 1, Integer::sum);
            givingDesired.put(give.getKey(), give.getValue() - 1);
            receiving.merge(receive.getKey(), 1, Integer::sum);
            receivingDesired.put(receive.getKey(), receive.getValue() - 1);
        }
        return List.of(giving, receiving);
    }

    /** The zone with the greatest value above 0, or null (upstream getMost returns "" then). */
    private static Map.Entry<String, Double> most(Map<String, Double> zones) {
        Map.Entry<String, Double> best = null;
        double num = 0.0;
        for (Map.Entry<String, Double> e : zones.entrySet()) {
            if (e.getValue() > num) {
                best = Map.entry(e.getKey(), e.getValue());
                num = e.getValue();
            }
        }
        return best;
    }

    /**
     * Hints per zone in a slice, or null when the slice must be rewritten: a ready endpoint without a
     * zone hint, a hint for a zone no longer allocated, or more hints than a zone's maximum.
     */
    static Map<String, Integer> hintsByZone(EndpointSlice slice, Map<String, Integer> allocatedHintsByZone,
            Map<String, TopologyCache.Allocation> allocations) {
        Map<String, Integer> hintsByZone = new HashMap<>();
        for (Endpoint endpoint : endpoints(slice)) {
            if (!endpointReady(endpoint)) {
                continue;
            }
            if (endpoint.getHints() == null || endpoint.getHints().getForZones() == null
                    || endpoint.getHints().getForZones().isEmpty()) {
                return null;
            }
            for (ForZone fz : endpoint.getHints().getForZones()) {
                if (!allocations.containsKey(fz.getName())) {
                    return null;
                }
                hintsByZone.merge(fz.getName(), 1, Integer::sum);
            }
        }
        for (Map.Entry<String, Integer> e : hintsByZone.entrySet()) {
            int already = allocatedHintsByZone.getOrDefault(e.getKey(), 0);
            TopologyCache.Allocation allocation = allocations.get(e.getKey());
            if (allocation == null || e.getValue() + already > allocation.maximum()) {
                return null;
            }
        }
        return hintsByZone;
    }

    /** Whether some zone has fewer endpoints than its CPU share minus the overload threshold allows. */
    static boolean serviceOverloaded(Map<String, Integer> ezi, Map<String, Double> zoneRatios) {
        if (ezi.isEmpty()) {
            return false;
        }
        if (zoneRatios == null || zoneRatios.isEmpty()) {
            return true;
        }
        double total = 0;
        for (int n : ezi.values()) {
            total += n;
        }
        for (Map.Entry<String, Double> e : zoneRatios.entrySet()) {
            Integer svcEndpoints = ezi.get(e.getKey());
            if (svcEndpoints == null) {
                return true;
            }
            double min = Math.ceil(total * e.getValue() * (1 / (1 + TopologyCache.OVERLOAD_THRESHOLD)));
            if (svcEndpoints < (int) min) {
                return true;
            }
        }
        return false;
    }

    static boolean isNodeReady(Node node) {
        if (node.getStatus() == null || node.getStatus().getConditions() == null) {
            return false;
        }
        for (NodeCondition c : node.getStatus().getConditions()) {
            if ("Ready".equals(c.getType())) {
                return "True".equals(c.getStatus());
            }
        }
        return false;
    }

    static int numReadyEndpoints(List<Endpoint> endpoints) {
        if (endpoints == null) {
            return 0;
        }
        int total = 0;
        for (Endpoint e : endpoints) {
            if (endpointReady(e)) {
                total++;
            }
        }
        return total;
    }

    public static boolean endpointReady(Endpoint e) {
        return e.getConditions() != null && Boolean.TRUE.equals(e.getConditions().getReady());
    }

    static List<Endpoint> endpoints(EndpointSlice slice) {
        return slice.getEndpoints() == null ? List.of() : slice.getEndpoints();
    }
}
