package io.qkcm.controller.endpointslicemirroring;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

import io.fabric8.kubernetes.api.model.EndpointAddress;
import io.fabric8.kubernetes.api.model.Endpoints;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.ObjectReference;
import io.fabric8.kubernetes.api.model.ObjectReferenceBuilder;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointConditions;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointPort;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.qkcm.controller.GoIP;
import io.qkcm.endpointslice.util.EndpointSliceUtil;

/** Port of upstream utils.go: slice construction, address conversion and the label/annotation rules. */
final class MirroringUtil {

    static final String CONTROLLER_NAME = "endpointslicemirroring-controller.k8s.io";
    static final String LABEL_SERVICE_NAME = "kubernetes.io/service-name";
    static final String LABEL_MANAGED_BY = "endpointslice.kubernetes.io/managed-by";
    static final String LABEL_SKIP_MIRROR = "endpointslice.kubernetes.io/skip-mirror";
    /** resourcelock.LeaderElectionRecordAnnotationKey: Endpoints used as a leader-election lock are not mirrored. */
    static final String LEADER_ELECTION_ANNOTATION = "control-plane.alpha.kubernetes.io/leader";
    static final String ENDPOINTS_LAST_CHANGE_TRIGGER_TIME = "endpoints.kubernetes.io/last-change-trigger-time";
    static final String LAST_APPLIED_CONFIG = "kubectl.kubernetes.io/last-applied-configuration";
    static final String IPV4 = "IPv4";
    static final String IPV6 = "IPv6";

    private static final Pattern DNS1123_SUBDOMAIN = Pattern
            .compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");

    private MirroringUtil() {
    }

    /** Upstream addrTypePortMapKey: address type, a dash, then the port map key (which sorts {@code ports}). */
    static String addrTypePortMapKey(List<EndpointPort> ports, String addressType) {
        return addressType + "-" + EndpointSliceUtil.portMapKey(ports);
    }

    static String addressTypeOfKey(String key) {
        return key.startsWith(IPV6) ? IPV6 : IPV4;
    }

    /** A slice mirroring {@code endpoints}: a new one (generateName) when {@code sliceName} is null. */
    static EndpointSlice newEndpointSlice(Endpoints endpoints, List<EndpointPort> ports, String addressType,
            String sliceName) {
        ObjectMeta em = endpoints.getMetadata();
        OwnerReference ownerRef = new OwnerReferenceBuilder().withApiVersion("v1").withKind("Endpoints")
                .withName(em.getName()).withUid(em.getUid()).withController(true).withBlockOwnerDeletion(true)
                .build();
        Map<String, String> labels = new HashMap<>();
        if (em.getLabels() != null) {
            labels.putAll(em.getLabels());
        }
        labels.put(LABEL_SERVICE_NAME, em.getName());
        labels.put(LABEL_MANAGED_BY, CONTROLLER_NAME);
        Map<String, String> annotations = new HashMap<>();
        if (em.getAnnotations() != null) {
            em.getAnnotations().forEach((k, v) -> {
                if (!k.equals(ENDPOINTS_LAST_CHANGE_TRIGGER_TIME) && !k.equals(LAST_APPLIED_CONFIG)) {
                    annotations.put(k, v);
                }
            });
        }
        ObjectMeta meta = new ObjectMeta();
        meta.setLabels(labels);
        meta.setAnnotations(annotations);
        meta.setOwnerReferences(new ArrayList<>(List.of(ownerRef)));
        meta.setNamespace(em.getNamespace());
        if (sliceName == null || sliceName.isEmpty()) {
            meta.setGenerateName(endpointSlicePrefix(em.getName()));
        } else {
            meta.setName(sliceName);
        }
        EndpointSlice slice = new EndpointSlice();
        slice.setMetadata(meta);
        slice.setPorts(ports);
        slice.setAddressType(addressType);
        slice.setEndpoints(new ArrayList<>());
        return slice;
    }

    /** "name-" unless that is not a valid generateName prefix (apimachinery NameIsDNSSubdomain with prefix). */
    static String endpointSlicePrefix(String serviceName) {
        String prefix = serviceName + "-";
        return isValidSubdomainPrefix(prefix) ? prefix : serviceName;
    }

    private static boolean isValidSubdomainPrefix(String name) {
        // maskTrailingDash: as upstream, drops the last two characters before appending "a"
        if (name.length() > 1 && name.endsWith("-")) {
            name = name.substring(0, name.length() - 2) + "a";
        }
        return name.length() <= 253 && DNS1123_SUBDOMAIN.matcher(name).matches();
    }

    /** An EndpointSlice endpoint and its address type for {@code address}; null when the IP is not valid. */
    static Map.Entry<Endpoint, String> addressToEndpoint(EndpointAddress address, boolean ready) {
        byte[] ip = GoIP.parseSloppy(address.getIp());
        if (ip == null) {
            return null;
        }
        String addressType = GoIP.isIPv4(ip) ? IPV4 : IPV6;
        Endpoint endpoint = new Endpoint();
        // re-stringified, as upstream, in case the Endpoints IP is in an irregular format
        endpoint.setAddresses(new ArrayList<>(List.of(GoIP.format(ip))));
        EndpointConditions conditions = new EndpointConditions();
        conditions.setReady(ready);
        endpoint.setConditions(conditions);
        ObjectReference targetRef = address.getTargetRef();
        endpoint.setTargetRef(targetRef == null ? null : new ObjectReferenceBuilder(targetRef).build());
        if (address.getNodeName() != null) {
            endpoint.setNodeName(address.getNodeName());
        }
        if (address.getHostname() != null && !address.getHostname().isEmpty()) {
            endpoint.setHostname(address.getHostname());
        }
        return Map.entry(endpoint, addressType);
    }

    /** Endpoints ports as EndpointSlice ports; Go's zero values where the Endpoints port leaves a field out. */
    static List<EndpointPort> epPortsToEpsPorts(List<io.fabric8.kubernetes.api.model.EndpointPort> epPorts) {
        List<EndpointPort> out = new ArrayList<>();
        if (epPorts == null) {
            return out;
        }
        for (io.fabric8.kubernetes.api.model.EndpointPort p : epPorts) {
            EndpointPort eps = new EndpointPort();
            eps.setName(p.getName() == null ? "" : p.getName());
            eps.setPort(p.getPort() == null ? 0 : p.getPort());
            eps.setProtocol(p.getProtocol() == null ? "" : p.getProtocol());
            eps.setAppProtocol(p.getAppProtocol());
            out.add(eps);
        }
        return out;
    }

    /** "namespace/service-name" of the Endpoints a slice mirrors; null when the label is missing or empty. */
    static String endpointsControllerKey(EndpointSlice slice) {
        Map<String, String> labels = slice.getMetadata().getLabels();
        String serviceName = labels == null ? null : labels.get(LABEL_SERVICE_NAME);
        if (serviceName == null || serviceName.isEmpty()) {
            return null;
        }
        return slice.getMetadata().getNamespace() + "/" + serviceName;
    }

    static boolean skipMirror(Map<String, String> labels) {
        return labels != null && "true".equals(labels.get(LABEL_SKIP_MIRROR));
    }

    static boolean hasLeaderElection(Map<String, String> annotations) {
        return annotations != null && annotations.containsKey(LEADER_ELECTION_ANNOTATION);
    }

    /** A copy of {@code m} (null as empty) without {@code keys}. */
    static Map<String, String> cloneAndRemoveKeys(Map<String, String> m, String... keys) {
        Map<String, String> out = m == null ? new HashMap<>() : new HashMap<>(m);
        for (String k : keys) {
            out.remove(k);
        }
        return out;
    }

    static boolean managedByChanged(EndpointSlice a, EndpointSlice b) {
        return managedByController(a) != managedByController(b);
    }

    static boolean managedByController(EndpointSlice slice) {
        Map<String, String> labels = slice.getMetadata().getLabels();
        return labels != null && CONTROLLER_NAME.equals(labels.get(LABEL_MANAGED_BY));
    }

    /** apimachinery's Semantic.DeepEqual on string maps: nil and empty are equal. */
    static boolean semanticEqual(Map<String, String> a, Map<String, String> b) {
        return (a == null ? Map.of() : a).equals(b == null ? Map.of() : b);
    }
}
