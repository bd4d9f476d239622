package io.qkcm.controller.resourcequota.evaluator;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.junit.jupiter.api.Test;

import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.ServiceBuilder;
import io.fabric8.kubernetes.api.model.ServicePort;
import io.fabric8.kubernetes.api.model.ServicePortBuilder;

/** services_test.go's TestServiceEvaluatorMatchesResources and TestServiceEvaluatorUsage. */
class ServiceEvaluatorTest {

    private static Service svc(String type, Boolean allocate, ServicePort... ports) {
        return new ServiceBuilder().withNewMetadata().withName("s").endMetadata().withNewSpec().withType(type)
                .withAllocateLoadBalancerNodePorts(allocate).withPorts(ports).endSpec().build();
    }

    private static ServicePort port(int port, Integer nodePort) {
        return new ServicePortBuilder().withPort(port).withNodePort(nodePort).build();
    }

    private static Map<String, String> usage(Service s) {
        Map<String, String> out = new TreeMap<>();
        ServiceEvaluator.usage(s).forEach((k, v) -> out.put(k, v.toString()));
        return out;
    }

    private static Map<String, String> expected(String nodePorts, String loadBalancers) {
        return Map.of("count/services", "1", "services", "1", "services.nodeports", nodePorts, "services.loadbalancers",
                loadBalancers);
    }

    @Test
    void matchesResources() {
        ServiceEvaluator e = new ServiceEvaluator(ns -> List.of());
        assertThat(e.matchingResources(List.of("count/services", "cpu", "services", "services.nodeports",
                "services.loadbalancers", "requests.storage")))
                .containsExactly("count/services", "services", "services.loadbalancers", "services.nodeports");
    }

    @Test
    void usageTable() {
        assertThat(usage(svc("LoadBalancer", null))).isEqualTo(expected("0", "1"));
        assertThat(usage(svc("LoadBalancer", null, port(27443, null)))).isEqualTo(expected("1", "1"));
        assertThat(usage(svc("LoadBalancer", null, port(27443, null), port(27444, null)))).isEqualTo(expected("2", "1"));
        assertThat(usage(svc("ClusterIP", null))).isEqualTo(expected("0", "0"));
        assertThat(usage(svc("NodePort", null, port(27443, null)))).isEqualTo(expected("1", "0"));
        assertThat(usage(svc("NodePort", null, port(27443, null), port(27444, null)))).isEqualTo(expected("2", "0"));
        // allocateLoadBalancerNodePorts false: only explicit node ports count
        assertThat(usage(svc("LoadBalancer", false, port(27443, null), port(27444, null)))).isEqualTo(expected("0", "1"));
        assertThat(usage(svc("LoadBalancer", null, port(27443, 32001), port(27444, 32002)))).isEqualTo(expected("2", "1"));
        assertThat(usage(svc("LoadBalancer", true, port(27443, null), port(27444, null)))).isEqualTo(expected("2", "1"));
        assertThat(usage(svc("LoadBalancer", false, port(27443, 32001), port(27444, 32002)))).isEqualTo(expected("2", "1"));
    }

    @Test
    void quotaServiceType() {
        assertThat(ServiceEvaluator.quotaServiceType(svc("NodePort", null))).isEqualTo("NodePort");
        assertThat(ServiceEvaluator.quotaServiceType(svc("LoadBalancer", null))).isEqualTo("LoadBalancer");
        assertThat(ServiceEvaluator.quotaServiceType(svc("ClusterIP", null))).isEmpty();
        assertThat(ServiceEvaluator.quotaServiceType(svc("ExternalName", null))).isEmpty();
    }
}
