package io.qkcm.controller;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

import io.fabric8.kubernetes.api.model.EndpointAddress;
import io.fabric8.kubernetes.api.model.EndpointAddressBuilder;
import io.fabric8.kubernetes.api.model.EndpointPort;
import io.fabric8.kubernetes.api.model.EndpointPortBuilder;
import io.fabric8.kubernetes.api.model.EndpointSubset;
import io.qkcm.controller.hash.DeepHash;
import io.qkcm.controller.hash.GoSpew;

/**
 * Upstream's {@code pkg/api/v1/endpoints} RepackSubsets and SortSubsets: the canonical form of an
 * Endpoints object's subsets, in which each subset groups the ports that share exactly the same
 * ready/not-ready addresses. The order of subsets and ports follows the md5 of their Go spew text,
 * as upstream's, because it is visible in the objects written.
 */
public final class EndpointSubsets {

    private EndpointSubsets() {
    }

    /** An address's identity: its IP and the UID of its target. */
    private record AddressKey(String ip, String uid) {
    }

    /** A port as a map key (upstream keys by the EndpointPort struct; -1 marks "no ports"). */
    private record PortKey(String name, int port, String protocol, String appProtocol) {
        static final PortKey NONE = new PortKey("", -1, "", null);

        static PortKey of(EndpointPort p) {
            return new PortKey(p.getName() == null ? "" : p.getName(), p.getPort() == null ? 0 : p.getPort(),
                    p.getProtocol() == null ? "" : p.getProtocol(), p.getAppProtocol());
        }

        EndpointPort toPort() {
            return new EndpointPortBuilder().withName(name.isEmpty() ? null : name).withPort(port)
                    .withProtocol(protocol.isEmpty() ? null : protocol).withAppProtocol(appProtocol).build();
        }
    }

    public static List<EndpointSubset> repack(List<EndpointSubset> subsets) {
        Map<AddressKey, EndpointAddress> allAddrs = new HashMap<>();
        // per port: address -> ready (identity of the shared address objects)
        Map<PortKey, Map<AddressKey, Boolean>> portToAddrReady = new LinkedHashMap<>();
        for (EndpointSubset subset : subsets == null ? List.<EndpointSubset>of() : subsets) {
            List<EndpointPort> ports = subset.getPorts();
            if (ports == null || ports.isEmpty()) {
                mapAddressesByPort(subset, PortKey.NONE, allAddrs, portToAddrReady);
            } else {
                for (EndpointPort port : ports) {
                    mapAddressesByPort(subset, PortKey.of(port), allAddrs, portToAddrReady);
                }
            }
        }

        // group ports by identical address sets
        Map<String, Map<AddressKey, Boolean>> keyToAddrReady = new LinkedHashMap<>();
        Map<String, List<EndpointPort>> keyToPorts = new LinkedHashMap<>();
        for (Map.Entry<PortKey, Map<AddressKey, Boolean>> e : portToAddrReady.entrySet()) {
            String key = addressSetKey(e.getValue());
            keyToAddrReady.put(key, e.getValue());
            if (e.getKey().port > 0) {
                keyToPorts.computeIfAbsent(key, k -> new ArrayList<>()).add(e.getKey().toPort());
            } else {
                keyToPorts.putIfAbsent(key, null);
            }
        }

        List<EndpointSubset> result = new ArrayList<>();
        for (Map.Entry<String, List<EndpointPort>> e : keyToPorts.entrySet()) {
            List<EndpointAddress> ready = new ArrayList<>();
            List<EndpointAddress> notReady = new ArrayList<>();
            for (Map.Entry<AddressKey, Boolean> a : keyToAddrReady.get(e.getKey()).entrySet()) {
                EndpointAddress copy = new EndpointAddressBuilder(allAddrs.get(a.getKey())).build();
                (a.getValue() ? ready : notReady).add(copy);
            }
            EndpointSubset s = new EndpointSubset();
            s.setAddresses(ready);
            s.setNotReadyAddresses(notReady);
            s.setPorts(e.getValue() == null ? new ArrayList<>() : e.getValue());
            result.add(s);
        }
        return sort(result);
    }

    private static void mapAddressesByPort(EndpointSubset subset, PortKey port, Map<AddressKey, EndpointAddress> all,
            Map<PortKey, Map<AddressKey, Boolean>> portToAddrReady) {
        if (subset.getAddresses() != null) {
            for (EndpointAddress a : subset.getAddresses()) {
                mapAddressByPort(a, port, true, all, portToAddrReady);
            }
        }
        if (subset.getNotReadyAddresses() != null) {
            for (EndpointAddress a : subset.getNotReadyAddresses()) {
                mapAddressByPort(a, port, false, all, portToAddrReady);
            }
        }
    }

    private static void mapAddressByPort(EndpointAddress addr, PortKey port, boolean ready,
            Map<AddressKey, EndpointAddress> all, Map<PortKey, Map<AddressKey, Boolean>> portToAddrReady) {
        AddressKey key = new AddressKey(addr.getIp() == null ? "" : addr.getIp(),
                addr.getTargetRef() == null || addr.getTargetRef().getUid() == null ? "" : addr.getTargetRef().getUid());
        all.putIfAbsent(key, addr);
        Map<AddressKey, Boolean> set = portToAddrReady.computeIfAbsent(port, p -> new LinkedHashMap<>());
        // not ready wins: an address listed both ways is not ready
        Boolean wasReady = set.get(key);
        if (wasReady == null || wasReady) {
            set.put(key, ready);
        }
    }

    /** A canonical text of an address set with readiness (upstream hashes the sorted list). */
    private static String addressSetKey(Map<AddressKey, Boolean> set) {
        List<String> parts = new ArrayList<>();
        for (Map.Entry<AddressKey, Boolean> e : set.entrySet()) {
            parts.add(e.getKey().ip + "\u0000" + e.getKey().uid + "\u0000" + e.getValue());
        }
        parts.sort(Comparator.naturalOrder());
        return String.join("\u0001", parts);
    }

    /** Sorts addresses (by IP, then target UID), ports and subsets (by the md5 of their spew text). */
    public static List<EndpointSubset> sort(List<EndpointSubset> subsets) {
        for (EndpointSubset s : subsets) {
            if (s.getAddresses() != null) {
                s.getAddresses().sort(EndpointSubsets::compareAddresses);
            }
            if (s.getNotReadyAddresses() != null) {
                s.getNotReadyAddresses().sort(EndpointSubsets::compareAddresses);
            }
            if (s.getPorts() != null && s.getPorts().size() > 1) {
                sortByDigest(s.getPorts(), p -> DeepHash.md5(GoSpew.endpointSubset(), "v1.EndpointPort", p));
            }
        }
        if (subsets.size() > 1) {
            sortByDigest(subsets, s -> DeepHash.md5(GoSpew.endpointSubset(), "v1.EndpointSubset", s));
        }
        return subsets;
    }

    private static <T> void sortByDigest(List<T> list, java.util.function.Function<T, byte[]> digest) {
        Map<T, byte[]> digests = new java.util.IdentityHashMap<>();
        for (T t : list) {
            digests.put(t, digest.apply(t));
        }
        list.sort((a, b) -> Arrays.compareUnsigned(digests.get(a), digests.get(b)));
    }

    public static boolean lessEndpointAddress(EndpointAddress a, EndpointAddress b) {
        return compareAddresses(a, b) < 0;
    }

    private static int compareAddresses(EndpointAddress a, EndpointAddress b) {
        int ip = compareBytes(a.getIp(), b.getIp());
        if (ip != 0) {
            return ip;
        }
        if (b.getTargetRef() == null) {
            return a.getTargetRef() == null ? 0 : 1;
        }
        if (a.getTargetRef() == null) {
            return -1;
        }
        return compareBytes(a.getTargetRef().getUid(), b.getTargetRef().getUid());
    }

    private static int compareBytes(String a, String b) {
        byte[] x = Objects.requireNonNullElse(a, "").getBytes(java.nio.charset.StandardCharsets.UTF_8);
        byte[] y = Objects.requireNonNullElse(b, "").getBytes(java.nio.charset.StandardCharsets.UTF_8);
        return Arrays.compareUnsigned(x, y);
    }
}
