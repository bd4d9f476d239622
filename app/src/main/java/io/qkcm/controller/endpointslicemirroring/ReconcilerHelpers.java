package io.qkcm.controller.endpointslicemirroring;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.fabric8.kubernetes.api.model.EndpointAddress;
import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointPort;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.qkcm.endpointslice.util.EndpointSet;

/** Port of upstream reconciler_helpers.go: desired-state accumulation and slice bookkeeping. */
final class ReconcilerHelpers {

    private ReconcilerHelpers() {
    }

    /** Slices to create, update and delete. */
    static final class SlicesByAction {
        final List<EndpointSlice> toCreate = new ArrayList<>();
        final List<EndpointSlice> toUpdate = new ArrayList<>();
        final List<EndpointSlice> toDelete = new ArrayList<>();

        void append(SlicesByAction other) {
            toCreate.addAll(other.toCreate);
            toUpdate.addAll(other.toUpdate);
            toDelete.addAll(other.toDelete);
        }
    }

    /** Endpoint counts added, updated and removed (for the per-sync metrics). */
    static final class TotalsByAction {
        int added;
        int updated;
        int removed;

        void add(TotalsByAction other) {
            added += other.added;
            updated += other.updated;
            removed += other.removed;
        }
    }

    /** Desired endpoints and ports, keyed by address type and port map. */
    static final class DesiredCalc {
        final Map<String, List<EndpointPort>> portsByKey = new LinkedHashMap<>();
        final Map<String, EndpointSet> endpointsByKey = new LinkedHashMap<>();
        int numDesiredEndpoints;

        /** Registers a subset's ports for both address types; returns the key per address type. */
        Map<String, String> initPorts(List<io.fabric8.kubernetes.api.model.EndpointPort> subsetPorts) {
            List<EndpointPort> endpointPorts = MirroringUtil.epPortsToEpsPorts(subsetPorts);
            Map<String, String> multiKey = new LinkedHashMap<>();
            for (String addrType : List.of(MirroringUtil.IPV4, MirroringUtil.IPV6)) {
                String key = MirroringUtil.addrTypePortMapKey(endpointPorts, addrType);
                multiKey.put(addrType, key);
                endpointsByKey.computeIfAbsent(key, k -> new EndpointSet());
                portsByKey.put(key, endpointPorts);
            }
            return multiKey;
        }

        /** Adds the address when it is a valid IP; false when it is not. */
        boolean addAddress(EndpointAddress address, Map<String, String> multiKey, boolean ready) {
            Map.Entry<Endpoint, String> e = MirroringUtil.addressToEndpoint(address, ready);
            if (e == null) {
                return false;
            }
            endpointsByKey.get(multiKey.get(e.getValue())).insert(e.getKey());
            numDesiredEndpoints++;
            return true;
        }
    }

    /**
     * Turns creates into updates of slices that would otherwise be deleted, per address type. As upstream,
     * a slice is taken out of a list by name: for creates (no name yet) that is the first unnamed one.
     */
    static void recycleSlices(SlicesByAction slices) {
        Map<String, List<EndpointSlice>> toCreateByAddrType = toSlicesByAddrType(slices.toCreate);
        Map<String, List<EndpointSlice>> toDeleteByAddrType = toSlicesByAddrType(slices.toDelete);
        for (Map.Entry<String, List<EndpointSlice>> e : toCreateByAddrType.entrySet()) {
            List<EndpointSlice> slicesToCreate = e.getValue();
            List<EndpointSlice> slicesToDelete = toDeleteByAddrType.getOrDefault(e.getKey(), List.of());
            for (int i = 0; slicesToCreate.size() > i && slicesToDelete.size() > i; i++) {
                removeSlice(slices.toCreate, slicesToCreate.get(i));
                removeSlice(slices.toDelete, slicesToDelete.get(i));
                EndpointSlice slice = slicesToCreate.get(i);
                slice.getMetadata().setName(slicesToDelete.get(i).getMetadata().getName());
                // one PUT at the cached version (fabric8 would GET one first when it is missing)
                slice.getMetadata().setResourceVersion(slicesToDelete.get(i).getMetadata().getResourceVersion());
                slices.toUpdate.add(slice);
            }
        }
    }

    /** Removes the first slice named as {@code toRemove}. */
    static void removeSlice(List<EndpointSlice> slices, EndpointSlice toRemove) {
        String name = nameOf(toRemove);
        for (int i = 0; i < slices.size(); i++) {
            if (nameOf(slices.get(i)).equals(name)) {
                slices.remove(i);
                return;
            }
        }
    }

    private static String nameOf(EndpointSlice s) {
        String n = s.getMetadata().getName();
        return n == null ? "" : n;
    }

    static Map<String, List<EndpointSlice>> toSlicesByAddrType(List<EndpointSlice> slices) {
        Map<String, List<EndpointSlice>> byAddrType = new LinkedHashMap<>();
        for (EndpointSlice s : slices) {
            byAddrType.computeIfAbsent(s.getAddressType(), k -> new ArrayList<>()).add(s);
        }
        return byAddrType;
    }
}
