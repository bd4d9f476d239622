package io.qkcm.controller.statefulset;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.PersistentVolumeClaim;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.qkcm.controller.ApiErrors;
import io.qkcm.runtime.events.EventRecorder;

/**
 * Upstream's StatefulPodControl (stateful_pod_control.go): creates, updates and deletes a set's pods and
 * their claims, recording upstream's events ({@code SuccessfulCreate}, {@code FailedCreate}, …) on the set.
 * Reads pods and claims from the shared caches, writes through the controller's client.
 */
class StatefulPodControl {

    private static final Logger LOG = Logger.getLogger(StatefulPodControl.class);

    private final KubernetesClient client;
    private final SharedIndexInformer<Pod> pods;
    private final SharedIndexInformer<PersistentVolumeClaim> claims;
    private final EventRecorder recorder;
    private final boolean autoDeletePVC;

    /** How the controller builds its pod control (a test's can lose the answers of {@link #createPod}, {@link #deletePod}). */
    @FunctionalInterface
    interface Factory {
        StatefulPodControl create(KubernetesClient client, SharedIndexInformer<Pod> pods,
                SharedIndexInformer<PersistentVolumeClaim> claims, EventRecorder recorder, boolean autoDeletePVC);
    }

    StatefulPodControl(KubernetesClient client, SharedIndexInformer<Pod> pods,
            SharedIndexInformer<PersistentVolumeClaim> claims, EventRecorder recorder, boolean autoDeletePVC) {
        this.client = client;
        this.pods = pods;
        this.claims = claims;
        this.recorder = recorder;
        this.autoDeletePVC = autoDeletePVC;
    }

    /** An error built from several (utilerrors.NewAggregate): one message, or "[a, b]". */
    static final class AggregateException extends Exception {
        AggregateException(List<Exception> errors) {
            super(message(errors), errors.get(0));
        }

        private static String message(List<Exception> errors) {
            if (errors.size() == 1) {
                return msg(errors.get(0));
            }
            List<String> m = new ArrayList<>();
            errors.forEach(e -> m.add(msg(e)));
            return "[" + String.join(", ", m) + "]";
        }
    }

    static String msg(Throwable e) {
        return ApiErrors.message(e);
    }

    private PersistentVolumeClaim getClaim(String namespace, String name) {
        return claims.getIndexer().getByKey(namespace + "/" + name);
    }

    private Pod getPod(String namespace, String name) {
        return pods.getIndexer().getByKey(namespace + "/" + name);
    }

    void createStatefulPod(StatefulSet set, Pod pod) throws Exception {
        try {
            createPersistentVolumeClaims(set, pod);
        } catch (Exception e) {
            recordPodEvent("create", set, pod, e);
            throw e;
        }
        Exception createErr = null;
        try {
            createPod(pod);
        } catch (KubernetesClientException e) {
            if (ApiErrors.isAlreadyExists(e)) {
                throw e;
            }
            createErr = e;
        }
        if (autoDeletePVC) {
            try {
                updatePodClaimForRetentionPolicy(set, pod);
            } catch (Exception e) {
                recordPodEvent("update", set, pod, e);
                throw e;
            }
        }
        recordPodEvent("create", set, pod, createErr);
        if (createErr != null) {
            throw createErr;
        }
    }

    void updateStatefulPod(StatefulSet set, Pod pod) throws Exception {
        boolean attemptedUpdate = false;
        Exception result = null;
        long delay = 10;
        for (int step = 1;; step++) {
            Exception err = null;
            try {
                boolean consistent = true;
                if (!StatefulSetUtils.identityMatches(set, pod)) {
                    StatefulSetUtils.updateIdentity(set, pod, podIndexLabel);
                    consistent = false;
                }
                if (!StatefulSetUtils.storageMatches(set, pod)) {
                    StatefulSetUtils.updateStorage(set, pod);
                    consistent = false;
                    try {
                        createPersistentVolumeClaims(set, pod);
                    } catch (Exception e) {
                        recordPodEvent("update", set, pod, e);
                        throw e;
                    }
                }
                if (autoDeletePVC) {
                    boolean match;
                    try {
                        match = claimsMatchRetentionPolicy(set, pod);
                    } catch (Exception e) {
                        recordPodEvent("update", set, pod, e);
                        throw e;
                    }
                    if (!match) {
                        try {
                            updatePodClaimForRetentionPolicy(set, pod);
                        } catch (Exception e) {
                            recordPodEvent("update", set, pod, e);
                            throw e;
                        }
                        consistent = false;
                    }
                }
                if (!consistent) {
                    attemptedUpdate = true;
                    try {
                        client.pods().inNamespace(pod.getMetadata().getNamespace()).resource(pod).update();
                    } catch (KubernetesClientException e) {
                        Pod updated = getPod(set.getMetadata().getNamespace(), pod.getMetadata().getName());
                        if (updated != null) {
                            pod = io.qkcm.runtime.DeepCopy.of(updated);
                        } else {
                            LOG.errorf("error getting updated Pod %s/%s: not found", set.getMetadata().getNamespace(),
                                    pod.getMetadata().getName());
                        }
                        throw e;
                    }
                }
            } catch (Exception e) {
                err = e;
            }
            if (err == null || !ApiErrors.isConflict(err) || step >= 4) {
                result = err;
                break;
            }
            Thread.sleep(delay + (long) (ThreadLocalRandom.current().nextDouble() * 0.1 * delay));
            delay *= 5;
        }
        if (attemptedUpdate) {
            recordPodEvent("update", set, pod, result);
        }
        if (result != null) {
            throw result;
        }
    }

    private boolean podIndexLabel = true;

    void setPodIndexLabel(boolean enabled) {
        this.podIndexLabel = enabled;
    }

    void deleteStatefulPod(StatefulSet set, Pod pod) {
        try {
            deletePod(pod);
        } catch (KubernetesClientException e) {
            recordPodEvent("delete", set, pod, e);
            throw e;
        }
        recordPodEvent("delete", set, pod, null);
    }

    /** Upstream's objectMgr.CreatePod: the pod by its stable name (a second create of it answers AlreadyExists). */
    void createPod(Pod pod) {
        client.pods().inNamespace(pod.getMetadata().getNamespace()).resource(pod).create();
    }

    /** Upstream's objectMgr.DeletePod: by name, default options. */
    void deletePod(Pod pod) {
        client.pods().inNamespace(pod.getMetadata().getNamespace()).withName(pod.getMetadata().getName()).delete();
    }

    boolean claimsMatchRetentionPolicy(StatefulSet set, Pod pod) {
        int ordinal = StatefulSetUtils.ordinal(pod);
        for (PersistentVolumeClaim template : StatefulSetUtils.claimTemplates(set)) {
            String claimName = StatefulSetUtils.persistentVolumeClaimName(set, template, ordinal);
            PersistentVolumeClaim claim = getClaim(set.getMetadata().getNamespace(), claimName);
            if (claim == null) {
                LOG.tracef("Expected claim %s missing, continuing to pick up in next iteration", claimName);
                continue;
            }
            if (!StatefulSetUtils.isClaimOwnerUpToDate(claim, set, pod)) {
                return false;
            }
        }
        return true;
    }

    void updatePodClaimForRetentionPolicy(StatefulSet set, Pod pod) throws Exception {
        int ordinal = StatefulSetUtils.ordinal(pod);
        for (PersistentVolumeClaim template : StatefulSetUtils.claimTemplates(set)) {
            String claimName = StatefulSetUtils.persistentVolumeClaimName(set, template, ordinal);
            PersistentVolumeClaim claim = getClaim(set.getMetadata().getNamespace(), claimName);
            if (claim == null) {
                LOG.tracef("Expected claim %s missing, continuing to pick up in next iteration", claimName);
                continue;
            }
            if (StatefulSetUtils.hasUnexpectedController(claim, set, pod)) {
                recorder.event(set, EventRecorder.WARNING, "ConflictingController", "PersistentVolumeClaim " + claimName
                        + " has a conflicting OwnerReference that acts as a manging controller, the retention policy is ignored for this claim");
            }
            if (!StatefulSetUtils.isClaimOwnerUpToDate(claim, set, pod)) {
                PersistentVolumeClaim copy = io.qkcm.runtime.DeepCopy.of(claim);
                StatefulSetUtils.updateClaimOwnerRefForSetAndPod(copy, set, pod);
                try {
                    client.persistentVolumeClaims().inNamespace(copy.getMetadata().getNamespace()).resource(copy).update();
                } catch (KubernetesClientException e) {
                    throw new WrappedException("could not update claim " + claimName + " for delete policy ownerRefs: "
                            + msg(e), e);
                }
            }
        }
    }

    /** fmt.Errorf("...: %w", err): the message says it, the cause keeps the API error (and its code). */
    static final class WrappedException extends Exception {
        WrappedException(String message, Exception cause) {
            super(message, cause);
        }
    }

    boolean podClaimIsStale(StatefulSet set, Pod pod) {
        if (StatefulSetUtils.RETAIN.equals(StatefulSetUtils.retentionPolicy(set).getWhenScaled())) {
            return false;
        }
        for (PersistentVolumeClaim claim : StatefulSetUtils.persistentVolumeClaims(set, pod).values()) {
            PersistentVolumeClaim pvc = getClaim(claim.getMetadata().getNamespace(), claim.getMetadata().getName());
            if (pvc == null) {
                continue;
            }
            if (StatefulSetUtils.hasStaleOwnerRef(pvc, pod, "v1", "Pod")) {
                return true;
            }
        }
        return false;
    }

    void recordPodEvent(String verb, StatefulSet set, Pod pod, Exception err) {
        String title = Character.toUpperCase(verb.charAt(0)) + verb.substring(1);
        if (err == null) {
            recorder.event(set, EventRecorder.NORMAL, "Successful" + title,
                    verb + " Pod " + pod.getMetadata().getName() + " in StatefulSet " + set.getMetadata().getName()
                            + " successful");
        } else {
            recorder.event(set, EventRecorder.WARNING, "Failed" + title,
                    verb + " Pod " + pod.getMetadata().getName() + " in StatefulSet " + set.getMetadata().getName()
                            + " failed error: " + msg(err));
        }
    }

    void recordClaimEvent(String verb, StatefulSet set, Pod pod, PersistentVolumeClaim claim, Exception err) {
        String title = Character.toUpperCase(verb.charAt(0)) + verb.substring(1);
        if (err == null) {
            recorder.event(set, EventRecorder.NORMAL, "Successful" + title,
                    verb + " Claim " + claim.getMetadata().getName() + " Pod " + pod.getMetadata().getName()
                            + " in StatefulSet " + set.getMetadata().getName() + " success");
        } else {
            recorder.event(set, EventRecorder.WARNING, "Failed" + title,
                    verb + " Claim " + claim.getMetadata().getName() + " for Pod " + pod.getMetadata().getName()
                            + " in StatefulSet " + set.getMetadata().getName() + " failed error: " + msg(err));
        }
    }

    void createMissingPersistentVolumeClaims(StatefulSet set, Pod pod) throws Exception {
        createPersistentVolumeClaims(set, pod);
        if (autoDeletePVC) {
            try {
                updatePodClaimForRetentionPolicy(set, pod);
            } catch (Exception e) {
                recordPodEvent("update", set, pod, e);
                throw e;
            }
        }
    }

    void createPersistentVolumeClaims(StatefulSet set, Pod pod) throws AggregateException {
        List<Exception> errs = new ArrayList<>();
        for (PersistentVolumeClaim claim : StatefulSetUtils.persistentVolumeClaims(set, pod).values()) {
            PersistentVolumeClaim pvc = getClaim(claim.getMetadata().getNamespace(), claim.getMetadata().getName());
            if (pvc == null) {
                Exception err = null;
                try {
                    client.persistentVolumeClaims().inNamespace(claim.getMetadata().getNamespace()).resource(claim)
                            .create();
                } catch (KubernetesClientException e) {
                    err = e;
                    errs.add(new WrappedException("failed to create PVC " + claim.getMetadata().getName() + ": " + msg(e),
                            e));
                }
                if (err == null || !ApiErrors.isAlreadyExists(err)) {
                    recordClaimEvent("create", set, pod, claim, err);
                }
            } else if (pvc.getMetadata().getDeletionTimestamp() != null) {
                errs.add(new IllegalStateException("pvc " + claim.getMetadata().getName() + " is being deleted"));
            }
        }
        if (!errs.isEmpty()) {
            throw new AggregateException(errs);
        }
    }
}
