package io.qkcm.controller.deployment;

import java.time.Clock;
import java.time.Duration;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.DeploymentStatus;
import io.fabric8.kubernetes.api.model.apps.ReplicaSet;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.qkcm.controller.OwnWrites;
import io.qkcm.runtime.events.EventRecorder;
import io.qkcm.runtime.informers.MetaNamespaceKey;
import io.qkcm.runtime.clients.ProtobufWrites;

/**
 * What the rollout concerns ({@link Sync}, {@link Rolling}, {@link Recreate}, {@link Progress},
 * {@link Rollback}) use of upstream's DeploymentController struct: the client, the ReplicaSet lister, the
 * event recorder, the clock (upstream's nowFn), the queue's rate-limited and delayed adds, the
 * DeploymentReplicaSetTerminatingReplicas gate, and the controller's own Deployment status and ReplicaSet
 * writes not yet cached.
 * Built once by {@link DeploymentController} and passed down, so that no concern holds the controller.
 * {@code log} is the controller's logger, kept so that the concerns log under the same category as before.
 */
record DeploymentContext(KubernetesClient client, SharedIndexInformer<ReplicaSet> replicaSets, EventRecorder recorder,
        Clock clock, Consumer<Deployment> enqueueRateLimited, BiConsumer<Deployment, Duration> enqueueAfter,
        boolean terminatingReplicasGate, OwnWrites<Deployment> ownWrites, OwnWrites<ReplicaSet> replicaSetWrites,
        Logger log) {

    static final String API_VERSION = "apps/v1";
    static final String KIND = "Deployment";

    /** d's status, created empty when absent (Go's value field is never nil). */
    static DeploymentStatus status(Deployment d) {
        if (d.getStatus() == null) {
            d.setStatus(new DeploymentStatus());
        }
        return d.getStatus();
    }

    /**
     * UpdateStatus(d); like upstream the returned object is not used by callers that ignore it. The answer is
     * the Deployment the next sync starts from while the cache has not shown it ({@link OwnWrites}).
     */
    Deployment updateStatus(Deployment d) {
        String sent = d.getMetadata().getResourceVersion();
        Deployment answer = ProtobufWrites.updateStatus(client, d);
        ownWrites.wrote(sent, answer);
        return answer;
    }

    /**
     * Update(rs). The answer is the ReplicaSet the next sync starts from while the cache has not shown it
     * ({@link #latest}): a scale or annotation update right after this one would otherwise be written from the
     * version this one replaced, and conflict.
     */
    ReplicaSet updateReplicaSet(ReplicaSet rs) {
        String sent = rs.getMetadata().getResourceVersion();
        ReplicaSet answer = ProtobufWrites.update(client, rs);
        replicaSetWrites.wrote(sent, answer);
        return answer;
    }

    /**
     * The ReplicaSet cached as {@code cached}, or the answer to this controller's last update of it while the
     * cache still holds a version that update superseded. Kept as it is: callers copy it before changing it.
     */
    ReplicaSet latest(ReplicaSet cached) {
        return replicaSetWrites.latest(MetaNamespaceKey.of(cached), cached);
    }
}
