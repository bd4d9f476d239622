package io.qkcm.endpointslice;


import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.ObjectReferenceBuilder;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodIP;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServicePort;
import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointConditions;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointPort;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointSlice;
import io.qkcm.controller.GoIP;
import io.qkcm.controller.GoTime;
import io.qkcm.endpointslice.util.EndpointSliceUtil;
import io.qkcm.endpointslice.util.PortNotFoundException;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Pattern;
import org.jboss.logging.Logger;

/** k8s.io/endpointslice/utils.go (FindPort lives in the shared util). */
public final class ReconcilerUtils {

    private static final Logger LOG = Logger.getLogger(ReconcilerUtils.class);

    public static final String LABEL_SERVICE_NAME = "kubernetes.io/service-name";
    public static final String LABEL_MANAGED_BY = "endpointslice.kubernetes.io/managed-by";
    public static final String LABEL_HEADLESS = "service.kubernetes.io/headless";
    public static final String LABEL_TOPOLOGY_ZONE = "topology.kubernetes.io/zone";
    public static final String ANNOTATION_LAST_CHANGE_TRIGGER_TIME = "endpoints.kubernetes.io/last-change-trigger-time";
    public static final String ANNOTATION_TOPOLOGY_MODE = "service.kubernetes.io/topology-mode";
    public static final String DEPRECATED_ANNOTATION_TOPOLOGY_AWARE_HINTS = "service.kubernetes.io/topology-aware-hints";
    public static final String ADDRESS_TYPE_IPV4 = "IPv4";
    public static final String ADDRESS_TYPE_IPV6 = "IPv6";
    public static final String CLUSTER_IP_NONE = "None";

    private static final Pattern DNS1123_SUBDOMAIN = Pattern
            .compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");

    private ReconcilerUtils() {
    }

    /** The Endpoint for a Pod (its Node, if known, gives the zone) in a slice of {@code addressType}. */
    static Endpoint podToEndpoint(Pod pod, Node node, Service service, String addressType) {
        boolean serving = EndpointSliceUtil.isPodReady(pod);
        boolean terminating = pod.getMetadata().getDeletionTimestamp() != null;
        // a terminating pod is never ready, unless the Service publishes not-ready addresses
        boolean ready = publishNotReadyAddresses(service) || (serving && !terminating);
        Endpoint ep = new Endpoint();
        ep.setAddresses(endpointAddresses(pod, addressType));
        EndpointConditions conditions = new EndpointConditions();
        conditions.setReady(ready);
        conditions.setServing(serving);
        conditions.setTerminating(terminating);
        ep.setConditions(conditions);
        ep.setTargetRef(new ObjectReferenceBuilder().withKind("Pod").withNamespace(pod.getMetadata().getNamespace())
                .withName(pod.getMetadata().getName()).withUid(pod.getMetadata().getUid()).build());
        String nodeName = pod.getSpec().getNodeName();
        if (nodeName != null && !nodeName.isEmpty()) {
            ep.setNodeName(nodeName);
        }
        if (node != null && node.getMetadata().getLabels() != null) {
            String zone = node.getMetadata().getLabels().get(LABEL_TOPOLOGY_ZONE);
            if (zone != null && !zone.isEmpty()) {
                ep.setZone(zone);
            }
        }
        if (EndpointSliceUtil.shouldSetHostname(pod, service)) {
            ep.setHostname(pod.getSpec().getHostname());
        }
        return ep;
    }

    static boolean publishNotReadyAddresses(Service service) {
        return Boolean.TRUE.equals(service.getSpec().getPublishNotReadyAddresses());
    }

    /** The ports of the Service as the Pod serves them (named target ports resolved in the Pod). */
    static List<EndpointPort> endpointPorts(Service service, Pod pod) {
        List<EndpointPort> out = new ArrayList<>();
        List<ServicePort> ports = service.getSpec().getPorts();
        // a headless Service may have no ports
        if ((ports == null || ports.isEmpty()) && CLUSTER_IP_NONE.equals(service.getSpec().getClusterIP())) {
            return out;
        }
        if (ports == null) {
            return out;
        }
        for (ServicePort sp : ports) {
            int portNum;
            try {
                portNum = EndpointSliceUtil.findPort(pod, sp);
            } catch (PortNotFoundException e) {
                LOG.tracef("Failed to find port for service %s/%s: %s", service.getMetadata().getNamespace(),
                        service.getMetadata().getName(), e.getMessage());
                continue;
            }
            EndpointPort ep = new EndpointPort();
            ep.setName(sp.getName() == null ? "" : sp.getName());
            ep.setPort(portNum);
            ep.setProtocol(sp.getProtocol());
            ep.setAppProtocol(sp.getAppProtocol());
            out.add(ep);
        }
        return out;
    }

    /** The Pod's IPs of the slice's family, re-stringified as Go does. */
    static List<String> endpointAddresses(Pod pod, String addressType) {
        List<String> addresses = new ArrayList<>();
        if (pod.getStatus() == null || pod.getStatus().getPodIPs() == null) {
            return addresses;
        }
        for (PodIP podIP : pod.getStatus().getPodIPs()) {
            byte[] ip = GoIP.parseSloppy(podIP.getIp());
            boolean v6 = GoIP.isIPv6(ip);
            if (v6 && ADDRESS_TYPE_IPV6.equals(addressType)) {
                addresses.add(GoIP.format(ip));
            }
            if (!v6 && ADDRESS_TYPE_IPV4.equals(addressType)) {
                addresses.add(GoIP.format(ip));
            }
        }
        return addresses;
    }

    /** A new slice (no name yet: generateName) owned by the Service, for the given ports and family. */
    static EndpointSlice newEndpointSlice(Service service, List<EndpointPort> ports, String addressType,
            String controllerName) {
        OwnerReference owner = new OwnerReferenceBuilder().withApiVersion("v1").withKind("Service")
                .withName(service.getMetadata().getName()).withUid(service.getMetadata().getUid())
                .withController(true).withBlockOwnerDeletion(true).build();
        EndpointSlice slice = new EndpointSlice();
        slice.setMetadata(new io.fabric8.kubernetes.api.model.ObjectMetaBuilder()
                .withGenerateName(endpointSlicePrefix(service.getMetadata().getName()))
                .withNamespace(service.getMetadata().getNamespace()).withLabels(new LinkedHashMap<>())
                .withOwnerReferences(new ArrayList<>(List.of(owner))).build());
        slice.setPorts(copyPorts(ports));
        slice.setAddressType(addressType);
        slice.setEndpoints(new ArrayList<>());
        slice.getMetadata().setLabels(endpointSliceLabels(slice, service, controllerName).labels());
        return slice;
    }

    static List<EndpointPort> copyPorts(List<EndpointPort> ports) {
        List<EndpointPort> out = new ArrayList<>();
        for (EndpointPort p : ports) {
            EndpointPort c = new EndpointPort();
            c.setName(p.getName());
            c.setPort(p.getPort());
            c.setProtocol(p.getProtocol());
            c.setAppProtocol(p.getAppProtocol());
            out.add(c);
        }
        return out;
    }

    /** {@code <service>-}, or the bare name if the dash would make an invalid name prefix. */
    static String endpointSlicePrefix(String serviceName) {
        String prefix = serviceName + "-";
        // NameIsDNSSubdomain(prefix, true) checks the prefix with its trailing dash masked
        String masked = prefix.length() > 1 ? prefix.substring(0, prefix.length() - 1) + "a" : prefix;
        if (masked.length() > 253 || !DNS1123_SUBDOMAIN.matcher(masked).matches()) {
            return serviceName;
        }
        return prefix;
    }

    /** Whether the slice is owned by this very Service (uid), as v1 Service. */
    static boolean ownedBy(EndpointSlice slice, Service svc) {
        List<OwnerReference> refs = slice.getMetadata().getOwnerReferences();
        if (refs == null) {
            return false;
        }
        for (OwnerReference o : refs) {
            if (Objects.equals(o.getUid(), svc.getMetadata().getUid()) && "Service".equals(o.getKind())
                    && "v1".equals(o.getApiVersion())) {
                return true;
            }
        }
        return false;
    }

    /** The slice that will be closest to full once {@code numEndpoints} are added, or null. */
    static EndpointSlice sliceToFill(List<EndpointSlice> slices, int numEndpoints, int maxEndpoints) {
        int closestDiff = maxEndpoints;
        EndpointSlice closest = null;
        for (EndpointSlice slice : slices) {
            int currentDiff = maxEndpoints - (numEndpoints + size(slice));
            if (currentDiff >= 0 && currentDiff < closestDiff) {
                closestDiff = currentDiff;
                closest = slice;
                if (closestDiff == 0) {
                    return closest;
                }
            }
        }
        return closest;
    }

    static int size(EndpointSlice slice) {
        return slice.getEndpoints() == null ? 0 : slice.getEndpoints().size();
    }

    /** Sets the trigger-time annotation, or clears it when there is no trigger time (null). */
    static void addTriggerTimeAnnotation(EndpointSlice slice, Instant triggerTime) {
        if (slice.getMetadata().getAnnotations() == null) {
            slice.getMetadata().setAnnotations(new LinkedHashMap<>());
        }
        if (triggerTime != null) {
            slice.getMetadata().getAnnotations().put(ANNOTATION_LAST_CHANGE_TRIGGER_TIME, GoTime.rfc3339NanoUtc(triggerTime));
        } else {
            slice.getMetadata().getAnnotations().remove(ANNOTATION_LAST_CHANGE_TRIGGER_TIME);
        }
    }

    /** "namespace/service" of the Service a slice belongs to (label kubernetes.io/service-name). */
    public static String serviceControllerKey(EndpointSlice slice) {
        if (slice == null) {
            throw new IllegalArgumentException("nil EndpointSlice passed to ServiceControllerKey()");
        }
        Map<String, String> labels = slice.getMetadata().getLabels();
        String serviceName = labels == null ? null : labels.get(LABEL_SERVICE_NAME);
        if (serviceName == null || serviceName.isEmpty()) {
            throw new IllegalArgumentException("EndpointSlice missing " + LABEL_SERVICE_NAME + " label");
        }
        return slice.getMetadata().getNamespace() + "/" + serviceName;
    }

    /** The labels a slice should carry, and whether its non-reserved labels differ from the Service's. */
    record Labels(Map<String, String> labels, boolean updated) {
    }

    /**
     * The Service's labels (reserved keys skipped) plus headless, service-name and managed-by; "updated"
     * says whether the slice's own non-reserved labels differ from the Service's.
     */
    static Labels endpointSliceLabels(EndpointSlice slice, Service service, String controllerName) {
        Map<String, String> epLabels = new HashMap<>();
        Map<String, String> svcLabels = new LinkedHashMap<>();
        if (slice.getMetadata().getLabels() != null) {
            slice.getMetadata().getLabels().forEach((k, v) -> {
                if (!isReservedLabelKey(k)) {
                    epLabels.put(k, v);
                }
            });
        }
        if (service.getMetadata().getLabels() != null) {
            service.getMetadata().getLabels().forEach((k, v) -> {
                if (isReservedLabelKey(k)) {
                    LOG.infof("Service %s/%s using reserved endpoint slices label, skipping %s=%s",
                            service.getMetadata().getNamespace(), service.getMetadata().getName(), k, v);
                    return;
                }
                svcLabels.put(k, v);
            });
        }
        boolean updated = !epLabels.equals(svcLabels);
        if (!isServiceIPSet(service)) {
            svcLabels.put(LABEL_HEADLESS, "");
        } else {
            svcLabels.remove(LABEL_HEADLESS);
        }
        svcLabels.put(LABEL_SERVICE_NAME, service.getMetadata().getName());
        svcLabels.put(LABEL_MANAGED_BY, controllerName);
        return new Labels(svcLabels, updated);
    }

    static boolean isReservedLabelKey(String key) {
        return LABEL_SERVICE_NAME.equals(key) || LABEL_MANAGED_BY.equals(key) || LABEL_HEADLESS.equals(key);
    }

    /**
     * The address types the Service's slices have: one per IP family; without families (an old API
     * server), the ClusterIP's family, or both for a headless Service.
     */
    public static Set<String> addressTypesForService(Service service) {
        Set<String> types = new LinkedHashSet<>();
        List<String> families = service.getSpec().getIpFamilies();
        if (families != null) {
            for (String f : families) {
                if ("IPv4".equals(f)) {
                    types.add(ADDRESS_TYPE_IPV4);
                }
                if ("IPv6".equals(f)) {
                    types.add(ADDRESS_TYPE_IPV6);
                }
            }
        }
        if (!types.isEmpty()) {
            return types;
        }
        String clusterIP = service.getSpec().getClusterIP();
        if (clusterIP != null && !clusterIP.isEmpty() && !CLUSTER_IP_NONE.equals(clusterIP)) {
            byte[] ip = GoIP.parseSloppy(clusterIP);
            types.add(ip != null && GoIP.isIPv6(ip) ? ADDRESS_TYPE_IPV6 : ADDRESS_TYPE_IPV4);
            LOG.debugf("Couldn't find ipfamilies for service %s/%s; EndpointSlices use addressType %s of ClusterIP %s",
                    service.getMetadata().getNamespace(), service.getMetadata().getName(), types, clusterIP);
            return types;
        }
        types.add(ADDRESS_TYPE_IPV4);
        types.add(ADDRESS_TYPE_IPV6);
        LOG.debugf("Couldn't find ipfamilies for headless service %s/%s; using both families",
                service.getMetadata().getNamespace(), service.getMetadata().getName());
        return types;
    }

    /** Existing slices neither updated nor deleted, by name. */
    static List<EndpointSlice> unchangedSlices(List<EndpointSlice> existing, List<EndpointSlice> toUpdate,
            List<EndpointSlice> toDelete) {
        Set<String> changed = new java.util.HashSet<>();
        toUpdate.forEach(s -> changed.add(s.getMetadata().getName()));
        toDelete.forEach(s -> changed.add(s.getMetadata().getName()));
        List<EndpointSlice> out = new ArrayList<>();
        for (EndpointSlice s : existing) {
            if (!changed.contains(s.getMetadata().getName())) {
                out.add(s);
            }
        }
        return out;
    }

    /**
     * Topology-aware hints asked for: the deprecated annotation wins over topology-mode when both are
     * set; "Auto" or "auto".
     */
    public static boolean hintsEnabled(Map<String, String> annotations) {
        if (annotations == null) {
            return false;
        }
        String val = annotations.get(DEPRECATED_ANNOTATION_TOPOLOGY_AWARE_HINTS);
        if (!annotations.containsKey(DEPRECATED_ANNOTATION_TOPOLOGY_AWARE_HINTS)) {
            if (!annotations.containsKey(ANNOTATION_TOPOLOGY_MODE)) {
                return false;
            }
            val = annotations.get(ANNOTATION_TOPOLOGY_MODE);
        }
        return "Auto".equals(val) || "auto".equals(val);
    }

    static boolean isServiceIPSet(Service service) {
        String ip = service.getSpec().getClusterIP();
        return ip != null && !ip.isEmpty() && !CLUSTER_IP_NONE.equals(ip);
    }
}
