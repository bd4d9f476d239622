package io.qkcm.controller.disruption;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.ReplicationController;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.apps.ReplicaSet;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.qkcm.controller.ControllerRefManager;

/**
 * How many pods a PodDisruptionBudget expects and how many must stay healthy (upstream's
 * getExpectedPodCount and getExpectedScale): an integer minAvailable counts the selected pods; a
 * percentage minAvailable and any maxUnavailable count the sum of the scales of the pods' controllers,
 * each found by upstream's finders in order — ReplicationController, the Deployment of a ReplicaSet, a
 * ReplicaSet of no Deployment, StatefulSet (all from the shared caches), then any other kind through its
 * scale subresource. A pod with no controller is unmanaged (reported, not counted); a pod whose
 * controller no finder finds is an error.
 */
final class ExpectedPods {

    /** A controller's UID and its scale (upstream's controllerAndScale). */
    record ControllerAndScale(String uid, int scale) {
    }

    /** getExpectedPodCount's results. */
    record Counts(int expectedCount, int desiredHealthy, List<String> unmanagedPods) {
    }

    /** Upstream's podControllerFinder. */
    @FunctionalInterface
    interface Finder {
        ControllerAndScale find(OwnerReference controllerRef, String namespace) throws DisruptionException;
    }

    private final DisruptionContext ctx;
    private final List<Finder> finders;

    ExpectedPods(DisruptionContext ctx, ScaleSubresource scales) {
        this.ctx = ctx;
        // the workload kinds are read from the caches; only other kinds cost a scale GET
        this.finders = List.of(this::getPodReplicationController, this::getPodDeployment, this::getPodReplicaSet,
                this::getPodStatefulSet, scales::getScaleController);
    }

    /** Upstream's getExpectedPodCount. */
    Counts getExpectedPodCount(PodDisruptionBudget pdb, List<Pod> pods) throws DisruptionException {
        var spec = pdb.getSpec();
        if (spec.getMaxUnavailable() != null) {
            Scale s = getExpectedScale(pods);
            int maxUnavailable = scaled(spec.getMaxUnavailable(), s.expectedCount());
            return new Counts(s.expectedCount(), Math.max(0, s.expectedCount() - maxUnavailable), s.unmanagedPods());
        }
        if (spec.getMinAvailable() != null) {
            if (IntOrPercent.isInt(spec.getMinAvailable())) {
                return new Counts(pods.size(), spec.getMinAvailable().getIntVal(), List.of());
            }
            Scale s = getExpectedScale(pods);
            return new Counts(s.expectedCount(), scaled(spec.getMinAvailable(), s.expectedCount()), s.unmanagedPods());
        }
        return new Counts(0, 0, List.of());
    }

    private static int scaled(io.fabric8.kubernetes.api.model.IntOrString v, int total) throws DisruptionException {
        try {
            return IntOrPercent.scaledValue(v, total, true);
        } catch (IllegalArgumentException e) {
            throw new DisruptionException(e.getMessage());
        }
    }

    /** getExpectedScale's results. */
    record Scale(int expectedCount, List<String> unmanagedPods) {
    }

    /**
     * Upstream's getExpectedScale: the sum of the scales of the set of the pods' controllers, and the
     * names of the pods that have none.
     */
    Scale getExpectedScale(List<Pod> pods) throws DisruptionException {
        Map<String, Integer> controllerScale = new LinkedHashMap<>();
        List<String> unmanaged = new ArrayList<>();
        for (Pod pod : pods) {
            OwnerReference ref = ControllerRefManager.controllerOf(pod);
            if (ref == null) {
                unmanaged.add(pod.getMetadata().getName());
                continue;
            }
            if (controllerScale.containsKey(ref.getUid())) {
                continue;
            }
            boolean found = false;
            for (Finder finder : finders) {
                ControllerAndScale cs = finder.find(ref, pod.getMetadata().getNamespace());
                if (cs != null) {
                    controllerScale.put(cs.uid(), cs.scale());
                    found = true;
                    break;
                }
            }
            if (!found) {
                throw new DisruptionException("found no controllers for pod \"" + pod.getMetadata().getName() + "\"");
            }
        }
        int expected = 0;
        for (int scale : controllerScale.values()) {
            expected += scale;
        }
        return new Scale(expected, unmanaged);
    }

    /** Upstream's getPodReplicaSet: a ReplicaSet no Deployment controls. */
    ControllerAndScale getPodReplicaSet(OwnerReference ref, String namespace) throws DisruptionException {
        if (!verifyGroupKind(ref, "ReplicaSet", "apps", "extensions")) {
            return null;
        }
        ReplicaSet rs = DisruptionContext.get(ctx.replicaSets(), namespace, ref.getName());
        if (rs == null || !rs.getMetadata().getUid().equals(ref.getUid())) {
            return null;
        }
        OwnerReference owner = ControllerRefManager.controllerOf(rs);
        if (owner != null && "Deployment".equals(owner.getKind())) {
            return null;
        }
        return new ControllerAndScale(rs.getMetadata().getUid(), replicas(rs.getSpec().getReplicas()));
    }

    /** Upstream's getPodStatefulSet. */
    ControllerAndScale getPodStatefulSet(OwnerReference ref, String namespace) throws DisruptionException {
        if (!verifyGroupKind(ref, "StatefulSet", "apps")) {
            return null;
        }
        StatefulSet ss = DisruptionContext.get(ctx.statefulSets(), namespace, ref.getName());
        if (ss == null || !ss.getMetadata().getUid().equals(ref.getUid())) {
            return null;
        }
        return new ControllerAndScale(ss.getMetadata().getUid(), replicas(ss.getSpec().getReplicas()));
    }

    /** Upstream's getPodDeployment: the Deployment controlling the pod's ReplicaSet. */
    ControllerAndScale getPodDeployment(OwnerReference ref, String namespace) throws DisruptionException {
        if (!verifyGroupKind(ref, "ReplicaSet", "apps", "extensions")) {
            return null;
        }
        ReplicaSet rs = DisruptionContext.get(ctx.replicaSets(), namespace, ref.getName());
        if (rs == null || !rs.getMetadata().getUid().equals(ref.getUid())) {
            return null;
        }
        OwnerReference owner = ControllerRefManager.controllerOf(rs);
        if (owner == null || !verifyGroupKind(owner, "Deployment", "apps", "extensions")) {
            return null;
        }
        Deployment d = DisruptionContext.get(ctx.deployments(), rs.getMetadata().getNamespace(), owner.getName());
        if (d == null || !d.getMetadata().getUid().equals(owner.getUid())) {
            return null;
        }
        return new ControllerAndScale(d.getMetadata().getUid(), replicas(d.getSpec().getReplicas()));
    }

    /** Upstream's getPodReplicationController. */
    ControllerAndScale getPodReplicationController(OwnerReference ref, String namespace) throws DisruptionException {
        if (!verifyGroupKind(ref, "ReplicationController", "")) {
            return null;
        }
        ReplicationController rc = DisruptionContext.get(ctx.replicationControllers(), namespace, ref.getName());
        if (rc == null || !rc.getMetadata().getUid().equals(ref.getUid())) {
            return null;
        }
        return new ControllerAndScale(rc.getMetadata().getUid(), replicas(rc.getSpec().getReplicas()));
    }

    /** Upstream's verifyGroupKind: the reference's kind, and its group one of {@code groups}. */
    static boolean verifyGroupKind(OwnerReference ref, String kind, String... groups) throws DisruptionException {
        ScaleSubresource.GroupVersion gv = ScaleSubresource.GroupVersion.parse(ref.getApiVersion());
        if (!kind.equals(ref.getKind())) {
            return false;
        }
        for (String group : groups) {
            if (group.equals(gv.group())) {
                return true;
            }
        }
        return false;
    }

    /** The API server defaults replicas to 1; a cached object always has it. */
    private static int replicas(Integer replicas) {
        return replicas == null ? 1 : replicas;
    }
}
