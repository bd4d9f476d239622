package io.qkcm.endpointslice.topologycache;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointHints;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.api.model.discovery.v1.ForZone;

/**
 * k8s.io/endpointslice/topologycache: the allocatable CPU of ready Nodes per zone, and for Services with
 * topology-aware hints ({@code service.kubernetes.io/topology-mode: Auto}) how many endpoints each zone
 * was given, so endpoints are hinted to zones in proportion to their CPU without overloading any zone
 * by more than 20%. Thread-safe.
 */
public final class TopologyCache {

    private static final Logger LOG = Logger.getLogger(TopologyCache.class);

    /** The maximum overload any single endpoint should be exposed to. */
    static final double OVERLOAD_THRESHOLD = 0.2;

    public static final String LABEL_TOPOLOGY_ZONE = "topology.kubernetes.io/zone";

    /** Endpoints a zone should get: at least minimum, at most maximum, ideally desired. */
    record Allocation(int minimum, int maximum, double desired) {
    }

    private boolean sufficientNodeInfo;
    private Map<String, BigDecimal> cpuByZone = new HashMap<>();
    private Map<String, Double> cpuRatiosByZone = new HashMap<>();
    private final Map<String, Map<String, Map<String, Integer>>> endpointsByService = new HashMap<>();
    private final Set<String> hintsPopulatedByService = new HashSet<>();

    /** Keys of Services whose hinted endpoints leave some zone overloaded. */
    public synchronized List<String> overloadedServices() {
        List<String> keys = new ArrayList<>();
        endpointsByService.forEach((svcKey, byAddressType) -> {
            for (Map<String, Integer> ezi : byAddressType.values()) {
                if (TopologyUtils.serviceOverloaded(ezi, cpuRatiosByZone)) {
                    keys.add(svcKey);
                    break;
                }
            }
        });
        return keys;
    }

    /** The slice lists after AddHints, and the events to record about the Service. */
    public record Result(List<EndpointSlice> toCreate, List<EndpointSlice> toUpdate, List<EventBuilder> events) {
    }

    /** Adds or updates zone hints on the slices being created or updated (and unchanged slices as needed). */
    public Result addHints(SliceInfo si) {
        int totalEndpoints = si.totalReadyEndpoints();
        List<EventBuilder> events = new ArrayList<>();
        AllocationsOrEvent ae = allocations(totalEndpoints);
        if (ae.event() != null) {
            LOG.infof("%s, removing hints (key %s, addressType %s)", ae.event().message(), si.serviceKey, si.addressType);
            events.add(ae.event().withMessage(EventBuilder.formatWithAddressType(ae.event().message(), si.addressType)));
            removeHints(si.serviceKey, si.addressType);
            TopologyUtils.Slices s = TopologyUtils.removeHintsFromSlices(si);
            return new Result(s.toCreate(), s.toUpdate(), events);
        }
        Map<String, Allocation> allocations = ae.allocations();
        Map<String, Integer> allocatedHintsByZone = si.allocatedHintsByZone(allocations);

        List<EndpointSlice> allocatable = new ArrayList<>(si.toCreate);
        allocatable.addAll(si.toUpdate);

        // 1. every ready endpoint starts with a hint for its own zone
        for (EndpointSlice slice : allocatable) {
            for (Endpoint endpoint : TopologyUtils.endpoints(slice)) {
                if (!TopologyUtils.endpointReady(endpoint)) {
                    continue;
                }
                if (endpoint.getZone() == null || endpoint.getZone().isEmpty()) {
                    LOG.infof("Endpoint found without zone specified, removing hints (key %s, addressType %s)",
                            si.serviceKey, si.addressType);
                    events.add(new EventBuilder("Warning", EventBuilder.REASON_DISABLED,
                            EventBuilder.formatWithAddressType(EventBuilder.NO_ZONE_SPECIFIED, si.addressType)));
                    removeHints(si.serviceKey, si.addressType);
                    TopologyUtils.Slices s = TopologyUtils.removeHintsFromSlices(si);
                    return new Result(s.toCreate(), s.toUpdate(), events);
                }
                allocatedHintsByZone.merge(endpoint.getZone(), 1, Integer::sum);
                endpoint.setHints(new EndpointHints(null, new ArrayList<>(List.of(new ForZone(endpoint.getZone())))));
            }
        }

        // 2. which zones have more than their share, which less; 3. move hints accordingly
        List<Map<String, Integer>> gr = TopologyUtils.givingAndReceivingZones(allocations, allocatedHintsByZone);
        Map<String, Integer> redistributions = TopologyUtils.redistributeHints(allocatable, gr.get(0), gr.get(1));
        redistributions.forEach((zone, diff) -> allocatedHintsByZone.merge(zone, diff, Integer::sum));

        if (allocatedHintsByZone.isEmpty()) {
            LOG.debugf("No hints allocated for zones, removing them (key %s, addressType %s)", si.serviceKey, si.addressType);
            events.add(new EventBuilder("Warning", EventBuilder.REASON_DISABLED,
                    EventBuilder.formatWithAddressType(EventBuilder.NO_ALLOCATED_HINTS_FOR_ZONES, si.addressType)));
            removeHints(si.serviceKey, si.addressType);
            TopologyUtils.Slices s = TopologyUtils.removeHintsFromSlices(si);
            return new Result(s.toCreate(), s.toUpdate(), events);
        }

        synchronized (this) {
            boolean hintsEnabled = hintsPopulatedByService.contains(si.serviceKey);
            setHintsLocked(si.serviceKey, si.addressType, allocatedHintsByZone);
            if (!hintsEnabled) {
                LOG.infof("Topology Aware Hints has been enabled, adding hints (key %s, addressType %s)",
                        si.serviceKey, si.addressType);
                events.add(new EventBuilder("Normal", EventBuilder.REASON_ENABLED,
                        EventBuilder.formatWithAddressType(EventBuilder.TOPOLOGY_AWARE_HINTS_ENABLED, si.addressType)));
            }
        }
        return new Result(si.toCreate, si.toUpdate, events);
    }

    public synchronized void setHints(String serviceKey, String addressType, Map<String, Integer> allocatedHintsByZone) {
        setHintsLocked(serviceKey, addressType, allocatedHintsByZone);
    }

    private void setHintsLocked(String serviceKey, String addressType, Map<String, Integer> allocatedHintsByZone) {
        endpointsByService.computeIfAbsent(serviceKey, k -> new HashMap<>()).put(addressType, allocatedHintsByZone);
        hintsPopulatedByService.add(serviceKey);
    }

    public synchronized void removeHints(String serviceKey, String addressType) {
        Map<String, Map<String, Integer>> byType = endpointsByService.get(serviceKey);
        if (byType != null) {
            byType.remove(addressType);
            if (byType.isEmpty()) {
                endpointsByService.remove(serviceKey);
            }
        }
        hintsPopulatedByService.remove(serviceKey);
    }

    /** Recomputes CPU per zone from the Nodes (control-plane and not-ready Nodes excluded). */
    public void setNodes(List<Node> nodes) {
        Map<String, BigDecimal> byZone = new LinkedHashMap<>();
        boolean sufficient = true;
        BigDecimal totalMilli = BigDecimal.ZERO;
        for (Node node : nodes) {
            Map<String, String> labels = node.getMetadata().getLabels();
            if (hasExcludedLabels(labels)) {
                continue;
            }
            if (!TopologyUtils.isNodeReady(node)) {
                continue;
            }
            BigDecimal cpuMilli = allocatableCpuMilli(node);
            String zone = labels == null ? null : labels.get(LABEL_TOPOLOGY_ZONE);
            // as upstream: one Node without zone or CPU is enough to give up on hints cluster-wide
            if (zone == null || zone.isEmpty() || cpuMilli.signum() == 0) {
                byZone = new LinkedHashMap<>();
                sufficient = false;
                LOG.infof("Can't get CPU or zone information for node %s", node.getMetadata().getName());
                break;
            }
            totalMilli = totalMilli.add(cpuMilli);
            byZone.merge(zone, cpuMilli, BigDecimal::add);
        }
        synchronized (this) {
            if (totalMilli.signum() == 0 || !sufficient || byZone.size() < 2) {
                LOG.debugf("Insufficient node info for topology hints (%d zones, %s total mCPU, sufficient %s)",
                        (Object) byZone.size(), totalMilli, sufficient);
                sufficientNodeInfo = false;
                cpuByZone = null;
                cpuRatiosByZone = null;
            } else {
                sufficientNodeInfo = true;
                cpuByZone = byZone;
                Map<String, Double> ratios = new LinkedHashMap<>();
                for (Map.Entry<String, BigDecimal> e : byZone.entrySet()) {
                    ratios.put(e.getKey(), e.getValue().doubleValue() / totalMilli.doubleValue());
                }
                cpuRatiosByZone = ratios;
            }
        }
    }

    /** Allocatable CPU in millicores, rounded up as resource.Quantity.MilliValue; 0 when absent. */
    static BigDecimal allocatableCpuMilli(Node node) {
        if (node.getStatus() == null || node.getStatus().getAllocatable() == null) {
            return BigDecimal.ZERO;
        }
        Quantity q = node.getStatus().getAllocatable().get("cpu");
        if (q == null) {
            return BigDecimal.ZERO;
        }
        return q.getNumericalAmount().multiply(BigDecimal.valueOf(1000)).setScale(0, RoundingMode.CEILING);
    }

    public synchronized boolean hasPopulatedHints(String serviceKey) {
        return hintsPopulatedByService.contains(serviceKey);
    }

    private record AllocationsOrEvent(Map<String, Allocation> allocations, EventBuilder event) {
    }

    /** Per zone, the minimum and maximum endpoints; or the event saying why hints cannot be given. */
    private synchronized AllocationsOrEvent allocations(int numEndpoints) {
        if (cpuRatiosByZone == null) {
            return new AllocationsOrEvent(null,
                    new EventBuilder("Warning", EventBuilder.REASON_DISABLED, EventBuilder.INSUFFICIENT_NODE_INFO));
        }
        if (cpuRatiosByZone.size() < 2) {
            return new AllocationsOrEvent(null,
                    new EventBuilder("Warning", EventBuilder.REASON_DISABLED, EventBuilder.NODES_READY_IN_ONE_ZONE_ONLY));
        }
        if (cpuRatiosByZone.size() > numEndpoints) {
            return new AllocationsOrEvent(null, new EventBuilder("Warning", EventBuilder.REASON_DISABLED,
                    String.format("%s (%d endpoints, %d zones)", EventBuilder.INSUFFICIENT_NUMBER_OF_ENDPOINTS,
                            numEndpoints, cpuRatiosByZone.size())));
        }
        int remainingMinEndpoints = numEndpoints;
        int minTotal = 0;
        Map<String, Allocation> allocations = new LinkedHashMap<>();
        for (Map.Entry<String, Double> e : cpuRatiosByZone.entrySet()) {
            double desired = e.getValue() * numEndpoints;
            int minimum = (int) Math.ceil(desired * (1 / (1 + OVERLOAD_THRESHOLD)));
            allocations.put(e.getKey(), new Allocation(minimum, 0, Math.max(desired, minimum)));
            minTotal += minimum;
            remainingMinEndpoints -= minimum;
            if (remainingMinEndpoints < 0) {
                return new AllocationsOrEvent(null, new EventBuilder("Warning", EventBuilder.REASON_DISABLED,
                        String.format("%s (%d endpoints, %d zones)",
                                EventBuilder.MIN_ALLOCATION_EXCEEDS_OVERLOAD_THRESHOLD, numEndpoints,
                                cpuRatiosByZone.size())));
            }
        }
        int spare = numEndpoints - minTotal;
        allocations.replaceAll((zone, a) -> new Allocation(a.minimum(), a.minimum() + spare, a.desired()));
        return new AllocationsOrEvent(allocations, null);
    }

    /** Nodes with one of these labels don't count towards a zone's capacity. */
    static boolean hasExcludedLabels(Map<String, String> labels) {
        if (labels == null || labels.isEmpty()) {
            return false;
        }
        return labels.containsKey("node-role.kubernetes.io/control-plane")
                || labels.containsKey("node-role.kubernetes.io/master");
    }

    synchronized boolean sufficientNodeInfo() {
        return sufficientNodeInfo;
    }

    synchronized Map<String, Double> cpuRatiosByZone() {
        return cpuRatiosByZone == null ? null : Map.copyOf(cpuRatiosByZone);
    }

    synchronized Map<String, Map<String, Integer>> endpointsByService(String serviceKey) {
        return endpointsByService.get(serviceKey);
    }
}
