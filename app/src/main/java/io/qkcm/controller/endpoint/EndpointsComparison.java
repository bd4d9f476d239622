package io.qkcm.controller.endpoint;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.function.BiPredicate;

import io.fabric8.kubernetes.api.model.EndpointAddress;
import io.fabric8.kubernetes.api.model.EndpointPort;
import io.fabric8.kubernetes.api.model.EndpointSubset;
import io.fabric8.kubernetes.api.model.ObjectReference;

/**
 * The checks upstream makes before writing an Endpoints: whether the subsets and the labels already say
 * what they should. Equality is Go's semantic DeepEqual: a nil list equals an empty one, a Go string
 * field that is absent equals "", pointer fields (nodeName, appProtocol, targetRef) tell absent from
 * empty; target references are compared without their resourceVersion, so pod updates that change
 * nothing else cause no write.
 */
final class EndpointsComparison {

    static final String LABEL_MANAGED_BY = "endpoints.kubernetes.io/managed-by";
    static final String IS_HEADLESS_SERVICE = "service.kubernetes.io/headless";

    private EndpointsComparison() {
    }

    /** Upstream's endpointSubsetsEqualIgnoreResourceVersion. */
    static boolean subsetsEqualIgnoreResourceVersion(List<EndpointSubset> a, List<EndpointSubset> b) {
        return listEqual(a, b, EndpointsComparison::subsetEqual);
    }

    private static boolean subsetEqual(EndpointSubset a, EndpointSubset b) {
        if (a == null || b == null) {
            return a == b;
        }
        return listEqual(a.getAddresses(), b.getAddresses(), EndpointsComparison::addressEqual)
                && listEqual(a.getNotReadyAddresses(), b.getNotReadyAddresses(), EndpointsComparison::addressEqual)
                && listEqual(a.getPorts(), b.getPorts(), EndpointsComparison::portEqual);
    }

    private static boolean addressEqual(EndpointAddress a, EndpointAddress b) {
        if (a == null || b == null) {
            return a == b;
        }
        return str(a.getIp(), b.getIp()) && str(a.getHostname(), b.getHostname())
                && Objects.equals(a.getNodeName(), b.getNodeName())
                && refEqual(a.getTargetRef(), b.getTargetRef());
    }

    private static boolean refEqual(ObjectReference a, ObjectReference b) {
        if (a == null || b == null) {
            return a == b;
        }
        return str(a.getKind(), b.getKind()) && str(a.getNamespace(), b.getNamespace())
                && str(a.getName(), b.getName()) && str(a.getUid(), b.getUid())
                && str(a.getApiVersion(), b.getApiVersion()) && str(a.getFieldPath(), b.getFieldPath());
    }

    private static boolean portEqual(EndpointPort a, EndpointPort b) {
        if (a == null || b == null) {
            return a == b;
        }
        return str(a.getName(), b.getName()) && Objects.equals(num(a.getPort()), num(b.getPort()))
                && str(a.getProtocol(), b.getProtocol()) && Objects.equals(a.getAppProtocol(), b.getAppProtocol());
    }

    private static int num(Integer i) {
        return i == null ? 0 : i;
    }

    /** A Go string field: absent and "" are the same value. */
    private static boolean str(String a, String b) {
        return (a == null ? "" : a).equals(b == null ? "" : b);
    }

    private static <T> boolean listEqual(List<T> a, List<T> b, BiPredicate<T, T> eq) {
        int na = a == null ? 0 : a.size();
        int nb = b == null ? 0 : b.size();
        if (na != nb) {
            return false;
        }
        for (int i = 0; i < na; i++) {
            if (!eq.test(a.get(i), b.get(i))) {
                return false;
            }
        }
        return true;
    }

    /**
     * Upstream's labelsCorrectForEndpoints: the managed-by label names this controller, and apart from it
     * and the headless label the Endpoints' labels are exactly the Service's.
     */
    static boolean labelsCorrect(Map<String, String> epLabels, Map<String, String> svcLabels) {
        Map<String, String> ep = epLabels == null ? Map.of() : epLabels;
        Map<String, String> svc = svcLabels == null ? Map.of() : svcLabels;
        if (!EndpointsController.CONTROLLER_NAME.equals(ep.get(LABEL_MANAGED_BY))) {
            return false;
        }
        int skipped = 0;
        for (Map.Entry<String, String> e : ep.entrySet()) {
            if (e.getKey().equals(IS_HEADLESS_SERVICE) || e.getKey().equals(LABEL_MANAGED_BY)) {
                skipped++;
            } else if (!Objects.equals(svc.get(e.getKey()), e.getValue()) || !svc.containsKey(e.getKey())) {
                return false;
            }
        }
        return svc.size() == ep.size() - skipped;
    }
}
