package io.qkcm.manager;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.LinkedHashMap;
import java.util.Map;

import jakarta.inject.Inject;

import org.junit.jupiter.api.Test;

import io.qkcm.runtime.josdk.Controller;
import io.qkcm.runtime.josdk.KeyReconciler;
import io.qkcm.runtime.josdk.OperatorController;
import io.qkcm.testing.RealApiServerResource;
import io.quarkus.test.common.QuarkusTestResource;
import io.quarkus.test.junit.QuarkusTest;

/**
 * Each controller runs as a JOSDK Operator of its own with upstream's worker count
 * ({@code --concurrent-*-syncs} defaults, or upstream's fixed count where there is no flag), and its
 * reconcilers are named as upstream's work queues.
 */
@QuarkusTest
@QuarkusTestResource(value = RealApiServerResource.class, restrictToAnnotatedClass = false)
class ControllerWorkersTest {

    @Inject
    ControllerManager manager;

    @Test
    void workersAndQueuesAreUpstreams() {
        Map<String, Integer> workers = new LinkedHashMap<>();
        Map<String, String> queues = new LinkedHashMap<>();
        for (Controller c : manager.controllers()) {
            if (c instanceof OperatorController oc) {
                workers.put(c.name(), oc.workerCount());
                queues.put(c.name(), String.join(",", oc.reconcilers().stream().map(KeyReconciler::queueName).toList()));
            }
        }
        assertThat(workers).containsEntry("replicaset-controller", 5)
                .containsEntry("replicationcontroller-controller", 5)
                .containsEntry("deployment-controller", 5)
                .containsEntry("namespace-controller", 10)
                .containsEntry("serviceaccount-controller", 1)
                .containsEntry("endpoints-controller", 5)
                .containsEntry("endpointslice-controller", 5)
                .containsEntry("endpointslice-mirroring-controller", 5)
                .containsEntry("job-controller", 5)
                .containsEntry("cronjob-controller", 5)
                .containsEntry("ttl-after-finished-controller", 5)
                .containsEntry("statefulset-controller", 5)
                .containsEntry("pod-garbage-collector-controller", 1)
                .containsEntry("daemonset-controller", 2)
                .containsEntry("ttl-controller", 5)
                .containsEntry("taint-eviction-controller", 8);
        assertThat(queues).containsEntry("replicaset-controller", "replicaset")
                .containsEntry("replicationcontroller-controller", "replicationmanager")
                .containsEntry("deployment-controller", "deployment")
                .containsEntry("namespace-controller", "namespace")
                .containsEntry("endpoints-controller", "endpoint")
                .containsEntry("endpointslice-controller", "endpoint_slice")
                .containsEntry("endpointslice-mirroring-controller", "endpoint_slice_mirroring")
                .containsEntry("job-controller", "job")
                .containsEntry("cronjob-controller", "cronjob")
                .containsEntry("ttl-after-finished-controller", "ttl_jobs_to_delete")
                .containsEntry("statefulset-controller", "statefulset")
                .containsEntry("daemonset-controller", "daemonset")
                .containsEntry("ttl-controller", "ttlcontroller")
                .containsEntry("taint-eviction-controller", "noexec_taint_node");
        // every implemented controller but the garbage collector is a JOSDK Operator
        assertThat(manager.controllers()).filteredOn(c -> !(c instanceof OperatorController))
                .extracting(Controller::name).containsOnly("garbage-collector-controller");
    }
}
