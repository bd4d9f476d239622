package io.qkcm.endpointslice.util;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;

/**
 * Endpoints keyed by identity as upstream's EndpointSet: the sorted addresses, the hostname and the
 * target's namespace/name. Two endpoints with the same identity are "the same endpoint" whose other
 * fields may have changed (see {@link EndpointSliceUtil#endpointsEqualBeyondHash}).
 */
public final class EndpointSet {

    private final Map<String, Endpoint> items = new LinkedHashMap<>();

    /**
     * The identity key. Upstream sorts the endpoint's addresses in place while hashing, so the slices
     * it writes carry sorted addresses; sort here too, but only when not already sorted (the endpoint
     * may be a shared cache object that other threads read).
     */
    static String key(Endpoint endpoint) {
        List<String> addresses = endpoint.getAddresses();
        List<String> sorted = addresses == null ? List.of() : new ArrayList<>(addresses);
        sorted.sort(String::compareTo);
        if (addresses != null && !sorted.equals(addresses)) {
            for (int i = 0; i < sorted.size(); i++) {
                addresses.set(i, sorted.get(i));
            }
        }
        StringBuilder k = new StringBuilder();
        for (String a : sorted) {
            k.append(a).append(',');
        }
        k.append('|').append(endpoint.getHostname() == null ? "" : endpoint.getHostname());
        if (endpoint.getTargetRef() != null) {
            k.append('|').append(nz(endpoint.getTargetRef().getNamespace())).append('/')
                    .append(nz(endpoint.getTargetRef().getName()));
        } else {
            k.append("|/");
        }
        return k.toString();
    }

    private static String nz(String s) {
        return s == null ? "" : s;
    }

    public EndpointSet insert(Endpoint... endpoints) {
        for (Endpoint e : endpoints) {
            items.put(key(e), e);
        }
        return this;
    }

    public EndpointSet delete(Endpoint... endpoints) {
        for (Endpoint e : endpoints) {
            items.remove(key(e));
        }
        return this;
    }

    public boolean has(Endpoint endpoint) {
        return items.containsKey(key(endpoint));
    }

    /** The member with the same identity as {@code endpoint}, or null. */
    public Endpoint get(Endpoint endpoint) {
        return items.get(key(endpoint));
    }

    public List<Endpoint> unsortedList() {
        return new ArrayList<>(items.values());
    }

    /** Removes and returns some member, or null when empty. */
    public Endpoint popAny() {
        Iterator<Endpoint> it = items.values().iterator();
        if (!it.hasNext()) {
            return null;
        }
        Endpoint e = it.next();
        it.remove();
        return e;
    }

    public int size() {
        return items.size();
    }
}
