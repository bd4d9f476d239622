package io.qkcm.controller.job;

import java.util.Collection;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;

import org.jboss.logging.Logger;

import io.fabric8.kubernetes.api.model.Pod;

/**
 * Upstream's tracking_utils.go: the {@code batch.kubernetes.io/job-tracking} finalizer and the
 * expectations of its removal (the UIDs of pods whose finalizer the controller removed and has not
 * yet seen removed in its cache).
 */
public final class TrackingUtils {

    public static final String JOB_TRACKING_FINALIZER = "batch.kubernetes.io/job-tracking";

    private static final Logger LOG = Logger.getLogger(TrackingUtils.class);

    private TrackingUtils() {
    }

    public static boolean hasJobTrackingFinalizer(Pod pod) {
        return pod.getMetadata().getFinalizers() != null
                && pod.getMetadata().getFinalizers().contains(JOB_TRACKING_FINALIZER);
    }

    /** The strategic-merge patch removing the tracking finalizer, or null when the pod has none. */
    static String removeTrackingFinalizerPatch(Pod pod) {
        if (!hasJobTrackingFinalizer(pod)) {
            return null;
        }
        return "{\"metadata\":{\"$deleteFromPrimitiveList/finalizers\":[\"" + JOB_TRACKING_FINALIZER + "\"]}}";
    }

    /** Upstream's isFinishedPodWithTrackingFinalizer. */
    static boolean isFinishedPodWithTrackingFinalizer(Pod pod) {
        if (pod == null) {
            return false;
        }
        String phase = pod.getStatus() == null ? null : pod.getStatus().getPhase();
        return ("Failed".equals(phase) || "Succeeded".equals(phase)) && hasJobTrackingFinalizer(pod);
    }

    /** Upstream's uidTrackingExpectations (the job controller's finalizerExpectations). */
    public static final class UidTrackingExpectations {
        private final ConcurrentMap<String, Set<String>> store = new ConcurrentHashMap<>();

        /** A copy of the expected UIDs of {@code controllerKey}; empty when none. */
        public Set<String> getExpectedUIDs(String controllerKey) {
            Set<String> set = store.get(controllerKey);
            if (set == null) {
                return Set.of();
            }
            synchronized (set) {
                return new HashSet<>(set);
            }
        }

        public void expectFinalizersRemoved(String jobKey, Collection<String> uids) {
            LOG.tracef("Expecting tracking finalizers removed: key=%s podUIDs=%s", jobKey, uids);
            Set<String> set = store.computeIfAbsent(jobKey, k -> new HashSet<>());
            synchronized (set) {
                set.addAll(uids);
            }
        }

        public void finalizerRemovalObserved(String jobKey, String uid) {
            Set<String> set = store.get(jobKey);
            if (set != null) {
                synchronized (set) {
                    if (set.remove(uid)) {
                        LOG.tracef("Observed tracking finalizer removed: key=%s podUID=%s", jobKey, uid);
                    }
                }
            }
        }

        public void deleteExpectations(String jobKey) {
            store.remove(jobKey);
        }
    }
}
