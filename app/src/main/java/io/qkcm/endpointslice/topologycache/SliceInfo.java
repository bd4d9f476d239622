package io.qkcm.endpointslice.topologycache;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;

/** The slices of one Service and address type a reconcile is about to write, update or leave alone. */
public final class SliceInfo {

    public final String serviceKey;
    public final String addressType;
    public List<EndpointSlice> toCreate;
    public List<EndpointSlice> toUpdate;
    public List<EndpointSlice> unchanged;

    public SliceInfo(String serviceKey, String addressType, List<EndpointSlice> toCreate, List<EndpointSlice> toUpdate,
            List<EndpointSlice> unchanged) {
        this.serviceKey = serviceKey;
        this.addressType = addressType;
        this.toCreate = new ArrayList<>(toCreate);
        this.toUpdate = new ArrayList<>(toUpdate);
        this.unchanged = new ArrayList<>(unchanged);
    }

    int totalReadyEndpoints() {
        int total = 0;
        for (EndpointSlice s : toCreate) {
            total += TopologyUtils.numReadyEndpoints(s.getEndpoints());
        }
        for (EndpointSlice s : toUpdate) {
            total += TopologyUtils.numReadyEndpoints(s.getEndpoints());
        }
        for (EndpointSlice s : unchanged) {
            total += TopologyUtils.numReadyEndpoints(s.getEndpoints());
        }
        return total;
    }

    /**
     * Sums the hints already allocated in unchanged slices; an unchanged slice whose hints are missing,
     * point at a zone no longer allocated or would exceed a zone's maximum moves (as a copy) to toUpdate.
     */
    Map<String, Integer> allocatedHintsByZone(Map<String, TopologyCache.Allocation> allocations) {
        Map<String, Integer> allocated = new HashMap<>();
        List<EndpointSlice> still = new ArrayList<>();
        for (EndpointSlice slice : unchanged) {
            Map<String, Integer> hintsByZone = TopologyUtils.hintsByZone(slice, allocated, allocations);
            if (hintsByZone == null) {
                toUpdate.add(io.qkcm.runtime.DeepCopy.of(slice));
            } else {
                still.add(slice);
                hintsByZone.forEach((zone, n) -> allocated.merge(zone, n, Integer::sum));
            }
        }
        unchanged = still;
        return allocated;
    }
}
