package io.qkcm.endpointslice.util;

import io.qkcm.runtime.informers.Indexes;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerPort;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.ObjectReference;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodCondition;
import io.fabric8.kubernetes.api.model.PodIP;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServicePort;
import io.fabric8.kubernetes.api.model.discovery.v1.Endpoint;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointConditions;
import io.fabric8.kubernetes.api.model.discovery.v1.EndpointPort;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import io.qkcm.controller.hash.DeepHash;
import io.qkcm.controller.hash.GoSpew;

/**
 * What the endpoints, endpointslice and endpointslice-mirroring controllers share (upstream
 * {@code k8s.io/endpointslice/util} controller_utils.go, plus {@code FindPort}): which Services a Pod
 * belongs to, which pod changes matter, whether a pod is an endpoint at all.
 */
public final class EndpointSliceUtil {

    private EndpointSliceUtil() {
    }

    /**
     * Keys ({@code namespace/name}) of the Services in the pod's namespace whose selector matches the
     * pod's labels. Services without a selector never match (their endpoints are user-managed).
     */
    public static Set<String> podServiceMemberships(SharedIndexInformer<Service> services, Pod pod) {
        Set<String> set = new HashSet<>();
        String ns = pod.getMetadata().getNamespace();
        Map<String, String> podLabels = pod.getMetadata().getLabels() == null ? Map.of()
                : pod.getMetadata().getLabels();
        for (Service service : Indexes.byIndex(services, Cache.NAMESPACE_INDEX, ns)) {
            Map<String, String> selector = service.getSpec() == null ? null : service.getSpec().getSelector();
            // the API server drops an empty selector, so empty and absent are both Go's nil here
            if (selector == null || selector.isEmpty()) {
                continue;
            }
            if (matches(selector, podLabels)) {
                set.add(service.getMetadata().getNamespace() + "/" + service.getMetadata().getName());
            }
        }
        return set;
    }

    static boolean matches(Map<String, String> selector, Map<String, String> labels) {
        for (Map.Entry<String, String> e : selector.entrySet()) {
            if (!Objects.equals(labels.get(e.getKey()), e.getValue())) {
                return false;
            }
        }
        return true;
    }

    /**
     * Services whose endpoints may change because a pod changed from {@code oldPod} to {@code newPod}:
     * none for a resync; the pod's services when its endpoint-relevant state changed; when only its
     * labels (or hostname/subdomain) changed, the services it joined or left.
     */
    public static Set<String> servicesToUpdateOnPodChange(SharedIndexInformer<Service> services, Pod oldPod,
            Pod newPod) {
        if (Objects.equals(newPod.getMetadata().getResourceVersion(), oldPod.getMetadata().getResourceVersion())) {
            return Set.of();
        }
        boolean[] changed = podEndpointsChanged(oldPod, newPod);
        boolean podChanged = changed[0];
        boolean labelsChanged = changed[1];
        if (!podChanged && !labelsChanged) {
            return Set.of();
        }
        Set<String> result = podServiceMemberships(services, newPod);
        if (labelsChanged) {
            Set<String> old = podServiceMemberships(services, oldPod);
            result = determineNeededServiceUpdates(old, result, podChanged);
        }
        return result;
    }

    /** {podChanged, labelsChanged}. */
    static boolean[] podEndpointsChanged(Pod oldPod, Pod newPod) {
        boolean labelsChanged = !Objects.equals(labels(newPod), labels(oldPod))
                || !hostnameAndSubdomainEqual(newPod, oldPod);
        // upstream compares the two deletionTimestamp pointers, which are never equal once set: any
        // update of a deleting pod counts as a change
        if (newPod.getMetadata().getDeletionTimestamp() != null
                || oldPod.getMetadata().getDeletionTimestamp() != null) {
            return new boolean[] { true, labelsChanged };
        }
        if (isPodReady(oldPod) != isPodReady(newPod)) {
            return new boolean[] { true, labelsChanged };
        }
        List<PodIP> oldIps = podIPs(oldPod);
        List<PodIP> newIps = podIPs(newPod);
        if (oldIps.size() != newIps.size()) {
            return new boolean[] { true, labelsChanged };
        }
        for (int i = 0; i < oldIps.size(); i++) {
            if (!Objects.equals(oldIps.get(i).getIp(), newIps.get(i).getIp())) {
                return new boolean[] { true, labelsChanged };
            }
        }
        return new boolean[] { false, labelsChanged };
    }

    static Set<String> determineNeededServiceUpdates(Set<String> oldServices, Set<String> services,
            boolean podChanged) {
        Set<String> result = new HashSet<>();
        if (podChanged) {
            result.addAll(services);
            result.addAll(oldServices);
        } else {
            for (String s : services) {
                if (!oldServices.contains(s)) {
                    result.add(s);
                }
            }
            for (String s : oldServices) {
                if (!services.contains(s)) {
                    result.add(s);
                }
            }
        }
        return result;
    }

    private static Map<String, String> labels(Pod pod) {
        Map<String, String> l = pod.getMetadata().getLabels();
        return l == null || l.isEmpty() ? Map.of() : l;
    }

    private static boolean hostnameAndSubdomainEqual(Pod a, Pod b) {
        return Objects.equals(nz(a.getSpec() == null ? null : a.getSpec().getHostname()),
                nz(b.getSpec() == null ? null : b.getSpec().getHostname()))
                && Objects.equals(nz(a.getSpec() == null ? null : a.getSpec().getSubdomain()),
                        nz(b.getSpec() == null ? null : b.getSpec().getSubdomain()));
    }

    private static String nz(String s) {
        return s == null ? "" : s;
    }

    private static List<PodIP> podIPs(Pod pod) {
        return pod.getStatus() == null || pod.getStatus().getPodIPs() == null ? List.of()
                : pod.getStatus().getPodIPs();
    }

    /**
     * A pod is an endpoint when it is not terminal and has an IP; a deleting pod only when
     * {@code includeTerminating} (publishNotReadyAddresses, or the slice controller's terminating endpoints).
     */
    public static boolean shouldPodBeInEndpoints(Pod pod, boolean includeTerminating) {
        String phase = pod.getStatus() == null ? null : pod.getStatus().getPhase();
        if ("Failed".equals(phase) || "Succeeded".equals(phase)) {
            return false;
        }
        String podIp = pod.getStatus() == null ? null : pod.getStatus().getPodIP();
        if ((podIp == null || podIp.isEmpty()) && podIPs(pod).isEmpty()) {
            return false;
        }
        return includeTerminating || pod.getMetadata().getDeletionTimestamp() == null;
    }

    /** The endpoint carries the pod's hostname when the pod names this service as its subdomain. */
    public static boolean shouldSetHostname(Pod pod, Service svc) {
        String hostname = pod.getSpec() == null ? null : pod.getSpec().getHostname();
        return hostname != null && !hostname.isEmpty()
                && Objects.equals(pod.getSpec().getSubdomain(), svc.getMetadata().getName())
                && Objects.equals(svc.getMetadata().getNamespace(), pod.getMetadata().getNamespace());
    }

    public static boolean isPodReady(Pod pod) {
        if (pod.getStatus() == null || pod.getStatus().getConditions() == null) {
            return false;
        }
        for (PodCondition c : pod.getStatus().getConditions()) {
            if ("Ready".equals(c.getType())) {
                return "True".equals(c.getStatus());
            }
        }
        return false;
    }

    /**
     * Whether two endpoints with the same identity (see {@link EndpointSet}) carry the same node,
     * zone, conditions and target (ignoring the target's resourceVersion).
     */
    public static boolean endpointsEqualBeyondHash(Endpoint a, Endpoint b) {
        if (!Objects.equals(a.getNodeName(), b.getNodeName()) || !Objects.equals(a.getZone(), b.getZone())) {
            return false;
        }
        EndpointConditions ca = a.getConditions() == null ? new EndpointConditions() : a.getConditions();
        EndpointConditions cb = b.getConditions() == null ? new EndpointConditions() : b.getConditions();
        if (!Objects.equals(ca.getReady(), cb.getReady()) || !Objects.equals(ca.getServing(), cb.getServing())
                || !Objects.equals(ca.getTerminating(), cb.getTerminating())) {
            return false;
        }
        return targetRefsEqualIgnoringResourceVersion(a.getTargetRef(), b.getTargetRef());
    }

    static boolean targetRefsEqualIgnoringResourceVersion(ObjectReference a, ObjectReference b) {
        if (a == null || b == null) {
            return a == b;
        }
        return Objects.equals(nz(a.getKind()), nz(b.getKind())) && Objects.equals(nz(a.getNamespace()), nz(b.getNamespace()))
                && Objects.equals(nz(a.getName()), nz(b.getName())) && Objects.equals(nz(a.getUid()), nz(b.getUid()))
                && Objects.equals(nz(a.getApiVersion()), nz(b.getApiVersion()))
                && Objects.equals(nz(a.getFieldPath()), nz(b.getFieldPath()));
    }

    /**
     * The key under which upstream groups endpoints by their port list. Sorts {@code ports} in place
     * by the md5 of each port's spew text, as upstream does: that order is what the slices carry.
     */
    public static String portMapKey(List<EndpointPort> ports) {
        sortPorts(ports);
        StringBuilder key = new StringBuilder();
        for (EndpointPort p : ports) {
            // the key only has to be equal for equal sorted lists; the ports' own digests do that
            key.append(portHash(p)).append(',');
        }
        return key.toString();
    }

    /** Sorts discovery ports as upstream's portsInOrder (by md5 hex of each port's spew text). */
    public static void sortPorts(List<EndpointPort> ports) {
        if (ports.size() < 2) {
            return;
        }
        Map<EndpointPort, String> hashes = new HashMap<>();
        List<EndpointPort> copy = new ArrayList<>(ports);
        copy.sort(Comparator.comparing(p -> hashes.computeIfAbsent(p, EndpointSliceUtil::portHash)));
        if (!copy.equals(ports)) {
            for (int i = 0; i < copy.size(); i++) {
                ports.set(i, copy.get(i));
            }
        }
    }

    static String portHash(EndpointPort port) {
        return DeepHash.md5Hex(GoSpew.discoveryEndpointPort(), "v1.EndpointPort", port);
    }

    /**
     * The pod port a service port targets: a number as is, a name looked up among the pod's container
     * ports (and restartable init containers, i.e. sidecars) with the same protocol.
     */
    public static int findPort(Pod pod, ServicePort svcPort) throws PortNotFoundException {
        IntOrString target = svcPort.getTargetPort();
        if (target != null && target.getStrVal() != null) {
            String name = target.getStrVal();
            for (Container c : containers(pod.getSpec() == null ? null : pod.getSpec().getContainers())) {
                Integer p = namedPort(c, name, svcPort.getProtocol());
                if (p != null) {
                    return p;
                }
            }
            for (Container c : containers(pod.getSpec() == null ? null : pod.getSpec().getInitContainers())) {
                if (!"Always".equals(c.getRestartPolicy())) {
                    continue;
                }
                Integer p = namedPort(c, name, svcPort.getProtocol());
                if (p != null) {
                    return p;
                }
            }
            throw new PortNotFoundException("no suitable port for manifest: " + nz(pod.getMetadata().getUid()));
        }
        return target == null || target.getIntVal() == null ? 0 : target.getIntVal();
    }

    private static List<Container> containers(List<Container> l) {
        return l == null ? List.of() : l;
    }

    private static Integer namedPort(Container c, String name, String protocol) {
        if (c.getPorts() == null) {
            return null;
        }
        for (ContainerPort port : c.getPorts()) {
            if (name.equals(port.getName()) && Objects.equals(nz(port.getProtocol()), nz(protocol))) {
                return port.getContainerPort() == null ? 0 : port.getContainerPort();
            }
        }
        return null;
    }
}
