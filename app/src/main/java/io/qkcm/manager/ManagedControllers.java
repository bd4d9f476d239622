package io.qkcm.manager;

import io.qkcm.controller.nodelifecycle.NodeLifecycleController;
import io.qkcm.controller.namespace.NamespaceController;
import io.qkcm.controller.serviceaccount.ServiceAccountControllers;
import io.qkcm.controller.serviceaccount.ServiceAccountsController;

/**
 * qkcm's implementations, attached to upstream's controller table. A controller listed here runs
 * when {@code --controllers} selects it; every other upstream name is accepted and reported as not
 * implemented.
 */
public final class ManagedControllers {

    private ManagedControllers() {
    }

    public static ControllerCatalog catalog() {
        return ControllerCatalog.upstream()
                .implement("replicaset-controller", c -> c.operate(io.qkcm.controller.replicaset.ReplicaSetController.replicaSets(c)))
                .implement("replicationcontroller-controller", c -> c.operate(new io.qkcm.controller.replicaset.ReplicationManager(c)))
                .implement("deployment-controller", c -> c.operate(new io.qkcm.controller.deployment.DeploymentController(c)))
                .implement("garbage-collector-controller", io.qkcm.controller.garbagecollector.GarbageCollector::create)
                .implement("serviceaccount-token-controller", ServiceAccountControllers::tokens)
                .implement("namespace-controller", c -> c.operate(new NamespaceController(c)))
                .implement("serviceaccount-controller", c -> c.operate(new ServiceAccountsController(c)))
                .implement("root-ca-certificate-publisher-controller",
                        c -> c.operate(io.qkcm.controller.certificates.rootcacertpublisher.RootCACertPublisher.create(c)))
                .implement("legacy-serviceaccount-token-cleaner-controller", ServiceAccountControllers::legacyTokenCleaner)
                .implementPartially(NodeLifecycleController.NAME, c -> c.operate(new NodeLifecycleController(c)),
                        "only the NoSchedule taint pass (node condition and unschedulable taints); node health monitoring (Unknown conditions, NoExecute taints, evictions) is not ported")
                .implement("endpointslice-mirroring-controller",
                        c -> c.operate(new io.qkcm.controller.endpointslicemirroring.EndpointSliceMirroringController(c)))
                .implement("endpoints-controller", c -> c.operate(new io.qkcm.controller.endpoint.EndpointsController(c)))
                .implement("endpointslice-controller", c -> c.operate(new io.qkcm.controller.endpointslice.EndpointSliceController(c)))
                .implement("ttl-after-finished-controller",
                        c -> c.operate(new io.qkcm.controller.ttlafterfinished.TTLAfterFinishedController(c)))
                .implement("pod-garbage-collector-controller", PodGCSettings::podGC)
                .implement("cronjob-controller", c -> c.operate(new io.qkcm.controller.cronjob.CronJobController(c)))
                .implement(io.qkcm.controller.statefulset.StatefulSetController.NAME,
                        c -> c.operate(new io.qkcm.controller.statefulset.StatefulSetController(c)))
                .implement("job-controller", c -> c.operate(new io.qkcm.controller.job.JobController(c)))
                .implement("daemonset-controller", c -> c.operate(new io.qkcm.controller.daemon.DaemonSetsController(c)));
    }
}
