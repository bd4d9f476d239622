package io.qkcm.endpointslice.trafficdist;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointHints;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.fabric8.kubernetes.api.model.discovery.v1.ForNode;
import io.fabric8.kubernetes.api.model.discovery.v1.ForZone;

/**
 * k8s.io/endpointslice/trafficdist: the hints a Service's {@code spec.trafficDistribution} asks for.
 * PreferClose / PreferSameZone give every ready endpoint a hint for its own zone, PreferSameNode also one
 * for its own node; anything else removes hints.
 */
public final class TrafficDist {

    public static final String PREFER_CLOSE = "PreferClose";
    public static final String PREFER_SAME_ZONE = "PreferSameZone";
    public static final String PREFER_SAME_NODE = "PreferSameNode";

    private static final Set<String> CLOSE = Set.of(PREFER_CLOSE, PREFER_SAME_ZONE, PREFER_SAME_NODE);

    private TrafficDist() {
    }

    /** What ReconcileHints returns: the three lists after moving unchanged slices that need new hints. */
    public record Result(List<EndpointSlice> toCreate, List<EndpointSlice> toUpdate, List<EndpointSlice> unchanged) {
    }

    /**
     * Sets hints on every slice to create or update; unchanged slices whose hints are wrong are copied
     * (never modified: they are the informer's objects) into the update list.
     */
    public static Result reconcileHints(String trafficDistribution, List<EndpointSlice> toCreate,
            List<EndpointSlice> toUpdate, List<EndpointSlice> unchanged) {
        Heuristic h = trafficDistribution != null && CLOSE.contains(trafficDistribution)
                ? new PreferClose(PREFER_SAME_NODE.equals(trafficDistribution))
                : new DefaultHeuristic();
        List<EndpointSlice> update = new ArrayList<>(toUpdate);
        List<EndpointSlice> stillUnchanged = new ArrayList<>();
        for (EndpointSlice slice : unchanged) {
            if (h.needsUpdate(slice)) {
                update.add(io.qkcm.runtime.DeepCopy.of(slice));
            } else {
                stillUnchanged.add(slice);
            }
        }
        for (EndpointSlice slice : toCreate) {
            h.update(slice);
        }
        for (EndpointSlice slice : update) {
            h.update(slice);
        }
        return new Result(toCreate, update, stillUnchanged);
    }

    private interface Heuristic {
        boolean needsUpdate(EndpointSlice slice);

        void update(EndpointSlice slice);
    }

    static boolean endpointReady(Endpoint e) {
        return e.getConditions() != null && Boolean.TRUE.equals(e.getConditions().getReady());
    }

    private static List<Endpoint> endpoints(EndpointSlice slice) {
        return slice.getEndpoints() == null ? List.of() : slice.getEndpoints();
    }

    private static boolean empty(List<?> l) {
        return l == null || l.isEmpty();
    }

    /** Cluster-wide routing: no hints at all. */
    private static final class DefaultHeuristic implements Heuristic {
        @Override
        public boolean needsUpdate(EndpointSlice slice) {
            if (slice == null) {
                return false;
            }
            return endpoints(slice).stream().anyMatch(e -> e.getHints() != null);
        }

        @Override
        public void update(EndpointSlice slice) {
            endpoints(slice).forEach(e -> e.setHints(null));
        }
    }

    private record PreferClose(boolean generateNodeHints) implements Heuristic {
        @Override
        public boolean needsUpdate(EndpointSlice slice) {
            if (slice == null) {
                return false;
            }
            for (Endpoint e : endpoints(slice)) {
                if (!endpointReady(e)) {
                    continue;
                }
                EndpointHints hints = e.getHints();
                if (e.getZone() != null) {
                    if (hints == null || hints.getForZones() == null || hints.getForZones().size() != 1
                            || !e.getZone().equals(hints.getForZones().get(0).getName())) {
                        return true;
                    }
                } else if (hints != null && !empty(hints.getForZones())) {
                    return true;
                }
                if (e.getNodeName() != null && generateNodeHints) {
                    if (hints == null || hints.getForNodes() == null || hints.getForNodes().size() != 1
                            || !e.getNodeName().equals(hints.getForNodes().get(0).getName())) {
                        return true;
                    }
                } else if (hints != null && !empty(hints.getForNodes())) {
                    return true;
                }
            }
            return false;
        }

        @Override
        public void update(EndpointSlice slice) {
            for (Endpoint e : endpoints(slice)) {
                if (!endpointReady(e)) {
                    continue;
                }
                List<ForZone> forZones = e.getZone() != null ? new ArrayList<>(List.of(new ForZone(e.getZone()))) : null;
                List<ForNode> forNodes = e.getNodeName() != null && generateNodeHints
                        ? new ArrayList<>(List.of(new ForNode(e.getNodeName())))
                        : null;
                e.setHints(forZones != null || forNodes != null ? new EndpointHints(forNodes, forZones) : null);
            }
        }
    }
}
