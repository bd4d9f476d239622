package io.qkcm.controller.daemon;

import java.util.concurrent.ExecutorService;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.ControllerRevision;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.qkcm.controller.ControllerExpectations;
import io.qkcm.controller.PodControl;

/**
 * What {@link DaemonPods} and {@link Update} use of upstream's DaemonSetsController struct: the client, the
 * pod, node and ControllerRevision listers, the pod control, the expectations, the pool of upstream's
 * per-call goroutines and burstReplicas. Built once by {@link DaemonSetsController} and passed down, so that
 * no concern holds the controller. {@code log} is the controller's logger, kept so that the concerns log
 * under the same category as before.
 */
record DaemonSetContext(KubernetesClient client, SharedIndexInformer<Pod> pods, SharedIndexInformer<Node> nodes,
        SharedIndexInformer<ControllerRevision> histories, PodControl podControl, ControllerExpectations expectations,
        ExecutorService apiCalls, int burstReplicas, Logger log) {

    static final String API_VERSION = "apps/v1";
    static final String KIND = "DaemonSet";

    static int minReadySeconds(DaemonSet ds) {
        Integer m = ds.getSpec().getMinReadySeconds();
        return m == null ? 0 : m;
    }

    static String nodeNameOf(Pod pod) {
        return pod.getSpec() == null || pod.getSpec().getNodeName() == null ? "" : pod.getSpec().getNodeName();
    }

    /** An error with upstream's wording around its cause. */
    static final class DaemonSetSyncException extends Exception {
        DaemonSetSyncException(String message, Throwable cause) {
            super(message, cause);
        }
    }
}
