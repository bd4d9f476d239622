package io.qkcm.endpointslice.util;

import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;

/**
 * The generations of the EndpointSlices a controller itself wrote, per Service (upstream
 * EndpointSliceTracker). It tells a controller whether a slice event is its own write echoing back
 * ({@link #shouldSync}) and whether the slice cache is older than its own writes
 * ({@link #staleSlices}), in which case a sync must wait rather than act on stale data.
 */
public final class EndpointSliceTracker {

    /** Generation recorded for a slice the controller has deleted and waits to see gone. */
    static final long DELETION_EXPECTED = -1;

    private final Map<String, Map<String, Long>> generationsByService = new HashMap<>();
    /** Not in upstream: Services with a slice creation whose answer was lost (see {@link #markCreateUncertain}). */
    private final Set<String> uncertainCreates = new HashSet<>();

    private static String serviceKey(String namespace, String name) {
        return namespace + "/" + name;
    }

    private static String serviceKey(EndpointSlice slice) {
        Map<String, String> labels = slice.getMetadata().getLabels();
        String service = labels == null ? null : labels.get("kubernetes.io/service-name");
        return serviceKey(slice.getMetadata().getNamespace(), service == null ? "" : service);
    }

    private static long generation(EndpointSlice slice) {
        Long g = slice.getMetadata().getGeneration();
        return g == null ? 0 : g;
    }

    public synchronized boolean has(EndpointSlice slice) {
        Map<String, Long> gens = generationsByService.get(serviceKey(slice));
        return gens != null && gens.containsKey(slice.getMetadata().getUid());
    }

    /** True unless the slice is one this controller wrote at this generation or a newer one. */
    public synchronized boolean shouldSync(EndpointSlice slice) {
        Map<String, Long> gens = generationsByService.get(serviceKey(slice));
        if (gens == null) {
            return true;
        }
        Long g = gens.get(slice.getMetadata().getUid());
        return g == null || generation(slice) > g;
    }

    /**
     * True when {@code slices} (from the cache) lag behind this controller's writes: a slice it
     * deleted is still there, a slice is older than the generation it wrote, or a slice it wrote is missing.
     */
    public synchronized boolean staleSlices(Service service, List<EndpointSlice> slices) {
        Map<String, Long> gens = generationsByService
                .get(serviceKey(service.getMetadata().getNamespace(), service.getMetadata().getName()));
        if (gens == null) {
            return false;
        }
        Map<String, Long> provided = new HashMap<>();
        for (EndpointSlice slice : slices) {
            provided.put(slice.getMetadata().getUid(), generation(slice));
            Long g = gens.get(slice.getMetadata().getUid());
            if (g != null && (g == DELETION_EXPECTED || g > generation(slice))) {
                return true;
            }
        }
        for (Map.Entry<String, Long> e : gens.entrySet()) {
            if (e.getValue() == DELETION_EXPECTED) {
                continue;
            }
            if (!provided.containsKey(e.getKey())) {
                return true;
            }
        }
        return false;
    }

    /** Records a slice this controller created or updated (the object the API server returned). */
    public synchronized void update(EndpointSlice slice) {
        generationsByService.computeIfAbsent(serviceKey(slice), k -> new HashMap<>())
                .put(slice.getMetadata().getUid(), generation(slice));
    }

    public synchronized void deleteService(String namespace, String name) {
        generationsByService.remove(serviceKey(namespace, name));
        uncertainCreates.remove(serviceKey(namespace, name));
    }

    /**
     * Not in upstream: a slice creation for the Service was sent and its answer lost (the API server
     * may have made the slice, under a name generated there). Until {@link #settleUncertainCreate} the
     * cache cannot tell: a slice missing from it may exist, and creating it again from the cache would
     * make a second one. Upstream makes it and removes the surplus on a later sync.
     */
    public synchronized void markCreateUncertain(String namespace, String name) {
        uncertainCreates.add(serviceKey(namespace, name));
    }

    /** Whether a slice creation for the Service has an unknown outcome not yet settled. */
    public synchronized boolean createUncertain(String namespace, String name) {
        return uncertainCreates.contains(serviceKey(namespace, name));
    }

    /**
     * Settles {@link #markCreateUncertain} with the Service's slices listed from the API server (a
     * consistent read, so it holds the lost creation if it was made): each is recorded as this
     * controller's write, so {@link #staleSlices} holds the Service back until the cache shows them
     * all. Slices being deleted are left out, as the controllers leave them out of their syncs.
     */
    public synchronized void settleUncertainCreate(String namespace, String name, List<EndpointSlice> listed) {
        Map<String, Long> gens = generationsByService.computeIfAbsent(serviceKey(namespace, name), k -> new HashMap<>());
        for (EndpointSlice slice : listed) {
            if (slice.getMetadata().getDeletionTimestamp() != null) {
                continue;
            }
            Long g = gens.get(slice.getMetadata().getUid());
            if (g == null || (g != DELETION_EXPECTED && g < generation(slice))) {
                gens.put(slice.getMetadata().getUid(), generation(slice));
            }
        }
        uncertainCreates.remove(serviceKey(namespace, name));
    }

    /** Records that this controller deleted the slice. */
    public synchronized void expectDeletion(EndpointSlice slice) {
        generationsByService.computeIfAbsent(serviceKey(slice), k -> new HashMap<>())
                .put(slice.getMetadata().getUid(), DELETION_EXPECTED);
    }

    /**
     * Forgets a deleted slice; true when this controller expected the deletion (or never tracked the
     * slice), false when a slice it wrote vanished unexpectedly (so its service must be synced again).
     */
    public synchronized boolean handleDeletion(EndpointSlice slice) {
        Map<String, Long> gens = generationsByService.get(serviceKey(slice));
        if (gens != null) {
            Long g = gens.remove(slice.getMetadata().getUid());
            if (g != null && g != DELETION_EXPECTED) {
                return false;
            }
        }
        return true;
    }
}
