package io.qkcm.endpointslice.util;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

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
