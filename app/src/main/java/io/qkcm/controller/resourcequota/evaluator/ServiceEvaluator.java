package io.qkcm.controller.resourcequota.evaluator;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServicePort;
import io.qkcm.controller.resourcequota.quota.Evaluator;
import io.qkcm.controller.resourcequota.quota.GroupResource;
import io.qkcm.controller.resourcequota.quota.ObjectCountEvaluator;
import io.qkcm.controller.util.GoQuantity;
import io.qkcm.controller.resourcequota.quota.ResourceLists;
import io.qkcm.controller.resourcequota.quota.UsageStats;
import io.qkcm.controller.resourcequota.quota.UsageStatsOptions;

/**
 * Upstream's serviceEvaluator (services.go): {@code services}, {@code count/services},
 * {@code services.nodeports} (a NodePort service's ports; a LoadBalancer's too, or only those with an
 * explicit node port when allocateLoadBalancerNodePorts is false) and {@code services.loadbalancers}.
 */
public final class ServiceEvaluator implements Evaluator {

    public static final GroupResource SERVICES = new GroupResource("", "services");
    static final String SERVICE_OBJECT_COUNT_NAME = ObjectCountEvaluator.objectCountQuotaResourceNameFor(SERVICES);
    static final List<String> SERVICE_RESOURCES = List.of(SERVICE_OBJECT_COUNT_NAME, "services", "services.nodeports",
            "services.loadbalancers");

    private final UsageStats.ListFunc listFunc;

    public ServiceEvaluator(UsageStats.ListFunc listFunc) {
        this.listFunc = listFunc;
    }

    @Override
    public GroupResource groupResource() {
        return SERVICES;
    }

    @Override
    public List<String> matchingResources(List<String> input) {
        return ResourceLists.intersection(input, SERVICE_RESOURCES);
    }

    @Override
    public Map<String, GoQuantity> usageStats(UsageStatsOptions options) throws Exception {
        return UsageStats.calculate(options, listFunc, UsageStats.MATCHES_NO_SCOPE, o -> usage((Service) o));
    }

    public static Map<String, GoQuantity> usage(Service svc) {
        Map<String, GoQuantity> result = new TreeMap<>();
        List<ServicePort> ports = svc.getSpec().getPorts() == null ? List.of() : svc.getSpec().getPorts();
        result.put(SERVICE_OBJECT_COUNT_NAME, GoQuantity.of(1));
        result.put("services", GoQuantity.of(1));
        result.put("services.loadbalancers", GoQuantity.ZERO);
        result.put("services.nodeports", GoQuantity.ZERO);
        String type = svc.getSpec().getType();
        if ("NodePort".equals(type)) {
            result.put("services.nodeports", GoQuantity.of(ports.size()));
        } else if ("LoadBalancer".equals(type)) {
            // node ports are not allocated yet: count the intent
            if (Boolean.FALSE.equals(svc.getSpec().getAllocateLoadBalancerNodePorts())) {
                long withNodePort = ports.stream().filter(p -> p.getNodePort() != null && p.getNodePort() != 0).count();
                result.put("services.nodeports", GoQuantity.of(withNodePort));
            } else {
                result.put("services.nodeports", GoQuantity.of(ports.size()));
            }
            result.put("services.loadbalancers", GoQuantity.of(1));
        }
        return result;
    }

    /** GetQuotaServiceType: NodePort or LoadBalancer, else empty. */
    public static String quotaServiceType(Service svc) {
        String type = svc.getSpec() == null ? null : svc.getSpec().getType();
        return "NodePort".equals(type) || "LoadBalancer".equals(type) ? type : "";
    }
}
