package io.qkcm.controller.job;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.function.Predicate;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.qkcm.controller.PodUtil;

/**
 * The stateless predicates of upstream's job_controller.go that syncJob, manageJob, the status tracking
 * and indexed_job_utils.go share (isPodFailed, onlyReplaceFailedPods, getValidPodsWithFilter, …).
 */
final class JobPredicates {

    private JobPredicates() {
    }

    /**
     * Upstream's getValidPodsWithFilter: pods still carrying the finalizer, not in {@code uncounted},
     * not expected to lose the finalizer and, for Indexed Jobs, with a valid index, that pass the filter.
     */
    static List<Pod> getValidPodsWithFilter(SyncJobCtx ctx, Set<String> uncounted, Predicate<Pod> filter) {
        List<Pod> result = new ArrayList<>();
        boolean indexed = IndexedJobUtils.isIndexedJob(ctx.job);
        for (Pod p : ctx.pods) {
            String uid = p.getMetadata().getUid();
            if (!TrackingUtils.hasJobTrackingFinalizer(p) || uncounted.contains(uid) || ctx.expectedRmFinalizers.contains(uid)) {
                continue;
            }
            if (indexed) {
                int idx = IndexedJobUtils.getCompletionIndex(p);
                if (idx == IndexedJobUtils.UNKNOWN_COMPLETION_INDEX || idx >= ctx.job.getSpec().getCompletions()) {
                    continue;
                }
            }
            if (filter.test(p)) {
                result.add(p);
            }
        }
        return result;
    }

    /** Upstream's isPodFailed: Failed, or (unless only failed pods are replaced) deleted before it succeeded. */
    static boolean isPodFailed(Pod p, Job job, JobFeatures features) {
        String phase = PodUtil.phase(p);
        if ("Failed".equals(phase)) {
            return true;
        }
        if (onlyReplaceFailedPods(job, features)) {
            return false;
        }
        // a deleted pod may never reach Failed: count it as failed
        return p.getMetadata().getDeletionTimestamp() != null && !"Succeeded".equals(phase);
    }

    static int countReadyPods(List<Pod> pods) {
        int cnt = 0;
        for (Pod p : pods) {
            if (PodUtil.isReady(p)) {
                cnt++;
            }
        }
        return cnt;
    }

    /** Upstream's onlyReplaceFailedPods: podReplacementPolicy Failed, or a pod failure policy. */
    static boolean onlyReplaceFailedPods(Job job, JobFeatures features) {
        if (features.podReplacementPolicy() && "Failed".equals(job.getSpec().getPodReplacementPolicy())) {
            return true;
        }
        return job.getSpec().getPodFailurePolicy() != null;
    }

    static boolean jobSuspended(Job job) {
        return Boolean.TRUE.equals(job.getSpec().getSuspend());
    }

    /** The completion_mode label of the Job metrics. */
    static String completionModeStr(Job job) {
        return job.getSpec().getCompletionMode() == null ? "NonIndexed" : job.getSpec().getCompletionMode();
    }

    static int n(Integer i) {
        return i == null ? 0 : i;
    }

    static String nz(String s) {
        return s == null ? "" : s;
    }

    static List<String> nz(List<String> l) {
        return l == null ? List.of() : l;
    }
}
